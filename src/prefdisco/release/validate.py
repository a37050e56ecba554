"""``prefdisco validate``: check a benchmark in either format and report every problem with its line.

Accepted inputs: a benchmark folder (manifest + scenarios/personas/attributes), a bare ``scenarios.jsonl``, or
a prefq-bench release JSONL (recognized by the first line's ``type``). Unlike the readers, which stop at the
first error, the validator keeps going and returns one :class:`Issue` per problem:

* our format — JSON syntax; every pydantic error (one per field path); weights not summing to 1; rubric
  criteria missing levels; rubric/profile mismatch; duplicate ids; a scenario persona absent from
  ``personas.jsonl``; manifest format and content hash;
* release format — the five required keys; unique ``problem_id`` of the form ``problem_<i>_<...>``; a
  non-empty criteria list; each criterion's ``preference`` a key of ``persona_preferences`` whose entry has
  ``value`` and ``justification``; criterion description, numeric weight and 1/3/5 anchors; weights summing to
  1 within the generator's own tolerance (0.05); preferences without a criterion; persona fields the evaluator
  reads (hobbies and domain_expertise lists of strings, Big Five scores 1-5, age); ``original_problem`` with a
  question field and a non-empty answer field; and finally that the record imports.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from prefdisco.benchio import (
    ATTRIBUTES_FILE,
    FORMAT_VERSION,
    HASHED_FILES,
    MANIFEST_FILE,
    PERSONAS_FILE,
    SCENARIOS_FILE,
    content_hash,
)
from prefdisco.errors import UserError
from prefdisco.release.importer import (
    ANSWER_FIELDS,
    METADATA_TYPE,
    PROBLEM_ID_RE,
    QUESTION_FIELDS,
    RECORD_TYPE,
    REQUIRED_KEYS,
    scenario_from_record,
)
from prefdisco.schema import BIG_FIVE, SCORE_LEVELS, WEIGHT_TOLERANCE, Attribute, Persona, Scenario

RELEASE_WEIGHT_TOLERANCE = 0.05
"""The paper's generator warns when criteria weights miss 1 by more than this (``weight_tolerance``)."""

Kind = Literal["bench", "scenarios", "release"]


@dataclass(frozen=True)
class Issue:
    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass
class ValidationReport:
    path: Path
    kind: Kind
    records: int = 0
    issues: list[Issue] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.issues

    def summary(self) -> str:
        what = {"bench": "benchmark folder", "scenarios": "scenarios file", "release": "prefq-bench release"}[self.kind]
        noun = "scenario" if self.kind != "release" else "record"
        count = f"{self.records} {noun}{'s' if self.records != 1 else ''}"
        if self.ok:
            return f"{self.path}: valid {what}, {count}"
        return f"{self.path}: {len(self.issues)} problem(s) in {what} ({count} read)"


# ---------------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------------


def _read_lines(path: Path, issues: list[Issue]) -> list[tuple[int, Any]]:
    """(line, parsed JSON) for non-blank lines; JSON syntax errors become issues."""
    out: list[tuple[int, Any]] = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        issues.append(Issue(path, 1, f"cannot read file ({e})"))
        return out
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((lineno, json.loads(line)))
        except json.JSONDecodeError as e:
            issues.append(Issue(path, lineno, f"invalid JSON: {e.msg} at column {e.colno}"))
    return out


def _pydantic_messages(err: ValidationError, skip: set[str]) -> list[str]:
    """One message per pydantic error: ``field.path: message``; errors of a ``skip``-ped kind are dropped."""
    out = []
    for e in err.errors(include_url=False):
        loc = tuple(e.get("loc", ()))
        msg = e.get("msg", "invalid").removeprefix("Value error, ")
        if e.get("type") == "value_error":
            if loc == ("profile",) and "weights" in skip and "sum to 1" in msg:
                continue
            if len(loc) == 3 and loc[0] == "rubric" and loc[2] == "levels" and f"levels:{loc[1]}" in skip:
                continue
            if loc == () and "match" in skip:
                continue
            if loc == ("profile",) and "dupes" in skip and "more than once" in msg:
                continue
        where = ".".join(str(p) for p in loc) or "(record)"
        out.append(f"{where}: {msg}")
    return out


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _scenario_messages(d: Any) -> list[str]:
    """Every problem of one scenarios.jsonl object."""
    if not isinstance(d, dict):
        return [f"expected a JSON object, got {type(d).__name__}"]
    msgs: list[str] = []
    skip: set[str] = set()
    sid = d.get("id", "?")
    profile = d.get("profile")
    items = profile.get("items") if isinstance(profile, dict) else None
    profile_attrs: list[str] = []
    if isinstance(items, list) and all(isinstance(i, dict) for i in items):
        profile_attrs = [str(i.get("attribute")) for i in items]
        weights = [i.get("weight") for i in items]
        if items and all(_is_number(w) for w in weights):
            total = math.fsum(weights)
            if abs(total - 1.0) > WEIGHT_TOLERANCE:
                msgs.append(f"scenario {sid}: profile weights sum to {total:.6g}, expected 1")
                skip.add("weights")
        dupes = sorted({a for a in profile_attrs if profile_attrs.count(a) > 1})
        if dupes:
            msgs.append(f"scenario {sid}: profile lists attribute(s) more than once: {', '.join(dupes)}")
            skip.add("dupes")
    rubric = d.get("rubric")
    if isinstance(rubric, list) and all(isinstance(c, dict) for c in rubric):
        rubric_attrs = [str(c.get("attribute")) for c in rubric]
        for ci, c in enumerate(rubric):
            levels = c.get("levels")
            if not isinstance(levels, dict):
                continue
            present = {int(k) for k in levels if str(k).lstrip("-").isdigit()}
            missing = [lvl for lvl in SCORE_LEVELS if lvl not in present]
            if missing:
                msgs.append(f"scenario {sid}: rubric[{ci}] ({c.get('attribute')}) is missing level(s) {missing}")
                skip.add(f"levels:{ci}")
        if profile_attrs:
            no_crit = [a for a in profile_attrs if a not in rubric_attrs]
            unknown = [a for a in rubric_attrs if a not in profile_attrs]
            dup_crit = sorted({a for a in rubric_attrs if rubric_attrs.count(a) > 1})
            if no_crit:
                msgs.append(f"scenario {sid}: profile attribute(s) {no_crit} have no rubric criterion")
            if unknown:
                msgs.append(f"scenario {sid}: rubric criterion for attribute(s) {unknown} not in the profile")
            if dup_crit:
                msgs.append(f"scenario {sid}: rubric has more than one criterion for {dup_crit}")
            if no_crit or unknown or dup_crit:
                skip.add("match")
    try:
        Scenario.model_validate(d)
    except ValidationError as e:
        msgs.extend(_pydantic_messages(e, skip))
    return msgs


def _model_lines(
    path: Path, issues: list[Issue], model: type[Scenario] | type[Persona]
) -> tuple[int, dict[str, int], list[tuple[int, Any]]]:
    """Validate a JSONL file of ``model``; returns (records, id → first line, parsed lines)."""
    lines = _read_lines(path, issues)
    ids: dict[str, int] = {}
    for lineno, d in lines:
        if model is Scenario:
            msgs = _scenario_messages(d)
        elif not isinstance(d, dict):
            msgs = [f"expected a JSON object, got {type(d).__name__}"]
        else:
            try:
                model.model_validate(d)
                msgs = []
            except ValidationError as e:
                msgs = _pydantic_messages(e, set())
        issues.extend(Issue(path, lineno, m) for m in msgs)
        rid = d.get("id") if isinstance(d, dict) else None
        if isinstance(rid, str):
            if rid in ids:
                issues.append(Issue(path, lineno, f"duplicate id {rid!r} (first on line {ids[rid]})"))
            else:
                ids[rid] = lineno
    return len(lines), ids, lines


def _array_entry_lines(text: str) -> list[int]:
    """Line number where each top-level entry of a (valid) JSON array starts."""
    dec = json.JSONDecoder()
    lines: list[int] = []
    i = 0

    def skip_ws(j: int) -> int:
        while j < len(text) and text[j] in " \t\r\n":
            j += 1
        return j

    i = skip_ws(i)
    if i >= len(text) or text[i] != "[":
        return lines
    i = skip_ws(i + 1)
    if i < len(text) and text[i] == "]":
        return lines
    while i < len(text):
        lines.append(text.count("\n", 0, i) + 1)
        _, end = dec.raw_decode(text, i)
        i = skip_ws(end)
        if i < len(text) and text[i] == ",":
            i = skip_ws(i + 1)
            continue
        break
    return lines


def _attribute_issues(path: Path, issues: list[Issue]) -> int:
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except json.JSONDecodeError as e:
        issues.append(Issue(path, e.lineno, f"invalid JSON: {e.msg} at column {e.colno}"))
        return 0
    except (OSError, UnicodeDecodeError) as e:
        issues.append(Issue(path, 1, f"cannot read file ({e})"))
        return 0
    if not isinstance(data, list):
        issues.append(Issue(path, 1, "expected a JSON list of attributes"))
        return 0
    lines = _array_entry_lines(text)
    names: dict[str, int] = {}
    for index, entry in enumerate(data):
        lineno = lines[index] if index < len(lines) else 1
        try:
            attr = Attribute.model_validate(entry)
        except ValidationError as e:
            issues.extend(Issue(path, lineno, f"entry {index}: {m}") for m in _pydantic_messages(e, set()))
            continue
        if attr.name in names:
            issues.append(
                Issue(path, lineno, f"duplicate attribute name {attr.name!r} (first on line {names[attr.name]})")
            )
        else:
            names[attr.name] = lineno
    return len(data)


def _line_of(text: str, needle: str) -> int:
    for lineno, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return lineno
    return 1


# ---------------------------------------------------------------------------------------------------------
# our formats
# ---------------------------------------------------------------------------------------------------------


def validate_bench(directory: Path) -> ValidationReport:
    report = ValidationReport(directory, "bench")
    issues = report.issues
    manifest_path = directory / MANIFEST_FILE
    manifest_text = manifest_path.read_text(encoding="utf-8")
    manifest: Any = None
    try:
        manifest = json.loads(manifest_text)
    except json.JSONDecodeError as e:
        issues.append(Issue(manifest_path, e.lineno, f"invalid JSON: {e.msg} at column {e.colno}"))
    if manifest is not None and not isinstance(manifest, dict):
        issues.append(Issue(manifest_path, 1, "expected a JSON object"))
        manifest = None
    present = [name for name in HASHED_FILES if (directory / name).is_file()]
    for name in HASHED_FILES:
        if name not in present:
            issues.append(Issue(directory / name, 1, "missing file"))
    if isinstance(manifest, dict):
        if manifest.get("format") != FORMAT_VERSION:
            issues.append(
                Issue(
                    manifest_path,
                    _line_of(manifest_text, '"format"'),
                    f"format is {manifest.get('format')!r}, expected {FORMAT_VERSION!r}",
                )
            )
        if len(present) == len(HASHED_FILES):
            actual = content_hash({n: (directory / n).read_bytes() for n in HASHED_FILES})
            if manifest.get("content_hash") != actual:
                issues.append(
                    Issue(
                        manifest_path,
                        _line_of(manifest_text, '"content_hash"'),
                        f"content_hash {manifest.get('content_hash')!r} does not match the files ({actual})",
                    )
                )
    persona_ids: dict[str, int] = {}
    if PERSONAS_FILE in present:
        _, persona_ids, _ = _model_lines(directory / PERSONAS_FILE, issues, Persona)
    if ATTRIBUTES_FILE in present:
        _attribute_issues(directory / ATTRIBUTES_FILE, issues)
    if SCENARIOS_FILE in present:
        path = directory / SCENARIOS_FILE
        report.records, _, lines = _model_lines(path, issues, Scenario)
        if PERSONAS_FILE in present:
            for lineno, d in lines:
                persona = d.get("persona") if isinstance(d, dict) else None
                pid = persona.get("id") if isinstance(persona, dict) else None
                if isinstance(pid, str) and pid not in persona_ids:
                    issues.append(Issue(path, lineno, f"persona id {pid!r} is not in {PERSONAS_FILE}"))
    return report


def validate_scenarios_file(path: Path) -> ValidationReport:
    report = ValidationReport(path, "scenarios")
    report.records, _, _ = _model_lines(path, report.issues, Scenario)
    if report.records == 0 and not report.issues:
        report.issues.append(Issue(path, 1, "no scenarios in the file"))
    return report


# ---------------------------------------------------------------------------------------------------------
# release format
# ---------------------------------------------------------------------------------------------------------


def _persona_messages(persona: Any) -> list[str]:
    if not isinstance(persona, dict):
        return ["persona must be an object"]
    msgs = []
    if not isinstance(persona.get("name"), str) or not persona["name"].strip():
        msgs.append("persona.name must be a non-empty string")
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
    big5 = persona.get("personality_big5")
    if not isinstance(big5, dict):
        msgs.append("persona.personality_big5 must be an object")
    else:
        for trait in BIG_FIVE:
            entry = big5.get(trait)
            score = entry.get("score") if isinstance(entry, dict) else None
            if not _is_number(score) or not 1 <= score <= 5:
                msgs.append(f"persona.personality_big5.{trait}.score must be a number 1-5, got {score!r}")
    return msgs


def _problem_messages(record: dict[str, Any]) -> list[str]:
    parsed = record.get("parsed_problem")
    if isinstance(parsed, dict) and parsed.get("question"):
        return []
    source = record.get("original_problem")
    if not isinstance(source, dict):
        return ["original_problem must be an object (the source row)"]
    msgs = []
    if not any(source.get(k) for k in QUESTION_FIELDS):
        msgs.append(f"original_problem has no question field ({', '.join(QUESTION_FIELDS)})")
    answer_field = next((k for k in ANSWER_FIELDS if source.get(k) is not None), None)
    if answer_field is None:
        msgs.append(f"original_problem has no answer field ({', '.join(ANSWER_FIELDS)})")
    elif not str(source[answer_field]).strip():
        msgs.append(f"original_problem.{answer_field} is empty (no gold answer)")
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
    weights: list[Any] = []
    for ci, crit in enumerate(criteria):
        where = f"evaluation_criteria[{ci}]"
        if not isinstance(crit, dict):
            msgs.append(f"{where} must be an object")
            continue
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
        weights.append(weight)
        if not _is_number(weight) or weight < 0:
            msgs.append(f"{where}: 'weight' must be a non-negative number, got {weight!r}")
        levels = crit.get("levels")
        if not isinstance(levels, list) or not all(isinstance(lv, dict) for lv in levels):
            msgs.append(f"{where}: 'levels' must be a list of {{score, description}} objects")
        else:
            scores = [lv.get("score") for lv in levels]
            bad = [s for s in scores if not (isinstance(s, int) and not isinstance(s, bool) and s in SCORE_LEVELS)]
            if bad:
                msgs.append(f"{where}: level scores must be integers 1-5, got {bad}")
            missing = [s for s in (1, 3, 5) if s not in scores]
            if missing:
                msgs.append(f"{where}: levels have no anchor for score(s) {missing} (expected 1, 3 and 5)")
            if any(not isinstance(lv.get("description"), str) or not lv["description"].strip() for lv in levels):
                msgs.append(f"{where}: every level needs a non-empty 'description'")
    if weights and all(_is_number(w) for w in weights):
        total = math.fsum(weights)
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


def validate_release(path: Path) -> ValidationReport:
    report = ValidationReport(path, "release")
    issues = report.issues
    lines = _read_lines(path, issues)
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
        if not msgs:  # structurally sound: make sure it also converts
            try:
                scenario_from_record(obj, where="record", dataset=dataset, catalogue=None)
            except UserError as e:
                msgs.append(str(e).removeprefix("record: "))
        issues.extend(Issue(path, lineno, m) for m in msgs)
    if report.records == 0:
        issues.append(Issue(path, 1, f"no {RECORD_TYPE!r} records in the file"))
    return report


def validate_path(path: Path | str) -> ValidationReport:
    """Validate a benchmark folder, a scenarios.jsonl file or a prefq-bench release file."""
    path = Path(path)
    if path.is_dir():
        if (path / MANIFEST_FILE).is_file():
            report = validate_bench(path)
        elif (path / SCENARIOS_FILE).is_file():
            report = validate_scenarios_file(path / SCENARIOS_FILE)
        else:
            raise UserError(f"{path}: no {MANIFEST_FILE} or {SCENARIOS_FILE} in this folder")
    elif not path.is_file():
        raise UserError(f"{path}: not found (expected a benchmark folder, scenarios.jsonl or a release JSONL)")
    else:
        report = validate_release(path) if _looks_like_release(path) else validate_scenarios_file(path)
    files = list(dict.fromkeys(i.path for i in report.issues))
    report.issues.sort(key=lambda i: (files.index(i.path), i.line))  # stable: a line's issues keep their order
    return report


def _looks_like_release(path: Path) -> bool:
    """Format detection that survives bad lines: the first line that parses decides."""
    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                continue
            return isinstance(obj, dict) and obj.get("type") in (METADATA_TYPE, RECORD_TYPE)
    return False
