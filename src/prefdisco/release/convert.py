"""The paper's released format (``prefq-bench`` JSONL): import, export, and conversion to/from bench folders.

The format and its mapping onto our model are described in :mod:`prefdisco.release.reader`,
:mod:`prefdisco.release.importer` and :mod:`prefdisco.release.exporter` (and ``docs/release.md``); this module
adds the folder-level conversions the CLI runs (``import-release``, ``export-release``) and
:func:`load_scenarios`, which reads any of the three inputs for ``eval``.

A release imported into a benchmark folder keeps its metadata lines (``release_metadata`` in the manifest) and
its images (copied into the folder under their relative paths); exported, both come back: the metadata lines at
their places, the images next to the written file. A scenarios file or benchmark folder of our own is exported
with the value ranges of its attributes (the folder's, else Θ's).

Attributes of an imported release: every preference name becomes one :class:`Attribute` (a catalogue name
keeps its catalogue entry). Its description is the release's; its value space is parsed from the release's
``value_range`` ("1-5 (1: a, 3: b, 5: c)" → ``["1: a", "3: b", "5: c"]``; "categorical: x / y / z" →
``["x", "y", "z"]``; anything else → ``["1: low", "5: high"]``); its category is the item's (see the
importer), or "communication" when unknown — the paper's "personal" dimensions are mostly about how an
answer is presented.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefdisco.benchio import (
    MANIFEST_FILE,
    check_not_bench_file,
    is_release_file,
    read_bench,
    read_scenarios,
    write_bench,
)
from prefdisco.builder.catalogue import load_catalogue
from prefdisco.errors import UserError
from prefdisco.publish.layout import is_published
from prefdisco.release.exporter import export_release
from prefdisco.release.format import MetadataLine
from prefdisco.release.images import copy_images, local_path
from prefdisco.release.reader import ReleaseRead, import_release
from prefdisco.release.report import Issue, summarized
from prefdisco.schema import Attribute, Persona, Scenario

FALLBACK_CATEGORY = "communication"
_ANCHOR_SPLIT = re.compile(r"[,;]\s*(?=-?\d+(?:\.\d+)?\s*[:=-])")


def parse_value_range(text: str) -> list[str]:
    """A value space (>= 2 entries) from a release ``value_range`` string (see the module docstring)."""
    text = (text or "").strip()
    inner = re.search(r"\((.*)\)\s*$", text)
    if inner:
        anchors = [a.strip() for a in _ANCHOR_SPLIT.split(inner.group(1)) if a.strip()]
        if len(anchors) >= 2:
            return anchors
    body = re.sub(r"^(categorical|categories|options|values)\s*:\s*", "", text, flags=re.IGNORECASE)
    for sep in ("/", "|", ";", ","):
        parts = [p.strip() for p in body.split(sep) if p.strip()]
        if len(parts) >= 2:
            return parts
    return ["1: low", "5: high"]


def attributes_from_scenarios(scenarios: list[Scenario], catalogue: list[Attribute] | None = None) -> list[Attribute]:
    """One Attribute per distinct profile attribute, in order of first appearance."""
    by_name = {a.name: a for a in catalogue or []}
    out: dict[str, Attribute] = {}
    for s in scenarios:
        release = s.provenance.get("release")
        stored = release.get("preferences") if isinstance(release, dict) else None
        raw = {k.strip(): v for k, v in stored.items()} if isinstance(stored, dict) else {}
        for item in s.profile.items:
            if item.attribute in out:
                continue
            if item.attribute in by_name:
                out[item.attribute] = by_name[item.attribute]
                continue
            entry = raw.get(item.attribute)
            value_range = entry.get("value_range") if isinstance(entry, dict) else None
            out[item.attribute] = Attribute(
                name=item.attribute,
                category=item.category or FALLBACK_CATEGORY,
                description=item.description or f"{item.attribute} (no description in the source)",
                value_space=parse_value_range(value_range if isinstance(value_range, str) else ""),
            )
    return list(out.values())


def unique_personas(scenarios: list[Scenario]) -> list[Persona]:
    """The personas of the scenarios, first occurrence of each id, in order."""
    seen: dict[str, Persona] = {}
    for s in scenarios:
        seen.setdefault(s.persona.id, s.persona)
    return list(seen.values())


def scenario_images(scenarios: list[Scenario]) -> list[str]:
    """The relative image paths the scenarios' problems name, once each, in order."""
    paths = (s.problem.metadata.get("image") for s in scenarios)
    return list(dict.fromkeys(rel for p in paths if isinstance(p, str) and (rel := local_path(p))))


@dataclass
class ImportSummary:
    manifest: dict[str, Any]
    read: ReleaseRead
    images: list[str] = field(default_factory=list)
    """Copied into the folder."""


def import_release_to_bench(src: Path | str, out: Path | str, skip_invalid: bool = False) -> ImportSummary:
    """Import a prefq-bench JSONL file into a benchmark folder (nothing is written when a line cannot be scored,
    unless ``skip_invalid``: see :func:`~prefdisco.release.reader.import_release`)."""
    src, out = Path(src), Path(out)
    catalogue = load_catalogue()
    read = import_release(src, catalogue=catalogue, skip_invalid=skip_invalid)
    scenarios = read.scenarios
    first = read.metadata[0].line if read.metadata else {}
    copied, _ = copy_images(scenario_images(scenarios), src.parent, out)
    extra = {
        "config": {"source": "prefq-bench", "file": str(src)},
        "source": {
            "kind": "prefq-bench",
            "file": src.name,
            "sha256": hashlib.sha256(src.read_bytes()).hexdigest(),
            "warnings": len(read.warnings),
            "skipped_lines": [line for line, _ in read.error_lines()],
        },
        "models": {"builder": first.get("llm_clients", [])},
        "release_metadata": [m.to_json() for m in read.metadata],
        "release_images": copied,
    }
    manifest = write_bench(out, scenarios, unique_personas(scenarios), attributes_from_scenarios(scenarios), extra)
    return ImportSummary(manifest, read, copied)


@dataclass
class ExportSummary:
    records: int
    images: list[str] = field(default_factory=list)
    missing_images: list[str] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    """Of reading a release file given as the source: warnings, and (``skip_invalid``) the lines skipped."""


def _stored_metadata(value: Any) -> list[MetadataLine] | None:
    if value is None:
        return None
    items = value if isinstance(value, list) else [value]
    lines = [m for m in (MetadataLine.from_json(v) for v in items) if m is not None]
    return lines


def library_size(manifest: dict[str, Any], held: int) -> int:
    """The personas of the library a benchmark folder was built from: the build's library (``build_counts``), of
    which the folder holds only the personas its scenarios use; else the ``held`` personas of the folder."""
    counts = manifest.get("build_counts")
    size = counts.get("library_personas") if isinstance(counts, dict) else None
    return size if isinstance(size, int) and size >= held else held


def export_bench_to_release(src: Path | str, out: Path | str, skip_invalid: bool = False) -> ExportSummary:
    """Export a benchmark folder, scenarios.jsonl or release file to a prefq-bench JSONL file, with its images."""
    src, out = Path(src), Path(out)
    metadata: list[MetadataLine] | None = None
    issues: list[Issue] = []
    library: int | None = None
    if src.is_dir() and (src / MANIFEST_FILE).is_file():
        bench = read_bench(src)
        scenarios, attributes, images_dir = bench.scenarios, bench.attributes, src
        metadata = _stored_metadata(bench.manifest.get("release_metadata"))
        library = library_size(bench.manifest, len(bench.personas))
    elif src.is_file() and is_release_file(src):
        read = import_release(src, skip_invalid=skip_invalid)
        scenarios, attributes, images_dir = read.scenarios, load_catalogue(), src.parent
        metadata, issues = read.metadata, read.issues
    else:
        scenarios, attributes = read_scenarios(src), load_catalogue()
        images_dir = src if src.is_dir() else src.parent
    if not scenarios:
        raise UserError(f"{src}: nothing to export (no scenarios)")
    copied, missing = copy_images(scenario_images(scenarios), images_dir, out.parent)
    n = export_release(scenarios, out, metadata=metadata, attributes=attributes, library_size=library)
    return ExportSummary(n, copied, missing, issues)


def print_issues(issues: list[Issue]) -> None:
    """The default ``warn`` of :func:`load_scenarios`: the issues on stderr (skipped lines as such; at most ten
    lines of one warning, see :func:`~prefdisco.release.report.summarized`)."""
    for text in summarized([i for i in issues if i.severity == "warning"]):
        print(text, file=sys.stderr)
    for issue in issues:
        if issue.severity == "error":
            print(f"{issue.path}:{issue.line}: skipped: {issue.message}", file=sys.stderr)


def load_scenarios(
    path: Path | str, skip_invalid: bool = False, warn: Callable[[list[Issue]], None] = print_issues
) -> list[Scenario]:
    """Scenarios from a benchmark folder, a ``scenarios.jsonl`` file, a prefq-bench release JSONL or a folder
    ``prefdisco publish`` wrote. A release
    file's warnings (and, with ``skip_invalid``, the lines it skipped) go to ``warn``."""
    path = Path(path)
    if is_published(path):  # a folder `prefdisco publish` wrote: its Parquet rows, the hash checked
        from prefdisco.publish.reader import read_published

        return read_published(path).scenarios
    check_not_bench_file(path)
    if path.is_file() and is_release_file(path):
        read = import_release(path, skip_invalid=skip_invalid)
        warn(read.issues)
        return read.scenarios
    return read_scenarios(path)
