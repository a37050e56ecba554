"""Read a prefq-bench JSONL file: its scenarios, metadata lines, and every error and warning with its line.

One pass applies the rules of :mod:`prefdisco.release.release_checks` to every line, then converts each sound
record (:func:`prefdisco.release.importer.scenario_from_record`); the importer (:func:`import_release`) and
``prefdisco validate`` both read through it, so both apply the same rules. Line rules:

* a line that is not JSON, not an object, or has no ``type`` — an error (the paper's validator rejects it);
* ``type: "metadata"`` — kept, as written and where it stood (:class:`~prefdisco.release.format.MetadataLine`),
  wherever it stands: two generator files concatenated give a second one, a warning; the records after a
  metadata line are read with its ``dataset``;
* another ``type`` — skipped with a warning, as the paper's evaluator does (an error when it lacks the paper
  validator's required keys);
* a duplicate ``problem_id`` — an error on the later line;
* an image path that is not on disk — a warning (an error for ``validate``, as in the paper's validator);
* no record at all — an error.

A line with an error is a record nothing can score. :func:`import_release` writes nothing then and raises one
error listing every such line, unless ``skip_invalid``: then it returns the rest, and ``errors`` lists what it
skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefdisco.builder.catalogue import load_catalogue
from prefdisco.errors import UserError, validation_messages
from prefdisco.release.format import METADATA_TYPE, RECORD_TYPE, MetadataLine
from prefdisco.release.images import local_path, record_image
from prefdisco.release.importer import scenario_from_record
from prefdisco.release.record_error import RecordModelError
from prefdisco.release.release_checks import paper_validator_errors, record_findings
from prefdisco.release.report import Issue, Severity, read_lines
from prefdisco.schema import Attribute, Scenario

_WHERE = "record"


@dataclass
class ReleaseRead:
    """What reading a release file found (``issues`` in line order)."""

    path: Path
    scenarios: list[Scenario] = field(default_factory=list)
    metadata: list[MetadataLine] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    records: int = 0

    @property
    def errors(self) -> list[Issue]:
        return [i for i in self.issues if i.severity == "error"]

    @property
    def warnings(self) -> list[Issue]:
        """The warnings of the lines that are used (a skipped line's are moot; ``issues`` keeps them)."""
        bad = {i.line for i in self.errors}
        return [i for i in self.issues if i.severity == "warning" and i.line not in bad]

    def error_lines(self) -> list[tuple[int, list[str]]]:
        """(line, its error messages) per line with an error, in line order."""
        by_line: dict[int, list[str]] = {}
        for issue in self.errors:
            by_line.setdefault(issue.line, []).append(issue.message)
        return sorted(by_line.items())


def _conversion_errors(error: UserError) -> list[str]:
    if isinstance(error, RecordModelError):
        prefix = f"{error.part}: " if error.part else ""
        return [prefix + m for m in validation_messages(error.error)]
    return [str(error).removeprefix(f"{_WHERE}: ")]


class _Reader:
    def __init__(self, path: Path, catalogue: list[Attribute] | None, check_images: bool) -> None:
        self.read = ReleaseRead(path)
        self.catalogue = catalogue
        self.check_images = check_images
        self.dataset: str | None = None
        self.ids: dict[str, int] = {}

    def issue(self, line: int, message: str, severity: Severity = "error") -> None:
        self.read.issues.append(Issue(self.read.path, line, message, severity))

    def duplicate(self, lineno: int, obj: dict[str, Any]) -> bool:
        pid = obj.get("problem_id")
        if not isinstance(pid, str):
            return False
        if pid in self.ids:
            self.issue(lineno, f"duplicate problem_id {pid!r} (first on line {self.ids[pid]})")
            return True
        self.ids[pid] = lineno
        return False

    def metadata(self, index: int, lineno: int, obj: dict[str, Any]) -> None:
        read = self.read
        if index > 0:
            where = f"after {read.records} record(s)" if read.records else "not on the first line"
            second = " (two generator files concatenated?)" if read.metadata else ""
            self.issue(lineno, f"a metadata line {where}{second}: kept at its place", "warning")
        read.metadata.append(MetadataLine(len(read.scenarios), obj))
        self.dataset = obj["dataset"] if isinstance(obj.get("dataset"), str) else None

    def other(self, lineno: int, obj: dict[str, Any]) -> None:
        errors = paper_validator_errors(obj)
        if "type" in obj and not errors:
            self.issue(
                lineno, f"line type {obj['type']!r} is not a record: skipped, as the paper's evaluator does", "warning"
            )
        for message in errors:
            self.issue(lineno, message)
        self.duplicate(lineno, obj)

    def image(self, lineno: int, obj: dict[str, Any]) -> None:
        """A relative image path the record names that is not on disk is an issue on its line."""
        image = record_image(obj)
        rel = local_path(image) if image else None
        if rel is None:
            return
        if not (self.read.path.parent / rel).is_file():
            where = self.read.path.parent / rel
            if self.check_images:
                self.issue(lineno, f"missing image {where} (the paper's validator; skip with --skip-images)")
            else:
                self.issue(
                    lineno,
                    f"image {where} not found (only an --image run of the paper's evaluator reads it)",
                    "warning",
                )

    def record(self, lineno: int, obj: dict[str, Any]) -> None:
        read = self.read
        read.records += 1
        findings = record_findings(obj)
        errors = list(findings.errors)
        duplicate = self.duplicate(lineno, obj)
        for message in findings.warnings:
            self.issue(lineno, message, "warning")
        self.image(lineno, obj)
        if not errors and not duplicate:
            try:
                scenario = scenario_from_record(
                    obj,
                    where=_WHERE,
                    dataset=self.dataset,
                    catalogue=self.catalogue,
                    source={"release_file": read.path.name, "release_line": lineno},
                )
            except UserError as e:
                errors = _conversion_errors(e)
            else:
                read.scenarios.append(scenario)
        for message in errors:
            self.issue(lineno, message)


def read_release(
    path: Path | str, catalogue: list[Attribute] | None = None, *, check_images: bool = False
) -> ReleaseRead:
    """Every line of a release file (see the module docstring). ``catalogue`` only sets item categories."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: file not found (expected a prefq-bench JSONL file)")
    reader = _Reader(path, catalogue, check_images)
    read = reader.read
    for index, (lineno, obj) in enumerate(read_lines(path, read.issues)):
        if not isinstance(obj, dict):
            reader.issue(lineno, f"expected a JSON object, got {type(obj).__name__}")
        elif obj.get("type") == METADATA_TYPE:
            reader.metadata(index, lineno, obj)
        elif obj.get("type") == RECORD_TYPE:
            reader.record(lineno, obj)
        else:
            reader.other(lineno, obj)
    read.issues.sort(key=lambda i: i.line)  # stable: a line's issues keep their order
    if read.records == 0:
        read.issues.append(Issue(path, 1, f"no {RECORD_TYPE!r} records in the file"))
    return read


def unscorable_message(read: ReleaseRead, skip_invalid: bool) -> str:
    """The one error of an import that found records nothing can score."""
    lines = read.error_lines()
    listed = "; ".join(
        f"{read.path}:{line}: {msgs[0]}" + (f" (+{len(msgs) - 1} more)" if len(msgs) > 1 else "")
        for line, msgs in lines
    )
    if not read.scenarios:
        return f"{read.path}: nothing to import: {listed}"
    hint = "" if skip_invalid else "; --skip-invalid imports the rest"
    n = len(lines)
    return f"{read.path}: {n} line{'s' if n != 1 else ''} cannot be scored, nothing written{hint}: {listed}"


def import_release(
    path: Path | str, catalogue: list[Attribute] | None = None, *, skip_invalid: bool = False
) -> ReleaseRead:
    """Read a prefq-bench JSONL file for use: UserError listing every line nothing can score, unless
    ``skip_invalid`` (then those lines are left out and listed in ``errors``). ``catalogue`` (default: the packaged
    Θ) only sets each preference item's category, through dedup."""
    read = read_release(path, load_catalogue() if catalogue is None else catalogue)
    if read.errors and (not skip_invalid or not read.scenarios):
        raise UserError(unscorable_message(read, skip_invalid))
    return read
