"""Export scenarios in the paper's released format (``prefq-bench`` JSONL), readable by its evaluator.

The file is the metadata line(s) and one ``personalized_problem`` record per scenario, as ASCII-escaped JSON (the
paper's evaluator opens it in the locale's default encoding; the importer reads escaped and raw UTF-8 alike). An
imported file comes back as it was on everything the paper's code reads (see ``docs/release.md``): its metadata
lines at their places, and per record:

* ``problem_id`` — the scenario id when every id has the paper's ``problem_<i>_<...>`` shape or came from a
  release; otherwise ``problem_<i>_<persona id>`` for all records, ``i`` numbering the distinct problems in order
  of first appearance (a ``_<n>`` suffix keeps ids unique).
* ``original_problem`` (and ``parsed_problem``) — :func:`prefdisco.release.problems.original_problem_row`.
* ``persona`` — :func:`prefdisco.release.personas.persona_to_release`.
* ``persona_preferences``, ``evaluation_rubric`` — :func:`prefdisco.release.profiles_export.release_profile_parts`.
* other keys of the imported record (``generation_success`` among them) as they were; ``generation_success:
  true`` for a scenario of our own.
* ``prefdisco`` — what the paper format cannot hold (scenario id, full Problem and Persona, categories,
  relevant attributes, provenance), so that import → export → import is lossless. The evaluator ignores it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from prefdisco.atomic import atomic_open
from prefdisco.errors import UserError
from prefdisco.release.format import (
    EXTENSION_FORMAT,
    EXTENSION_KEY,
    METADATA_TYPE,
    PROBLEM_ID_RE,
    RECORD_TYPE,
    MetadataLine,
    value_text,
)
from prefdisco.release.personas import RELEASE_KEY as PERSONA_RELEASE_KEY
from prefdisco.release.personas import persona_to_release
from prefdisco.release.problems import original_problem_row
from prefdisco.release.profiles_export import release_profile_parts
from prefdisco.schema import Attribute, Scenario
from prefdisco.version import __version__


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _imported(scenario: Scenario) -> bool:
    return isinstance(scenario.provenance.get("release"), dict)


def scenario_to_record(
    scenario: Scenario, problem_id: str, attributes: dict[str, Attribute] | None = None
) -> dict[str, Any]:
    """One ``personalized_problem`` record for a scenario."""
    release = _mapping(scenario.provenance.get("release"))
    preferences, rubric = release_profile_parts(scenario, attributes)
    row, parsed, is_source = original_problem_row(scenario.problem)
    record: dict[str, Any] = {
        "type": RECORD_TYPE,
        "problem_id": problem_id,
        "original_problem": row,
        "persona": persona_to_release(scenario.persona),
        "persona_preferences": preferences,
        "evaluation_rubric": rubric,
    }
    if parsed is not None:
        record["parsed_problem"] = parsed
    if not _imported(scenario):
        record["generation_success"] = True
    record.update({k: v for k, v in _mapping(release.get("record")).items() if k not in record})

    written = {k.strip(): v for k, v in preferences.items() if isinstance(v, dict)}
    # what the record's own fields hold is not repeated in the extension (the importer reads it back from them)
    problem_dump = scenario.problem.model_dump(mode="json")
    if is_source:
        problem_dump["metadata"] = {
            k: v for k, v in problem_dump["metadata"].items() if k not in ("original_problem", "parsed_problem")
        }
    persona_dump = scenario.persona.model_dump(mode="json")
    persona_is_release = persona_dump["extra"].pop(PERSONA_RELEASE_KEY, None) == record["persona"]
    if not persona_is_release:
        persona_dump = scenario.persona.model_dump(mode="json")
    provenance = dict(scenario.provenance)
    parts_are_source = _imported(scenario)
    provenance.pop("release", None)
    record[EXTENSION_KEY] = {
        "format": EXTENSION_FORMAT,
        "scenario_id": scenario.id,
        "problem": problem_dump,
        "original_problem_is_source": is_source,
        "persona": persona_dump,
        "persona_is_release": persona_is_release,
        "release_parts_are_source": parts_are_source,
        "categories": {i.attribute: i.category for i in scenario.profile.items},
        "preferred_values": {
            c.attribute: c.preferred_value
            for c in scenario.rubric
            if c.preferred_value != value_text(written.get(c.attribute, {}).get("value"))
        },
        "item_descriptions": {
            i.attribute: i.description
            for i in scenario.profile.items
            if i.description != str(written.get(i.attribute, {}).get("description") or "")
        },
        "relevant_attributes": scenario.relevant_attributes,
        "provenance": provenance,
    }
    return record


def release_problem_ids(scenarios: list[Scenario]) -> list[str]:
    """The problem_id of each scenario (see the module docstring)."""
    kept = [s.id for s in scenarios if PROBLEM_ID_RE.match(s.id) or _imported(s)]
    if len(kept) == len(scenarios) and len(set(kept)) == len(kept):
        return kept
    index: dict[tuple[str, str], int] = {}
    ids: list[str] = []
    used: set[str] = set()
    for s in scenarios:
        i = index.setdefault((s.problem.benchmark, s.problem.id), len(index))
        base = f"problem_{i}_{s.persona.id}"
        pid, n = base, 2
        while pid in used:
            pid, n = f"{base}_{n}", n + 1
        used.add(pid)
        ids.append(pid)
    return ids


def default_metadata(scenarios: list[Scenario], library_size: int | None = None) -> MetadataLine:
    """A generator-style metadata line for scenarios that carry none. ``library_size``: the personas of the library
    the scenarios were drawn from (a build's library, most of whose personas a small build may not use); without it,
    the personas the scenarios use."""
    benchmarks = sorted({s.problem.benchmark for s in scenarios})
    per_problem: dict[tuple[str, str], int] = {}
    for s in scenarios:
        key = (s.problem.benchmark, s.problem.id)
        per_problem[key] = per_problem.get(key, 0) + 1
    line = {
        "type": METADATA_TYPE,
        "dataset": benchmarks[0] if len(benchmarks) == 1 else "mixed",
        "general_preferences": {},
        "total_personas_in_library": library_size or len({s.persona.id for s in scenarios}),
        "fixed_persona_library": True,
        "personas_per_problem": max(per_problem.values()),
        "sample_size": len(per_problem),
        "multi_model_generation": False,
        "llm_clients": ["single_model"],
        "generator": f"prefdisco {__version__}",
    }
    return MetadataLine(0, line)


def write_jsonl_atomic(path: Path, lines: Iterable[dict[str, Any]]) -> None:
    """Write JSON objects one per line atomically (see ``prefdisco.atomic``), ASCII-escaped as the paper's own
    files are: its evaluator opens them without naming an encoding, so raw UTF-8 ("Gdańsk") would be misread
    where the locale's default is not UTF-8, while ``"Gda\\u0144sk"`` reads the same under any of them."""

    def write(f: Any) -> None:
        for obj in lines:
            f.write(json.dumps(obj, ensure_ascii=True) + "\n")

    atomic_open(path, write)


def interleave(metadata: Sequence[MetadataLine], records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The file's lines: each metadata line before the record it stood before (past the end: last)."""
    lines: list[dict[str, Any]] = []
    pending = sorted(metadata, key=lambda m: m.at)  # stable: lines at one place keep their order
    for i, record in enumerate(records):
        while pending and pending[0].at <= i:
            lines.append(pending.pop(0).line)
        lines.append(record)
    return lines + [m.line for m in pending]


def export_release(
    scenarios: Iterable[Scenario],
    path: Path | str,
    metadata: Sequence[MetadataLine] | None = None,
    attributes: list[Attribute] | None = None,
    library_size: int | None = None,
) -> int:
    """Write ``scenarios`` as a prefq-bench JSONL file (atomically). Returns the number of records.

    ``metadata`` is the file's metadata lines (an import's, :class:`MetadataLine`; ``[]`` for none); by default
    (None) one line derived from the scenarios (``default_metadata``, with ``library_size``). ``attributes`` (e.g.
    Θ) supply value ranges and descriptions of preferences the scenarios do not carry.
    """
    scenarios = list(scenarios)
    if not scenarios:
        raise UserError(f"{path}: nothing to export (no scenarios)")
    by_name = {a.name: a for a in attributes or []}
    ids = release_problem_ids(scenarios)
    records = [scenario_to_record(s, pid, by_name) for s, pid in zip(scenarios, ids, strict=True)]
    lines = list(metadata) if metadata is not None else [default_metadata(scenarios, library_size)]
    write_jsonl_atomic(Path(path), interleave(lines, records))
    return len(records)
