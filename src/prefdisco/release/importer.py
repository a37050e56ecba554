"""Import the paper's released benchmark format (``prefq-bench`` JSONL) into :class:`Scenario` objects.

Line types: one optional ``type: "metadata"`` line (first), then ``type: "personalized_problem"`` records;
other types are skipped. Each record becomes one Scenario (id = ``problem_id``):

* **Problem** — ``original_problem`` is read with the evaluator's ``normalize_problem`` rules (see
  :func:`normalize_release_problem`); the raw row is kept in ``problem.metadata["original_problem"]``.
  Benchmark, domain and answer type come from :data:`DATASET_HINTS` for the paper's source datasets (the
  metadata line's ``dataset``); otherwise the benchmark is that dataset id, the domain "math" when every
  preference's ``problem_context`` is "math problem" (else "general"), and the answer type is inferred.
  Problem id = ``problem_<i>`` (shared by all personas of a problem).
* **Persona** — the paper's persona object. Big Five scores 1-5 become levels (1-2 low, 3 medium, 4-5 high);
  ``minimal_necessary_description`` is the summary, ``educational_profile.knowledge_level`` the education,
  ``domain_expertise`` items the expertise (level ``"expert"``). Everything else (family context, hobbies,
  the whole educational profile, trait descriptions, the raw expertise list, usage count, unknown keys) is
  kept in ``persona.extra`` so that export loses nothing.
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

Fields of the release with no place in our model (value_range, local_importance, type, problem_context, raw
values, preferences without a criterion, unknown keys) are kept in ``provenance["release"]``. A record written
by :func:`prefdisco.release.exporter.export_release` carries a ``prefdisco`` key with what the paper
format cannot express (our ids, persona, provenance); when present it is authoritative for those fields.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from prefdisco.builder.dedup import explain
from prefdisco.errors import UserError, describe_validation_error
from prefdisco.schema import (
    BIG_FIVE,
    SCORE_LEVELS,
    WEIGHT_TOLERANCE,
    AnswerType,
    Attribute,
    Persona,
    PreferenceItem,
    PreferenceProfile,
    Problem,
    RubricCriterion,
    Scenario,
    TraitScore,
    option_letters,
    persona_id,
    trait_level,
)

RECORD_TYPE = "personalized_problem"
METADATA_TYPE = "metadata"
REQUIRED_KEYS = ("problem_id", "original_problem", "persona", "persona_preferences", "evaluation_rubric")
QUESTION_FIELDS = ("query", "question", "problem", "Question", "prompt")
ANSWER_FIELDS = ("correct_answer", "answerKey", "correct_option", "answer_idx", "Answer", "answer", "label")
PROBLEM_ID_RE = re.compile(r"^problem_(\d+)_(.+)$")
EXTENSION_KEY = "prefdisco"
EXTENSION_FORMAT = "prefdisco-release-ext/1"
DEFAULT_BENCHMARK = "prefq-bench"

# Source datasets of the paper's release configs:
# HF id -> (benchmark name, domain, answer type or None to infer it).
DATASET_HINTS: dict[str, tuple[str, str, AnswerType | None]] = {
    "HuggingFaceH4/MATH-500": ("math500", "math", AnswerType.LATEX),
    "gneubig/aime-1983-2024": ("aime", "math", AnswerType.INTEGER),
    "lucasmccabe/logiqa": ("logiqa", "logic", AnswerType.LETTER),
    "stellalisy/MaScQA": ("mascqa", "materials science", None),
    "derek-thomas/ScienceQA": ("scienceqa", "science", AnswerType.LETTER),
    "lighteval/mmlu": ("mmlu", "general", AnswerType.LETTER),
    "pvduy/simpleqa": ("simpleqa", "general knowledge", AnswerType.FREE_TEXT),
    "GBaker/MedQA-USMLE-4-options": ("medqa", "medicine", AnswerType.LETTER),
    "tau/commonsense_qa": ("commonsenseqa", "commonsense", AnswerType.LETTER),
    "allenai/social_i_qa": ("socialiqa", "social", AnswerType.LETTER),
}

_RANGE_RE = re.compile(r"^\s*-?\d+(?:\.\d+)?\s+to\s+-?\d+(?:\.\d+)?\s*$")
_INT_RE = re.compile(r"^-?\d+$")


# ---------------------------------------------------------------------------------------------------------
# original_problem → Problem
# ---------------------------------------------------------------------------------------------------------


@dataclass
class NormalizedProblem:
    """What the paper's evaluator extracts from a record (question, options letter→text, answer, ...)."""

    question: str
    options: dict[str, Any]
    answer: Any
    answer_field: str | None
    solution: str | None
    image: Any


def _options(value: Any) -> dict[str, Any]:
    if not value:
        return {}
    if isinstance(value, dict):
        labels, texts = value.get("label"), value.get("text")
        if isinstance(labels, list) and isinstance(texts, list):
            return dict(zip(labels, texts, strict=False))
        return dict(value)
    if isinstance(value, list):
        return {chr(65 + i): v for i, v in enumerate(value)}
    return {}


def normalize_release_problem(record: dict[str, Any]) -> NormalizedProblem:
    """Apply the evaluator's ``normalize_problem`` rules to a release record.

    ``parsed_problem`` wins when it is an object with a question. Otherwise, from ``original_problem``: the
    question is the first truthy of query/question/problem/Question/prompt, with ``context`` prepended;
    options come from ``choices`` or ``options`` (a list is lettered A, B, ...; ``{label, text}`` is zipped),
    else from answerA-answerD; the answer is the first non-null of correct_answer/answerKey/correct_option/
    answer_idx/Answer/answer/label, an int becoming a letter when options exist and a digit-string ``label``
    a 1-based letter; the solution joins ``lecture`` and ``solution``.
    """
    parsed = record.get("parsed_problem")
    if isinstance(parsed, dict) and parsed.get("question"):
        return NormalizedProblem(
            question=str(parsed["question"]),
            options=_options(parsed.get("options")),
            answer=parsed.get("answer", ""),
            answer_field="answer",
            solution=parsed.get("solution"),
            image=parsed.get("image"),
        )
    source = record.get("original_problem", record)
    if not isinstance(source, dict):
        return NormalizedProblem(str(source), {}, "", None, None, None)
    question: Any = next((source[k] for k in QUESTION_FIELDS if source.get(k)), "")
    context = source.get("context")
    if context:
        question = f"{context}\n\n{question}" if question else str(context)
    options = _options(source.get("choices") or source.get("options"))
    if not options:
        options = {k[-1]: source[k] for k in ("answerA", "answerB", "answerC", "answerD") if source.get(k) is not None}
    field = next((k for k in ANSWER_FIELDS if source.get(k) is not None), None)
    answer = source.get(field, "") if field else ""
    if isinstance(answer, int) and options:
        answer = chr(65 + answer)
    elif field == "label" and isinstance(answer, str) and answer.isdigit():
        answer = chr(64 + int(answer))
    parts = [str(source[k]) for k in ("lecture", "solution") if source.get(k) not in (None, "")]
    return NormalizedProblem(
        question=str(question),
        options=options,
        answer=answer,
        answer_field=field,
        solution="\n\n".join(parts) if parts else None,
        image=source.get("image"),
    )


def _infer_answer_type(answer: str, source: Any) -> AnswerType:
    if _RANGE_RE.match(answer):
        return AnswerType.NUMERIC_RANGE
    solution = source.get("solution") if isinstance(source, dict) else None
    if (isinstance(solution, str) and "\\boxed" in solution) or any(c in answer for c in "\\^{}$"):
        return AnswerType.LATEX
    if _INT_RE.match(answer.strip()):
        return AnswerType.INTEGER
    return AnswerType.FREE_TEXT


def problem_from_release(record: dict[str, Any], dataset: str | None, where: str) -> Problem:
    """Build the Problem of one release record (``where`` prefixes error messages)."""
    norm = normalize_release_problem(record)
    question = norm.question.strip()
    if not question:
        raise UserError(f"{where}: original_problem has no question (looked for {', '.join(QUESTION_FIELDS)})")
    answer = "" if norm.answer is None else str(norm.answer).strip()
    if not answer:
        raise UserError(
            f"{where}: original_problem has no gold answer (looked for a non-empty {', '.join(ANSWER_FIELDS)})"
        )
    metadata: dict[str, Any] = {}
    choices: list[str] = []
    if norm.options:
        keys = list(norm.options)
        letters = option_letters(len(keys))
        if sorted(str(k) for k in keys) == letters:
            choices = [str(norm.options[letter]) for letter in letters]
        else:  # odd labels: relabel A, B, ... in the source order and map the answer through the labels
            choices = [str(v) for v in norm.options.values()]
            metadata["option_labels"] = [str(k) for k in keys]
            by_label = {str(k): letter for k, letter in zip(keys, letters, strict=True)}
            answer = by_label.get(answer, answer)
        if answer not in letters and answer in choices:  # answer given as option text
            answer = letters[choices.index(answer)]
    hint = DATASET_HINTS.get(dataset or "")
    prefs = record.get("persona_preferences")
    contexts = (
        {p.get("problem_context") for p in prefs.values() if isinstance(p, dict)} if isinstance(prefs, dict) else set()
    )
    domain = hint[1] if hint else ("math" if contexts == {"math problem"} else "general")
    if choices:
        answer_type = AnswerType.LETTER
    elif hint and hint[2] is not None and hint[2] is not AnswerType.LETTER:
        answer_type = hint[2]
    else:
        answer_type = _infer_answer_type(answer, record.get("original_problem"))
    pid = str(record.get("problem_id", ""))
    m = PROBLEM_ID_RE.match(pid)
    if m:
        metadata["release_index"] = int(m.group(1))
    raw = record.get("original_problem")
    if isinstance(raw, dict):
        metadata["original_problem"] = raw
    if isinstance(record.get("parsed_problem"), dict):
        metadata["parsed_problem"] = record["parsed_problem"]
    if norm.image is not None:
        metadata["image"] = norm.image
    try:
        return Problem(
            id=f"problem_{m.group(1)}" if m else pid,
            benchmark=hint[0] if hint else (dataset or DEFAULT_BENCHMARK),
            domain=domain,
            question=question,
            choices=choices,
            answer=answer,
            answer_type=answer_type,
            solution=norm.solution,
            metadata=metadata,
        )
    except ValidationError as e:
        raise UserError(describe_validation_error(e, f"{where}: original_problem")) from e


# ---------------------------------------------------------------------------------------------------------
# persona object → Persona
# ---------------------------------------------------------------------------------------------------------

_PERSONA_MAPPED = {
    "name",
    "minimal_necessary_description",
    "demographics",
    "educational_profile",
    "personality_big5",
    "domain_expertise",
    "backstory",
    "id",
    "usage_count",
}


def _int_like(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INT_RE.match(value.strip()):
        return int(value.strip())
    return None


def persona_from_release(obj: Any, where: str) -> Persona:
    """Build a Persona from the paper's persona object, keeping every unmapped field in ``extra``."""
    if not isinstance(obj, dict):
        raise UserError(f"{where}: persona must be an object")
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip():
        raise UserError(f"{where}: persona.name must be a non-empty string")
    demo = obj.get("demographics")
    if not isinstance(demo, dict):
        raise UserError(f"{where}: persona.demographics must be an object")
    age = _int_like(demo.get("age"))
    if age is None:
        raise UserError(f"{where}: persona.demographics.age must be an integer, got {demo.get('age')!r}")
    big5 = obj.get("personality_big5")
    if not isinstance(big5, dict):
        raise UserError(f"{where}: persona.personality_big5 must be an object with the five traits")
    big_five: dict[str, TraitScore] = {}
    trait_rest: dict[str, Any] = {}
    for trait in BIG_FIVE:
        entry = big5.get(trait)
        score = entry.get("score") if isinstance(entry, dict) else None
        if isinstance(score, bool) or not isinstance(score, int | float) or not 1 <= score <= 5:
            raise UserError(f"{where}: persona.personality_big5.{trait}.score must be a number 1-5, got {score!r}")
        big_five[trait] = TraitScore(level=trait_level(score), score=float(score))  # type: ignore[arg-type]
        trait_rest[trait] = {k: v for k, v in entry.items() if k != "score"}  # type: ignore[union-attr]
    description = obj.get("minimal_necessary_description")
    description = description.strip() if isinstance(description, str) else ""
    edu = obj.get("educational_profile")
    knowledge = edu.get("knowledge_level") if isinstance(edu, dict) else None
    expertise_list = obj.get("domain_expertise")
    expertise = (
        {str(d): "expert" for d in expertise_list if isinstance(d, str) and d.strip()}
        if isinstance(expertise_list, list)
        else {}
    )
    extra: dict[str, Any] = {
        "demographics": {k: v for k, v in demo.items() if k not in ("age", "occupation", "location")},
        "personality_big5": trait_rest,
    }
    for key in ("educational_profile", "domain_expertise", "usage_count"):
        if key in obj:
            extra[key] = obj[key]
    if "minimal_necessary_description" not in obj:
        extra["no_minimal_necessary_description"] = True
    unmapped = {k: v for k, v in obj.items() if k not in _PERSONA_MAPPED}
    if unmapped:
        extra["unmapped"] = unmapped
    pid = obj.get("id")
    try:
        return Persona(
            id=pid if isinstance(pid, str) and pid.strip() else persona_id(name, description),
            name=name,
            age=age,
            occupation=str(demo.get("occupation") or "").strip() or "unspecified",
            location=str(demo.get("location") or ""),
            education=knowledge if isinstance(knowledge, str) else "",
            summary=description or name,
            big_five=big_five,  # type: ignore[arg-type]
            expertise=expertise,
            backstory=str(obj.get("backstory") or ""),
            extra=extra,
        )
    except ValidationError as e:
        raise UserError(describe_validation_error(e, f"{where}: persona")) from e


# ---------------------------------------------------------------------------------------------------------
# persona_preferences + evaluation_criteria → profile and rubric
# ---------------------------------------------------------------------------------------------------------


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def value_text(value: Any) -> str:
    """A release preference value as our string value (numbers via str, structures as JSON)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def _levels(raw: Any, where: str) -> dict[int, str]:
    items = [{"score": k, "description": v} for k, v in raw.items()] if isinstance(raw, dict) else raw
    if items is None:
        return {}
    if not isinstance(items, list):
        raise UserError(f"{where}.levels must be a list of {{score, description}}")
    anchors: dict[int, str] = {}
    for j, lvl in enumerate(items):
        score = _int_like(lvl.get("score")) if isinstance(lvl, dict) else None
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


_PREF_IN_ITEM = {"description", "justification"}
_CRIT_KNOWN = {"preference", "description", "weight", "levels"}


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


def profile_and_rubric(
    record: dict[str, Any], where: str, catalogue: list[Attribute] | None
) -> tuple[PreferenceProfile, list[RubricCriterion], dict[str, Any]]:
    """Profile, rubric and the provenance entries they produce for one record."""
    prefs = record.get("persona_preferences")
    if not isinstance(prefs, dict) or not prefs:
        raise UserError(f"{where}: persona_preferences must be a non-empty object")
    rubric_obj = record.get("evaluation_rubric")
    criteria = rubric_obj.get("evaluation_criteria") if isinstance(rubric_obj, dict) else None
    if not isinstance(criteria, list) or not criteria:
        raise UserError(f"{where}: evaluation_rubric.evaluation_criteria must be a non-empty list")
    stripped = {k.strip(): k for k in prefs if isinstance(k, str)}
    keyed: list[tuple[str, dict[str, Any], dict[str, Any]]] = []  # (pref key, preference, criterion)
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

    provenance: dict[str, Any] = {}
    weights = [_number(c.get("weight")) for _, _, c in keyed]
    importances = [_number(p.get("local_importance")) for _, p, _ in keyed]
    if all(w is not None for w in weights) and math.fsum(weights) > 0:  # type: ignore[arg-type]
        raw_weights: list[float] = weights  # type: ignore[assignment]
        provenance["weight_source"] = "criteria"
    elif all(w is not None and w > 0 for w in importances):
        raw_weights = importances  # type: ignore[assignment]
        provenance["weight_source"] = "local_importance"
    else:
        raw_weights = [1.0] * len(keyed)
        provenance["weight_source"] = "uniform"
    total = math.fsum(raw_weights)
    rescale = provenance["weight_source"] != "criteria" or abs(total - 1.0) > WEIGHT_TOLERANCE

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
            value = value_text(p["value"])
            items.append(
                PreferenceItem(
                    attribute=attr,
                    value=value,
                    weight=min(1.0, weight / total) if rescale else weight,
                    justification=str(p.get("justification") or ""),
                    description=str(p.get("description") or ""),
                    category=categories.get(attr),  # type: ignore[arg-type]
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
        if rescale and provenance["weight_source"] == "criteria":
            provenance["release_weight_sum"] = total
        profile = PreferenceProfile.normalized(items) if rescale else PreferenceProfile(items=items)
    except ValidationError as e:
        raise UserError(describe_validation_error(e, f"{where}: preferences")) from e

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


# ---------------------------------------------------------------------------------------------------------
# records and files
# ---------------------------------------------------------------------------------------------------------

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
        raise UserError(describe_validation_error(e, where)) from e


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
        raise UserError(describe_validation_error(e, f"{where}: {EXTENSION_KEY}")) from e


def iter_release_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(1-based line number, parsed object) for every non-blank line; UserError on bad JSON."""
    if not path.is_file():
        raise UserError(f"{path}: file not found (expected a prefq-bench JSONL file)")
    out: list[tuple[int, dict[str, Any]]] = []
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise UserError(f"{path}:{lineno}: invalid JSON ({e.msg} at column {e.colno})") from e
            if not isinstance(obj, dict):
                raise UserError(f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}")
            out.append((lineno, obj))
    return out


def import_release(path: Path | str, catalogue: list[Attribute] | None = None) -> tuple[list[Scenario], dict[str, Any]]:
    """Read a prefq-bench JSONL file: (scenarios in file order, metadata line without ``type`` or {}).

    ``catalogue`` (default: the packaged Θ) only sets each preference item's category, through dedup.
    """
    if catalogue is None:
        from prefdisco.builder.catalogue import load_catalogue

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
