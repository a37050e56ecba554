"""The rules for one release line: what breaks scoring (an error) and what is accepted with a warning.

The importer and ``prefdisco validate`` apply the same rules (:mod:`prefdisco.release.reader`); ``docs/release.md``
tabulates them against the paper's validator (``scripts/validate_benchmark.py``), of which they are a strict
superset. An error is what the paper's validator rejects, or what makes its evaluator skip the record (a direct
lookup that fails: a criterion naming no preference, a preference without ``value`` or ``justification``, a
criterion without ``description``), or what no score can come from (no question, weights summing to 0). A warning
is what the evaluator scores anyway, said with how we read it: a blank gold, a criterion repeated for one
preference, a blank value, a missing weight, weights off 1 by more than the generator's tolerance, levels other
than the 1/3/5 anchors, a preference without criterion, an odd ``problem_id``, a persona without ``id``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from prefdisco.release.format import (
    ANSWER_FIELDS,
    PROBLEM_ID_RE,
    QUESTION_FIELDS,
    RELEASE_WEIGHT_TOLERANCE,
    REQUIRED_KEYS,
)
from prefdisco.release.problems import normalize_release_problem
from prefdisco.release.profiles import level_anchors, raw_weight

NOT_JUDGED = "correctness is not judged (None) for this record"


@dataclass
class Findings:
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def paper_validator_errors(row: dict[str, Any]) -> list[str]:
    """The paper's validator's per-line rules for a non-metadata line (besides unique ids): the required keys
    and a non-empty ``evaluation_rubric.evaluation_criteria``."""
    errors = [f"missing required key {k!r}" for k in ("type", *REQUIRED_KEYS) if k not in row]
    rubric = row.get("evaluation_rubric", {})
    criteria = rubric.get("evaluation_criteria") if isinstance(rubric, dict) else None
    if "evaluation_rubric" in row and (not isinstance(criteria, list) or not criteria):
        errors.append("evaluation_rubric.evaluation_criteria must be a non-empty list")
    return errors


def _problem(record: dict[str, Any], out: Findings) -> None:
    parsed = record.get("parsed_problem")
    if isinstance(parsed, dict) and parsed.get("question"):
        if not str(parsed.get("answer") or "").strip():
            out.warnings.append(f"parsed_problem has no gold answer: {NOT_JUDGED}")
        return
    source = record.get("original_problem")
    if not isinstance(source, dict):
        out.errors.append("original_problem must be an object (the source row)")
        return
    norm = normalize_release_problem({"original_problem": source})
    if not norm.question.strip():
        out.errors.append(f"original_problem has no question field ({', '.join(QUESTION_FIELDS)})")
    if norm.answer_field is None:
        out.warnings.append(f"original_problem has no answer field ({', '.join(ANSWER_FIELDS)}): {NOT_JUDGED}")
    elif not str(source[norm.answer_field]).strip():
        out.warnings.append(f"original_problem.{norm.answer_field} is blank (no gold answer): {NOT_JUDGED}")


def _persona(persona: Any, out: Findings) -> None:
    if not isinstance(persona, dict):
        out.errors.append("persona must be an object")
        return
    if not isinstance(persona.get("id"), str) or not persona["id"].strip():
        out.warnings.append(
            "persona has no id: ours is derived from name and description (the evaluator says 'unknown')"
        )
    demo = persona.get("demographics")
    hobbies = demo.get("hobbies", []) if isinstance(demo, dict) else []
    if not isinstance(hobbies, list) or not all(isinstance(h, str) for h in hobbies):
        out.errors.append("persona.demographics.hobbies must be a list of strings")
    expertise = persona.get("domain_expertise", [])
    if not isinstance(expertise, list) or not all(isinstance(x, str) for x in expertise):
        out.errors.append("persona.domain_expertise must be a list of strings")


def _criterion(ci: int, crit: Any, prefs: dict[str, Any], n: int, first: dict[str, int], out: Findings) -> None:
    where = f"evaluation_criteria[{ci}]"
    if not isinstance(crit, dict):
        out.errors.append(f"{where} must be an object")
        return
    pref = crit.get("preference")
    if not isinstance(pref, str) or not pref.strip():
        out.errors.append(f"{where}: 'preference' must be a non-empty string")
    elif pref not in prefs:
        out.errors.append(f"{where}: preference {pref!r} is not a key of persona_preferences")
    else:
        if pref in first:
            out.warnings.append(
                f"{where} scores preference {pref!r} again (first in evaluation_criteria[{first[pref]}]): the later "
                "criterion is used, as the paper's evaluator keeps the last one per preference"
            )
        first.setdefault(pref, ci)
        entry = prefs[pref]
        if not isinstance(entry, dict):
            out.errors.append(f"persona_preferences[{pref!r}] must be an object")
        else:
            if "value" not in entry:
                out.errors.append(f"persona_preferences[{pref!r}] has no 'value'")
            elif entry["value"] is None or (isinstance(entry["value"], str) and not entry["value"].strip()):
                out.warnings.append(f"persona_preferences[{pref!r}] has a blank value: kept (the judge sees it blank)")
            if "justification" not in entry:
                out.errors.append(f"persona_preferences[{pref!r}] has no 'justification'")
    desc = crit.get("description")
    if not isinstance(desc, str):
        out.errors.append(f"{where}: 'description' must be a string")
    elif not desc.strip():
        out.warnings.append(f"{where}: 'description' is blank")
    if "weight" not in crit:
        out.warnings.append(f"{where} has no weight: 1/{n}, the paper's evaluator's default")
    elif raw_weight(crit, n) is None:
        out.errors.append(f"{where}: 'weight' must be a number >= 0, got {crit['weight']!r}")
    anchors, notes = level_anchors(crit.get("levels"))
    out.warnings.extend(f"{where}: {note} (ignored)" for note in notes)
    missing = [s for s in (1, 3, 5) if s not in anchors]
    if missing:
        out.warnings.append(f"{where}: levels have no anchor for score(s) {missing}: filled for scoring only")


def _criteria(record: dict[str, Any], out: Findings) -> None:
    prefs = record.get("persona_preferences")
    if not isinstance(prefs, dict) or not prefs:
        out.errors.append("persona_preferences must be a non-empty object")
        prefs = {}
    rubric = record.get("evaluation_rubric")
    criteria = rubric.get("evaluation_criteria") if isinstance(rubric, dict) else None
    if not isinstance(criteria, list) or not criteria:
        out.errors.append("evaluation_rubric.evaluation_criteria must be a non-empty list")
        return
    first: dict[str, int] = {}
    for ci, crit in enumerate(criteria):
        _criterion(ci, crit, prefs, len(criteria), first, out)
    last = {c["preference"]: c for c in criteria if isinstance(c, dict) and isinstance(c.get("preference"), str)}
    weights = [raw_weight(c, len(criteria)) for c in last.values()]
    if weights and all(w is not None for w in weights):
        total = sum(w for w in weights if w is not None)
        if total <= 0:
            out.errors.append("criteria weights sum to 0 (the paper's evaluator would score every response 0)")
        elif abs(total - 1.0) > RELEASE_WEIGHT_TOLERANCE:
            out.warnings.append(
                f"criteria weights sum to {total:.6g}, not 1 ± {RELEASE_WEIGHT_TOLERANCE} (the paper's generator only "
                "warns): kept as written; scores divide by the sum, as the paper's evaluator does"
            )
    names = [k.strip() for k in first]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        out.errors.append(f"preferences {clash} differ only in surrounding whitespace")
    orphans = [k for k in prefs if k not in first]
    if orphans:
        out.warnings.append(f"persona_preferences {orphans} have no criterion: kept, not scored (as in the paper)")


def record_findings(record: dict[str, Any]) -> Findings:
    """Errors and warnings of one ``personalized_problem`` record, before it is converted."""
    out = Findings(errors=paper_validator_errors(record))
    pid = record.get("problem_id")
    if "problem_id" in record:
        if not isinstance(pid, str) or not pid.strip():
            out.errors.append("problem_id must be a non-empty string")
        elif not PROBLEM_ID_RE.match(pid):
            out.warnings.append(f"problem_id {pid!r} is not problem_<i>_<persona id> (the paper's PEP reads i from it)")
    if "original_problem" in record:
        _problem(record, out)
    if "persona" in record:
        _persona(record["persona"], out)
    if "persona_preferences" in record and "evaluation_rubric" in record:
        _criteria(record, out)
    out.errors = list(dict.fromkeys(out.errors))
    return out
