"""``prefdisco validate``: check a benchmark in either format and report every problem with its line.

Accepted inputs: a benchmark folder (manifest + scenarios/personas/attributes), a bare ``scenarios.jsonl``, or
a prefq-bench release JSONL (recognized by the first line that parses having a release ``type``). Unlike the
readers of our format, which stop at the first error, the validator keeps going and returns one
:class:`~prefdisco.release.report.Issue` per problem, sorted by file and line. What is checked:
:mod:`prefdisco.release.bench_checks` (our format); for a release, the importer's own reading
(:mod:`prefdisco.release.reader`, rules in :mod:`prefdisco.release.release_checks`), with its warnings, and
image paths checked on disk as the paper's validator does (``skip_images`` to skip, like its ``--skip-images``).
"""

from __future__ import annotations

import json
from pathlib import Path

from prefdisco.benchio import MANIFEST_FILE, SCENARIOS_FILE, json_lines
from prefdisco.errors import UserError
from prefdisco.release.bench_checks import validate_bench, validate_scenarios_file
from prefdisco.release.format import METADATA_TYPE, RECORD_TYPE
from prefdisco.release.reader import read_release
from prefdisco.release.report import ValidationReport

__all__ = ["validate_bench", "validate_path", "validate_release", "validate_scenarios_file"]


def validate_release(path: Path, skip_images: bool = False) -> ValidationReport:
    """Every error and warning of a prefq-bench release JSONL file."""
    read = read_release(path, check_images=not skip_images)
    return ValidationReport(path, "release", records=read.records, issues=read.issues)


def validate_path(path: Path | str, skip_images: bool = False) -> ValidationReport:
    """Validate a benchmark folder, a scenarios.jsonl file or a prefq-bench release file."""
    path = Path(path)
    if path.is_dir():
        if (path / MANIFEST_FILE).is_file():
            report = validate_bench(path)
        elif (path / SCENARIOS_FILE).is_file():
            report = validate_scenarios_file(path / SCENARIOS_FILE)
        else:
            raise UserError(f"{path}: no {MANIFEST_FILE} or {SCENARIOS_FILE} in this folder")
    elif not path.is_file():
        raise UserError(f"{path}: not found (expected a benchmark folder, scenarios.jsonl or a release JSONL)")
    else:
        report = validate_release(path, skip_images) if _looks_like_release(path) else validate_scenarios_file(path)
    files = list(dict.fromkeys(i.path for i in report.issues))
    report.issues.sort(key=lambda i: (files.index(i.path), i.line))  # stable: a line's issues keep their order
    return report


def _looks_like_release(path: Path) -> bool:
    """Format detection that survives bad lines: the first line that parses decides."""
    for _, value in json_lines(path, errors="replace"):
        if not isinstance(value, json.JSONDecodeError):
            return isinstance(value, dict) and value.get("type") in (METADATA_TYPE, RECORD_TYPE)
    return False
