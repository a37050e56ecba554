"""MaScQA NUM: the final number lies in one of the gold ranges, each with its tolerance (``answer_spec.py``: a
single-number gold within 1 %, a written range within its bounds widened for rounding only)."""

from __future__ import annotations

from prefdisco.answer_spec import RangeAnswer
from prefdisco.scoring.correctness.result import CorrectnessResult
from prefdisco.scoring.extract.numbers import final_number

METHOD_RANGE = "numeric_range"


def check_numeric_range(spec: RangeAnswer, response: str) -> CorrectnessResult:
    found = final_number(response)
    if found is None:
        return CorrectnessResult(correct=False, extracted=None, method=METHOD_RANGE, detail="no number found")
    value, text, how = found
    ok = any(r.contains(value) for r in spec.ranges)
    shown = " or ".join(r.shown() for r in spec.ranges)
    return CorrectnessResult(
        correct=ok, extracted=text, method=METHOD_RANGE, detail=f"{how}: {value:g} vs gold {shown}"
    )
