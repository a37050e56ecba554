"""``prefdisco validate``: check a benchmark in either format and report every problem with its line.

Accepted inputs: a benchmark folder (manifest + scenarios/personas/attributes), a bare ``scenarios.jsonl``,
a folder ``prefdisco publish`` wrote (checked by :mod:`prefdisco.publish.described`), or a prefq-bench release
JSONL (recognized by the first line that parses having a release ``type``). Any other file (a run's results
table, a benchmark's raw rows) is refused in one line saying what it is and what to run instead
(:mod:`prefdisco.release.identify`). Unlike the readers of our format, which stop at the first error, the
validator keeps going and returns one
:class:`~prefdisco.release.report.Issue` per problem, sorted by file and line. What is checked:
:mod:`prefdisco.release.bench_checks` (our format); for a release, the importer's own reading
(:mod:`prefdisco.release.reader`, rules in :mod:`prefdisco.release.release_checks`), with its warnings, and
image paths checked on disk as the paper's validator does (``skip_images`` to skip, like its ``--skip-images``).
"""

from __future__ import annotations

import json
from datetime import UTC
from pathlib import Path

from prefdisco.benchio import MANIFEST_FILE, SCENARIOS_FILE, json_lines
from prefdisco.errors import UserError
from prefdisco.publish.layout import is_published
from prefdisco.release.bench_checks import validate_bench, validate_scenarios_file
from prefdisco.release.format import METADATA_TYPE, RECORD_TYPE
from prefdisco.release.identify import not_a_benchmark
from prefdisco.release.reader import read_release
from prefdisco.release.report import Issue, ValidationReport

__all__ = ["validate_bench", "validate_path", "validate_release", "validate_scenarios_file"]


def validate_release(path: Path, skip_images: bool = False) -> ValidationReport:
    """Every error and warning of a prefq-bench release JSONL file."""
    read = read_release(path, check_images=not skip_images)
    return ValidationReport(path, "release", records=read.records, issues=read.issues)


def validate_published(path: Path) -> ValidationReport:
    """Every problem of a folder ``prefdisco publish`` wrote (:mod:`prefdisco.publish.described`): the data and
    its hash, the card, the Croissant file, eval.yaml and CITATION.cff, one issue each (line 0: the whole file)."""
    from prefdisco.publish.described import check_published

    found = check_published(path)
    issues = [Issue(f.path, 0, f.message, "warning" if f.severity == "warning" else "error") for f in found.items]
    return ValidationReport(path, "published", records=len(found.scenarios), issues=issues)


def reseal_bench(path: Path | str, report: ValidationReport) -> str:
    """Record a changed benchmark folder's new content hash in its manifest (``validate --reseal``), when the hash
    is the folder's only error; the old hash and the time are appended to the manifest's ``resealed`` list. A
    folder with any other error, or not a benchmark folder, is refused in one line; returns what was done."""
    from datetime import datetime

    from prefdisco.atomic import atomic_write
    from prefdisco.benchio import HASHED_FILES, content_hash

    folder = Path(path)
    if not (folder.is_dir() and (folder / MANIFEST_FILE).is_file()):
        raise UserError(f"--reseal: {folder} is not a benchmark folder (a folder with {MANIFEST_FILE})")
    others = [i for i in report.issues if i.severity == "error" and "content_hash" not in i.message]
    if others:
        raise UserError(
            f"--reseal: {folder} has {len(others)} other error(s), first {others[0]}; fix them, then reseal"
        )
    manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    old = manifest.get("content_hash")
    new = content_hash({n: (folder / n).read_bytes() for n in HASHED_FILES})
    if old == new:
        return f"{folder}: content_hash {new} matches the files; nothing to reseal"
    at = datetime.now(UTC).isoformat(timespec="seconds")
    manifest["resealed"] = [*manifest.get("resealed", []), {"previous_hash": old, "at": at}]
    manifest["content_hash"] = new
    atomic_write(folder / MANIFEST_FILE, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return f"resealed {folder}: content_hash {old} -> {new} (the files are valid; the old hash is in manifest.json)"


def validate_path(path: Path | str, skip_images: bool = False) -> ValidationReport:
    """Validate a benchmark folder, a scenarios.jsonl file or a prefq-bench release file."""
    path = Path(path)
    if is_published(path):
        report = validate_published(path)
    elif path.is_dir():
        if (path / MANIFEST_FILE).is_file():
            report = validate_bench(path)
        elif (path / SCENARIOS_FILE).is_file():
            report = validate_scenarios_file(path / SCENARIOS_FILE)
        else:
            raise UserError(f"{path}: no {MANIFEST_FILE} or {SCENARIOS_FILE} in this folder")
    elif not path.is_file():
        raise UserError(f"{path}: not found (expected a benchmark folder, scenarios.jsonl or a release JSONL)")
    elif _looks_like_release(path):
        report = validate_release(path, skip_images)
    else:
        what = not_a_benchmark(path)  # a results table, a benchmark's raw rows, ...: one line, not an error a field
        if what is not None:
            raise UserError(what)
        report = validate_scenarios_file(path)
    files = list(dict.fromkeys(i.path for i in report.issues))
    report.issues.sort(key=lambda i: (files.index(i.path), i.line))  # stable: a line's issues keep their order
    return report


def _looks_like_release(path: Path) -> bool:
    """Format detection that survives bad lines: the first line that parses decides."""
    for _, value in json_lines(path, errors="replace"):
        if not isinstance(value, json.JSONDecodeError):
            return isinstance(value, dict) and value.get("type") in (METADATA_TYPE, RECORD_TYPE)
    return False
