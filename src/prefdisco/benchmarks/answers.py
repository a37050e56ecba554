"""Parsing of non-multiple-choice gold answers: accepted integers (AIME) and numeric ranges (MaScQA NUM).

* :func:`parse_integers` reads ``"60"`` as ``[60]`` and ``"080 or 081 (both were accepted)"`` as ``[80, 81]``
  (several integers joined by ``or``, ``,`` or ``/``, optionally followed by a parenthesised remark).
* :func:`parse_ranges` reads ``"0.85 to 0.89"``, ``"6850 : 6950"`` and a single number ``"3"`` (lo = hi), and
  alternatives ``"0.90 TO 0.94 OR -0.94 TO -0.90"``. It repairs two typos seen in MaScQA: the digit zero
  written as the letter O after a digit (``"48O TO 494"``) and ``"T0"`` for ``"TO"``; a Unicode minus counts
  as ``-``. A reversed range is put in order.

Both return ``None`` when the text is not of that form; the caller turns that into a ``UserError``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_INT = r"[-+]?\d+"
_INTEGERS = re.compile(rf"\s*({_INT}(?:\s*(?:or|,|/)\s*{_INT})*)\s*(?:\([^()]*\))?\s*", re.IGNORECASE)
_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_RANGE = re.compile(rf"\s*({_NUM})\s*(?:(?:to|:)\s*({_NUM}))?\s*", re.IGNORECASE)


def parse_integers(text: str) -> list[int] | None:
    """The accepted integer values written in ``text``, or None if it is not a list of integers."""
    match = _INTEGERS.fullmatch(text)
    if not match:
        return None
    return [int(x) for x in re.findall(_INT, match.group(1))]


@dataclass(frozen=True)
class NumericRange:
    lo: float
    hi: float
    text: str  # "lo to hi" with the numbers as written

    def as_list(self) -> list[float]:
        return [self.lo, self.hi]


def _repair(text: str) -> str:
    text = text.replace("\u2212", "-")
    text = re.sub(r"(?<=\d)[oO](?=[\d.\s]|$)", "0", text)  # 48O -> 480
    return re.sub(r"(?<=\s)T0(?=\s)", "TO", text, flags=re.IGNORECASE)  # 350 T0 350


def parse_ranges(text: str) -> list[NumericRange] | None:
    """The accepted ranges in ``text`` (alternatives joined by ``or``), or None if not of that form."""
    ranges: list[NumericRange] = []
    for alternative in re.split(r"\s+or\s+", _repair(text.strip()), flags=re.IGNORECASE):
        match = _RANGE.fullmatch(alternative)
        if not match:
            return None
        lo_text, hi_text = match.group(1), match.group(2) or match.group(1)
        lo, hi = float(lo_text), float(hi_text)
        if lo > hi:
            lo, hi, lo_text, hi_text = hi, lo, hi_text, lo_text
        ranges.append(NumericRange(lo=lo, hi=hi, text=f"{lo_text} to {hi_text}"))
    return ranges or None


def range_metadata(ranges: list[NumericRange]) -> dict[str, object]:
    """``lo``/``hi`` of the first range and ``ranges`` (every accepted ``[lo, hi]``), for the metadata."""
    return {"lo": ranges[0].lo, "hi": ranges[0].hi, "ranges": [r.as_list() for r in ranges]}


def range_answer(ranges: list[NumericRange]) -> str:
    """The canonical gold text: ``"lo to hi"`` (alternatives joined by ``" or "``)."""
    return " or ".join(r.text for r in ranges)
