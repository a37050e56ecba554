"""How the fields of a dataset row become a :class:`~prefdisco.schema.Problem`: the :class:`FieldMapping`.

A mapping names the row fields that hold the question, the options, the gold answer and (optionally) an id, a
worked solution and extra metadata, and says how the gold answer of a multiple-choice item is written.

Options (``choices``) may be given as

* one field holding a list of option texts (``["3", "4", "5"]``, letters A, B, ... in list order);
* one field holding a dict keyed by option label (``{"A": "...", "B": "..."}``, labels in sorted order,
  numeric labels in numeric order);
* one field holding ``{"label": [...], "text": [...]}`` (CommonsenseQA style; single-letter labels are put in
  letter order, other labels keep their given order);
* several fields, one option each (``answerA+answerB+answerC``).

A list or dict that arrives as a string (a CSV cell) is parsed as JSON or as a Python literal.

How a multiple-choice gold answer is written is never guessed; ``gold`` must say it:

* ``letter``: an option label (``"B"``; for dict / label-text options: one of the labels);
* ``index0``: a 0-based integer index into the options (``1`` is B);
* ``index1``: a 1-based integer index (``"2"`` is B);
* ``text``: the option text itself.

Non-multiple-choice gold answers are kept verbatim (as a stripped string).

Compact string form (:func:`parse_mapping`, for the command line): comma-separated ``key=value`` pairs;
a value naming several fields joins them with ``+``. Keys: ``question`` (required; several fields are joined
with a blank line, empty ones skipped), ``answer`` (required), ``answer_type`` or ``type`` (letter, integer,
latex, numeric_range, free_text; default free_text, or letter when ``choices`` is given), ``choices``,
``gold``, ``id``, ``solution``, ``domain`` (a label, not a field), ``metadata`` (fields copied into
``Problem.metadata``). Example::

    question=context+query,choices=options,answer=correct_option,gold=index0,domain=logic

Field names containing ``,``, ``=`` or ``+`` cannot be written in the compact form (build a
:class:`FieldMapping` in Python instead).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from prefdisco.errors import UserError, describe_validation_error
from prefdisco.schema import AnswerType


class GoldFormat(StrEnum):
    """How a multiple-choice gold answer is written in the data."""

    LETTER = "letter"
    INDEX0 = "index0"
    INDEX1 = "index1"
    TEXT = "text"


def _as_fields(value: Any) -> Any:
    """Accept ``"a"`` or ``"a+b"`` wherever a tuple of field names is expected."""
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split("+"))
    if isinstance(value, list):
        return tuple(value)
    return value


class FieldMapping(BaseModel):
    """Which row fields hold what; see the module docstring."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question: tuple[str, ...] = Field(min_length=1, description="field(s) joined into the question text")
    answer: str = Field(min_length=1, description="field holding the gold answer")
    answer_type: AnswerType = AnswerType.FREE_TEXT
    choices: tuple[str, ...] = Field(default=(), description="one options field, or one field per option")
    gold: GoldFormat | None = Field(default=None, description="how a multiple-choice gold answer is written")
    id: str | None = Field(default=None, description="field holding a unique problem id")
    solution: str | None = Field(default=None, description="field holding a worked solution (optional)")
    domain: str = Field(default="general", min_length=1, description="domain label for every problem")
    metadata: tuple[str, ...] = Field(default=(), description="fields copied into Problem.metadata if present")
    question_joiner: str = "\n\n"

    @field_validator("question", "choices", "metadata", mode="before")
    @classmethod
    def _split_fields(cls, value: Any) -> Any:
        return _as_fields(value)

    @field_validator("question", "choices", "metadata")
    @classmethod
    def _non_empty_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not name.strip() for name in value):
            raise ValueError("field names must be non-empty")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> FieldMapping:
        if self.answer_type is AnswerType.LETTER:
            if not self.choices:
                raise ValueError("answer_type letter needs choices (the field or fields holding the options)")
            if self.gold is None:
                raise ValueError("answer_type letter needs gold: one of letter, index0, index1, text")
        elif self.gold is not None:
            raise ValueError(f"gold applies only to answer_type letter, not {self.answer_type.value}")
        return self

    def required_fields(self, *, with_id: bool = True) -> list[str]:
        """The fields every row must have (solution and metadata fields are optional)."""
        fields = [*self.question, self.answer, *self.choices]
        if with_id and self.id:
            fields.append(self.id)
        return list(dict.fromkeys(fields))


_KEYS = ("question", "answer", "answer_type", "choices", "gold", "id", "solution", "domain", "metadata")
_ALIASES = {"type": "answer_type"}


def parse_mapping(text: str) -> FieldMapping:
    """Parse the compact form ``question=problem,answer=answer,answer_type=latex`` (see module docstring)."""
    values: dict[str, str] = {}
    for raw in text.split(","):
        part = raw.strip()
        if not part:
            continue
        key, sep, value = part.partition("=")
        key = _ALIASES.get(key.strip().lower(), key.strip().lower())
        if not sep:
            raise UserError(f"mapping: {part!r} is not key=value (keys: {', '.join(_KEYS)})")
        if key not in _KEYS:
            raise UserError(f"mapping: unknown key {key!r} (keys: {', '.join(_KEYS)})")
        if key in values:
            raise UserError(f"mapping: key {key!r} given twice")
        if not value.strip():
            raise UserError(f"mapping: key {key!r} has no value")
        values[key] = value.strip()
    for needed in ("question", "answer"):
        if not values.get(needed):
            raise UserError(f"mapping: {needed}=<field> is required (got {text!r})")
    if "answer_type" not in values:
        values["answer_type"] = AnswerType.LETTER.value if values.get("choices") else AnswerType.FREE_TEXT.value
    try:
        return FieldMapping.model_validate(values)
    except ValidationError as err:
        raise UserError(describe_validation_error(err, "mapping")) from None
