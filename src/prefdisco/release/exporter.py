"""Export scenarios in the paper's released format (``prefq-bench`` JSONL), readable by its evaluator.

The file is a metadata line followed by one ``personalized_problem`` record per scenario:

* ``problem_id`` — the scenario id when every id already has the paper's ``problem_<i>_<...>`` shape;
  otherwise ``problem_<i>_<persona id>`` for all records, ``i`` numbering the distinct problems in order of
  first appearance (a ``_<n>`` suffix keeps ids unique).
* ``original_problem`` — the raw source row kept by the importer when it still yields the scenario's question,
  options and answer; otherwise a row built from the Problem: MC-style ``{question, choices, answer: letter}``
  or MATH-style ``{problem, solution, answer}``, fields the evaluator's ``normalize_problem`` reads.
* ``persona`` — name, minimal_necessary_description (= summary), demographics {age, occupation, location,
  family_context, hobbies}, educational_profile, personality_big5 {trait: {score, description}}, backstory,
  domain_expertise, id; values the importer kept in ``persona.extra`` are written back, missing ones filled
  from the Persona ("unspecified" for unknown educational-profile leaves, the trait level as description).
* ``persona_preferences`` — keyed by attribute, with name, description, value_range, value, local_importance,
  justification, type, problem_context. A value is written as a number when its text is a plain number (the
  paper's PEP counts only numeric values). ``local_importance`` is the imported one when known, else
  ``round(5 · weight / max weight)`` clamped to 1..5 (so the most important attribute gets 5 and the ratios of
  the weights are kept as far as five levels allow). ``type`` is "expertise" for knowledge attributes, else
  "personal"; ``problem_context`` "math problem" for math problems, else "question" (unless imported).
* ``evaluation_rubric.evaluation_criteria`` — preference, description, weight (the profile weight), and levels
  ``[{score, description}]`` for all five levels, in rubric order.
* ``prefdisco`` — what the paper format cannot hold (scenario id, full Problem and Persona, categories,
  relevant attributes, provenance), so that import → export → import is lossless. The evaluator ignores it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from prefdisco import __version__
from prefdisco.atomic import atomic_open
from prefdisco.errors import UserError
from prefdisco.release.format import (
    EXTENSION_FORMAT,
    EXTENSION_KEY,
    METADATA_TYPE,
    PROBLEM_ID_RE,
    RECORD_TYPE,
    value_text,
)
from prefdisco.release.problems import normalize_release_problem
from prefdisco.schema import BIG_FIVE, AnswerType, Attribute, Persona, Problem, Scenario

UNSPECIFIED = "unspecified"
EDUCATIONAL_PROFILE_SHAPE: dict[str, tuple[str, ...]] = {
    "cognitive_features": (
        "learning_style",
        "attention_span",
        "memory_strengths",
        "problem_solving",
        "collaboration",
    ),
    "affective_features": ("confidence", "anxiety_triggers", "motivation", "challenge_attitude"),
    "metacognitive_features": ("self_awareness", "self_regulation", "reflection", "self_assessment"),
}
_NUMBER_RE = re.compile(r"^-?\d+(?:\.\d+)?$")


def local_importance(weight: float, max_weight: float) -> int:
    """``round(5 · weight / max_weight)`` (halves up), clamped to 1..5."""
    if max_weight <= 0:
        return 1
    return max(1, min(5, math.floor(5 * weight / max_weight + 0.5)))


def release_value(value: str) -> Any:
    """Our string value as the release writes it: a number when the text is exactly that number's repr."""
    if _NUMBER_RE.match(value):
        number: int | float = int(value) if "." not in value else float(value)
        if str(number) == value:
            return number
    return value


# ---------------------------------------------------------------------------------------------------------
# problem
# ---------------------------------------------------------------------------------------------------------


def _raw_row_matches(problem: Problem, raw: dict[str, Any]) -> bool:
    norm = normalize_release_problem({"original_problem": raw})
    if norm.question.strip() != problem.question:
        return False
    options = [str(v) for v in norm.options.values()]
    if problem.choices:
        return options == problem.choices or sorted(norm.options) == problem.letters
    return not options and str(norm.answer).strip() == problem.answer


def original_problem_row(problem: Problem) -> tuple[dict[str, Any], bool]:
    """(row, whether it is the stored source row)."""
    raw = problem.metadata.get("original_problem")
    if isinstance(raw, dict) and _raw_row_matches(problem, raw):
        return raw, True
    if problem.answer_type is AnswerType.LETTER:
        return {
            "question": problem.question,
            "choices": list(problem.choices),
            "answer": problem.answer,
        }, False
    row: dict[str, Any] = {"problem": problem.question}
    if problem.solution:
        row["solution"] = problem.solution
    row["answer"] = problem.answer
    return row, False


# ---------------------------------------------------------------------------------------------------------
# persona
# ---------------------------------------------------------------------------------------------------------


def _educational_profile(persona: Persona) -> dict[str, Any]:
    stored = persona.extra.get("educational_profile")
    if isinstance(stored, dict):
        return stored
    profile: dict[str, Any] = {
        "knowledge_level": persona.education or UNSPECIFIED,
        "common_errors": UNSPECIFIED,
    }
    for group, keys in EDUCATIONAL_PROFILE_SHAPE.items():
        profile[group] = dict.fromkeys(keys, UNSPECIFIED)
    return profile


def _mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (the extension fields are optional)."""
    return value if isinstance(value, dict) else {}


def persona_to_release(persona: Persona) -> dict[str, Any]:
    """The paper's persona object for a Persona (keys in the paper's order)."""
    extra = persona.extra
    demo_extra = _mapping(extra.get("demographics"))
    demographics: dict[str, Any] = {
        "age": persona.age,
        "occupation": persona.occupation,
        "location": persona.location,
        "family_context": demo_extra.get("family_context", ""),
        "hobbies": demo_extra.get("hobbies", []),
    }
    demographics.update({k: v for k, v in demo_extra.items() if k not in demographics})
    traits_extra = _mapping(extra.get("personality_big5"))
    big5: dict[str, Any] = {}
    for trait in BIG_FIVE:
        ts = persona.big_five[trait]  # type: ignore[index]
        rest = _mapping(traits_extra.get(trait))
        score: int | float = int(ts.score) if float(ts.score).is_integer() else ts.score
        big5[trait] = {
            "score": score,
            "description": rest.get("description", f"{ts.level} {trait}"),
            **{k: v for k, v in rest.items() if k != "description"},
        }
    expertise = extra.get("domain_expertise")
    if not isinstance(expertise, list):
        expertise = [d if lvl in ("", "expert") else f"{d} ({lvl})" for d, lvl in persona.expertise.items()]
    obj: dict[str, Any] = {"name": persona.name}
    if not extra.get("no_minimal_necessary_description"):
        obj["minimal_necessary_description"] = persona.summary
    obj.update(
        {
            "demographics": demographics,
            "educational_profile": _educational_profile(persona),
            "personality_big5": big5,
            "backstory": persona.backstory,
            "domain_expertise": expertise,
            "id": persona.id,
        }
    )
    if "usage_count" in extra:
        obj["usage_count"] = extra["usage_count"]
    unmapped = extra.get("unmapped")
    if isinstance(unmapped, dict):
        obj.update({k: v for k, v in unmapped.items() if k not in obj})
    return obj


# ---------------------------------------------------------------------------------------------------------
# records
# ---------------------------------------------------------------------------------------------------------


def scenario_to_record(
    scenario: Scenario, problem_id: str, attributes: dict[str, Attribute] | None = None
) -> dict[str, Any]:
    """One ``personalized_problem`` record for a scenario."""
    attributes = attributes or {}
    release = _mapping(scenario.provenance.get("release"))
    stored_prefs = release.get("preferences", {}) if isinstance(release.get("preferences"), dict) else {}
    max_weight = max(i.weight for i in scenario.profile.items)
    default_context = "math problem" if scenario.problem.domain == "math" else "question"

    preferences: dict[str, Any] = {}
    for item in scenario.profile.items:
        stored = _mapping(stored_prefs.get(item.attribute))
        attr = attributes.get(item.attribute)
        raw_value = stored.get("value")
        value = (
            raw_value if raw_value is not None and value_text(raw_value) == item.value else release_value(item.value)
        )
        category = item.category or (attr.category if attr else None)
        entry: dict[str, Any] = {
            "name": stored.get("name", item.attribute),
            "description": item.description or (attr.description if attr else ""),
            "value_range": stored.get("value_range", " / ".join(attr.value_space) if attr else ""),
            "value": value,
            "local_importance": stored.get("local_importance", local_importance(item.weight, max_weight)),
            "justification": item.justification,
            "type": stored.get("type", "expertise" if category == "knowledge" else "personal"),
            "problem_context": stored.get("problem_context", default_context),
        }
        entry.update({k: v for k, v in stored.items() if k not in entry})
        preferences[item.attribute] = entry
    without = release.get("preferences_without_criterion")
    if isinstance(without, dict):
        preferences.update({k: v for k, v in without.items() if k not in preferences})

    stored_crits = release.get("criteria", {}) if isinstance(release.get("criteria"), dict) else {}
    criteria = []
    for crit in scenario.rubric:
        c: dict[str, Any] = {
            "preference": crit.attribute,
            "description": crit.description,
            "weight": scenario.profile.weight_of(crit.attribute),
            "levels": [{"score": lvl, "description": text} for lvl, text in sorted(crit.levels.items())],
        }
        extra = stored_crits.get(crit.attribute)
        if isinstance(extra, dict):
            c.update({k: v for k, v in extra.items() if k not in c})
        criteria.append(c)

    row, is_source = original_problem_row(scenario.problem)
    problem_dump = scenario.problem.model_dump(mode="json")
    problem_dump["metadata"] = {k: v for k, v in problem_dump["metadata"].items() if k != "original_problem"}
    record: dict[str, Any] = {
        "type": RECORD_TYPE,
        "problem_id": problem_id,
        "original_problem": row,
        "persona": persona_to_release(scenario.persona),
        "persona_preferences": preferences,
        "evaluation_rubric": {"evaluation_criteria": criteria},
        "generation_success": True,
    }
    parsed = scenario.problem.metadata.get("parsed_problem")
    if isinstance(parsed, dict) and is_source:
        record["parsed_problem"] = parsed
    stored_record = release.get("record")
    if isinstance(stored_record, dict):
        record.update({k: v for k, v in stored_record.items() if k not in record})
    preferred = {c.attribute: c.preferred_value for c in scenario.rubric}
    record[EXTENSION_KEY] = {
        "format": EXTENSION_FORMAT,
        "scenario_id": scenario.id,
        "problem": problem_dump,
        "original_problem_is_source": is_source,
        "persona": scenario.persona.model_dump(mode="json"),
        "categories": {i.attribute: i.category for i in scenario.profile.items},
        "preferred_values": {a: v for a, v in preferred.items() if v != value_text(preferences[a]["value"])},
        "item_descriptions": {
            i.attribute: i.description
            for i in scenario.profile.items
            if i.description != preferences[i.attribute]["description"]
        },
        "relevant_attributes": scenario.relevant_attributes,
        "provenance": scenario.provenance,
    }
    return record


def release_problem_ids(scenarios: list[Scenario]) -> list[str]:
    """The problem_id of each scenario (see the module docstring)."""
    if all(PROBLEM_ID_RE.match(s.id) for s in scenarios) and len({s.id for s in scenarios}) == len(scenarios):
        return [s.id for s in scenarios]
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


def default_metadata(scenarios: list[Scenario]) -> dict[str, Any]:
    benchmarks = sorted({s.problem.benchmark for s in scenarios})
    problems = {(s.problem.benchmark, s.problem.id) for s in scenarios}
    per_problem: dict[tuple[str, str], int] = {}
    for s in scenarios:
        key = (s.problem.benchmark, s.problem.id)
        per_problem[key] = per_problem.get(key, 0) + 1
    return {
        "dataset": benchmarks[0] if len(benchmarks) == 1 else "mixed",
        "general_preferences": {},
        "total_personas_in_library": len({s.persona.id for s in scenarios}),
        "fixed_persona_library": True,
        "personas_per_problem": max(per_problem.values()),
        "sample_size": len(problems),
        "multi_model_generation": False,
        "llm_clients": ["single_model"],
        "generator": f"prefdisco {__version__}",
    }


def write_jsonl_atomic(path: Path, lines: Iterable[dict[str, Any]]) -> None:
    """Write JSON objects one per line atomically (see ``prefdisco.atomic``)."""

    def write(f: Any) -> None:
        for obj in lines:
            f.write(json.dumps(obj, ensure_ascii=False) + "\n")

    atomic_open(path, write)


def export_release(
    scenarios: Iterable[Scenario],
    path: Path | str,
    metadata: dict[str, Any] | None = None,
    attributes: list[Attribute] | None = None,
) -> int:
    """Write ``scenarios`` as a prefq-bench JSONL file (atomically). Returns the number of records.

    ``metadata`` is the metadata line's content (``type`` is added); by default it is derived from the
    scenarios. ``attributes`` (e.g. Θ) supply value ranges and descriptions the scenarios do not carry.
    """
    scenarios = list(scenarios)
    if not scenarios:
        raise UserError(f"{path}: nothing to export (no scenarios)")
    by_name = {a.name: a for a in attributes or []}
    meta = {k: v for k, v in (metadata if metadata is not None else default_metadata(scenarios)).items()}
    meta.pop("type", None)
    ids = release_problem_ids(scenarios)
    records = [scenario_to_record(s, pid, by_name) for s, pid in zip(scenarios, ids, strict=True)]
    write_jsonl_atomic(Path(path), [{"type": METADATA_TYPE, **meta}, *records])
    return len(records)
