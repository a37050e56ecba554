"""Profile and rubric → a record's ``persona_preferences`` and ``evaluation_rubric`` (the inverse of
:mod:`prefdisco.release.profiles`).

* **Imported, unchanged** — the release parts kept in ``provenance["release"]`` are written back as they were
  (every preference with its key, value, type, value range and extra keys; every criterion, duplicates included,
  with its levels and weight as given), whenever reading them again gives the scenario's profile and rubric.
* **Imported, then edited** — the stored parts, with what the scenario changed written over them: an item's
  value, justification or description; a criterion's description or levels (the given ones only, see below); the
  weights, all of them as profile weights when any changed. A preference dropped from the profile loses its entry
  and criterion; a new one gets a built entry.
* **Built by us** — ``persona_preferences`` keyed by attribute, with name, description, value_range (the
  attribute's value space, e.g. from Θ), value, local_importance, justification, type, problem_context; a value
  is written as a number when its text is a plain number (the paper's PEP counts only numeric values);
  ``local_importance`` is ``round(5 · weight / max weight)`` clamped to 1..5; ``type`` is "expertise" for
  knowledge attributes, else "personal"; ``problem_context`` "math problem" for math problems, else "question".
  Criteria: preference, description, weight (the profile weight) and levels in rubric order.

Levels that the importer filled (``provenance["interpolated_levels"]``, ``generic_levels``) are never written
while they still hold the fill text: they exist for scoring only.
"""

from __future__ import annotations

import copy
import math
import re
from typing import Any

from prefdisco.errors import UserError
from prefdisco.release.format import NO_DESCRIPTION, NO_VALUE
from prefdisco.release.profiles import fill_levels, profile_and_rubric
from prefdisco.schema import Attribute, PreferenceItem, PreferenceProfile, RubricCriterion, Scenario

_NUMBER_RE = re.compile(r"^-?\d+(?:\.\d+)?$")


def local_importance(weight: float, max_weight: float) -> int:
    """``round(5 · weight / max_weight)`` (halves up), clamped to 1..5."""
    if max_weight <= 0:
        return 1
    return max(1, min(5, math.floor(5 * weight / max_weight + 0.5)))


def release_value(value: str) -> Any:
    """Our string value as the release writes it: a number when the text is exactly that number's repr, ""
    for :data:`~prefdisco.release.format.NO_VALUE`."""
    if value == NO_VALUE:
        return ""
    if _NUMBER_RE.match(value):
        number: int | float = int(value) if "." not in value else float(value)
        if str(number) == value:
            return number
    return value


def given_levels(scenario: Scenario, crit: RubricCriterion) -> list[dict[str, Any]]:
    """``[{score, description}]`` of the levels that are not the importer's fills."""
    prov = scenario.provenance
    by_criterion = prov.get("interpolated_levels_by_criterion")
    filled = (
        by_criterion.get(crit.attribute, []) if isinstance(by_criterion, dict) else prov.get("interpolated_levels", [])
    )
    generic = prov.get("generic_levels")
    candidates = {*filled, *(generic.get(crit.attribute, []) if isinstance(generic, dict) else [])}
    anchors = {lvl: text for lvl, text in crit.levels.items() if lvl not in candidates}
    description = crit.description.strip() if crit.description != NO_DESCRIPTION else NO_DESCRIPTION
    expected = fill_levels(anchors, description)[0] if candidates else {}
    return [
        {"score": lvl, "description": text}
        for lvl, text in sorted(crit.levels.items())
        if lvl not in candidates or expected.get(lvl) != text
    ]


def _built_entry(scenario: Scenario, item: PreferenceItem, attr: Attribute | None) -> dict[str, Any]:
    category = item.category or (attr.category if attr else None)
    return {
        "name": item.attribute,
        "description": item.description or (attr.description if attr else ""),
        "value_range": " / ".join(attr.value_space) if attr else "",
        "value": release_value(item.value),
        "local_importance": local_importance(item.weight, max(i.weight for i in scenario.profile.items)),
        "justification": item.justification,
        "type": "expertise" if category == "knowledge" else "personal",
        "problem_context": "math problem" if scenario.problem.domain == "math" else "question",
    }


def _built_criterion(scenario: Scenario, crit: RubricCriterion, key: str) -> dict[str, Any]:
    return {
        "preference": key,
        "description": "" if crit.description == NO_DESCRIPTION else crit.description,
        "weight": scenario.profile.weight_of(crit.attribute),
        "levels": given_levels(scenario, crit),
    }


def _built(scenario: Scenario, attributes: dict[str, Attribute]) -> tuple[dict[str, Any], dict[str, Any]]:
    prefs = {i.attribute: _built_entry(scenario, i, attributes.get(i.attribute)) for i in scenario.profile.items}
    criteria = [_built_criterion(scenario, c, c.attribute) for c in scenario.rubric]
    return prefs, {"evaluation_criteria": criteria}


def _entry(raw: dict[str, Any], item: PreferenceItem, was: PreferenceItem) -> dict[str, Any]:
    entry = copy.deepcopy(raw)
    if was.value != item.value:
        entry["value"] = release_value(item.value)
    if was.justification != item.justification:
        entry["justification"] = item.justification
    if was.description != item.description:
        entry["description"] = item.description
    return entry


def _same(scenario: Scenario, profile: PreferenceProfile, rubric: list[RubricCriterion]) -> bool:
    def items(p: PreferenceProfile) -> list[dict[str, Any]]:
        return [i.model_dump(exclude={"category"}) for i in p.items]

    def crits(r: list[RubricCriterion]) -> dict[str, dict[str, Any]]:
        return {c.attribute: c.model_dump(exclude={"preferred_value"}) for c in r}

    return items(profile) == items(scenario.profile) and crits(rubric) == crits(scenario.rubric)


def release_profile_parts(
    scenario: Scenario, attributes: dict[str, Attribute] | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(``persona_preferences``, ``evaluation_rubric``) of a scenario (see the module docstring)."""
    release = scenario.provenance.get("release")
    prefs = release.get("preferences") if isinstance(release, dict) else None
    criteria = release.get("criteria") if isinstance(release, dict) else None
    if not isinstance(prefs, dict) or not isinstance(criteria, list):
        return _built(scenario, attributes or {})
    rest = release.get("rubric") if isinstance(release.get("rubric"), dict) else {}  # type: ignore[union-attr]
    rubric_obj = {"evaluation_criteria": criteria, **rest}
    try:
        profile, rubric, _ = profile_and_rubric(prefs, rubric_obj, "", None)
    except UserError:
        return _built(scenario, attributes or {})
    if _same(scenario, profile, rubric):
        return prefs, rubric_obj
    key_of = {k.strip(): k for k in prefs}
    scored = {c.get("preference") for c in criteria if isinstance(c, dict)}
    now = {i.attribute: i for i in scenario.profile.items}
    was = {i.attribute: i for i in profile.items}
    out: dict[str, Any] = {}
    for key, entry in prefs.items():
        attr = key.strip()
        if attr in now:
            out[key] = _entry(entry, now[attr], was[attr]) if attr in was else entry
        elif key not in scored:
            out[key] = entry
    for attr, item in now.items():
        if attr not in key_of:
            out[attr] = _built_entry(scenario, item, (attributes or {}).get(attr))
    last = {
        c["preference"].strip(): c for c in criteria if isinstance(c, dict) and isinstance(c.get("preference"), str)
    }
    was_crit = {c.attribute: c for c in rubric}
    weights_kept = {a: i.weight for a, i in was.items()} == {a: i.weight for a, i in now.items()}
    out_criteria = []
    for crit in scenario.rubric:
        raw, before = last.get(crit.attribute), was_crit.get(crit.attribute)
        if raw is None or before is None:
            out_criteria.append(_built_criterion(scenario, crit, key_of.get(crit.attribute, crit.attribute)))
            continue
        c = copy.deepcopy(raw)
        if before.description != crit.description:
            c["description"] = crit.description
        if before.levels != crit.levels:
            c["levels"] = given_levels(scenario, crit)
        if not weights_kept:
            c["weight"] = scenario.profile.weight_of(crit.attribute)
        out_criteria.append(c)
    return out, {**rest, "evaluation_criteria": out_criteria}
