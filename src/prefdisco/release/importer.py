"""One release record (``type: "personalized_problem"``, already parsed) → one :class:`Scenario`.

The file around it (metadata lines, line rules, warnings, skipped records) is the reader's
(:mod:`prefdisco.release.reader`). A record becomes one Scenario (id = ``problem_id``), from three parts:

* **Problem** — :mod:`prefdisco.release.problems` (``original_problem``, the evaluator's normalization rules;
  benchmark, domain and answer type from the benchmark registry for the metadata line's ``dataset``);
* **Persona** — :mod:`prefdisco.release.personas` (the paper's persona object, kept as written);
* **Profile and rubric** — :mod:`prefdisco.release.profiles` (one item and criterion per scored preference, the
  later criterion winning as in the evaluator, weights divided by their sum, missing levels filled for scoring).

Record keys with no place in our model (``generation_success`` among them) are kept in
``provenance["release"]["record"]``. A record written by
:func:`prefdisco.release.exporter.export_release` carries a ``prefdisco`` key with what the paper format cannot
express (our ids, persona, provenance); when present it is authoritative for those fields, and the parts it
leaves to the record's own fields (source row, persona object, release parts) are read from them.

A model that fails validation raises :class:`~prefdisco.release.record_error.RecordModelError` (a
``UserError`` keeping pydantic's errors); any other problem a one-line ``UserError`` naming file and line.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from prefdisco.errors import UserError
from prefdisco.release.format import (
    DEFAULT_BENCHMARK,
    EXTENSION_FORMAT,
    EXTENSION_KEY,
    REQUIRED_KEYS,
)
from prefdisco.release.personas import RELEASE_KEY as PERSONA_RELEASE_KEY
from prefdisco.release.personas import persona_from_release
from prefdisco.release.problems import problem_from_release
from prefdisco.release.profiles import profile_and_rubric
from prefdisco.release.record_error import RecordModelError
from prefdisco.schema import Attribute, Persona, PreferenceProfile, Problem, RubricCriterion, Scenario

_RECORD_KNOWN = {"type", *REQUIRED_KEYS, "parsed_problem", EXTENSION_KEY}


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
    profile, rubric, provenance = profile_and_rubric(
        record["persona_preferences"], record["evaluation_rubric"], where, catalogue
    )
    ext = record.get(EXTENSION_KEY)
    others = {k: v for k, v in record.items() if k not in _RECORD_KNOWN}
    if others:
        provenance["release"]["record"] = others
    if isinstance(ext, dict) and ext.get("format") == EXTENSION_FORMAT:
        return _scenario_from_extension(record, ext, profile, rubric, provenance["release"], where)
    problem = problem_from_release(record, dataset, where)
    persona = persona_from_release(record["persona"], where)
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
    release: dict[str, Any],
    where: str,
) -> Scenario:
    """The scenario an exported record's extension describes; what the extension leaves out because the record's
    paper fields hold it (the source row, the persona object, the release parts) is read back from them."""
    try:
        problem_data = dict(ext["problem"])
        if ext.get("original_problem_is_source"):
            sources = {k: record[k] for k in ("original_problem", "parsed_problem") if k in record}
            problem_data["metadata"] = {**problem_data.get("metadata", {}), **sources}
        persona_data = dict(ext["persona"])
        if ext.get("persona_is_release"):
            persona_data["extra"] = {**persona_data.get("extra", {}), PERSONA_RELEASE_KEY: record["persona"]}
        provenance = dict(ext.get("provenance", {}))
        if ext.get("release_parts_are_source"):
            provenance["release"] = release
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
            persona=Persona.model_validate(persona_data),
            profile=PreferenceProfile(items=items),
            rubric=rubric,
            relevant_attributes=ext.get("relevant_attributes", []),
            provenance=provenance,
        )
    except (KeyError, TypeError) as e:
        raise UserError(f"{where}: the {EXTENSION_KEY!r} key is malformed (missing {e})") from e
    except ValidationError as e:
        raise RecordModelError(where, EXTENSION_KEY, e) from e
