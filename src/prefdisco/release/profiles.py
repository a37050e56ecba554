"""A release record's ``persona_preferences`` + ``evaluation_rubric`` → preference profile and rubric.

Read the way the paper's evaluator reads them (``src/environment.py``, ``evaluate_final_response``):

* **Scored preferences** — one per distinct criterion ``preference``. The evaluator keys its scores by preference
  in a dict, so when two criteria name one preference the **later criterion wins** (its description, levels and
  weight); the position is the first one's. Preferences without a criterion are not scored (the evaluator only
  shows them to the simulated user); they stay in the release part.
* **Profile** — one item per scored preference, in ``persona_preferences`` order. A criterion's raw weight is its
  ``weight`` as written, or ``1 / len(evaluation_criteria)`` when it has none (the evaluator's default). The
  evaluator divides Σ score·weight by Σ weight, so the profile holds the raw weights divided by their sum
  (``provenance["release_weight_sum"]`` records a sum other than 1); PrefAlign over the normalized weights is
  the evaluator's weighted score over the raw ones. An item's category is that of the catalogue attribute its
  name dedups to (:mod:`prefdisco.builder.dedup`), else "knowledge" for a ``type: "expertise"`` preference,
  else unset. A blank or null value becomes :data:`~prefdisco.release.format.NO_VALUE`.
* **Rubric** — anchors as given (well-formed ``{score 1-5, description}`` entries; a later entry for a score wins).
  A missing level between two anchors is filled with an explicit "Between level a and level b: ..." text quoting
  both; a missing end level (1 or 5) gets a generic text built from the criterion description. These fills are
  used only inside scoring: ``provenance["interpolated_levels"]`` (``[2, 4]`` for a normal record) and
  ``provenance["generic_levels"]`` record them, and export writes the release's levels as given.

The release parts themselves are kept verbatim in ``provenance["release"]``: ``preferences`` (the whole
``persona_preferences`` object, whose repr the evaluator shows the simulated user), ``criteria`` (the criteria
list) and ``rubric`` (other ``evaluation_rubric`` keys), so export writes them back exactly
(:mod:`prefdisco.release.profiles_export`).
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import ValidationError

from prefdisco.builder.dedup import explain
from prefdisco.errors import UserError
from prefdisco.release.format import NO_DESCRIPTION, int_like, non_negative, value_text
from prefdisco.release.record_error import RecordModelError
from prefdisco.schema import (
    SCORE_LEVELS,
    WEIGHT_TOLERANCE,
    Attribute,
    PreferenceItem,
    PreferenceProfile,
    RubricCriterion,
)

Scored = tuple[str, dict[str, Any], dict[str, Any]]
"""(preference key as written, its persona_preferences entry, the criterion that scores it)."""


def level_anchors(raw: Any) -> tuple[dict[int, str], list[str]]:
    """(score → description of the well-formed level entries, a note per entry that was ignored)."""
    if raw is None:
        return {}, []
    items = [{"score": k, "description": v} for k, v in raw.items()] if isinstance(raw, dict) else raw
    if not isinstance(items, list):
        return {}, [f"levels is a {type(raw).__name__}, not a list of {{score, description}}"]
    anchors: dict[int, str] = {}
    notes: list[str] = []
    for j, lvl in enumerate(items):
        score = int_like(lvl.get("score")) if isinstance(lvl, dict) else None
        desc = lvl.get("description") if isinstance(lvl, dict) else None
        if score is None or score not in SCORE_LEVELS:
            notes.append(f"levels[{j}] has no score 1-5")
        elif not isinstance(desc, str) or not desc.strip():
            notes.append(f"levels[{j}] has no description")
        else:
            if score in anchors:
                notes.append(f"levels[{j}] describes score {score} again (the later text is used)")
            anchors[score] = desc.strip()
    return anchors, notes


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


def criterion_text(crit: dict[str, Any]) -> str:
    """A criterion's description as our text (blank → :data:`~prefdisco.release.format.NO_DESCRIPTION`)."""
    desc = crit.get("description")
    return desc if isinstance(desc, str) and desc.strip() else NO_DESCRIPTION


def raw_weight(crit: dict[str, Any], n_criteria: int) -> float | None:
    """A criterion's weight as the evaluator uses it: as written, ``1 / n_criteria`` when absent; None when it is
    not a finite number >= 0."""
    return 1.0 / n_criteria if "weight" not in crit else non_negative(crit["weight"])


def scored_criteria(prefs: Any, criteria: Any, where: str) -> list[Scored]:
    """The scored preferences (see the module docstring); UserError on what the evaluator cannot score."""
    if not isinstance(prefs, dict) or not prefs:
        raise UserError(f"{where}: persona_preferences must be a non-empty object")
    if not isinstance(criteria, list) or not criteria:
        raise UserError(f"{where}: evaluation_rubric.evaluation_criteria must be a non-empty list")
    scored: dict[str, dict[str, Any]] = {}
    for ci, crit in enumerate(criteria):
        cw = f"{where}: evaluation_criteria[{ci}]"
        if not isinstance(crit, dict):
            raise UserError(f"{cw} must be an object")
        key = crit.get("preference")
        if not isinstance(key, str) or key not in prefs:
            raise UserError(f"{cw}: preference {key!r} is not a key of persona_preferences")
        entry = prefs[key]
        if not isinstance(entry, dict) or "value" not in entry or "justification" not in entry:
            raise UserError(f"{where}: persona_preferences[{key!r}] must be an object with 'value' and 'justification'")
        if not isinstance(crit.get("description"), str):
            raise UserError(f"{cw}: 'description' must be a string")
        if raw_weight(crit, len(criteria)) is None:
            raise UserError(f"{cw}: 'weight' must be a number >= 0, got {crit['weight']!r}")
        scored[key] = crit  # the evaluator's dict: first position, last criterion
    names = [k.strip() for k in scored]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise UserError(f"{where}: preferences {clash} differ only in surrounding whitespace")
    return [(k, prefs[k], c) for k, c in scored.items()]


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


def _level_provenance(interpolated: dict[str, list[int]], generic: dict[str, list[int]], n: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if interpolated:
        out["interpolated_levels"] = sorted({lvl for v in interpolated.values() for lvl in v})
        if len({tuple(v) for v in interpolated.values()}) > 1 or len(interpolated) < n:
            out["interpolated_levels_by_criterion"] = interpolated
    if generic:
        out["generic_levels"] = generic
    return out


def profile_and_rubric(
    prefs: Any, rubric_obj: Any, where: str, catalogue: list[Attribute] | None
) -> tuple[PreferenceProfile, list[RubricCriterion], dict[str, Any]]:
    """Profile, rubric and the provenance entries they produce, from a record's two release parts."""
    criteria = rubric_obj.get("evaluation_criteria") if isinstance(rubric_obj, dict) else None
    scored = scored_criteria(prefs, criteria, where)
    assert isinstance(criteria, list) and isinstance(prefs, dict)
    raw = [raw_weight(c, len(criteria)) or 0.0 for _, _, c in scored]
    total = math.fsum(raw)
    if total <= 0:
        raise UserError(f"{where}: criteria weights sum to 0 (the paper's evaluator would score every response 0)")
    rescale = abs(total - 1.0) > WEIGHT_TOLERANCE
    provenance: dict[str, Any] = {
        "weight_source": "criteria" if all("weight" in c for _, _, c in scored) else "evaluator_default"
    }
    if rescale:
        provenance["release_weight_sum"] = total
    categories = _categories([k.strip() for k, _, _ in scored], [p.get("type") for _, p, _ in scored], catalogue)
    order = {k: i for i, k in enumerate(prefs)}
    interpolated: dict[str, list[int]] = {}
    generic: dict[str, list[int]] = {}
    rubric: list[RubricCriterion] = []
    try:
        items = [
            PreferenceItem(
                attribute=key.strip(),
                value=value_text(p["value"]),
                weight=min(1.0, w / total) if rescale else w,
                justification="" if p["justification"] is None else str(p["justification"]),
                description=str(p.get("description") or ""),
                category=categories.get(key.strip()),
            )
            for (key, p, _), w in sorted(zip(scored, raw, strict=True), key=lambda t: order[t[0][0]])
        ]
        for key, p, crit in scored:
            attr = key.strip()
            levels, filled, gen = fill_levels(level_anchors(crit.get("levels"))[0], criterion_text(crit).strip())
            if filled:
                interpolated[attr] = filled
            if gen:
                generic[attr] = gen
            rubric.append(
                RubricCriterion(
                    attribute=attr,
                    preferred_value=value_text(p["value"]),
                    description=criterion_text(crit),
                    levels=levels,
                )
            )
        profile = PreferenceProfile.normalized(items) if rescale else PreferenceProfile(items=items)
    except ValidationError as e:
        raise RecordModelError(where, "preferences", e) from e
    provenance.update(_level_provenance(interpolated, generic, len(rubric)))
    release: dict[str, Any] = {"preferences": prefs, "criteria": criteria}
    rest = {k: v for k, v in rubric_obj.items() if k != "evaluation_criteria"}
    if rest:
        release["rubric"] = rest
    provenance["release"] = release
    return profile, rubric, provenance
