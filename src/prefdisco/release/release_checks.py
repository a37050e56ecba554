"""Validation of a prefq-bench release file: every problem of every record, with its line.

Two kinds of check per ``personalized_problem`` record, reported together:

* the rules of the paper's format that its evaluator relies on (``prefdisco_release_format.md`` §3) and our
  models do not know: the five required keys; unique ``problem_id`` of the form ``problem_<i>_<...>``;
  ``original_problem`` with a question and a non-empty answer field (the evaluator's ``normalize_problem``
  rules); a persona object with an ``id``, demographics with an integer ``age`` and a list of string
  ``hobbies``, ``domain_expertise`` a list of strings, ``personality_big5`` an object; a non-empty criteria
  list, each criterion's ``preference`` a key of ``persona_preferences`` (named once) whose entry has ``value``
  and ``justification``, a criterion description, a non-negative numeric weight and anchors at 1, 3 and 5;
  weights summing to 1 within the generator's own tolerance (0.05); no preference without a criterion;
* when those hold, the import itself (:func:`prefdisco.release.importer.scenario_from_record`): pydantic's
  errors of the models it builds (:class:`~prefdisco.release.record_error.RecordModelError`), each reported
  once by type and location, or the import's own one-line error. The invariants of :mod:`prefdisco.schema`
  (Big Five and level scores 1-5, non-empty names and texts, a letter answer among the options, ...) are
  checked there and nowhere else.

Line-level: a metadata line only first, no unknown line types, at least one record.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, TypeGuard

from prefdisco.errors import UserError, validation_messages
from prefdisco.release.format import (
    ANSWER_FIELDS,
    METADATA_TYPE,
    PROBLEM_ID_RE,
    QUESTION_FIELDS,
    RECORD_TYPE,
    RELEASE_WEIGHT_TOLERANCE,
    REQUIRED_KEYS,
)
from prefdisco.release.importer import scenario_from_record
from prefdisco.release.problems import normalize_release_problem
from prefdisco.release.record_error import RecordModelError
from prefdisco.release.report import Issue, ValidationReport, read_lines


def _is_number(v: Any) -> TypeGuard[float]:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _persona_messages(persona: Any) -> list[str]:
    if not isinstance(persona, dict):
        return ["persona must be an object"]
    msgs = []
    if not isinstance(persona.get("id"), str) or not persona["id"].strip():
        msgs.append("persona.id must be a non-empty string")
    demo = persona.get("demographics")
    if not isinstance(demo, dict):
        msgs.append("persona.demographics must be an object")
    else:
        age = demo.get("age")
        if not (isinstance(age, int) and not isinstance(age, bool)):
            msgs.append(f"persona.demographics.age must be an integer, got {age!r}")
        hobbies = demo.get("hobbies")
        if not isinstance(hobbies, list) or not all(isinstance(h, str) for h in hobbies):
            msgs.append("persona.demographics.hobbies must be a list of strings")
    expertise = persona.get("domain_expertise")
    if not isinstance(expertise, list) or not all(isinstance(x, str) for x in expertise):
        msgs.append("persona.domain_expertise must be a list of strings")
    if not isinstance(persona.get("personality_big5"), dict):
        msgs.append("persona.personality_big5 must be an object")
    return msgs


def _problem_messages(record: dict[str, Any]) -> list[str]:
    parsed = record.get("parsed_problem")
    if isinstance(parsed, dict) and parsed.get("question"):
        return []
    source = record.get("original_problem")
    if not isinstance(source, dict):
        return ["original_problem must be an object (the source row)"]
    norm = normalize_release_problem({"original_problem": source})
    msgs = []
    if not norm.question.strip():
        msgs.append(f"original_problem has no question field ({', '.join(QUESTION_FIELDS)})")
    if norm.answer_field is None:
        msgs.append(f"original_problem has no answer field ({', '.join(ANSWER_FIELDS)})")
    elif not str(source[norm.answer_field]).strip():
        msgs.append(f"original_problem.{norm.answer_field} is empty (no gold answer)")
    return msgs


def _criterion_messages(ci: int, crit: Any, prefs: dict[str, Any], named: list[str]) -> list[str]:
    """The problems of evaluation_criteria[ci]; appends its preference to ``named``."""
    where = f"evaluation_criteria[{ci}]"
    if not isinstance(crit, dict):
        return [f"{where} must be an object"]
    msgs: list[str] = []
    pref = crit.get("preference")
    if not isinstance(pref, str) or not pref.strip():
        msgs.append(f"{where}: 'preference' must be a non-empty string")
    elif pref not in prefs:
        msgs.append(f"{where}: preference {pref!r} is not a key of persona_preferences")
    else:
        if pref in named:
            msgs.append(f"{where}: preference {pref!r} has more than one criterion")
        named.append(pref)
        entry = prefs[pref]
        if not isinstance(entry, dict):
            msgs.append(f"persona_preferences[{pref!r}] must be an object")
        else:
            if entry.get("value") in (None, ""):
                msgs.append(f"persona_preferences[{pref!r}] has no 'value'")
            if not isinstance(entry.get("justification"), str):
                msgs.append(f"persona_preferences[{pref!r}] has no 'justification'")
    if not isinstance(crit.get("description"), str) or not crit["description"].strip():
        msgs.append(f"{where}: 'description' must be a non-empty string")
    weight = crit.get("weight")
    if not _is_number(weight) or weight < 0:
        msgs.append(f"{where}: 'weight' must be a non-negative number, got {weight!r}")
    levels = crit.get("levels")
    if not isinstance(levels, list) or not all(isinstance(lv, dict) for lv in levels):
        msgs.append(f"{where}: 'levels' must be a list of {{score, description}} objects")
    else:
        scores = [lv.get("score") for lv in levels]
        missing = [s for s in (1, 3, 5) if s not in scores]
        if missing:
            msgs.append(f"{where}: levels have no anchor for score(s) {missing} (expected 1, 3 and 5)")
    return msgs


def _criteria_messages(record: dict[str, Any]) -> list[str]:
    msgs: list[str] = []
    prefs = record.get("persona_preferences")
    if not isinstance(prefs, dict) or not prefs:
        msgs.append("persona_preferences must be a non-empty object")
        prefs = {}
    rubric = record.get("evaluation_rubric")
    criteria = rubric.get("evaluation_criteria") if isinstance(rubric, dict) else None
    if not isinstance(criteria, list) or not criteria:
        msgs.append("evaluation_rubric.evaluation_criteria must be a non-empty list")
        return msgs
    named: list[str] = []
    for ci, crit in enumerate(criteria):
        msgs.extend(_criterion_messages(ci, crit, prefs, named))
    weights = [c.get("weight") for c in criteria if isinstance(c, dict)]
    numbers = [w for w in weights if _is_number(w)]
    if weights and len(numbers) == len(weights):
        total = math.fsum(numbers)
        if abs(total - 1.0) > RELEASE_WEIGHT_TOLERANCE:
            msgs.append(f"criteria weights sum to {total:.6g}, expected 1 (± {RELEASE_WEIGHT_TOLERANCE})")
    orphans = [k for k in prefs if k not in named]
    if orphans:
        msgs.append(f"persona_preferences key(s) {orphans} have no evaluation criterion")
    return msgs


def _record_messages(record: dict[str, Any]) -> list[str]:
    missing = [k for k in REQUIRED_KEYS if k not in record]
    msgs = [f"missing required key {k!r}" for k in missing]
    pid = record.get("problem_id")
    if "problem_id" not in missing and not (isinstance(pid, str) and PROBLEM_ID_RE.match(pid)):
        msgs.append(f"problem_id {pid!r} does not match problem_<i>_<persona id>")
    if "original_problem" not in missing:
        msgs.extend(_problem_messages(record))
    if "persona" not in missing:
        msgs.extend(_persona_messages(record["persona"]))
    if "persona_preferences" not in missing and "evaluation_rubric" not in missing:
        msgs.extend(_criteria_messages(record))
    return msgs


def _import_messages(record: dict[str, Any], dataset: str | None) -> list[str]:
    """What importing the record finds: pydantic's errors of the model that failed, or the import's error."""
    try:
        scenario_from_record(record, where="record", dataset=dataset, catalogue=None)
    except RecordModelError as e:
        prefix = f"{e.part}: " if e.part else ""
        return [prefix + m for m in validation_messages(e.error)]
    except UserError as e:
        return [str(e).removeprefix("record: ")]
    return []


def validate_release(path: Path) -> ValidationReport:
    """Every problem of a prefq-bench release JSONL file."""
    report = ValidationReport(path, "release")
    issues = report.issues
    lines = read_lines(path, issues)
    seen: dict[str, int] = {}
    dataset: str | None = None
    for index, (lineno, obj) in enumerate(lines):
        if not isinstance(obj, dict):
            issues.append(Issue(path, lineno, f"expected a JSON object, got {type(obj).__name__}"))
            continue
        kind = obj.get("type")
        if kind == METADATA_TYPE:
            if index != 0 or lineno != 1:
                issues.append(Issue(path, lineno, "a metadata line may only be the first line"))
            elif isinstance(obj.get("dataset"), str):
                dataset = obj["dataset"]
            continue
        if kind != RECORD_TYPE:
            issues.append(Issue(path, lineno, f"unknown line type {kind!r} (expected {RECORD_TYPE!r})"))
            continue
        report.records += 1
        msgs = _record_messages(obj)
        pid = obj.get("problem_id")
        if isinstance(pid, str):
            if pid in seen:
                msgs.append(f"duplicate problem_id {pid!r} (first on line {seen[pid]})")
            else:
                seen[pid] = lineno
        if not msgs:  # sound in the paper's format: build our models from it
            msgs = _import_messages(obj, dataset)
        issues.extend(Issue(path, lineno, m) for m in msgs)
    if report.records == 0:
        issues.append(Issue(path, 1, f"no {RECORD_TYPE!r} records in the file"))
    return report
