"""AIME integers: the final integer equals an accepted value.

Accepted values are ``metadata["accepted"]`` if present, else every integer 0-999 written in the gold string
("080 or 081 (both were accepted)" accepts 80 and 81). Leading zeros do not matter; a boxed expression
(``2^{10}``) is compared symbolically with math-verify.
"""

from __future__ import annotations

import re

from prefdisco.errors import UserError
from prefdisco.schema import Problem
from prefdisco.scoring.correctness.latex import math_equivalent
from prefdisco.scoring.correctness.result import CorrectnessResult
from prefdisco.scoring.extract.numbers import final_integer

METHOD_INTEGER = "integer"


def accepted_integers(problem: Problem) -> list[int]:
    """The integers a response may give: ``metadata["accepted"]``, else every 0-999 integer in the gold."""
    extra = problem.metadata.get("accepted")
    if isinstance(extra, list | tuple) and extra:
        try:
            return [int(str(x).strip()) for x in extra]
        except ValueError as e:
            raise UserError(f"problem {problem.id}: metadata.accepted must list integers, got {extra!r}") from e
    values = [int(x) for x in re.findall(r"(?<![\d.])\d+(?![\d.])", problem.answer) if 0 <= int(x) <= 999]
    if not values:
        raise UserError(f"problem {problem.id}: answer {problem.answer!r} holds no integer 0-999")
    return list(dict.fromkeys(values))


def check_integer(problem: Problem, response: str) -> CorrectnessResult:
    accepted = accepted_integers(problem)
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
