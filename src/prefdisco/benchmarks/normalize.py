"""One dataset row + a :class:`FieldMapping` -> the fields of a :class:`~prefdisco.schema.Problem`.

:func:`build_fields` is the generic row builder used by every benchmark except MaScQA (which has its own,
in :mod:`prefdisco.benchmarks.mascqa`). Every problem found in a row is a ``UserError`` naming the source,
the 1-based row number and the field. Rows are never modified: option lists and metadata values are copied.
"""

from __future__ import annotations

import ast
import copy
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from prefdisco.answer_spec import parse_integers, parse_ranges, range_text
from prefdisco.benchmarks.mapping import FieldMapping, GoldFormat
from prefdisco.errors import UserError
from prefdisco.schema import AnswerType, option_letters

Row = Mapping[str, Any]


@dataclass(frozen=True)
class RowRef:
    """Where a row comes from, for error messages: ``<where>: row <n>: ...``.

    ``n`` is 1-based: the line of a JSONL file, the data row (after the header) of a CSV file.
    """

    where: str
    index: int  # 0-based position in the source

    def error(self, message: str) -> UserError:
        return UserError(f"{self.where}: row {self.index + 1}: {message}")


RowBuilder = Callable[[Row, FieldMapping, RowRef], dict[str, Any]]
"""Builds the Problem fields ``question, choices, answer, answer_type, solution, metadata`` of one row."""


def get_field(row: Row, name: str, ref: RowRef) -> Any:
    """A required field's value; missing or null is an error naming the field."""
    if name not in row:
        raise ref.error(f"missing field {name!r}")
    value = row[name]
    if value is None:
        raise ref.error(f"missing field {name!r} (absent or null)")
    return value


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else str(value).strip()


def build_question(row: Row, mapping: FieldMapping, ref: RowRef) -> str:
    parts = [_text(get_field(row, name, ref)) for name in mapping.question]
    question = mapping.question_joiner.join(p for p in parts if p)
    if not question:
        raise ref.error(f"question field(s) {'+'.join(mapping.question)} are empty")
    return question


def _decode(value: Any, name: str, ref: RowRef) -> Any:
    """A list/dict stored as text (a CSV cell) -> the list/dict."""
    if not isinstance(value, str):
        return value
    for parse in (json.loads, ast.literal_eval):
        try:
            return parse(value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    raise ref.error(f"field {name!r} should hold a list or dict of options, got {value[:60]!r}")


def _option_texts(values: Any, name: str, ref: RowRef) -> list[str]:
    texts: list[str] = []
    for position, value in enumerate(values):
        if value is None:
            raise ref.error(f"option {position + 1} in field {name!r} is null")
        texts.append(_text(value))
    return texts


def _label_order(label: str) -> tuple[int, int | str]:
    return (0, int(label)) if label.isdigit() else (1, label)


def extract_choices(row: Row, mapping: FieldMapping, ref: RowRef) -> tuple[list[str], list[str] | None]:
    """Option texts in letter order, and the labels the data uses for them (None for a plain list)."""
    labels: list[str] | None = None
    if len(mapping.choices) > 1:
        texts = [_text(get_field(row, name, ref)) for name in mapping.choices]
    else:
        name = mapping.choices[0]
        value = _decode(get_field(row, name, ref), name, ref)
        if isinstance(value, Mapping) and "label" in value and "text" in value:
            labels = _option_texts(value["label"], name, ref)
            texts = _option_texts(value["text"], name, ref)
            if len(labels) != len(texts):
                raise ref.error(f"field {name!r} has {len(labels)} labels but {len(texts)} texts")
            if all(len(lbl) == 1 and lbl.isupper() for lbl in labels):
                pairs = sorted(zip(labels, texts, strict=True))
                labels, texts = [p[0] for p in pairs], [p[1] for p in pairs]
        elif isinstance(value, Mapping):
            # a null entry is a label this row lacks (JSON/Parquet structs share one set of keys)
            by_label = {_text(k): v for k, v in value.items() if v is not None}
            labels = sorted(by_label, key=_label_order)
            texts = _option_texts([by_label[lbl] for lbl in labels], name, ref)
        elif isinstance(value, list | tuple):
            texts = _option_texts(value, name, ref)
        else:
            raise ref.error(f"field {name!r} should hold a list or dict of options, got {type(value).__name__}")
    if len(texts) < 2 or len(texts) > 26:
        raise ref.error(f"options field(s) {'+'.join(mapping.choices)} hold {len(texts)} options (need 2-26)")
    if labels is not None and len(set(labels)) != len(labels):
        raise ref.error(f"options field {mapping.choices[0]!r} repeats a label: {labels}")
    return texts, labels


def _as_index(raw: Any) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    if isinstance(raw, str) and raw.strip().lstrip("-").isdigit():
        return int(raw.strip())
    return None


def gold_letter(raw: Any, texts: list[str], labels: list[str] | None, mapping: FieldMapping, ref: RowRef) -> str:
    """The gold option letter, converted from the form ``mapping.gold`` declares."""
    letters = option_letters(len(texts))
    field = mapping.answer
    if isinstance(raw, str) and not raw.strip():
        raise ref.error(f"field {field!r} is empty: no gold answer (is this an unlabeled split?)")
    if mapping.gold is GoldFormat.LETTER:
        shown = labels or letters
        value = _text(raw)
        for candidate in (value, value.upper()):
            if candidate in shown:
                return letters[shown.index(candidate)]
        raise ref.error(f"gold {raw!r} in field {field!r} is not one of the option labels {shown}")
    if mapping.gold is GoldFormat.TEXT:
        value = _text(raw)
        if value in texts:
            return letters[texts.index(value)]
        raise ref.error(f"gold {raw!r} in field {field!r} is not the text of any of the {len(texts)} options")
    index = _as_index(raw)
    base = 1 if mapping.gold is GoldFormat.INDEX1 else 0
    if index is None or not base <= index < len(texts) + base:
        kind = "1-based" if base else "0-based"
        raise ref.error(f"gold {raw!r} in field {field!r} is not a {kind} index into {len(texts)} options")
    return letters[index - base]


def build_answer(raw: Any, mapping: FieldMapping, ref: RowRef) -> tuple[str, dict[str, Any]]:
    """A non-multiple-choice gold answer (stripped; a numeric one canonical, with ``gold_raw`` kept) and what it
    adds to the metadata. The problem's answer spec is read from these (``answer_spec.py``); here a gold not of
    its type's form is refused with the row it came from."""
    answer = _text(raw)
    if not answer:
        raise ref.error(f"field {mapping.answer!r} is empty: no gold answer (is this an unlabeled split?)")
    if mapping.answer_type is AnswerType.INTEGER:
        if parse_integers(answer) is None:
            raise ref.error(f"gold {answer!r} in field {mapping.answer!r} is not an integer")
        return answer, {}
    if mapping.answer_type is AnswerType.NUMERIC_RANGE:
        ranges = parse_ranges(answer)
        if ranges is None:
            raise ref.error(f"gold {answer!r} in field {mapping.answer!r} is not a number or 'lo to hi' range")
        return range_text(ranges), {"gold_raw": answer}
    return answer, {}


def copy_metadata(row: Row, mapping: FieldMapping) -> dict[str, Any]:
    """The mapped metadata fields that are present and not null, copied."""
    return {name: copy.deepcopy(row[name]) for name in mapping.metadata if row.get(name) is not None}


def build_fields(row: Row, mapping: FieldMapping, ref: RowRef) -> dict[str, Any]:
    """The generic row builder (see :data:`RowBuilder`)."""
    question = build_question(row, mapping, ref)
    raw = get_field(row, mapping.answer, ref)
    metadata = copy_metadata(row, mapping)
    choices: list[str] = []
    labels: list[str] | None = None
    if mapping.choices:
        choices, labels = extract_choices(row, mapping, ref)
    if mapping.answer_type is AnswerType.LETTER:
        answer = gold_letter(raw, choices, labels, mapping, ref)
    else:
        answer, extra = build_answer(raw, mapping, ref)
        metadata.update(extra)
    solution = row.get(mapping.solution) if mapping.solution else None
    return {
        "question": question,
        "choices": choices,
        "answer": answer,
        "answer_type": mapping.answer_type,
        "solution": (_text(solution) or None) if solution is not None else None,
        "metadata": metadata,
    }
