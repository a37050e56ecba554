"""Pull a final answer out of a free-form model response.

Pure text functions: no model calls, and nothing here evaluates the response text. Numbers are read with
``float()`` on strings a regular expression has already checked to be digits, a point, a sign and an exponent.

Multiple choice (``extract_choice``), in order of standing:

1. explicit statements, the LAST one wins: ``\\boxed{C}``, "the (final/correct) answer is (C)",
   "Answer: C", "I choose option C", "option C is correct", "C is the correct answer", or a last line that is
   only the letter ("C", "(c)", "**C**", "Option C", "C. <that option's text>"). A statement that names two
   different letters ("the answer is A or C") is ambiguous. A bare "A"/"I" (or any lower-case letter) counts
   only when nothing but punctuation, a line end or a connective ("because", "since", ...) follows it, so the
   article in "the answer is a cat" is not read as option A;
2. the response quotes exactly one option's text (case, whitespace and punctuation ignored);
3. exactly one distinct letter is mentioned as "option X", "choice X" or "(X)".
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from dataclasses import dataclass

# ---------------------------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------------------------

_BOXED = re.compile(r"\\(?:boxed|fbox)\s*")


def boxed_contents(text: str) -> list[tuple[int, str]]:
    """All ``\\boxed{...}`` / ``\\fbox{...}`` contents with balanced braces, as (position, content).

    ``\\boxed 5`` (no braces) yields the next token. A box whose braces never close is skipped.
    """
    found: list[tuple[int, str]] = []
    for m in _BOXED.finditer(text):
        start = m.end()
        if start < len(text) and text[start] == "{":
            depth = 0
            for i in range(start, len(text)):
                if text[i] == "{":
                    depth += 1
                elif text[i] == "}":
                    depth -= 1
                    if depth == 0:
                        found.append((start + 1, text[start + 1 : i]))
                        break
        else:
            token = re.match(r"[^\s$]+", text[start:])
            if token and m.group(0).endswith(tuple(string.whitespace)):
                found.append((start, token.group(0)))
    return found


def last_boxed(text: str) -> str | None:
    """The content of the last balanced ``\\boxed{...}``, or None."""
    boxes = boxed_contents(text)
    return boxes[-1][1].strip() if boxes else None


_STATEMENT = re.compile(
    r"\b(?:final\s+)?answer\b\s*(?:\*\*)?\s*(?:is\b|:|=)\s*:?\s*(?:\*\*)?\s*"
    r"(?:(?:actually|therefore|thus|then|clearly|indeed)\s+)?",
    re.IGNORECASE,
)
_MATH_SEGMENT = re.compile(
    r"(?<!\\)\$\$(.+?)(?<!\\)\$\$|(?<!\\)\$(.+?)(?<!\\)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL
)
_SENTENCE_END = re.compile(r"\.(?!\d)|\n|;|,\s+(?:as|since|because|which|so|and|but)\b")


def answer_statement(text: str) -> str | None:
    """The payload of the last "answer is ..." / "Answer: ..." statement, trimmed to its math or sentence.

    "The final answer is $\\frac12$. I hope it is correct." gives ``\\frac12``; "Answer: 42 apples." gives
    "42 apples". None when there is no such statement or it is empty.
    """
    matches = list(_STATEMENT.finditer(text))
    if not matches:
        return None
    line = text[matches[-1].end() :].split("\n", 1)[0]
    segments = list(_MATH_SEGMENT.finditer(line))
    if segments:
        payload = next(g for g in segments[0].groups() if g is not None)
    else:
        end = _SENTENCE_END.search(line)
        payload = line[: end.start()] if end else line
    payload = payload.strip().strip("*").strip().rstrip(".").strip()
    return payload or None


def last_math_segment(text: str) -> str | None:
    """The last ``$...$``, ``$$...$$``, ``\\(...\\)`` or ``\\[...\\]`` segment, or None."""
    segments = list(_MATH_SEGMENT.finditer(text))
    if not segments:
        return None
    content = next(g for g in segments[-1].groups() if g is not None).strip()
    return content or None


# ---------------------------------------------------------------------------------------------------------
# Numbers
# ---------------------------------------------------------------------------------------------------------

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
        content = _strip_latex_text(boxed).replace("$", "").strip()
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


# ---------------------------------------------------------------------------------------------------------
# Free text
# ---------------------------------------------------------------------------------------------------------

_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_PUNCT = set(string.punctuation)


def normalize_text(text: str) -> str:
    """SQuAD answer normalization: lower-case, drop punctuation and articles, collapse whitespace."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def final_text_answer(response: str) -> tuple[str, str] | None:
    """A short answer for exact matching as (text, where): last box, "answer is" statement, else last line."""
    boxed = last_boxed(response)
    if boxed:
        return _strip_latex_text(boxed), "boxed"
    statement = answer_statement(response)
    if statement:
        return statement, "answer statement"
    lines = [ln.strip() for ln in response.strip().splitlines() if ln.strip()]
    if lines:
        return lines[-1].strip("*").strip(), "whole response" if len(lines) == 1 else "last line"
    return None


def _strip_latex_text(text: str) -> str:
    return re.sub(r"\\(?:text|textbf|mathrm|mathbf|mbox)\s*\{([^{}]*)\}", r"\1", text).strip()


# ---------------------------------------------------------------------------------------------------------
# Multiple choice
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChoiceExtraction:
    """The letter read from a response, or None with the reason in ``how``."""

    letter: str | None
    how: str


@dataclass(frozen=True)
class _Candidate:
    pos: int
    letters: tuple[str, ...]
    how: str


_OPTION_WORD = r"(?:option|choice|letter)"
_LEAD = re.compile(
    r"\b(?:(?:(?:final|correct|right|best|true)\s+)?answer|(?:final|correct|right|best|true|my)\s+(?:option|choice))\b"
    r"(?:\s+(?:here|then|therefore|thus))?"
    r"\s*(?:is\b|would\s+be\b|should\s+be\b|must\s+be\b|will\s+be\b|=|:|-)\s*:?\s*"
    r"(?:(?:actually|definitely|clearly|probably|likely|most\s+likely|therefore|thus|then|indeed)\s+)?"
    r"|\b(?:I|we)(?:\s+(?:would|will|shall)|'d|'ll)?\s+(?:choose|pick|select|go\s+with)\s+",
    re.IGNORECASE,
)
_LETTER_FIRST = re.compile(
    r"(?:\b(?i:option|choice)\s+\(?|\()(?P<letter>[A-Z])\)?\s+is\s+(?:the\s+)?"
    r"(?i:correct|right|best|true|most\s+(?:likely|appropriate|accurate))\b"
    r"|(?:^|(?<=[.!?:]\s))(?P<letter2>[A-Z])\s+is\s+(?:the\s+)?(?i:correct|right|best)\s+(?i:answer|option|choice)\b",
    re.MULTILINE,
)
_TOKEN = re.compile(rf"(?:(?i:{_OPTION_WORD})\s*)?(?P<open>[(\[])?\s*(?P<letter>[A-Za-z])(?:\s*(?P<close>[)\]]))?")
_TERMINAL = re.compile(r"\s*(?:$|[\n.,;:!?)\]\"'])")
_CONNECTIVE = re.compile(r"\s+(?:because|since|as|given|due|[-—(])", re.IGNORECASE)
_JOIN = re.compile(r"\s*(?:,|/|&|\band/or\b|\bor\b|\band\b)\s*", re.IGNORECASE)
_MENTION = re.compile(r"\b(?i:option|choice)\s+\(?([A-Z])\)?(?![\w])|\(([A-Z])\)")
_FINAL_LINE = re.compile(
    rf"(?i:(?:final\s+)?answer\s*[:\-]?\s*)?(?:(?i:{_OPTION_WORD})\s+)?[(\[]?(?P<letter>[A-Za-z])[)\]]?\s*[.:)]?"
)
_LETTER_AND_TEXT = re.compile(r"[(\[]?(?P<letter>[A-Z])[)\].:]\s+(?P<text>.+)")


def _clean(text: str) -> str:
    """Drop markdown emphasis and code marks, unwrap ``\\text{}`` and ``$X$``."""
    text = text.replace("*", "").replace("`", "")
    text = _strip_latex_text(text)
    return re.sub(r"\$\s*([A-Za-z])\s*\$", r"\1", text)


def _norm_option(text: str) -> str:
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


def _read_token(text: str, pos: int, letters: Sequence[str], *, terminal_only: bool) -> tuple[str, int] | None:
    """Read one option letter at ``pos`` (with optional "option"/brackets); return (LETTER, end) or None."""
    m = _TOKEN.match(text, pos)
    if not m:
        return None
    letter = m.group("letter")
    if letter.upper() not in letters:
        return None
    end = m.end()
    if m.group("close"):
        return letter.upper(), end
    if m.group("open"):  # "(C" without its closing bracket
        return None
    if end < len(text) and (text[end].isalnum() or text[end] == "_"):
        return None  # part of a word: "Bacteria"
    if _TERMINAL.match(text, end):
        return letter.upper(), end
    if terminal_only:
        return None
    if (letter.islower() or letter in "AI") and not _CONNECTIVE.match(text, end):
        join = _JOIN.match(text, end)  # "A or C" is a list of letters, not the article
        if not (join and _read_token(text, join.end(), letters, terminal_only=True)):
            return None  # the article "a", the pronoun "I", or a lower-case letter running into prose
    return letter.upper(), end


def _read_letters(text: str, pos: int, letters: Sequence[str]) -> tuple[tuple[str, ...], int] | None:
    """Read "C", "(C)", "option C", and lists such as "A or C" / "A, C" at ``pos``."""
    first = _read_token(text, pos, letters, terminal_only=False)
    if first is None:
        return None
    found, end = [first[0]], first[1]
    while True:
        join = _JOIN.match(text, end)
        if not join or join.end() == end:
            break
        nxt = _read_token(text, join.end(), letters, terminal_only=True)
        if nxt is None:
            break
        found.append(nxt[0])
        end = nxt[1]
    return tuple(dict.fromkeys(found)), end


def _options_in(text: str, choices: Sequence[str], letters: Sequence[str], *, min_len: int = 1) -> list[str]:
    """Letters whose option text occurs in ``text`` (word-aligned, longest options first, no overlaps)."""
    hay = f" {_norm_option(text)} "
    found: list[str] = []
    order = sorted(range(len(choices)), key=lambda i: -len(_norm_option(choices[i])))
    for i in order:
        needle = _norm_option(choices[i])
        if len(needle) < min_len or not needle:
            continue
        if f" {needle} " in hay:
            found.append(letters[i])
            hay = hay.replace(f" {needle} ", " | ")
    return found


def _boxed_candidates(text: str, choices: Sequence[str], letters: Sequence[str]) -> list[_Candidate]:
    out = []
    for pos, content in boxed_contents(text):
        content = content.strip()
        tokens = [t for t in re.split(r"[\s,/&()\[\].:;]+|\b(?:or|and)\b", content) if t]
        if tokens and all(len(t) == 1 and t.upper() in letters for t in tokens):
            out.append(_Candidate(pos, tuple(dict.fromkeys(t.upper() for t in tokens)), "boxed"))
            continue
        lead = _LETTER_AND_TEXT.fullmatch(content)
        if lead and lead.group("letter") in letters:
            out.append(_Candidate(pos, (lead.group("letter"),), "boxed"))
            continue
        exact = [letters[i] for i, c in enumerate(choices) if _norm_option(c) == _norm_option(content)]
        if exact:
            out.append(_Candidate(pos, (exact[0],), "boxed option text"))
    return out


def _statement_candidates(text: str, choices: Sequence[str], letters: Sequence[str]) -> list[_Candidate]:
    out = []
    for m in _LEAD.finditer(text):
        read = _read_letters(text, m.end(), letters)
        if read is not None:
            out.append(_Candidate(m.end(), read[0], "answer statement"))
            continue
        # "the answer is Cross-linking of DNA.": the statement starts with an option's text (longest wins)
        payload = f"{_norm_option(text[m.end() :].split(chr(10), 1)[0])} "
        starts = [(len(o), i) for i, o in enumerate(map(_norm_option, choices)) if o and payload.startswith(o + " ")]
        if starts:
            out.append(_Candidate(m.end(), (letters[max(starts)[1]],), "answer statement (option text)"))
    for m in _LETTER_FIRST.finditer(text):
        letter = m.group("letter") or m.group("letter2")
        if letter in letters:
            out.append(_Candidate(m.start(), (letter,), "answer statement"))
    return out


def _final_line_candidate(text: str, choices: Sequence[str], letters: Sequence[str]) -> list[_Candidate]:
    stripped = text.rstrip()
    start = stripped.rfind("\n") + 1
    line = stripped[start:].strip()
    if not line:
        return []
    m = _FINAL_LINE.fullmatch(line)
    if m and m.group("letter").upper() in letters:
        return [_Candidate(start, (m.group("letter").upper(),), "final line")]
    m = _LETTER_AND_TEXT.fullmatch(line)
    if m and m.group("letter") in letters:
        option = choices[letters.index(m.group("letter"))]
        if _norm_option(m.group("text")) == _norm_option(option):
            return [_Candidate(start, (m.group("letter"),), "final line")]
    return []


def extract_choice(response: str, choices: Sequence[str]) -> ChoiceExtraction:
    """Read the chosen option letter from a free-form response (see the module docstring for the rules)."""
    letters = [string.ascii_uppercase[i] for i in range(len(choices))]
    text = _clean(response)
    if not text.strip():
        return ChoiceExtraction(None, "empty response")
    candidates = (
        _boxed_candidates(text, choices, letters)
        + _statement_candidates(text, choices, letters)
        + _final_line_candidate(text, choices, letters)
    )
    if candidates:
        last_pos = max(c.pos for c in candidates)
        named = {x for c in candidates if c.pos == last_pos for x in c.letters}
        how = next(c.how for c in candidates if c.pos == last_pos)
        if len(named) > 1:
            return ChoiceExtraction(None, f"ambiguous: the final answer statement names {', '.join(sorted(named))}")
        return ChoiceExtraction(named.pop(), how)

    quoted = _options_in(text, choices, letters, min_len=4)
    whole = [letters[i] for i, c in enumerate(choices) if _norm_option(c) == _norm_option(text)]
    if whole:
        return ChoiceExtraction(whole[0], "option text")
    if len(quoted) == 1:
        return ChoiceExtraction(quoted[0], "option text")
    if len(quoted) > 1:
        return ChoiceExtraction(None, f"ambiguous: the response quotes options {', '.join(sorted(quoted))}")

    mentioned = {a or b for a, b in _MENTION.findall(text)} & set(letters)
    if len(mentioned) == 1:
        return ChoiceExtraction(mentioned.pop(), "only option mentioned")
    if mentioned:
        return ChoiceExtraction(
            None, f"ambiguous: no final answer statement; options {', '.join(sorted(mentioned))} mentioned"
        )
    return ChoiceExtraction(None, "no answer letter or option text found")
