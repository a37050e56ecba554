"""The chosen option letter of a multiple-choice response (``extract_choice``), in order of standing:

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

from prefdisco.scoring.extract.markup import boxed_contents, strip_latex_text


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
    r"(?:(?:actually|definitely|clearly|probably|likely|most\s+likely|therefore|thus|then|indeed|still)\s+)?"
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
    text = strip_latex_text(text)
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


def choice_statements(response: str, choices: Sequence[str]) -> tuple[str, list[tuple[int, str]]]:
    """The explicit statements of a chosen letter (rule 1 of the module docstring: boxed, an answer statement, a last
    line of the letter alone), as (position, the letters named, comma-joined), with the cleaned text the positions
    are in. Never rules 2 and 3 (an option's text quoted, the one letter mentioned)."""
    letters = [string.ascii_uppercase[i] for i in range(len(choices))]
    text = _clean(response)
    candidates = (
        _boxed_candidates(text, choices, letters)
        + _statement_candidates(text, choices, letters)
        + _final_line_candidate(text, choices, letters)
    )
    return text, [(c.pos, ",".join(c.letters)) for c in candidates]


def _last_statement(text: str, choices: Sequence[str], letters: list[str]) -> tuple[set[str], str] | None:
    """The letters the last final-answer statement names, with how it was found; None: there is none."""
    candidates = (
        _boxed_candidates(text, choices, letters)
        + _statement_candidates(text, choices, letters)
        + _final_line_candidate(text, choices, letters)
    )
    if not candidates:
        return None
    last_pos = max(c.pos for c in candidates)
    named = {x for c in candidates if c.pos == last_pos for x in c.letters}
    return named, next(c.how for c in candidates if c.pos == last_pos)


def extract_choice(response: str, choices: Sequence[str]) -> ChoiceExtraction:
    """Read the chosen option letter from a free-form response (see the module docstring for the rules)."""
    letters = [string.ascii_uppercase[i] for i in range(len(choices))]
    text = _clean(response)
    if not text.strip():
        return ChoiceExtraction(None, "empty response")
    stated = _last_statement(text, choices, letters)
    if stated:
        named, how = stated
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


def extract_choices(response: str, choices: Sequence[str]) -> tuple[set[str], str]:
    """The set of option letters a response's final answer names (a multiple-select answer: "A and C"), with how
    they were found; an empty set with the reason when it names none."""
    letters = [string.ascii_uppercase[i] for i in range(len(choices))]
    text = _clean(response)
    stated = _last_statement(text, choices, letters)
    if stated:
        return stated
    single = extract_choice(response, choices)
    return ({single.letter} if single.letter else set()), single.how
