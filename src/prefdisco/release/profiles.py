"""A release record's ``persona_preferences`` + ``evaluation_rubric`` → preference profile and rubric.

* **Profile** — one item per evaluation criterion, in ``persona_preferences`` order. An item's category is
  that of the catalogue attribute its name dedups to (:mod:`prefdisco.builder.dedup`), else "knowledge" for a
  ``type: "expertise"`` preference, else unset. Weights are the criteria ``weight`` values, renormalized
  when they do not sum to 1 (the original sum is recorded in ``provenance["release_weight_sum"]``); when any
  weight is missing, ``local_importance / Σ local_importance``; when that is missing too, equal weights (the
  evaluator's default). ``provenance["weight_source"]`` says which.
* **Rubric** — the release has anchors at 1, 3 and 5 only. A missing level between two anchors is filled
  with an explicit "Between level a and level b: ..." text quoting both anchors; a missing end level (1 or 5)
  gets a generic text built from the criterion description. ``provenance["interpolated_levels"]`` lists the
  filled levels (``[2, 4]`` for a normal record); ``provenance["generic_levels"]`` the generic ones, per
  criterion.

Fields with no place in our model (value_range, local_importance, type, problem_context, raw values,
preferences without a criterion, unknown criterion keys) are kept in ``provenance["release"]``.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import ValidationError

from prefdisco.builder.dedup import explain
from prefdisco.errors import UserError
from prefdisco.release.format import int_like, non_negative, value_text
from prefdisco.release.record_error import RecordModelError
from prefdisco.schema import (
    SCORE_LEVELS,
    WEIGHT_TOLERANCE,
    Attribute,
    PreferenceItem,
    PreferenceProfile,
    RubricCriterion,
)

_PREF_IN_ITEM = {"description", "justification"}
_CRIT_KNOWN = {"preference", "description", "weight", "levels"}


def _levels(raw: Any, where: str) -> dict[int, str]:
    items = [{"score": k, "description": v} for k, v in raw.items()] if isinstance(raw, dict) else raw
    if items is None:
        return {}
    if not isinstance(items, list):
        raise UserError(f"{where}.levels must be a list of {{score, description}}")
    anchors: dict[int, str] = {}
    for j, lvl in enumerate(items):
        score = int_like(lvl.get("score")) if isinstance(lvl, dict) else None
        desc = lvl.get("description") if isinstance(lvl, dict) else None
        if score is None or score not in SCORE_LEVELS:
            raise UserError(f"{where}.levels[{j}].score must be an integer 1-5")
        if not isinstance(desc, str) or not desc.strip():
            raise UserError(f"{where}.levels[{j}].description must be a non-empty string")
        if score in anchors:
            raise UserError(f"{where}.levels[{j}]: score {score} is described twice")
        anchors[score] = desc.strip()
    return anchors


def fill_levels(anchors: dict[int, str], description: str) -> tuple[dict[int, str], list[int], list[int]]:
    """Complete anchors to levels 1..5. Returns (levels, interpolated levels, generic levels)."""
    levels = dict(anchors)
    generic: list[int] = []
    if 1 not in levels:
        levels[1] = f"Lowest level (no anchor in the release): the response ignores this: {description}"
        generic.append(1)
    if 5 not in levels:
        levels[5] = f"Highest level (no anchor in the release): the response fully does this: {description}"
        generic.append(5)
    interpolated: list[int] = []
    for lvl in SCORE_LEVELS:
        if lvl in levels:
            continue
        lo = max(k for k in levels if k < lvl)
        hi = min(k for k in levels if k > lvl)
        levels[lvl] = (
            f"Between level {lo} and level {hi} (interpolated). Level {lo}: {levels[lo]} Level {hi}: {levels[hi]}"
        )
        interpolated.append(lvl)
    return dict(sorted(levels.items())), interpolated, generic


def _categories(names: list[str], types: list[Any], catalogue: list[Attribute] | None) -> dict[str, str | None]:
    """A preference's category: that of the catalogue attribute it dedups to; else "knowledge" for a release
    ``type: "expertise"`` preference; else None (unknown)."""
    by_name = {a.name: a.category for a in catalogue or []}
    matched = {m.proposed: m for m in explain(names, catalogue)} if catalogue else {}
    out: dict[str, str | None] = {}
    for name, kind in zip(names, types, strict=True):
        m = matched.get(name)
        if m is not None and m.kind in ("exact", "similar"):
            out[name] = by_name[m.canonical]
        else:
            out[name] = "knowledge" if kind == "expertise" else None
    return out


def _criteria(record: dict[str, Any], where: str) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(preference key, preference, criterion) per evaluation criterion, in criteria order."""
    prefs = record.get("persona_preferences")
    if not isinstance(prefs, dict) or not prefs:
        raise UserError(f"{where}: persona_preferences must be a non-empty object")
    rubric_obj = record.get("evaluation_rubric")
    criteria = rubric_obj.get("evaluation_criteria") if isinstance(rubric_obj, dict) else None
    if not isinstance(criteria, list) or not criteria:
        raise UserError(f"{where}: evaluation_rubric.evaluation_criteria must be a non-empty list")
    stripped = {k.strip(): k for k in prefs if isinstance(k, str)}
    keyed: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    for ci, crit in enumerate(criteria):
        cw = f"{where}: evaluation_criteria[{ci}]"
        if not isinstance(crit, dict):
            raise UserError(f"{cw} must be an object")
        pref = crit.get("preference")
        if not isinstance(pref, str) or not pref.strip():
            raise UserError(f"{cw}: 'preference' must be a non-empty string")
        key = pref if pref in prefs else stripped.get(pref.strip())
        if key is None:
            raise UserError(f"{cw}: preference {pref!r} is not a key of persona_preferences")
        if any(k == key for k, _, _ in keyed):
            raise UserError(f"{cw}: preference {pref!r} has more than one criterion")
        p = prefs[key]
        if not isinstance(p, dict) or p.get("value") in (None, ""):
            raise UserError(f"{where}: persona_preferences[{key!r}] must be an object with a non-empty 'value'")
        desc = crit.get("description")
        if not isinstance(desc, str) or not desc.strip():
            raise UserError(f"{cw}: 'description' must be a non-empty string")
        keyed.append((key, p, crit))
    return keyed


def _raw_weights(keyed: list[tuple[str, dict[str, Any], dict[str, Any]]]) -> tuple[list[float], str]:
    """(raw weight per criterion, weight source): criteria weights, else local importances, else uniform."""
    weights = [non_negative(c.get("weight")) for _, _, c in keyed]
    importances = [non_negative(p.get("local_importance")) for _, p, _ in keyed]
    if all(w is not None for w in weights) and math.fsum(weights) > 0:  # type: ignore[arg-type]
        return weights, "criteria"  # type: ignore[return-value]
    if all(w is not None and w > 0 for w in importances):
        return importances, "local_importance"  # type: ignore[return-value]
    return [1.0] * len(keyed), "uniform"


def profile_and_rubric(
    record: dict[str, Any], where: str, catalogue: list[Attribute] | None
) -> tuple[PreferenceProfile, list[RubricCriterion], dict[str, Any]]:
    """Profile, rubric and the provenance entries they produce for one record."""
    keyed = _criteria(record, where)
    prefs: dict[str, Any] = record["persona_preferences"]
    raw_weights, source = _raw_weights(keyed)
    provenance: dict[str, Any] = {"weight_source": source}
    total = math.fsum(raw_weights)
    rescale = source != "criteria" or abs(total - 1.0) > WEIGHT_TOLERANCE

    categories = _categories([k.strip() for k, _, _ in keyed], [p.get("type") for _, p, _ in keyed], catalogue)
    order = {k: i for i, k in enumerate(prefs)}
    items: list[PreferenceItem] = []
    rubric: list[RubricCriterion] = []
    release_prefs: dict[str, Any] = {}
    release_crits: dict[str, Any] = {}
    interpolated: dict[str, list[int]] = {}
    generic: dict[str, list[int]] = {}
    try:
        for (key, p, crit), weight in sorted(zip(keyed, raw_weights, strict=True), key=lambda t: order[t[0][0]]):
            attr = key.strip()
            items.append(
                PreferenceItem(
                    attribute=attr,
                    value=value_text(p["value"]),
                    weight=min(1.0, weight / total) if rescale else weight,
                    justification=str(p.get("justification") or ""),
                    description=str(p.get("description") or ""),
                    category=categories.get(attr),
                )
            )
            release_prefs[attr] = {k: v for k, v in p.items() if k not in _PREF_IN_ITEM}
            if any(k not in _CRIT_KNOWN for k in crit):
                release_crits[attr] = {k: v for k, v in crit.items() if k not in _CRIT_KNOWN}
        for ci, (key, p, crit) in enumerate(keyed):
            attr = key.strip()
            anchors = _levels(crit.get("levels"), f"{where}: evaluation_criteria[{ci}]")
            levels, filled, gen = fill_levels(anchors, crit["description"].strip())
            if filled:
                interpolated[attr] = filled
            if gen:
                generic[attr] = gen
            rubric.append(
                RubricCriterion(
                    attribute=attr,
                    preferred_value=value_text(p["value"]),
                    description=crit["description"],
                    levels=levels,
                )
            )
        if rescale and source == "criteria":
            provenance["release_weight_sum"] = total
        profile = PreferenceProfile.normalized(items) if rescale else PreferenceProfile(items=items)
    except ValidationError as e:
        raise RecordModelError(where, "preferences", e) from e

    if interpolated:
        provenance["interpolated_levels"] = sorted({lvl for v in interpolated.values() for lvl in v})
        if len({tuple(v) for v in interpolated.values()}) > 1 or len(interpolated) < len(rubric):
            provenance["interpolated_levels_by_criterion"] = interpolated
    if generic:
        provenance["generic_levels"] = generic
    release: dict[str, Any] = {"preferences": release_prefs}
    extra_prefs = {k: v for k, v in prefs.items() if not any(k == kk for kk, _, _ in keyed)}
    if extra_prefs:
        release["preferences_without_criterion"] = extra_prefs
    if release_crits:
        release["criteria"] = release_crits
    provenance["release"] = release
    return profile, rubric, provenance
