"""What counts as a correct answer to a problem: one typed answer spec, parsed once, read by every metric.

A problem's gold answer is written many ways across benchmarks ("C", "080 or 081 (both were accepted)",
"0.90 TO 0.94 OR -0.94 TO -0.90", "840000", "Marks to all", a LaTeX expression, a SimpleQA sentence, a blank cell
of an unlabeled split). :func:`answer_spec` reads it once, when a :class:`prefdisco.schema.Problem` is built (by a
loader, the release importer, or from a file written before specs existed), into one of:

* :class:`LetterAnswer` — option letters: any one of ``accepted``, or with ``all_required`` exactly that set
  (GATE multiple-select "A, C");
* :class:`IntegerAnswer` — accepted integers (AIME): one integer (``"1,000"`` is 1000), or alternatives joined by
  ``or``; an integer-typed gold of several numbers (``"x=12, y=5"``, ``"1/2"``) is a :class:`MathAnswer`, so that
  no one of its numbers is accepted alone;
* :class:`MathAnswer` — an expression compared by mathematical equivalence (MATH-500);
* :class:`RangeAnswer` — numeric ranges, each with its relative tolerance: a single-number gold accepts answers
  within ``SINGLE_VALUE_REL_TOL`` (1 %), a written range ``lo to hi`` is widened only by ``RANGE_REL_TOL`` for
  floating-point rounding (MaScQA NUM);
* :class:`TextAnswer` — short free text, by normalized exact match or by a grader model (SimpleQA);
* :class:`NotJudgeable` — no gold to judge against (a blank gold, a question voided upstream): correctness is
  None, never False.

The metrics (``scoring/correctness/``) dispatch on ``spec.kind`` and read nothing else of the gold.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SINGLE_VALUE_REL_TOL = 0.01
"""A single-number numeric gold accepts answers within 1 % of it (MaScQA's documented tolerance)."""
RANGE_REL_TOL = 1e-6
"""A written range's bounds are widened by this relative amount, for floating-point rounding only."""
VOIDED = "question voided upstream (Marks to all)"


class AnswerType(StrEnum):
    """How a problem's gold answer is written (the spec says how it is judged)."""

    LETTER = "letter"  # multiple choice: gold is an option letter A, B, ...
    INTEGER = "integer"  # AIME-style integer (possibly several accepted values)
    LATEX = "latex"  # MATH-style expression, compared by symbolic equivalence
    NUMERIC_RANGE = "numeric_range"  # MaScQA NUM: gold is a number or "lo to hi"
    FREE_TEXT = "free_text"  # short free text (SimpleQA): graded by a model, or normalized match


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LetterAnswer(_Spec):
    kind: Literal["letter"] = "letter"
    accepted: list[str] = Field(min_length=1)
    all_required: bool = False


class IntegerAnswer(_Spec):
    kind: Literal["integer"] = "integer"
    accepted: list[int] = Field(min_length=1)


class MathAnswer(_Spec):
    kind: Literal["math"] = "math"
    expression: str = Field(min_length=1)


class NumericRange(_Spec):
    lo: float
    hi: float
    rel_tol: float = Field(ge=0)
    single: bool = False
    """Written as one number (then lo == hi): accepted within ``rel_tol`` of it."""

    def contains(self, x: float) -> bool:
        if self.single:
            return abs(x - self.lo) <= self.rel_tol * abs(self.lo) + 1e-12
        return self.lo - self.rel_tol * abs(self.lo) - 1e-12 <= x <= self.hi + self.rel_tol * abs(self.hi) + 1e-12

    def shown(self) -> str:
        return f"{self.lo:g} (±{self.rel_tol:.0%})" if self.single else f"[{self.lo:g}, {self.hi:g}]"


class RangeAnswer(_Spec):
    kind: Literal["numeric_range"] = "numeric_range"
    ranges: list[NumericRange] = Field(min_length=1)


class TextAnswer(_Spec):
    kind: Literal["text"] = "text"
    text: str = Field(min_length=1)
    grader: Literal["match", "model"] = "match"


class NotJudgeable(_Spec):
    kind: Literal["not_judgeable"] = "not_judgeable"
    reason: str


AnswerSpec = Annotated[
    LetterAnswer | IntegerAnswer | MathAnswer | RangeAnswer | TextAnswer | NotJudgeable, Field(discriminator="kind")
]

# ---------------------------------------------------------------------------------------------------------
# Parsing gold text
# ---------------------------------------------------------------------------------------------------------

_DIGITS = r"(?:\d{1,3}(?:,\d{3})+(?![\d,])|\d+)"
"""Digits, grouped in thousands by commas (``1,000``) or not: one number either way."""
_INT = rf"[-+]?{_DIGITS}"
_INTEGERS = re.compile(rf"\s*({_INT}(?:\s+or\s+{_INT})*)\s*(?:\([^()]*\))?\s*", re.IGNORECASE)
_NUM = rf"[-+]?(?:{_DIGITS}(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_RANGE = re.compile(rf"\s*({_NUM})\s*(?:(?:to|:)\s*({_NUM}))?\s*", re.IGNORECASE)
_VOIDED = re.compile(r"\s*marks\s+to\s+all\s*", re.IGNORECASE)


def _number(text: str) -> str:
    """A number's text without its thousands separators."""
    return text.replace(",", "")


def parse_integers(text: str) -> list[int] | None:
    """``"60"`` → [60], ``"1,000"`` → [1000], ``"080 or 081 (both were accepted)"`` → [80, 81] (integers joined
    by ``or``, optionally followed by a parenthesised remark); None when ``text`` is not of that form. A comma
    is a thousands separator only: ``"12, 5"`` (two numbers, both meant) is not of this form."""
    match = _INTEGERS.fullmatch(text)
    if not match:
        return None
    return list(dict.fromkeys(int(_number(x)) for x in re.findall(_INT, match.group(1))))


def _repair(text: str) -> str:
    """Two typos seen in MaScQA: the letter O for a zero after a digit ("48O TO 494"), "T0" for "TO"; a Unicode
    minus counts as "-"."""
    text = text.replace("\u2212", "-")
    text = re.sub(r"(?<=\d)[oO](?=[\d.\s]|$)", "0", text)
    return re.sub(r"(?<=\s)T0(?=\s)", "TO", text, flags=re.IGNORECASE)


def parse_ranges(text: str) -> list[NumericRange] | None:
    """``"0.85 to 0.89"``, ``"6850 : 6950"``, a single number ``"840000"`` and alternatives joined by ``or``
    (``"0.90 TO 0.94 OR -0.94 TO -0.90"``), each with its tolerance; a reversed range is put in order. None when
    ``text`` is not of that form."""
    ranges: list[NumericRange] = []
    for alternative in re.split(r"\s+or\s+", _repair(text.strip()), flags=re.IGNORECASE):
        match = _RANGE.fullmatch(alternative)
        if not match:
            return None
        if match.group(2) is None:
            value = float(_number(match.group(1)))
            ranges.append(NumericRange(lo=value, hi=value, rel_tol=SINGLE_VALUE_REL_TOL, single=True))
        else:
            lo, hi = sorted((float(_number(match.group(1))), float(_number(match.group(2)))))
            ranges.append(NumericRange(lo=lo, hi=hi, rel_tol=RANGE_REL_TOL))
    return ranges or None


def range_text(ranges: list[NumericRange]) -> str:
    """The canonical gold text of ranges: a single number as ``"840000"``, a range as ``"lo to hi"``, joined by
    ``" or "``."""
    return " or ".join(f"{r.lo:g}" if r.single else f"{r.lo:g} to {r.hi:g}" for r in ranges)


def uses_model_grader(benchmark: str, metadata: Mapping[str, Any]) -> bool:
    """SimpleQA (or any problem whose metadata asks for it) is graded by a model."""
    return benchmark.strip().lower() == "simpleqa" or metadata.get("grader") == "model"


def _letters(values: Any) -> list[str] | None:
    if isinstance(values, list | tuple) and values:
        return [str(v).strip().upper() for v in values]
    return None


def answer_spec(answer: str, answer_type: AnswerType, metadata: Mapping[str, Any], benchmark: str) -> AnswerSpec:
    """The one reading of a gold answer (see the module docstring). Raises ``ValueError`` with a one-line reason
    when the gold is not of its type's form (a problem built from it is then invalid)."""
    gold = answer.strip()
    if not gold:
        return NotJudgeable(reason="no gold answer (a blank gold, e.g. an unlabeled split)")
    if metadata.get("all_accepted") is True or _VOIDED.fullmatch(gold):
        return NotJudgeable(reason=VOIDED)
    if answer_type is AnswerType.LETTER:
        return LetterAnswer(accepted=_letters(metadata.get("accepted")) or [gold.upper()])
    if answer_type is AnswerType.INTEGER:
        extra = metadata.get("accepted")
        if isinstance(extra, list | tuple) and extra:
            try:
                return IntegerAnswer(accepted=[int(str(x).strip()) for x in extra])
            except ValueError:
                raise ValueError(f"metadata.accepted must list integers, got {extra!r}") from None
        accepted = parse_integers(gold)
        if accepted:
            return IntegerAnswer(accepted=accepted)
        if not re.search(r"\d", gold):
            raise ValueError(f"answer {gold!r} holds no integer")
        # several numbers meant together ("x=12, y=5", "1/2", "2^{10}"): the whole is compared, never a part
        return MathAnswer(expression=gold)
    if answer_type is AnswerType.LATEX:
        return MathAnswer(expression=gold)
    if answer_type is AnswerType.NUMERIC_RANGE:
        raw = metadata.get("gold_raw")
        ranges = parse_ranges(raw if isinstance(raw, str) and raw.strip() else gold)
        if ranges is None:
            raise ValueError(f"answer {gold!r} is not a number or a range 'lo to hi'")
        return RangeAnswer(ranges=ranges)
    required, either = _letters(metadata.get("gold_letters")), _letters(metadata.get("accepted"))
    if required or either:  # a choice question whose gold is several letters (MaScQA "A, C", "C OR D")
        return LetterAnswer(accepted=required or either or [], all_required=bool(required))
    return TextAnswer(text=gold, grader="model" if uses_model_grader(benchmark, metadata) else "match")
