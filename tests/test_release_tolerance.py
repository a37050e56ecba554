"""What the paper's evaluator scores is accepted, with a warning; what nothing can score is refused, with its line.

Records are built the way the paper's generator writes them (``benchmark_generator.py``, as read for
``prefdisco_release_format.md`` §2-§3): a sequential-mode metadata line, ``problem_<i>_<persona id>`` ids, library
personas with the hash id, preferences with ``type`` and ``problem_context``, criteria ordered expertise →
personal, LLM-written weights near ``local_importance / Σ``, anchors at 1, 3 and 5.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from prefdisco.benchio import read_bench, write_bench
from prefdisco.builder.catalogue import load_catalogue
from prefdisco.errors import UserError
from prefdisco.release.convert import export_bench_to_release, import_release_to_bench, load_scenarios
from prefdisco.release.exporter import export_release
from prefdisco.release.format import EXTENSION_KEY, NO_DESCRIPTION, NO_VALUE, MetadataLine
from prefdisco.release.reader import import_release
from prefdisco.release.validate import validate_path
from prefdisco.schema import AttributeJudgement, PreferenceProfile, Scenario, persona_id
from prefdisco.scoring.alignment import pref_align
from prefdisco.scoring.correctness import check_correct_offline

# ---------------------------------------------------------------------------------------------------------
# records as the paper's generator writes them
# ---------------------------------------------------------------------------------------------------------


def metadata_line(dataset: str, per_problem: int = 2, sample: int = 2) -> dict[str, Any]:
    return {
        "type": "metadata",
        "dataset": dataset,
        "general_preferences": {
            "Explanation Depth": {
                "name": "Explanation Depth",
                "description": "How much detail.",
                "value_range": "1-5 (1: result only, 5: every step)",
                "global_importance": 4,
            }
        },
        "total_personas_in_library": 100,
        "fixed_persona_library": True,
        "personas_per_problem": per_problem,
        "sample_size": sample,
        "multi_model_generation": True,
        "llm_clients": ["gpt", "gemini", "claude"],
    }


def library_persona(name: str, description: str, age: int, occupation: str) -> dict[str, Any]:
    trait = {"score": 3, "description": "Middling."}
    return {
        "name": name,
        "minimal_necessary_description": description,
        "demographics": {
            "age": age,
            "occupation": occupation,
            "location": "Porto, Portugal",
            "family_context": "Lives alone",
            "hobbies": ["chess", "cycling"],
        },
        "educational_profile": {
            "knowledge_level": "Secondary school",
            "common_errors": "Rushes",
            "cognitive_features": {"learning_style": "visual", "problem_solving": "stepwise"},
            "affective_features": {"confidence": "low", "anxiety_triggers": "timed tests", "motivation": "career"},
            "metacognitive_features": {"self_awareness": "some"},
        },
        "personality_big5": dict.fromkeys(
            ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism"), trait
        ),
        "backstory": f"{name} works as a {occupation.lower()}.",
        "domain_expertise": ["boat repair", "tide tables"],
        "id": persona_id(name, description),
        "usage_count": 3,
    }


# (name, value, local_importance, type); criteria come out expertise first, then personal
DIMENSIONS = [
    ("Comfort with Fractions", 2, 5, "expertise"),
    ("Familiarity with Percentages", 4, 2, "expertise"),
    ("Everyday Analogies", "throughout", 4, "personal"),
    ("Formality", "casual", 3, "personal"),
]


def generator_record(
    index: int, persona: dict[str, Any], row: dict[str, Any], context: str = "question"
) -> dict[str, Any]:
    total = sum(imp for _, _, imp, _ in DIMENSIONS)
    prefs = {
        name: {
            "name": name,
            "description": f"How the learner relates to {name.lower()}.",
            "value_range": "1-5 (1: none, 3: some, 5: full)" if kind == "expertise" else "categorical: a / b / c",
            "value": value,
            "local_importance": imp,
            "justification": f"{persona['name']} said so about {name.lower()}.",
            "type": kind,
            "problem_context": context,
        }
        for name, value, imp, kind in DIMENSIONS
    }
    criteria = [
        {
            "preference": name,
            "description": f"Does the answer suit {name.lower()} = {value}?",
            "weight": round(imp / total, 2),
            "levels": [{"score": s, "description": f"{name}: level {s} text."} for s in (1, 3, 5)],
        }
        for kind_order in ("expertise", "personal")
        for name, value, imp, kind in DIMENSIONS
        if kind == kind_order
    ]
    return {
        "type": "personalized_problem",
        "problem_id": f"problem_{index}_{persona['id']}",
        "original_problem": copy.deepcopy(row),
        "persona": copy.deepcopy(persona),
        "persona_preferences": prefs,
        "evaluation_rubric": {"evaluation_criteria": criteria},
        "generation_success": True,
    }


PERSONAS = [
    library_persona("Rui Almeida", "A 41-year-old boat mechanic in Porto", 41, "Boat mechanic"),
    library_persona("Ines Carvalho", "A 29-year-old night-bus driver", 29, "Bus driver"),
]
CSQA_ROW = {  # tau/commonsense_qa, test split: answerKey is blank
    "id": "90b30172e645ff91f7171a048582eb8b",
    "question": "The townhouse was a hard sell for the realtor, it was right next to a high rise what?",
    "question_concept": "townhouse",
    "choices": {
        "label": ["A", "B", "C", "D", "E"],
        "text": ["suburban development", "apartment building", "bus stop", "michigan", "suburbs"],
    },
    "answerKey": "",
}
MATH_ROW = {
    "problem": "What is $3 \\cdot 14$?",
    "solution": "$3 \\cdot 14 = 42$, so the answer is $\\boxed{42}$.",
    "answer": "42",
    "subject": "Prealgebra",
    "level": 1,
    "unique_id": "test/prealgebra/1.json",
}
SCIENCEQA_ROW = {
    "image": "images/problem_0_image.png",
    "question": "Which animal's feet are also adapted for swimming?",
    "choices": ["duck", "lion"],
    "answer": 0,
    "hint": "",
    "task": "closed choice",
    "lecture": "Feet are adapted.",
    "solution": "Look at the picture.",
}


def write_lines(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    return path


def parsed(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def assert_round_trip(src: Path, tmp_path: Path) -> list[dict[str, Any]]:
    """Import → export gives back every line, key by key, with only our extension key added; returns them."""
    read = import_release(src)
    out = tmp_path / "round_trip" / src.name
    export_release(read.scenarios, out, metadata=read.metadata)
    before = [obj for obj in parsed(src)]
    after = parsed(out)
    assert len(after) == len(before)
    for old, new in zip(before, after, strict=True):
        extra = set(new) - set(old)
        assert extra <= {EXTENSION_KEY}, extra
        for key in old:
            assert new[key] == old[key], (old.get("problem_id"), key)
    return after


def generator_file(tmp_path: Path, row: dict[str, Any], dataset: str, name: str = "r.jsonl") -> Path:
    records = [generator_record(0, p, row) for p in PERSONAS]
    return write_lines(tmp_path / name, [metadata_line(dataset), *records])


def warnings_of(read: Any) -> list[tuple[int, str]]:
    return [(i.line, i.message) for i in read.warnings]


# ---------------------------------------------------------------------------------------------------------
# accepted with a warning
# ---------------------------------------------------------------------------------------------------------


def test_a_generator_file_imports_without_warnings_and_round_trips(tmp_path):
    src = generator_file(tmp_path, MATH_ROW, "HuggingFaceH4/MATH-500")
    read = import_release(src)
    assert read.issues == [] and len(read.scenarios) == 2
    assert {s.problem.benchmark for s in read.scenarios} == {"math500"}
    assert_round_trip(src, tmp_path)


def test_blank_gold_is_not_judgeable(tmp_path):
    """CommonsenseQA's test split (the paper's config) has a blank answerKey: correctness None, never False."""
    src = generator_file(tmp_path, CSQA_ROW, "tau/commonsense_qa")
    read = import_release(src)
    blank = "original_problem.answerKey is blank (no gold answer): correctness is not judged (None) for this record"
    assert warnings_of(read) == [(2, blank), (3, blank)]
    problem = read.scenarios[0].problem
    assert (problem.answer, problem.answer_spec.kind, problem.choices[1]) == ("", "not_judgeable", "apartment building")
    assert check_correct_offline(problem, "B. apartment building").correct is None
    report = validate_path(src)
    assert report.ok and [(i.line, i.severity) for i in report.issues] == [(2, "warning"), (3, "warning")]
    assert_round_trip(src, tmp_path)


def test_two_criteria_for_one_preference_later_wins(tmp_path):
    """The evaluator keys scores by preference: the later criterion's description, levels and weight count."""
    record = generator_record(0, PERSONAS[0], MATH_ROW)
    criteria = record["evaluation_rubric"]["evaluation_criteria"]
    first = next(i for i, c in enumerate(criteria) if c["preference"] == "Formality")
    criteria.append(
        {
            "preference": "Formality",
            "description": "Is the register casual throughout?",
            "weight": 0.5,
            "levels": [{"score": 1, "description": "Stiff."}, {"score": 5, "description": "Relaxed."}],
        }
    )
    src = write_lines(tmp_path / "r.jsonl", [metadata_line("HuggingFaceH4/MATH-500"), record])
    read = import_release(src)
    (s,) = read.scenarios
    assert (
        2,
        f"evaluation_criteria[4] scores preference 'Formality' again (first in evaluation_criteria[{first}]): "
        "the later criterion is used, as the paper's evaluator keeps the last one per preference",
    ) in warnings_of(read)
    assert [c.attribute for c in s.rubric].count("Formality") == 1
    crit = s.criterion("Formality")
    assert crit.description == "Is the register casual throughout?" and crit.levels[1] == "Stiff."
    raw = {c["preference"]: c["weight"] for c in criteria}  # the evaluator's dict: Formality -> 0.5
    assert s.profile.weight_of("Formality") == pytest.approx(0.5 / sum(raw.values()))
    # PrefAlign over our weights is the evaluator's weighted score over its dict
    scores = {"Comfort with Fractions": 4, "Familiarity with Percentages": 2, "Everyday Analogies": 5, "Formality": 1}
    paper = sum(scores[p] * w for p, w in raw.items()) / sum(raw.values())
    ours = pref_align(
        AttributeJudgement(attribute=i.attribute, weight=i.weight, score=scores[i.attribute], valid=True)
        for i in s.profile.items
    )
    assert ours == pytest.approx(paper)
    after = assert_round_trip(src, tmp_path)  # both criteria written back
    assert len(after[1]["evaluation_rubric"]["evaluation_criteria"]) == 5


@pytest.mark.parametrize("blank", ["", None, "   "])
def test_blank_value_is_kept_and_written_back(tmp_path, blank):
    record = generator_record(0, PERSONAS[0], MATH_ROW)
    record["persona_preferences"]["Formality"]["value"] = blank
    src = write_lines(tmp_path / "r.jsonl", [metadata_line("HuggingFaceH4/MATH-500"), record])
    read = import_release(src)
    (s,) = read.scenarios
    assert warnings_of(read) == [
        (2, "persona_preferences['Formality'] has a blank value: kept (the judge sees it blank)")
    ]
    assert s.profile.item("Formality").value == NO_VALUE == s.criterion("Formality").preferred_value
    after = assert_round_trip(src, tmp_path)
    assert after[1]["persona_preferences"]["Formality"]["value"] == blank


def test_blank_criterion_description_is_kept_and_written_back(tmp_path):
    record = generator_record(0, PERSONAS[0], MATH_ROW)
    record["evaluation_rubric"]["evaluation_criteria"][1]["description"] = ""
    src = write_lines(tmp_path / "r.jsonl", [record])
    read = import_release(src)
    assert warnings_of(read) == [(1, "evaluation_criteria[1]: 'description' is blank")]
    name = record["evaluation_rubric"]["evaluation_criteria"][1]["preference"]
    assert read.scenarios[0].criterion(name).description == NO_DESCRIPTION
    after = assert_round_trip(src, tmp_path)
    assert after[0]["evaluation_rubric"]["evaluation_criteria"][1]["description"] == ""


def test_concatenated_generator_files_keep_every_metadata_line(tmp_path):
    """Two generator files concatenated: both metadata lines kept at their places; each part read with its dataset."""
    math = [generator_record(0, p, MATH_ROW, "math problem") for p in PERSONAS]
    csqa = [generator_record(0, p, CSQA_ROW) for p in PERSONAS]
    for r in csqa:
        r["problem_id"] = r["problem_id"].replace("problem_0", "problem_1")
    lines = [metadata_line("HuggingFaceH4/MATH-500"), *math, metadata_line("tau/commonsense_qa"), *csqa]
    src = write_lines(tmp_path / "r.jsonl", lines)
    read = import_release(src)
    assert read.metadata == [MetadataLine(0, lines[0]), MetadataLine(2, lines[3])]
    assert (
        4,
        "a metadata line after 2 record(s) (two generator files concatenated?): kept at its place",
    ) in warnings_of(read)
    assert [s.problem.benchmark for s in read.scenarios] == ["math500", "math500", "commonsenseqa", "commonsenseqa"]
    after = assert_round_trip(src, tmp_path)
    assert [line["type"] for line in after] == [line["type"] for line in lines]
    # and through a benchmark folder
    bench = tmp_path / "bench"
    import_release_to_bench(src, bench)
    out = tmp_path / "from_bench.jsonl"
    export_bench_to_release(bench, out)
    assert [{k: v for k, v in x.items() if k != EXTENSION_KEY} for x in parsed(out)] == lines


@pytest.mark.parametrize(("weights", "warned"), [((0.3, 0.2, 0.25, 0.18), True), ((0.35, 0.15, 0.27, 0.2), False)])
def test_weights_off_one_are_kept_as_written(tmp_path, weights, warned):
    """0.93 is kept (the generator only warns beyond ± 0.05); scores divide by the sum, as PrefAlign does."""
    record = generator_record(0, PERSONAS[0], MATH_ROW)
    criteria = record["evaluation_rubric"]["evaluation_criteria"]
    for c, w in zip(criteria, weights, strict=True):
        c["weight"] = w
    src = write_lines(tmp_path / "r.jsonl", [metadata_line("HuggingFaceH4/MATH-500"), record])
    read = import_release(src)
    (s,) = read.scenarios
    total = math.fsum(weights)
    message = (
        f"criteria weights sum to {total:.6g}, not 1 ± 0.05 (the paper's generator only warns): kept as written; "
        "scores divide by the sum, as the paper's evaluator does"
    )
    assert warnings_of(read) == ([(2, message)] if warned else [])
    assert validate_path(src).ok
    assert math.fsum(i.weight for i in s.profile.items) == pytest.approx(1.0, abs=1e-12)
    assert s.provenance["release_weight_sum"] == pytest.approx(total)
    scores = [5, 1, 4, 2]
    by_attr = {c["preference"]: (c["weight"], sc) for c, sc in zip(criteria, scores, strict=True)}
    paper = sum(w * sc for w, sc in by_attr.values()) / total
    ours = pref_align(
        AttributeJudgement(attribute=i.attribute, weight=i.weight, score=by_attr[i.attribute][1], valid=True)
        for i in s.profile.items
    )
    assert ours == pytest.approx(paper)
    after = assert_round_trip(src, tmp_path)
    assert [c["weight"] for c in after[1]["evaluation_rubric"]["evaluation_criteria"]] == list(weights)


def test_what_export_keeps_as_written(tmp_path):
    """A missing ``type`` stays missing; odd value ranges, numeric-string values, two-anchor levels and a persona
    without id come back as they were; inside scoring the rubric still has five levels."""
    record = generator_record(0, PERSONAS[0], MATH_ROW)
    prefs = record["persona_preferences"]
    del prefs["Formality"]["type"]
    prefs["Everyday Analogies"]["type"] = "general"
    prefs["Comfort with Fractions"]["value"] = "2"
    prefs["Familiarity with Percentages"]["value_range"] = "low | high, or anything in between"
    record["evaluation_rubric"]["evaluation_criteria"][0]["levels"] = [
        {"score": 5, "description": "Full."},
        {"score": 1, "description": "None."},
    ]
    record["evaluation_rubric"]["notes"] = "kept"
    del record["persona"]["id"]
    record["persona"]["demographics"]["age"] = "41"
    src = write_lines(tmp_path / "r.jsonl", [metadata_line("HuggingFaceH4/MATH-500"), record])
    read = import_release(src)
    (s,) = read.scenarios
    assert s.persona.id == persona_id(PERSONAS[0]["name"], PERSONAS[0]["minimal_necessary_description"])
    assert sorted(s.criterion("Comfort with Fractions").levels) == [1, 2, 3, 4, 5]
    assert s.provenance["interpolated_levels_by_criterion"]["Comfort with Fractions"] == [2, 3, 4]
    assert (
        2,
        "evaluation_criteria[0]: levels have no anchor for score(s) [3]: filled for scoring only",
    ) in warnings_of(read)
    after = assert_round_trip(src, tmp_path)
    assert "type" not in after[1]["persona_preferences"]["Formality"]
    assert "id" not in after[1]["persona"] and after[1]["persona"]["demographics"]["age"] == "41"


def test_other_line_types_are_skipped_and_stray_whitespace_keys_kept(tmp_path):
    """The evaluator skips a line of another type (with a warning); a key with stray whitespace is our attribute
    without it, and is written back with it."""
    record = generator_record(0, PERSONAS[0], MATH_ROW)
    prefs = record["persona_preferences"]
    prefs["Formality "] = prefs.pop("Formality")
    for c in record["evaluation_rubric"]["evaluation_criteria"]:
        if c["preference"] == "Formality":
            c["preference"] = "Formality "
    note = {**generator_record(0, PERSONAS[1], MATH_ROW), "type": "draft"}
    src = write_lines(tmp_path / "r.jsonl", [metadata_line("HuggingFaceH4/MATH-500"), record, note])
    read = import_release(src)
    (s,) = read.scenarios
    assert warnings_of(read) == [(3, "line type 'draft' is not a record: skipped, as the paper's evaluator does")]
    assert "Formality" in [i.attribute for i in s.profile.items]
    out = tmp_path / "out.jsonl"
    export_release(read.scenarios, out, metadata=read.metadata)
    assert "Formality " in parsed(out)[1]["persona_preferences"]
    # a criterion naming the key without its whitespace is what the evaluator cannot look up
    record["evaluation_rubric"]["evaluation_criteria"][-1]["preference"] = "Formality"
    bad = write_lines(tmp_path / "bad.jsonl", [record])
    assert [(i.line, i.message) for i in validate_path(bad).errors] == [
        (1, "evaluation_criteria[3]: preference 'Formality' is not a key of persona_preferences")
    ]


def test_an_edited_scenario_exports_its_edits_over_the_release_parts(tmp_path):
    record = generator_record(0, PERSONAS[0], MATH_ROW)
    del record["persona_preferences"]["Formality"]["type"]
    src = write_lines(tmp_path / "r.jsonl", [metadata_line("HuggingFaceH4/MATH-500"), record])
    (s,) = import_release(src).scenarios
    items = [
        i.model_copy(update={"value": "1"}) if i.attribute == "Comfort with Fractions" else i for i in s.profile.items
    ]
    profile = PreferenceProfile.normalized(items, [0.4, 0.1, 0.3, 0.2])
    edited = Scenario.model_validate({**s.model_dump(), "profile": profile.model_dump()})
    out = tmp_path / "edited.jsonl"
    export_release([edited], out, metadata=[])
    (new,) = parsed(out)
    prefs = new["persona_preferences"]
    assert prefs["Comfort with Fractions"]["value"] == 1 and prefs["Everyday Analogies"]["value"] == "throughout"
    assert "type" not in prefs["Formality"]  # untouched fields stay as written
    weights = {c["preference"]: c["weight"] for c in new["evaluation_rubric"]["evaluation_criteria"]}
    assert weights == pytest.approx({i.attribute: i.weight for i in profile.items})
    assert [len(c["levels"]) for c in new["evaluation_rubric"]["evaluation_criteria"]] == [3, 3, 3, 3]
    assert import_release(out).scenarios[0].profile == edited.profile


# ---------------------------------------------------------------------------------------------------------
# what nothing can score: listed, nothing written, unless --skip-invalid
# ---------------------------------------------------------------------------------------------------------


def unscorable_file(tmp_path: Path) -> Path:
    good = generator_record(0, PERSONAS[0], MATH_ROW)
    no_persona = generator_record(0, PERSONAS[1], MATH_ROW)
    del no_persona["persona"]
    no_rubric = generator_record(1, PERSONAS[0], MATH_ROW)
    no_rubric["evaluation_rubric"] = {"evaluation_criteria": []}
    no_problem = generator_record(1, PERSONAS[1], {"image": None, "answer": "3"})
    meta = metadata_line("HuggingFaceH4/MATH-500")
    broken = '{"type": "personalized_problem", '
    return write_lines(tmp_path / "r.jsonl", [meta, good, broken, no_persona, no_rubric, no_problem])


UNSCORABLE = {
    3: "invalid JSON",
    4: "missing required key 'persona'",
    5: "evaluation_rubric.evaluation_criteria must be a non-empty list",
    6: "original_problem has no question field",
}


def test_unscorable_records_are_listed_and_nothing_is_written(tmp_path):
    src = unscorable_file(tmp_path)
    with pytest.raises(UserError) as e:
        import_release(src)
    message = str(e.value)
    assert message.startswith(f"{src}: 4 lines cannot be scored, nothing written; --skip-invalid imports the rest: ")
    for line, text in UNSCORABLE.items():
        assert f"{src}:{line}: {text}" in message
    assert "\n" not in message
    bench = tmp_path / "bench"
    with pytest.raises(UserError):
        import_release_to_bench(src, bench)
    assert not bench.exists()
    with pytest.raises(UserError, match="4 lines cannot be scored"):
        load_scenarios(src)  # what eval reads a release file with
    report = validate_path(src)
    assert sorted({i.line for i in report.errors}) == sorted(UNSCORABLE)


def test_skip_invalid_writes_the_rest_and_lists_what_it_skipped(tmp_path):
    src = unscorable_file(tmp_path)
    read = import_release(src, skip_invalid=True)
    assert [s.id for s in read.scenarios] == [f"problem_0_{PERSONAS[0]['id']}"]
    assert [line for line, _ in read.error_lines()] == sorted(UNSCORABLE)
    summary = import_release_to_bench(src, tmp_path / "bench", skip_invalid=True)
    assert summary.manifest["source"]["skipped_lines"] == sorted(UNSCORABLE)
    assert [s.id for s in read_bench(tmp_path / "bench").scenarios] == [s.id for s in read.scenarios]
    seen: list[str] = []
    assert len(load_scenarios(src, skip_invalid=True, warn=lambda issues: seen.extend(map(str, issues)))) == 1
    assert [s.split(": ", 1)[0] for s in seen] == [f"{src}:{line}" for line in sorted(UNSCORABLE)]


@pytest.fixture(scope="module")
def cli_app() -> typer.Typer:
    import prefdisco.cli as cli

    cli._register()
    return cli.app


def test_cli_import_release_default_and_skip_invalid(tmp_path, cli_app):
    src = unscorable_file(tmp_path)
    runner = CliRunner()
    res = runner.invoke(cli_app, ["import-release", str(src), "--out", str(tmp_path / "bench")])
    assert res.exit_code == 2 and not (tmp_path / "bench").exists()
    assert res.output.count("error: ") == 1
    for line in UNSCORABLE:
        assert f"{src}:{line}: " in " ".join(res.output.split())
    res = runner.invoke(cli_app, ["import-release", str(src), "--out", str(tmp_path / "bench"), "--skip-invalid"])
    assert res.exit_code == 0, res.output
    skipped = [line for line in res.stderr.splitlines() if ": skipped: " in line]
    assert [s.split(": skipped: ")[0] for s in skipped] == [f"{src}:{line}" for line in sorted(UNSCORABLE)]
    assert "1 scenario," in res.stdout and "skipped 4 line(s)" in res.stdout


def test_cli_prints_warnings_and_validate_does_not_fail_on_them(tmp_path, cli_app):
    src = generator_file(tmp_path, CSQA_ROW, "tau/commonsense_qa")
    runner = CliRunner()
    res = runner.invoke(cli_app, ["import-release", str(src), "--out", str(tmp_path / "bench")])
    assert res.exit_code == 0, res.output
    assert res.stderr.splitlines() == [
        f"{src}:{n}: warning: original_problem.answerKey is blank (no gold answer): correctness is not judged (None) "
        "for this record"
        for n in (2, 3)
    ]
    res = runner.invoke(cli_app, ["validate", str(src)])
    assert res.exit_code == 0, res.output
    assert res.output.strip().splitlines()[-1] == f"{src}: valid prefq-bench release, 2 records, 2 warnings"


def test_one_warning_on_every_record_is_printed_ten_times_then_counted(tmp_path, capsys):
    records = [generator_record(i, PERSONAS[i % 2], CSQA_ROW) for i in range(14)]
    src = write_lines(tmp_path / "r.jsonl", [metadata_line("tau/commonsense_qa"), *records])
    assert len(load_scenarios(src)) == 14  # what eval does with a release file
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 11 and all(": warning: original_problem.answerKey is blank" in line for line in err[:10])
    assert err[10].startswith(f"{src}: warning: … and 4 more line(s) with: original_problem.answerKey is blank")


# ---------------------------------------------------------------------------------------------------------
# validate ⊇ the paper's validator
# ---------------------------------------------------------------------------------------------------------


def _paper_rejects(tmp_path: Path, case: str) -> Path:
    """A file the paper's scripts/validate_benchmark.py rejects, one rule each."""
    good = generator_record(0, PERSONAS[0], MATH_ROW)
    meta = metadata_line("HuggingFaceH4/MATH-500")
    if case == "invalid_json":
        lines: list[Any] = [meta, good, "{oops"]
    elif case == "missing_key":
        lines = [meta, {k: v for k, v in good.items() if k != "persona_preferences"}]
    elif case == "missing_type":
        lines = [meta, {k: v for k, v in good.items() if k != "type"}]
    elif case == "duplicate_id":
        lines = [meta, good, good]
    elif case == "empty_rubric":
        lines = [meta, {**good, "evaluation_rubric": {"evaluation_criteria": []}}]
    elif case == "unknown_type_without_keys":
        lines = [meta, good, {"type": "note"}]
    else:  # missing image
        lines = [meta, generator_record(0, PERSONAS[0], SCIENCEQA_ROW)]
    return write_lines(tmp_path / f"{case}.jsonl", lines)


@pytest.mark.parametrize(
    "case",
    [
        "invalid_json",
        "missing_key",
        "missing_type",
        "duplicate_id",
        "empty_rubric",
        "unknown_type_without_keys",
        "image",
    ],
)
def test_validate_rejects_whatever_the_papers_validator_rejects(tmp_path, case):
    report = validate_path(_paper_rejects(tmp_path, case))
    assert not report.ok, case
    if case == "image":  # its --skip-images is ours too; the import only warns (text-only runs do not need it)
        assert validate_path(_paper_rejects(tmp_path, case), skip_images=True).ok
        read = import_release(_paper_rejects(tmp_path, case))
        assert [i.message.startswith("image ") for i in read.warnings] == [True]


def test_validate_warns_where_the_generator_only_warns(tmp_path):
    record = generator_record(0, PERSONAS[0], MATH_ROW)
    for c, w in zip(record["evaluation_rubric"]["evaluation_criteria"], (0.36, 0.14, 0.25, 0.18), strict=True):
        c["weight"] = w  # 0.93
    report = validate_path(write_lines(tmp_path / "r.jsonl", [metadata_line("x/y"), record]))
    assert report.ok and [i.severity for i in report.issues] == ["warning"]
    assert "criteria weights sum to 0.93" in report.issues[0].message


# ---------------------------------------------------------------------------------------------------------
# images and value ranges
# ---------------------------------------------------------------------------------------------------------


def test_scienceqa_images_travel_with_their_relative_paths(tmp_path):
    src_dir = tmp_path / "release"
    (src_dir / "images").mkdir(parents=True)
    png = b"\x89PNG\r\n\x1a\nfake"
    (src_dir / "images" / "problem_0_image.png").write_bytes(png)
    src = write_lines(
        src_dir / "full.jsonl",
        [metadata_line("derek-thomas/ScienceQA"), generator_record(0, PERSONAS[0], SCIENCEQA_ROW)],
    )
    assert validate_path(src).ok
    summary = import_release_to_bench(src, tmp_path / "bench")
    assert summary.images == ["images/problem_0_image.png"]
    assert (tmp_path / "bench" / "images" / "problem_0_image.png").read_bytes() == png
    out = tmp_path / "out" / "full.jsonl"
    exported = export_bench_to_release(tmp_path / "bench", out)
    assert exported.images == ["images/problem_0_image.png"] and exported.missing_images == []
    assert (out.parent / "images" / "problem_0_image.png").read_bytes() == png
    assert validate_path(out).ok  # the paper's image check passes next to the new file
    direct = tmp_path / "direct" / "full.jsonl"
    export_bench_to_release(src, direct)  # a release file exported directly keeps its metadata line and images
    assert parsed(direct)[0] == parsed(src)[0]
    assert (direct.parent / "images" / "problem_0_image.png").is_file()
    assert_round_trip(src, tmp_path)


def test_exporting_a_scenarios_file_writes_the_catalogues_value_ranges(tmp_path):
    theta = load_catalogue()[0]
    record = generator_record(0, PERSONAS[0], MATH_ROW)
    (s,) = import_release(write_lines(tmp_path / "r.jsonl", [metadata_line("x/y"), record])).scenarios
    item = s.profile.items[0].model_copy(update={"attribute": theta.name})
    crit = s.rubric[0].model_copy(update={"attribute": theta.name})
    built = Scenario(
        id="built-1",
        problem=s.problem,
        persona=s.persona.model_copy(update={"extra": {}}),
        profile=PreferenceProfile(items=[item.model_copy(update={"weight": 1.0})]),
        rubric=[crit],
    )
    write_bench(tmp_path / "b", [built], [built.persona], [])
    out = tmp_path / "from_scenarios.jsonl"
    export_bench_to_release(tmp_path / "b" / "scenarios.jsonl", out)
    (entry,) = parsed(out)[1]["persona_preferences"].values()
    assert entry["value_range"] == " / ".join(theta.value_space) != ""


def test_copying_never_leaves_the_folder(tmp_path):
    (tmp_path / "secret.png").write_bytes(b"x")
    src_dir = tmp_path / "rel"
    src_dir.mkdir()
    record = generator_record(0, PERSONAS[0], {**SCIENCEQA_ROW, "image": "../secret.png"})
    src = write_lines(src_dir / "r.jsonl", [metadata_line("derek-thomas/ScienceQA"), record])
    summary = import_release_to_bench(src, tmp_path / "out" / "bench")
    assert summary.images == [] and not (tmp_path / "out" / "secret.png").exists()


def test_cli_eval_refuses_a_release_file_with_unscorable_lines_unless_skip_invalid(tmp_path, cli_app, monkeypatch):
    """``prefdisco eval`` reads a release file through the same reader: by default it runs nothing and names every
    unscorable line; with ``--skip-invalid`` it evaluates the one scorable scenario."""
    import pandas as pd

    from mock_openai import MockConfig, MockOpenAI

    src = unscorable_file(tmp_path)
    with MockOpenAI(MockConfig()) as mock:
        for key, value in mock.env("mock").items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
        model = f"openai-api/mock/m{mock.port}"
        args = ["eval", str(src), "--model", model, "--modes", "baseline", "--display", "none"]
        refused = CliRunner().invoke(cli_app, [*args, "--log-dir", str(tmp_path / "a")])
        assert refused.exit_code == 2 and "4 lines cannot be scored" in " ".join(refused.output.split())
        assert not (tmp_path / "a").exists() and mock.stats()["received"] == 0
        ran = CliRunner().invoke(cli_app, [*args, "--log-dir", str(tmp_path / "b"), "--skip-invalid"])
    assert ran.exit_code == 0, ran.output
    results = pd.read_csv(tmp_path / "b" / "results.csv")
    assert results["scenario_id"].tolist() == [f"problem_0_{PERSONAS[0]['id']}"]
