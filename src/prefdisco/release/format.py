"""The paper's released format (``prefq-bench`` JSONL): its line types, keys, id pattern and value shapes.

A file is one optional ``type: "metadata"`` line (first), then ``type: "personalized_problem"`` records; the
release's own reader skips other types. See ``prefdisco_release_format.md`` §1-§3 and the importer
(:mod:`prefdisco.release.importer`) for how a record maps onto our model.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from prefdisco.benchio import json_lines
from prefdisco.errors import UserError

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
    """A release preference value as our string value (numbers via str, structures as JSON)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def iter_release_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(1-based line number, parsed object) for every non-blank line; UserError on bad JSON."""
    if not path.is_file():
        raise UserError(f"{path}: file not found (expected a prefq-bench JSONL file)")
    out: list[tuple[int, dict[str, Any]]] = []
    for lineno, obj in json_lines(path):
        if isinstance(obj, json.JSONDecodeError):
            raise UserError(f"{path}:{lineno}: invalid JSON ({obj.msg} at column {obj.colno})") from obj
        if not isinstance(obj, dict):
            raise UserError(f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}")
        out.append((lineno, obj))
    return out
