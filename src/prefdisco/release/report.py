"""What ``prefdisco validate`` reports: one :class:`Issue` per problem, with its file and line.

An issue is an error (the benchmark cannot be used as it is) or a warning (accepted, and how it is read); only
errors make a report fail.

Also the two ways a problem becomes a message everywhere in the validator: a line that cannot be read
(:func:`read_lines`) and pydantic's own errors of a model built from the data
(:func:`prefdisco.errors.validation_messages`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from prefdisco.benchio import json_error, json_lines

Kind = Literal["bench", "scenarios", "release", "published"]
Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Issue:
    path: Path
    line: int
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        tag = "warning: " if self.severity == "warning" else ""
        where = f"{self.path}:{self.line}" if self.line else str(self.path)  # line 0: the file as a whole
        return f"{where}: {tag}{self.message}"


@dataclass
class ValidationReport:
    path: Path
    kind: Kind
    records: int = 0
    issues: list[Issue] = field(default_factory=list)

    @property
    def errors(self) -> list[Issue]:
        return [i for i in self.issues if i.severity == "error"]

    @property
    def warnings(self) -> list[Issue]:
        return [i for i in self.issues if i.severity == "warning"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def summary(self) -> str:
        what = {
            "bench": "benchmark folder",
            "scenarios": "scenarios file",
            "release": "prefq-bench release",
            "published": "published benchmark",
        }[self.kind]
        noun = "scenario" if self.kind != "release" else "record"
        count = f"{self.records} {noun}{'s' if self.records != 1 else ''}"
        n_warn = len(self.warnings)
        warned = f", {n_warn} warning{'s' if n_warn != 1 else ''}" if n_warn else ""
        if self.ok:
            return f"{self.path}: valid {what}, {count}{warned}"
        return f"{self.path}: {len(self.errors)} problem(s) in {what} ({count} read{warned})"


def read_lines(path: Path, issues: list[Issue]) -> list[tuple[int, Any]]:
    """(line, parsed JSON) for non-blank lines; a JSON syntax error becomes an issue on its line, an unreadable
    file one issue on line 1 (and no lines)."""
    out: list[tuple[int, Any]] = []
    bad: list[Issue] = []
    try:
        for lineno, value in json_lines(path):
            if isinstance(value, json.JSONDecodeError):
                bad.append(Issue(path, lineno, f"invalid JSON: {json_error(value)}"))
            else:
                out.append((lineno, value))
    except (OSError, UnicodeDecodeError) as e:
        issues.append(Issue(path, 1, f"cannot read file ({e})"))
        return []
    issues.extend(bad)
    return out


def summarized(issues: list[Issue], per_message: int = 10) -> list[str]:
    """The issues as printed lines, at most ``per_message`` of each distinct message (then one line saying how
    many more), so that one warning on every record of a 5,000-record file stays readable."""
    seen: dict[tuple[str, str], int] = {}
    out: list[str] = []
    for issue in issues:
        key = (issue.severity, issue.message)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] <= per_message:
            out.append(str(issue))
    for (severity, message), n in seen.items():
        if n > per_message:
            path = issues[0].path
            out.append(f"{path}: {severity}: … and {n - per_message} more line(s) with: {message}")
    return out
