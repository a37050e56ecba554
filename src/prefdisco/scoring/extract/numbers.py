"""Numbers in a response, and its final number or integer answer.

Numbers are read with ``float()`` on strings a regular expression has already checked to be digits, a point, a
sign and an exponent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from prefdisco.scoring.extract.markup import answer_statement, last_boxed, strip_latex_text

_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_DIGIT_GROUPING = re.compile(r"(?<=\d)(?:\\,|\\!|\\ |\{,\}|[\u2009\u202f\u00a0])(?=\d)")
_NUMBER = re.compile(
    r"""
    (?<![\w.])
    (?:
        (?P<pow>10\s*\^\s*[{(]?\s*(?P<pexp>[-+]?\d+)\s*[})]?)
      | (?P<mant>[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+]?\.\d+)
        (?:
            [eE](?P<e1>[-+]?\d+)
          | \s*(?:x|\*|\\times|\\cdot|·)\s*10\s*\^\s*[{(]?\s*(?P<e2>[-+]?\d+)\s*[})]?
        )?
    )
    (?![\d.]\d)
    """,
    re.VERBOSE,
)


def _ascii_math(text: str) -> str:
    text = text.replace("−", "-").replace("–", "-").replace("×", "x").replace("⋅", "·")
    text = re.sub(r"[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+", lambda m: "^" + m.group(0).translate(_SUPERSCRIPTS), text)
    return _DIGIT_GROUPING.sub("", text)


def find_numbers(text: str) -> list[tuple[float, str]]:
    """Every number in ``text`` as (value, matched text), in order.

    Reads scientific notation (``1.2e-3``, ``1.2 × 10^-3``, ``1.2 \\times 10^{-3}``, ``10^{-3}``, ``10⁻³``),
    thousands separators (``12,345``, ``12\\,345``) and signs. Exponents and subscripts standing alone
    (the 2 of ``m^2``, the 1 of ``s^{-1}``) are not numbers.
    """
    clean = _ascii_math(text)
    out: list[tuple[float, str]] = []
    for m in _NUMBER.finditer(clean):
        before = clean[: m.start()].rstrip(" {(-+")
        if before.endswith(("^", "_")):
            continue
        if m.group("pow"):
            value = 10.0 ** int(m.group("pexp"))
        else:
            mantissa = float(m.group("mant").replace(",", ""))
            exponent = m.group("e1") or m.group("e2")
            value = mantissa * 10.0 ** int(exponent) if exponent else mantissa
        out.append((value, m.group(0).strip()))
    return out


def final_number(response: str) -> tuple[float, str, str] | None:
    """The response's final number as (value, matched text, where it was found), or None.

    The first number of the last ``\\boxed{}``; else the first number of the last "answer is" statement;
    else the last number anywhere in the response.
    """
    boxed = last_boxed(response)
    if boxed is not None:
        nums = find_numbers(boxed)
        if nums:
            return nums[0][0], nums[0][1], "boxed"
    statement = answer_statement(response)
    if statement is not None:
        nums = find_numbers(statement)
        if nums:
            return nums[0][0], nums[0][1], "answer statement"
    nums = find_numbers(response)
    if nums:
        return nums[-1][0], nums[-1][1], "last number"
    return None


@dataclass(frozen=True)
class IntegerExtraction:
    """An integer-answer response's final answer: ``text`` as written, ``value`` when it is one number."""

    text: str | None
    value: float | None
    how: str


def final_integer(response: str) -> IntegerExtraction:
    """The final answer of an AIME-style response.

    The last ``\\boxed{}`` (its only number, or the only number after its last "="); else the first number of
    the last "answer is" statement; else the last number in the response. A box holding an expression
    (``2^{10}``) keeps its text and no value, for the caller to compare symbolically.
    """
    boxed = last_boxed(response)
    if boxed is not None:
        content = strip_latex_text(boxed).replace("$", "").strip()
        content = re.sub(r"\^\s*\{?\\circ\}?|\\[,!;]", "", content)
        tail = content.rsplit("=", 1)[-1].strip()
        nums = find_numbers(tail)
        if len(nums) == 1 and _is_plain_number(tail, nums[0][1]):
            return IntegerExtraction(nums[0][1], nums[0][0], "boxed")
        return IntegerExtraction(content or None, None, "boxed")
    statement = answer_statement(response)
    if statement is not None:
        nums = find_numbers(statement)
        if nums:
            return IntegerExtraction(nums[0][1], nums[0][0], "answer statement")
    nums = find_numbers(response)
    if nums:
        return IntegerExtraction(nums[-1][1], nums[-1][0], "last number")
    return IntegerExtraction(None, None, "no number found")


def _is_plain_number(text: str, number: str) -> bool:
    """True when ``text`` is ``number`` with at most words/units around it (no operators, no LaTeX)."""
    rest = text.replace(number, " ", 1)
    return not re.search(r"[\\^/*+{}]|\d", rest)
