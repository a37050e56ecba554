"""MaScQA NUM: the final number lies in one of the gold ranges.

Gold ranges are written "0.85 to 0.89", "6850 : 6950" or "a TO b OR c TO d"; bounds are widened by a relative
1e-6 for floating-point rounding only. A single-number gold ("840000") is an exact answer, correct within 1%
relative tolerance. Metadata ``lo``/``hi`` override the string. "Marks to all" (a voided exam question) is not
judged (``correct=None``).
"""

from __future__ import annotations

import math
import re

from prefdisco.errors import UserError
from prefdisco.schema import Problem
from prefdisco.scoring.correctness.result import CorrectnessResult
from prefdisco.scoring.extract.numbers import final_number, find_numbers

METHOD_RANGE = "numeric_range"

RANGE_REL_TOL = 1e-6
"""Range bounds are widened by this relative amount, for floating-point rounding only."""
SINGLE_VALUE_REL_TOL = 0.01
"""A single-number NUMERIC_RANGE gold accepts answers within 1% of it."""

_VOIDED = re.compile(r"\s*marks\s+to\s+all\s*", re.IGNORECASE)
_RANGE_SEP = re.compile(r"\s+to\s+|\s*:\s*|\s*–\s*", re.IGNORECASE)


def gold_ranges(problem: Problem) -> list[tuple[float, float, bool]] | None:
    """The accepted ranges as (lo, hi, single_value); None when the question was voided ("Marks to all")."""
    meta = problem.metadata
    if meta.get("lo") is not None and meta.get("hi") is not None:
        try:
            lo, hi = float(meta["lo"]), float(meta["hi"])
        except (TypeError, ValueError) as e:
            raise UserError(f"problem {problem.id}: metadata lo/hi must be numbers, got {meta['lo']!r}") from e
        return [(min(lo, hi), max(lo, hi), False)]
    gold = problem.answer
    if _VOIDED.fullmatch(gold):
        return None
    text = re.sub(r"\bT0\b", "TO", gold, flags=re.IGNORECASE)  # "350 T0 350"
    text = re.sub(r"(?<=\d)[oO](?=\d|\s|$)", "0", text)  # "48O TO 494"
    ranges: list[tuple[float, float, bool]] = []
    for part in re.split(r"\s+or\s+", text.strip(), flags=re.IGNORECASE):
        bounds = _RANGE_SEP.split(part.strip())
        values = [v for v in (_single_number(b) for b in bounds) if v is not None]
        if len(values) != len(bounds) or len(values) not in (1, 2):
            raise UserError(f"problem {problem.id}: answer {gold!r} is not a number or a range 'lo to hi'")
        ranges.append((min(values), max(values), len(values) == 1))
    return ranges


def _single_number(text: str) -> float | None:
    nums = find_numbers(text)
    return nums[0][0] if len(nums) == 1 and nums[0][1].replace(",", "") == text.strip().replace(",", "") else None


def in_ranges(x: float, ranges: list[tuple[float, float, bool]]) -> bool:
    for lo, hi, single in ranges:
        if single:
            if math.isclose(x, lo, rel_tol=SINGLE_VALUE_REL_TOL, abs_tol=1e-12):
                return True
        elif lo - RANGE_REL_TOL * abs(lo) - 1e-12 <= x <= hi + RANGE_REL_TOL * abs(hi) + 1e-12:
            return True
    return False


def check_numeric_range(problem: Problem, response: str) -> CorrectnessResult:
    ranges = gold_ranges(problem)
    if ranges is None:
        return CorrectnessResult(
            correct=None,
            extracted=None,
            method=METHOD_RANGE,
            detail=f"gold {problem.answer!r}: question voided upstream; not judged",
        )
    found = final_number(response)
    if found is None:
        return CorrectnessResult(correct=False, extracted=None, method=METHOD_RANGE, detail="no number found")
    value, text, how = found
    ok = in_ranges(value, ranges)
    shown = " or ".join(f"{lo:g}" if single else f"[{lo:g}, {hi:g}]" for lo, hi, single in ranges)
    return CorrectnessResult(
        correct=ok, extracted=text, method=METHOD_RANGE, detail=f"{how}: {value:g} vs gold {shown}"
    )
