"""AIME integers: the final integer equals an accepted value of the answer spec ("080 or 081 (both were
accepted)" accepts 80 and 81). Leading zeros do not matter; a boxed expression (``2^{10}``) is compared
symbolically with math-verify.
"""

from __future__ import annotations

from prefdisco.answer_spec import IntegerAnswer
from prefdisco.scoring.correctness.latex import math_equivalent
from prefdisco.scoring.correctness.result import CorrectnessResult
from prefdisco.scoring.extract.numbers import final_integer

METHOD_INTEGER = "integer"


def check_integer(spec: IntegerAnswer, response: str) -> CorrectnessResult:
    accepted = spec.accepted
    found = final_integer(response)
    gold_text = " or ".join(str(v) for v in accepted)
    if found.text is None:
        return CorrectnessResult(correct=False, extracted=None, method=METHOD_INTEGER, detail=found.how)
    if found.value is None:  # a boxed expression: compare symbolically with each accepted value
        for value in accepted:
            ok, why = math_equivalent(str(value), found.text)
            if ok:
                return CorrectnessResult(
                    correct=True, extracted=found.text, method=METHOD_INTEGER, detail=f"{found.how}; {why}"
                )
        return CorrectnessResult(
            correct=False,
            extracted=found.text,
            method=METHOD_INTEGER,
            detail=f"{found.how}: not an integer equal to {gold_text}",
        )
    ok = found.value.is_integer() and int(found.value) in accepted
    return CorrectnessResult(
        correct=ok, extracted=found.text, method=METHOD_INTEGER, detail=f"{found.how}; gold {gold_text}"
    )
