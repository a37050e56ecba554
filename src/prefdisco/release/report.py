"""What ``prefdisco validate`` reports: one :class:`Issue` per problem, with its file and line.

Also the two ways a problem becomes a message everywhere in the validator: a line that cannot be read
(:func:`read_lines`) and pydantic's own errors of a model built from the data
(:func:`prefdisco.errors.validation_messages`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from prefdisco.benchio import json_lines

Kind = Literal["bench", "scenarios", "release"]


@dataclass(frozen=True)
class Issue:
    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass
class ValidationReport:
    path: Path
    kind: Kind
    records: int = 0
    issues: list[Issue] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.issues

    def summary(self) -> str:
        what = {"bench": "benchmark folder", "scenarios": "scenarios file", "release": "prefq-bench release"}[self.kind]
        noun = "scenario" if self.kind != "release" else "record"
        count = f"{self.records} {noun}{'s' if self.records != 1 else ''}"
        if self.ok:
            return f"{self.path}: valid {what}, {count}"
        return f"{self.path}: {len(self.issues)} problem(s) in {what} ({count} read)"


def read_lines(path: Path, issues: list[Issue]) -> list[tuple[int, Any]]:
    """(line, parsed JSON) for non-blank lines; a JSON syntax error becomes an issue on its line, an unreadable
    file one issue on line 1 (and no lines)."""
    out: list[tuple[int, Any]] = []
    bad: list[Issue] = []
    try:
        for lineno, value in json_lines(path):
            if isinstance(value, json.JSONDecodeError):
                bad.append(Issue(path, lineno, f"invalid JSON: {value.msg} at column {value.colno}"))
            else:
                out.append((lineno, value))
    except (OSError, UnicodeDecodeError) as e:
        issues.append(Issue(path, 1, f"cannot read file ({e})"))
        return []
    issues.extend(bad)
    return out
