"""MaScQA rows -> Problem fields.

MaScQA (materials science, GATE exam questions) has no Hugging Face dataset; its rows are ``qid, topic,
question_type, question, answer`` and the options of choice questions are written inside the question text as
``... (A) text (B) text (C) text (D) text``. Every row records its answer cell verbatim in
``metadata["gold_raw"]``.

Choices made here:

* **NUM** rows are ``numeric_range``: the answer becomes the canonical ``"lo to hi"`` (or the single number;
  alternatives joined by ``or``), read from the verbatim ``gold_raw`` into the problem's answer spec
  (:mod:`prefdisco.answer_spec`): a single number accepts answers within 1 %, a range its bounds; ``6850 : 6950``
  is a range; two typos (``48O``, ``T0``) are repaired.
* **MCQS, MATCH, MCQS-NUM** (any non-NUM type): the options are cut out of the question when it ends with
  clear ``(A) ... (B) ... (C) ... (D) ...`` options (the last ``(A)`` followed by ``(B)``, ``(C)``, ``(D)``,
  each option non-empty); the question keeps the text before them. Otherwise the question is kept whole, with
  no choices, and the answer type is ``free_text``.
* A single option letter is a ``letter`` answer. Anything else cannot be a ``letter`` answer (the schema
  allows exactly one letter), so it is ``free_text`` with the answer verbatim, the parsed options still in
  ``choices``, and its reading in ``metadata``:

  - ``"A,C"``, ``"A; B"`` (GATE multiple-select: all of these must be chosen): ``gold_letters = ["A", "C"]``;
  - ``"C OR D"`` (either one was accepted): ``accepted = ["C", "D"]``;
  - ``"MARKS TO ALL"`` / ``"Marks to all"`` (the question was voided; any answer scores):
    ``all_accepted = True`` (also for NUM rows).

  A letter outside the parsed options, or any other value, is a ``UserError``.
"""

from __future__ import annotations

import re
from typing import Any

from prefdisco.answer_spec import parse_ranges, range_text
from prefdisco.benchmarks.mapping import FieldMapping
from prefdisco.benchmarks.normalize import Row, RowRef, copy_metadata, get_field
from prefdisco.schema import AnswerType

_OPTIONS = re.compile(r"(?P<stem>.*)\(A\)(?P<A>.*?)\(B\)(?P<B>.*?)\(C\)(?P<C>.*?)\(D\)(?P<D>.*)", re.DOTALL)
_LETTER_LIST = re.compile(r"[A-Z](?:\s*(?:,|;|\bOR\b|\bAND\b)\s*[A-Z])+")
_MARKS_TO_ALL = "MARKS TO ALL"


def split_options(text: str) -> tuple[str, list[str]] | None:
    """``(stem, [A, B, C, D])`` when the text ends with clear (A)-(D) options, else None."""
    match = _OPTIONS.fullmatch(text.strip())
    if not match:
        return None
    stem = match.group("stem").strip()
    options = [" ".join(match.group(letter).split()) for letter in "ABCD"]
    if not stem or not all(options):
        return None
    return stem, options


def _choice_answer(raw: str, letters: list[str], ref: RowRef) -> tuple[AnswerType, dict[str, Any]]:
    value = raw.strip().upper()
    if value == _MARKS_TO_ALL:
        return AnswerType.FREE_TEXT, {"all_accepted": True}
    if len(value) == 1 and value in letters:
        return AnswerType.LETTER, {}
    if _LETTER_LIST.fullmatch(value):
        found = re.findall(r"\b[A-Z]\b", value.replace("OR", " ").replace("AND", " "))
        if all(letter in letters for letter in found):
            key = "accepted" if re.search(r"\bOR\b", value) else "gold_letters"
            return AnswerType.FREE_TEXT, {key: found}
    raise ref.error(f"gold {raw!r} in field 'answer' is not one of the option letters {letters}")


def build_mascqa(row: Row, mapping: FieldMapping, ref: RowRef) -> dict[str, Any]:
    """The MaScQA row builder (see the module docstring)."""
    question = str(get_field(row, mapping.question[0], ref)).strip()
    raw = str(get_field(row, mapping.answer, ref)).strip()
    qtype = str(get_field(row, "question_type", ref)).strip().upper()
    if not question:
        raise ref.error(f"field {mapping.question[0]!r} is empty")
    if not raw:
        raise ref.error(f"field {mapping.answer!r} is empty: no gold answer")
    metadata = {**copy_metadata(row, mapping), "gold_raw": raw}
    choices: list[str] = []
    if qtype == "NUM":
        if raw.upper() == _MARKS_TO_ALL:
            answer_type, answer = AnswerType.FREE_TEXT, raw
            metadata["all_accepted"] = True
        else:
            ranges = parse_ranges(raw)
            if ranges is None:
                raise ref.error(f"gold {raw!r} in field {mapping.answer!r} is not a number or 'lo to hi' range")
            answer_type, answer = AnswerType.NUMERIC_RANGE, range_text(ranges)
    else:
        parsed = split_options(question)
        if parsed:
            question, choices = parsed
            answer_type, extra = _choice_answer(raw, ["A", "B", "C", "D"], ref)
            metadata.update(extra)
        else:
            answer_type = AnswerType.FREE_TEXT
            if raw.upper() == _MARKS_TO_ALL:
                metadata["all_accepted"] = True
        answer = raw.strip().upper() if answer_type is AnswerType.LETTER else raw
    return {
        "question": question,
        "choices": choices,
        "answer": answer,
        "answer_type": answer_type,
        "solution": None,
        "metadata": metadata,
    }
