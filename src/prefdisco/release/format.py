"""The paper's released format (``prefq-bench`` JSONL): its line types, keys, id pattern and value shapes.

A generator file is one ``type: "metadata"`` line, then ``type: "personalized_problem"`` records; two files
concatenated give a metadata line in the middle, which the paper's validator and evaluator both accept (the
evaluator keeps the last). Its evaluator skips other types. See ``prefdisco_release_format.md`` §1-§3,
``docs/release.md`` and the reader (:mod:`prefdisco.release.reader`) for how a file maps onto our model.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

RECORD_TYPE = "personalized_problem"
METADATA_TYPE = "metadata"
REQUIRED_KEYS = ("problem_id", "original_problem", "persona", "persona_preferences", "evaluation_rubric")
QUESTION_FIELDS = ("query", "question", "problem", "Question", "prompt")
ANSWER_FIELDS = ("correct_answer", "answerKey", "correct_option", "answer_idx", "Answer", "answer", "label")
PROBLEM_ID_RE = re.compile(r"^problem_(\d+)_(.+)$")
EXTENSION_KEY = "prefdisco"
EXTENSION_FORMAT = "prefdisco-release-ext/1"
DEFAULT_BENCHMARK = "prefq-bench"
RELEASE_WEIGHT_TOLERANCE = 0.05
"""The paper's generator warns when criteria weights miss 1 by more than this (``weight_tolerance``)."""

NO_VALUE = "(no value given)"
"""Our text for a blank or null release ``value`` (the judge of the paper sees an empty value); the release's own
value stays in ``provenance["release"]["preferences"]``, so export writes it back exactly."""
NO_DESCRIPTION = "(no description given)"
"""Our text for a blank criterion ``description`` (kept as written in the release part, like :data:`NO_VALUE`)."""

INT_RE = re.compile(r"^-?\d+$")
"""A plain integer's text."""


def int_like(value: Any) -> int | None:
    """An integer written as an int, an integral float or a digit string; else None (bools are not ints)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and INT_RE.match(value.strip()):
        return int(value.strip())
    return None


def non_negative(value: Any) -> float | None:
    """A finite number >= 0 (a weight or importance) as a float; else None (bools are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def value_text(value: Any) -> str:
    """A release preference value as our string value (numbers via str, structures as JSON, blank or null as
    :data:`NO_VALUE`)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return NO_VALUE
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


@dataclass(frozen=True)
class MetadataLine:
    """A metadata line as written (``line`` keeps its ``type``) and where it stood: ``at`` records before it."""

    at: int
    line: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"at": self.at, "line": self.line}

    @classmethod
    def from_json(cls, value: Any) -> MetadataLine | None:
        """From :meth:`to_json`'s shape; a bare metadata object (older manifests) stands first. None otherwise."""
        if isinstance(value, dict) and isinstance(value.get("line"), dict) and isinstance(value.get("at"), int):
            return cls(value["at"], value["line"])
        if isinstance(value, dict):
            return cls(0, {"type": METADATA_TYPE, **value})
        return None
