"""Import the paper's released benchmark format (``prefq-bench`` JSONL) into :class:`Scenario` objects.

Line types (:mod:`prefdisco.release.format`): one optional ``type: "metadata"`` line (first), then
``type: "personalized_problem"`` records; other types are skipped. Each record becomes one Scenario (id =
``problem_id``), from three parts:

* **Problem** — :mod:`prefdisco.release.problems` (``original_problem``, the evaluator's normalization rules;
  benchmark, domain and answer type from the benchmark registry for the metadata line's ``dataset``);
* **Persona** — :mod:`prefdisco.release.personas` (the paper's persona object; unmapped fields kept);
* **Profile and rubric** — :mod:`prefdisco.release.profiles` (one item and criterion per evaluation criterion,
  weights renormalized, the missing levels 2 and 4 interpolated).

Record keys with no place in our model are kept in ``provenance["release"]["record"]``. A record written by
:func:`prefdisco.release.exporter.export_release` carries a ``prefdisco`` key with what the paper format cannot
express (our ids, persona, provenance); when present it is authoritative for those fields.

A model that fails validation raises :class:`~prefdisco.release.record_error.RecordModelError` (a
``UserError`` keeping pydantic's errors); any other problem a one-line ``UserError`` naming file and line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from prefdisco.builder.catalogue import load_catalogue
from prefdisco.errors import UserError
from prefdisco.release.format import (
    DEFAULT_BENCHMARK,
    EXTENSION_FORMAT,
    EXTENSION_KEY,
    METADATA_TYPE,
    RECORD_TYPE,
    REQUIRED_KEYS,
    iter_release_lines,
)
from prefdisco.release.personas import persona_from_release
from prefdisco.release.problems import problem_from_release
from prefdisco.release.profiles import profile_and_rubric
from prefdisco.release.record_error import RecordModelError
from prefdisco.schema import Attribute, Persona, PreferenceProfile, Problem, RubricCriterion, Scenario

_RECORD_KNOWN = {"type", *REQUIRED_KEYS, "parsed_problem", "generation_success", EXTENSION_KEY}


def scenario_from_record(
    record: dict[str, Any],
    *,
    where: str,
    dataset: str | None = None,
    catalogue: list[Attribute] | None = None,
    source: dict[str, Any] | None = None,
) -> Scenario:
    """Convert one ``personalized_problem`` record (already parsed) into a Scenario."""
    missing = [k for k in REQUIRED_KEYS if k not in record]
    if missing:
        raise UserError(f"{where}: record is missing required key(s) {', '.join(missing)}")
    problem_id = record["problem_id"]
    if not isinstance(problem_id, str) or not problem_id.strip():
        raise UserError(f"{where}: problem_id must be a non-empty string")
    profile, rubric, provenance = profile_and_rubric(record, where, catalogue)
    ext = record.get(EXTENSION_KEY)
    if isinstance(ext, dict) and ext.get("format") == EXTENSION_FORMAT:
        return _scenario_from_extension(record, ext, profile, rubric, where)
    problem = problem_from_release(record, dataset, where)
    persona = persona_from_release(record["persona"], where)
    others = {k: v for k, v in record.items() if k not in _RECORD_KNOWN}
    if others:
        provenance["release"]["record"] = others
    try:
        return Scenario(
            id=problem_id,
            problem=problem,
            persona=persona,
            profile=profile,
            rubric=rubric,
            relevant_attributes=[i.attribute for i in profile.items],
            provenance={"source": DEFAULT_BENCHMARK, **(source or {}), **provenance},
        )
    except ValidationError as e:
        raise RecordModelError(where, "", e) from e


def _scenario_from_extension(
    record: dict[str, Any],
    ext: dict[str, Any],
    profile: PreferenceProfile,
    rubric: list[RubricCriterion],
    where: str,
) -> Scenario:
    try:
        problem_data = dict(ext["problem"])
        if ext.get("original_problem_is_source"):
            problem_data["metadata"] = {
                **problem_data.get("metadata", {}),
                "original_problem": record["original_problem"],
            }
        categories = ext.get("categories", {})
        preferred = ext.get("preferred_values", {})
        descriptions = ext.get("item_descriptions", {})
        items = [
            i.model_copy(
                update={
                    "category": categories.get(i.attribute),
                    "description": descriptions.get(i.attribute, i.description),
                }
            )
            for i in profile.items
        ]
        rubric = [
            c.model_copy(update={"preferred_value": preferred[c.attribute]}) if c.attribute in preferred else c
            for c in rubric
        ]
        return Scenario(
            id=ext["scenario_id"],
            problem=Problem.model_validate(problem_data),
            persona=Persona.model_validate(ext["persona"]),
            profile=PreferenceProfile(items=items),
            rubric=rubric,
            relevant_attributes=ext.get("relevant_attributes", []),
            provenance=ext.get("provenance", {}),
        )
    except (KeyError, TypeError) as e:
        raise UserError(f"{where}: the {EXTENSION_KEY!r} key is malformed (missing {e})") from e
    except ValidationError as e:
        raise RecordModelError(where, EXTENSION_KEY, e) from e


def import_release(path: Path | str, catalogue: list[Attribute] | None = None) -> tuple[list[Scenario], dict[str, Any]]:
    """Read a prefq-bench JSONL file: (scenarios in file order, metadata line without ``type`` or {}).

    ``catalogue`` (default: the packaged Θ) only sets each preference item's category, through dedup.
    """
    if catalogue is None:
        catalogue = load_catalogue()
    path = Path(path)
    metadata: dict[str, Any] = {}
    scenarios: list[Scenario] = []
    seen: dict[str, int] = {}
    for index, (lineno, obj) in enumerate(iter_release_lines(path)):
        kind = obj.get("type")
        where = f"{path}:{lineno}"
        if kind == METADATA_TYPE:
            if index != 0:
                raise UserError(f"{where}: a metadata line must be the first line of the file")
            metadata = {k: v for k, v in obj.items() if k != "type"}
            continue
        if kind != RECORD_TYPE:
            continue
        dataset = metadata.get("dataset") if isinstance(metadata.get("dataset"), str) else None
        scenario = scenario_from_record(
            obj,
            where=where,
            dataset=dataset,
            catalogue=catalogue,
            source={"release_file": path.name, "release_line": lineno},
        )
        if scenario.id in seen:
            raise UserError(f"{where}: duplicate problem_id {scenario.id!r} (first on line {seen[scenario.id]})")
        seen[scenario.id] = lineno
        scenarios.append(scenario)
    if not scenarios:
        raise UserError(f"{path}: no {RECORD_TYPE!r} records found")
    return scenarios, metadata
