"""Import and export of the paper's released format (prefq-bench JSONL), on the shared example record."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest

from prefdisco.benchmarks.registry import BENCHMARKS, spec_for_hub_id
from prefdisco.builder.catalogue import load_catalogue
from prefdisco.errors import UserError
from prefdisco.release.convert import attributes_from_scenarios, parse_value_range
from prefdisco.release.exporter import export_release, scenario_to_record, write_jsonl_atomic
from prefdisco.release.format import EXTENSION_KEY, MetadataLine
from prefdisco.release.problems import normalize_release_problem, problem_from_release
from prefdisco.release.profiles_export import local_importance
from prefdisco.release.reader import import_release
from prefdisco.schema import (
    AnswerType,
    Persona,
    PreferenceProfile,
    Problem,
    RubricCriterion,
    Scenario,
    TraitScore,
    persona_id,
)
from prefdisco.scoring.correctness import check_correct_offline


@pytest.fixture(scope="module")
def example_path(shared_dir: Path) -> Path:
    return shared_dir / "data" / "prefdisco_release" / "example_record.jsonl"


@pytest.fixture(scope="module")
def example_lines(example_path: Path) -> list[dict]:
    return [json.loads(line) for line in example_path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write_lines(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(obj) + "\n" for obj in lines), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------------------------
# import
# ---------------------------------------------------------------------------------------------------------


def test_import_example_record(example_path, example_lines):
    read = import_release(example_path)
    assert len(read.scenarios) == 1 and read.issues == []
    s = read.scenarios[0]
    raw = example_lines[1]
    assert read.metadata == [MetadataLine(0, example_lines[0])]
    assert s.id == "problem_0_okafor_f334feca"

    p = s.problem
    assert p.id == "problem_0"
    assert p.question == raw["original_problem"]["problem"]
    assert (p.answer, p.answer_type, p.choices) == ("25", AnswerType.LATEX, [])
    assert p.solution == raw["original_problem"]["solution"]
    assert p.domain == "math"  # every preference's problem_context is "math problem"
    assert p.metadata["original_problem"] == raw["original_problem"]

    persona = s.persona
    assert (persona.id, persona.name, persona.age) == ("okafor_f334feca", "Adaeze Okafor", 34)
    assert persona.id == persona_id(persona.name, raw["persona"]["minimal_necessary_description"])
    levels = {t: persona.big_five[t].level for t in persona.big_five}
    assert levels == {
        "openness": "medium",  # 3
        "conscientiousness": "high",  # 4
        "extraversion": "low",  # 2
        "agreeableness": "high",  # 4
        "neuroticism": "medium",  # 3
    }
    assert persona.summary == raw["persona"]["minimal_necessary_description"]
    assert persona.backstory == raw["persona"]["backstory"]
    assert persona.extra["release"] == raw["persona"]  # kept as written
    assert set(persona.expertise) == set(raw["persona"]["domain_expertise"])

    prefs = raw["persona_preferences"]
    assert [i.attribute for i in s.profile.items] == list(prefs)
    assert [i.value for i in s.profile.items] == ["2", "4", "throughout", "light notation"]
    assert [i.weight for i in s.profile.items] == [0.36, 0.14, 0.29, 0.21]
    assert s.profile.item("Workplace Analogies").justification == prefs["Workplace Analogies"]["justification"]
    assert s.profile.item("Comfort with Multi-Digit Multiplication").category == "knowledge"  # type: expertise
    assert s.provenance["weight_source"] == "criteria"
    assert "release_weight_sum" not in s.provenance

    assert s.provenance["interpolated_levels"] == [2, 4]
    crit = s.criterion("Workplace Analogies")
    assert crit.levels[1] == "No real-world framing at all."
    assert crit.levels[2].startswith("Between level 1 and level 3")
    assert "No real-world framing at all." in crit.levels[2] and "One generic analogy" in crit.levels[2]
    assert crit.levels[4].startswith("Between level 3 and level 5")
    assert crit.preferred_value == "throughout"
    assert s.provenance["release"] == {  # the release parts, verbatim
        "preferences": raw["persona_preferences"],
        "criteria": raw["evaluation_rubric"]["evaluation_criteria"],
        "record": {"generation_success": True},
    }


def test_weights_not_summing_to_one_are_renormalized_and_recorded(tmp_path, example_lines):
    record = copy.deepcopy(example_lines[1])
    for c, w in zip(record["evaluation_rubric"]["evaluation_criteria"], (0.3, 0.1, 0.2, 0.1), strict=True):
        c["weight"] = w
    (s,) = import_release(_write_lines(tmp_path / "r.jsonl", [example_lines[0], record])).scenarios
    assert s.provenance["release_weight_sum"] == pytest.approx(0.7)
    assert math.fsum(i.weight for i in s.profile.items) == pytest.approx(1.0, abs=1e-12)
    assert [i.weight for i in s.profile.items] == pytest.approx([3 / 7, 1 / 7, 2 / 7, 1 / 7])


def test_a_missing_weight_is_the_evaluators_default(tmp_path, example_lines):
    """The paper's evaluator uses ``criterion.get("weight", 1 / len(criteria))``; so do we (with a warning)."""
    record = copy.deepcopy(example_lines[1])
    del record["evaluation_rubric"]["evaluation_criteria"][2]["weight"]
    read = import_release(_write_lines(tmp_path / "r.jsonl", [record]))
    (s,) = read.scenarios
    assert s.provenance["weight_source"] == "evaluator_default"
    raw = [0.36, 0.14, 0.25, 0.21]  # 0.29 missing -> 1/4
    assert [i.weight for i in s.profile.items] == pytest.approx([w / sum(raw) for w in raw])
    assert [(i.line, i.message) for i in read.warnings] == [
        (1, "evaluation_criteria[2] has no weight: 1/4, the paper's evaluator's default")
    ]


def test_criterion_with_unknown_preference_is_a_user_error(tmp_path, example_lines):
    record = copy.deepcopy(example_lines[1])
    record["evaluation_rubric"]["evaluation_criteria"][1]["preference"] = "Kitchen Vocabulary"
    path = _write_lines(tmp_path / "r.jsonl", [example_lines[0], record])
    with pytest.raises(UserError) as e:
        import_release(path)
    assert f"{path}:2" in str(e.value) and "'Kitchen Vocabulary' is not a key of persona_preferences" in str(e.value)


def test_bad_lines_are_user_errors(tmp_path, example_lines):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(example_lines[0]) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"r\.jsonl:2: invalid JSON"):
        import_release(path)
    _write_lines(path, [example_lines[1], example_lines[1]])
    with pytest.raises(UserError, match=r":2: duplicate problem_id 'problem_0_okafor_f334feca' \(first on line 1\)"):
        import_release(path)
    no_question = copy.deepcopy(example_lines[1])
    no_question["original_problem"] = {"choices": ["x", "y"], "answerKey": "A"}
    _write_lines(path, [no_question])
    with pytest.raises(UserError, match=r"r\.jsonl:1: original_problem has no question field"):
        import_release(path)


# The evaluator's normalize_problem rules, on rows shaped like the paper's source datasets.
ROWS = [
    (
        "lucasmccabe/logiqa",
        {"context": "C.", "query": "Q?", "options": ["a", "b", "c", "d"], "correct_option": 3},
        "C.\n\nQ?",
        ["a", "b", "c", "d"],
        "D",
        AnswerType.LETTER,
    ),
    (
        "tau/commonsense_qa",
        {"question": "Q?", "choices": {"label": ["A", "B", "C"], "text": ["x", "y", "z"]}, "answerKey": "B"},
        "Q?",
        ["x", "y", "z"],
        "B",
        AnswerType.LETTER,
    ),
    (
        "allenai/social_i_qa",
        {"context": "Ctx", "question": "Q?", "answerA": "a", "answerB": "b", "answerC": "c", "label": "2"},
        "Ctx\n\nQ?",
        ["a", "b", "c"],
        "B",
        AnswerType.LETTER,
    ),
    (
        "GBaker/MedQA-USMLE-4-options",
        {"question": "Q?", "answer": "text b", "answer_idx": "B", "options": {"A": "text a", "B": "text b"}},
        "Q?",
        ["text a", "text b"],
        "B",
        AnswerType.LETTER,
    ),
    (
        "lighteval/mmlu",
        {"question": "Q?", "choices": ["w", "x", "y", "z"], "answer": 0},
        "Q?",
        ["w", "x", "y", "z"],
        "A",
        AnswerType.LETTER,
    ),
    (
        "gneubig/aime-1983-2024",
        {"Question": "Find n.", "Answer": "080"},
        "Find n.",
        [],
        "080",
        AnswerType.INTEGER,
    ),
    (
        "stellalisy/MaScQA",
        {"question": "Compute k.", "correct_answer": "0.85 to 0.89"},
        "Compute k.",
        [],
        "0.85 to 0.89",
        AnswerType.NUMERIC_RANGE,
    ),
    (
        "pvduy/simpleqa",
        {"problem": "Who?", "answer": "Ada Lovelace"},
        "Who?",
        [],
        "Ada Lovelace",
        AnswerType.FREE_TEXT,
    ),
]


@pytest.mark.parametrize(("dataset", "row", "question", "choices", "answer", "answer_type"), ROWS)
def test_problem_normalization_follows_the_evaluator(dataset, row, question, choices, answer, answer_type):
    record = {"problem_id": "problem_7_someone_0123abcd", "original_problem": row}
    p = problem_from_release(record, dataset, "f:2")
    assert (p.question, p.choices, p.answer, p.answer_type) == (question, choices, answer, answer_type)
    assert p.id == "problem_7" and p.metadata["release_index"] == 7
    assert p.metadata["original_problem"] == row


@pytest.mark.parametrize(
    ("name", "release_id", "row", "answer_type"),
    [
        ("aime", "gneubig/aime-1983-2024", {"Question": "Find n.", "Answer": "012"}, AnswerType.INTEGER),
        ("mmlu", "lighteval/mmlu", {"question": "Q?", "choices": ["a", "b"], "answer": 1}, AnswerType.LETTER),
        ("simpleqa", "pvduy/simpleqa", {"problem": "When?", "answer": "1912"}, AnswerType.FREE_TEXT),  # not integer
        ("mascqa", "stellalisy/MaScQA", {"question": "k?", "correct_answer": "0.85 to 0.89"}, AnswerType.NUMERIC_RANGE),
        ("math500", "HuggingFaceH4/MATH-500", {"problem": "x?", "answer": "12"}, AnswerType.LATEX),  # not integer
    ],
)
def test_release_dataset_ids_come_from_the_benchmark_registry(name, release_id, row, answer_type):
    """The paper's Hub ids are aliases of the registry's benchmarks: name, domain and (where the benchmark has
    one) answer type come from the spec, whichever id the metadata line names; the registry's Hub id stays."""
    spec = BENCHMARKS[name]
    assert spec_for_hub_id(release_id) is spec
    if spec.hub_id is not None:
        assert spec_for_hub_id(spec.hub_id) is spec
    assert BENCHMARKS["aime"].hub_id == "di-zhang-fdu/AIME_1983_2024"
    record = {"problem_id": "problem_3_someone_0123abcd", "original_problem": row}
    for dataset in {release_id, spec.hub_id} - {None}:
        p = problem_from_release(record, dataset, "f:2")
        assert (p.benchmark, p.domain, p.answer_type) == (spec.name, spec.domain, answer_type)


def test_unknown_dataset_keeps_its_id_and_infers_the_rest():
    assert spec_for_hub_id("someone/other-bench") is None
    record = {"problem_id": "problem_0_x", "original_problem": {"question": "Who?", "answer": "Ada"}}
    p = problem_from_release(record, "someone/other-bench", "f:2")
    assert (p.benchmark, p.domain, p.answer_type) == ("someone/other-bench", "general", AnswerType.FREE_TEXT)


@pytest.mark.parametrize(
    ("gold", "answer_type", "right", "wrong"),
    [
        ("0.46 TO 0.49", AnswerType.NUMERIC_RANGE, "k = 0.47", "k = 0.5"),  # MaScQA writes TO as often as to
        ("6850 : 6950", AnswerType.NUMERIC_RANGE, "about 6,900 K", "about 7,000 K"),
        ("1,000", AnswerType.INTEGER, "\\boxed{1000}", "\\boxed{1}"),
        ("0.5", AnswerType.NUMERIC_RANGE, "The answer is 0.500.", "The answer is 0.6."),  # within 1 %, as loaded
    ],
)
def test_numeric_release_golds_are_judged_as_numbers(gold, answer_type, right, wrong):
    """MaScQA mixes answer types, so its release records' types are inferred from the gold; a numeric gold in any
    of the shapes the real MaScQA file holds is judged as a number (it was free text, matched word for word)."""
    record = {"problem_id": "problem_0_x", "original_problem": {"question": "k?", "correct_answer": gold}}
    p = problem_from_release(record, "stellalisy/MaScQA", "f:2")
    assert p.answer_type is answer_type
    assert check_correct_offline(p, right).correct is True
    assert check_correct_offline(p, wrong).correct is False


def test_scienceqa_solution_joins_lecture_and_solution():
    row = {
        "question": "Q?",
        "choices": ["a", "b"],
        "answer": 1,
        "lecture": "L.",
        "solution": "S.",
        "image": None,
    }
    norm = normalize_release_problem({"original_problem": row})
    assert (norm.answer, norm.solution, norm.options) == ("B", "L.\n\nS.", {"A": "a", "B": "b"})


# ---------------------------------------------------------------------------------------------------------
# export and round trips
# ---------------------------------------------------------------------------------------------------------


def test_import_export_import_gives_equal_scenarios(tmp_path, example_path):
    read = import_release(example_path)
    scenarios, metadata = read.scenarios, read.metadata
    out = tmp_path / "out.jsonl"
    assert export_release(scenarios, out, metadata=metadata) == 1
    again_read = import_release(out)
    again, metadata2 = again_read.scenarios, again_read.metadata
    assert again == scenarios
    assert metadata2 == metadata
    # and once more: the exported file is a fixed point
    out2 = tmp_path / "out2.jsonl"
    export_release(again, out2, metadata=metadata2)
    assert out2.read_bytes() == out.read_bytes()


def test_export_is_the_identity_on_the_example_record(tmp_path, example_path, example_lines):
    """Import → export gives back every line as written, key by key (parsed JSON), plus only our extension key:
    the rubric's three anchors (not our interpolated 2 and 4), the raw weights, values with their JSON types."""
    read = import_release(example_path)
    out = tmp_path / "out.jsonl"
    export_release(read.scenarios, out, metadata=read.metadata)
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == len(example_lines) == 2
    assert lines[0] == example_lines[0]
    orig, new = example_lines[1], lines[1]
    assert set(new) == set(orig) | {EXTENSION_KEY}
    for key in orig:
        assert new[key] == orig[key], key
    for name, pref in orig["persona_preferences"].items():
        got = new["persona_preferences"][name]
        assert list(got) == list(pref) and type(got["value"]) is type(pref["value"])
    criteria = new["evaluation_rubric"]["evaluation_criteria"]
    assert [[lv["score"] for lv in c["levels"]] for c in criteria] == [[1, 3, 5]] * 4
    assert [c["weight"] for c in criteria] == [0.36, 0.14, 0.29, 0.21]


def test_paper_fields_alone_round_trip(tmp_path, example_path):
    """Without our extension key, the paper fields still carry the whole scenario (except provenance)."""
    read = import_release(example_path)
    scenarios = read.scenarios
    out = tmp_path / "out.jsonl"
    export_release(scenarios, out, metadata=read.metadata)
    meta_line, record = (json.loads(line) for line in out.read_text(encoding="utf-8").splitlines())
    del record[EXTENSION_KEY]
    (again,) = import_release(_write_lines(tmp_path / "plain.jsonl", [meta_line, record])).scenarios
    for field in ("id", "problem", "persona", "profile", "rubric", "relevant_attributes"):
        assert getattr(again, field) == getattr(scenarios[0], field), field


def test_local_importance_rule():
    assert [local_importance(w, 0.36) for w in (0.36, 0.14, 0.29, 0.21)] == [5, 2, 4, 3]
    assert local_importance(0.0, 0.5) == 1
    assert local_importance(0.05, 0.5) == 1  # clamped up to 1
    assert local_importance(0.25, 0.5) == 3  # 2.5 rounds half up


def _built_scenario() -> Scenario:
    """A scenario as our own builder would write it: no release fields anywhere."""
    trait = TraitScore(level="medium", score=3.5)
    persona = Persona(
        id="p-007",
        name="Tomasz Wren",
        age=52,
        occupation="Harbour pilot",
        location="Gdynia",
        education="Maritime academy",
        summary="A harbour pilot who likes short, exact answers.",
        big_five={t: trait for t in ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")},
        expertise={"navigation": "expert", "tides": "proficient"},
    )
    problem = Problem(
        id="mmlu-test-12",
        benchmark="mmlu",
        domain="astronomy",
        question="Which body causes most of the tides?",
        choices=["The Sun", "The Moon", "Mars"],
        answer="B",
        answer_type=AnswerType.LETTER,
    )
    items = [
        {
            "attribute": "Verbosity",
            "value": "1: terse, a few lines",
            "weight": 0.7,
            "category": "communication",
        },
        {"attribute": "Use of analogies", "value": "none", "weight": 0.3, "justification": "Dislikes them."},
    ]
    rubric = [
        RubricCriterion(
            attribute=a,
            preferred_value=v,
            description=f"Check {a}",
            levels={i: f"{a} level {i}" for i in range(1, 6)},
        )
        for a, v in (("Use of analogies", "no analogies at all"), ("Verbosity", "1: terse, a few lines"))
    ]
    return Scenario(
        id="mmlu-test-12__p-007",
        problem=problem,
        persona=persona,
        profile=PreferenceProfile.model_validate({"items": items}),
        rubric=rubric,
        relevant_attributes=["Verbosity", "Use of analogies", "Formality"],
        provenance={"builder": "mockllm/model", "seed": 3},
    )


def test_export_of_built_scenarios_is_evaluator_readable_and_lossless(tmp_path):
    s = _built_scenario()
    out = tmp_path / "built.jsonl"
    export_release([s], out, attributes=load_catalogue())
    meta, record = (json.loads(line) for line in out.read_text(encoding="utf-8").splitlines())
    assert meta["type"] == "metadata" and meta["dataset"] == "mmlu" and meta["sample_size"] == 1
    assert record["problem_id"] == "problem_0_p-007"
    assert record["original_problem"] == {
        "question": s.problem.question,
        "choices": s.problem.choices,
        "answer": "B",
    }
    norm = normalize_release_problem(record)
    assert norm.options == {"A": "The Sun", "B": "The Moon", "C": "Mars"} and norm.answer == "B"
    prefs = record["persona_preferences"]
    assert prefs["Verbosity"]["local_importance"] == 5 and prefs["Use of analogies"]["local_importance"] == 2
    assert prefs["Verbosity"]["value_range"].startswith("1: terse")  # from Θ
    assert prefs["Verbosity"]["type"] == "personal"
    assert record["persona"]["personality_big5"]["openness"]["score"] == 3.5
    assert record["persona"]["demographics"]["hobbies"] == []
    assert record["persona"]["educational_profile"]["knowledge_level"] == "Maritime academy"
    criteria = record["evaluation_rubric"]["evaluation_criteria"]
    assert [c["preference"] for c in criteria] == ["Use of analogies", "Verbosity"]
    assert [c["weight"] for c in criteria] == [0.3, 0.7]
    assert [[lv["score"] for lv in c["levels"]] for c in criteria] == [[1, 2, 3, 4, 5]] * 2  # all are ours
    (again,) = import_release(out).scenarios
    assert again == s


def test_export_writes_ascii_escaped_json_as_the_papers_files_do(tmp_path):
    """The paper's evaluator opens the file without naming an encoding: raw UTF-8 "Gdańsk" is read as "GdaÅ„sk"
    where the default is cp1252. Every non-ASCII character is written as a \\u escape, which reads the same under
    any ASCII-compatible default; the importer reads both spellings of a file."""
    built = _built_scenario()
    persona = built.persona.model_copy(update={"location": "Gdańsk", "summary": "A pilot — “exact” answers."})
    s = Scenario.model_validate({**built.model_dump(), "persona": persona.model_dump()})
    out = tmp_path / "paper.jsonl"
    export_release([s], out, attributes=load_catalogue())
    data = out.read_bytes()
    assert data.isascii() and b'"Gda\\u0144sk"' in data and b"\\u2014 \\u201cexact\\u201d" in data
    _, record = (json.loads(line) for line in out.read_text(encoding="cp1252").splitlines())
    assert record["persona"]["demographics"]["location"] == "Gdańsk"
    (again,) = import_release(out).scenarios
    assert again == s
    raw = tmp_path / "raw.jsonl"  # the same lines as raw UTF-8 (a file written by other tools)
    raw.write_text("".join(json.dumps(json.loads(x), ensure_ascii=False) + "\n" for x in data.decode().splitlines()))
    assert "Gdańsk" in raw.read_text(encoding="utf-8")
    (from_raw,) = import_release(raw).scenarios
    assert from_raw == s


def test_value_range_parsing_for_attributes(example_path):
    assert parse_value_range("1-5 (1: needs every partial product shown, 5: fully fluent)") == [
        "1: needs every partial product shown",
        "5: fully fluent",
    ]
    assert parse_value_range("categorical: none / occasional / throughout") == [
        "none",
        "occasional",
        "throughout",
    ]
    assert parse_value_range("anything") == ["1: low", "5: high"]
    scenarios = import_release(example_path).scenarios
    attrs = attributes_from_scenarios(scenarios)
    assert [a.name for a in attrs] == [i.attribute for i in scenarios[0].profile.items]
    assert attrs[0].category == "knowledge" and attrs[2].value_space == ["none", "occasional", "throughout"]


def test_scenario_to_record_keeps_preferences_without_criterion(tmp_path, example_lines):
    record = copy.deepcopy(example_lines[1])
    record["persona_preferences"]["Tone"] = {
        "name": "Tone",
        "value": 2,
        "justification": "x",
        "description": "d",
    }
    read = import_release(_write_lines(tmp_path / "r.jsonl", [record]))
    (s,) = read.scenarios
    assert "Tone" not in [i.attribute for i in s.profile.items]
    assert [i.message for i in read.warnings] == [
        "persona_preferences ['Tone'] have no criterion: kept, not scored (as in the paper)"
    ]
    out = scenario_to_record(s, s.id)
    assert out["persona_preferences"]["Tone"] == record["persona_preferences"]["Tone"]


def test_failed_export_leaves_the_old_file_untouched(tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_text("old\n", encoding="utf-8")

    def lines():
        yield {"type": "metadata"}
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_jsonl_atomic(out, lines())
    assert out.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]
    with pytest.raises(UserError, match="nothing to export"):
        export_release([], out)
