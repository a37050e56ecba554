"""The paper's released format (``prefq-bench`` JSONL): import, export, and conversion to/from bench folders.

The format and its mapping onto our model are described in :mod:`prefdisco.release.importer` and
:mod:`prefdisco.release.exporter`; this module re-exports their entry points and adds the two
folder-level conversions the CLI runs (``import-release`` and ``export-release``).

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
from pathlib import Path
from typing import Any

from prefdisco.benchio import MANIFEST_FILE, is_release_file, read_bench, read_scenarios, write_bench
from prefdisco.builder.catalogue import load_catalogue
from prefdisco.release.exporter import export_release
from prefdisco.release.importer import import_release
from prefdisco.schema import Attribute, Persona, Scenario

__all__ = [
    "attributes_from_scenarios",
    "export_bench_to_release",
    "export_release",
    "import_release",
    "import_release_to_bench",
    "load_scenarios",
    "parse_value_range",
]

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
        stored = s.provenance.get("release", {}).get("preferences", {}) if isinstance(s.provenance, dict) else {}
        for item in s.profile.items:
            if item.attribute in out:
                continue
            if item.attribute in by_name:
                out[item.attribute] = by_name[item.attribute]
                continue
            raw = stored.get(item.attribute, {}) if isinstance(stored, dict) else {}
            value_range = raw.get("value_range") if isinstance(raw, dict) else None
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


def import_release_to_bench(src: Path | str, out: Path | str) -> dict[str, Any]:
    """Import a prefq-bench JSONL file into a benchmark folder. Returns the manifest written."""

    src = Path(src)
    catalogue = load_catalogue()
    scenarios, metadata = import_release(src, catalogue=catalogue)
    extra = {
        "config": {"source": "prefq-bench", "file": str(src)},
        "source": {
            "kind": "prefq-bench",
            "file": src.name,
            "sha256": hashlib.sha256(src.read_bytes()).hexdigest(),
        },
        "models": {"builder": metadata.get("llm_clients", [])},
        "release_metadata": metadata,
    }
    return write_bench(out, scenarios, unique_personas(scenarios), attributes_from_scenarios(scenarios), extra)


def export_bench_to_release(src: Path | str, out: Path | str) -> int:
    """Export a benchmark folder (or scenarios.jsonl / release file) to a prefq-bench JSONL file."""
    src = Path(src)
    metadata: dict[str, Any] | None = None
    attributes: list[Attribute] | None = None
    if src.is_dir() and (src / MANIFEST_FILE).is_file():
        bench = read_bench(src)
        scenarios, attributes = bench.scenarios, bench.attributes
        stored = bench.manifest.get("release_metadata")
        metadata = stored if isinstance(stored, dict) else None
    else:
        scenarios = load_scenarios(src)
    return export_release(scenarios, out, metadata=metadata, attributes=attributes)


def load_scenarios(path: Path | str) -> list[Scenario]:
    """Scenarios from a benchmark folder, a ``scenarios.jsonl`` file, or a prefq-bench release JSONL."""
    path = Path(path)
    if path.is_file() and is_release_file(path):
        return import_release(path)[0]
    return read_scenarios(path)
