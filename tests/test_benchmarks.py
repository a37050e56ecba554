"""Benchmark loaders on the real local copies in shared/data/benchmarks, the generic loader, error paths."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from prefdisco.answer_spec import (
    RANGE_REL_TOL,
    SINGLE_VALUE_REL_TOL,
    IntegerAnswer,
    LetterAnswer,
    NotJudgeable,
    RangeAnswer,
    parse_integers,
    parse_ranges,
)
from prefdisco.benchmarks import BENCHMARKS, FieldMapping, load_generic, load_problems, parse_mapping
from prefdisco.benchmarks.mascqa import split_options
from prefdisco.errors import UserError
from prefdisco.schema import AnswerType, Problem
from prefdisco.scoring.correctness import check_correct_offline

EXPECTED_ROWS = {
    "math500": 500,
    "aime": 933,
    "logiqa": 651,
    "mascqa": 650,
    "scienceqa": 2224,
    "medqa": 1273,
    "mmlu": 14042,
    "simpleqa": 4326,
    "commonsenseqa": 1221,
    "socialiqa": 1954,
}


def _raw(shared_benchmarks: Path, name: str, split: str | None = None) -> list[dict[str, Any]]:
    path = shared_benchmarks / name / f"{split or BENCHMARKS[name].split}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


@pytest.fixture(scope="module")
def loaded(shared_benchmarks: Path) -> dict[str, list[Problem]]:
    """Every benchmark loaded once from its local folder (MMLU test is 14k rows)."""
    return {name: load_problems(name, shared_benchmarks / name) for name in BENCHMARKS}


def _strip(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items()}
    return value


@pytest.fixture(scope="module")
def raw(shared_benchmarks: Path) -> dict[str, list[dict[str, Any]]]:
    """The source rows, read with json, texts stripped (the loaders strip surrounding whitespace)."""
    return {name: [_strip(r) for r in _raw(shared_benchmarks, name)] for name in BENCHMARKS}


def test_texts_are_stripped_of_surrounding_whitespace(
    loaded: dict[str, list[Problem]], shared_benchmarks: Path
) -> None:
    rows = _raw(shared_benchmarks, "simpleqa")
    index = next(i for i, r in enumerate(rows) if r["answer"] != r["answer"].strip())
    assert loaded["simpleqa"][index].answer == rows[index]["answer"].strip()


@pytest.fixture(scope="module")
def manifest(shared_benchmarks: Path) -> dict[str, Any]:
    return json.loads((shared_benchmarks.parent / "manifest.json").read_text(encoding="utf-8"))["benchmarks"]


# ---------------------------------------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------------------------------------


def test_registry_holds_exactly_the_ten_benchmarks() -> None:
    assert sorted(BENCHMARKS) == sorted(EXPECTED_ROWS)
    assert {spec.domain for spec in BENCHMARKS.values()} >= {"math", "logic", "medicine", "social", "science"}
    assert BENCHMARKS["mascqa"].domain == "materials science"
    assert BENCHMARKS["simpleqa"].domain == "general knowledge"  # not "math problem" as in the paper


@pytest.mark.parametrize("name", sorted(EXPECTED_ROWS))
def test_spec_matches_manifest(name: str, manifest: dict[str, Any]) -> None:
    spec = BENCHMARKS[name]
    entry = manifest[name][spec.split]
    assert list(spec.source_fields) == entry["fields"]
    if name == "mascqa":
        assert spec.hub_id is None
    else:
        assert (spec.hub_id, spec.config) == (entry["hf_id"], entry["config"])


def test_commonsenseqa_uses_the_labelled_validation_split() -> None:
    assert BENCHMARKS["commonsenseqa"].split == "validation"
    assert BENCHMARKS["socialiqa"].split == "validation"


# ---------------------------------------------------------------------------------------------------------
# The ten benchmarks from their local copies
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(EXPECTED_ROWS))
def test_row_counts_ids_and_answer_types(name: str, loaded: dict[str, list[Problem]], manifest: dict[str, Any]) -> None:
    problems = loaded[name]
    spec = BENCHMARKS[name]
    assert len(problems) == EXPECTED_ROWS[name] == manifest[name][spec.split]["rows"]
    assert len({p.id for p in problems}) == len(problems)
    assert {p.benchmark for p in problems} == {name}
    assert {p.domain for p in problems} == {spec.domain}
    assert {p.answer_type for p in problems} <= set(spec.answer_types)
    assert [p.metadata["source_row"] for p in problems] == list(range(len(problems)))
    assert {p.metadata["split"] for p in problems} == {spec.split}


def test_math500(loaded: dict[str, list[Problem]], raw: dict[str, list[dict[str, Any]]]) -> None:
    for p, r in zip(loaded["math500"], raw["math500"], strict=True):
        assert (p.id, p.question, p.answer, p.solution) == (
            r["unique_id"],
            r["problem"],
            r["answer"],
            r["solution"],
        )
        assert p.answer_type is AnswerType.LATEX
        assert (p.metadata["subject"], p.metadata["level"]) == (r["subject"], r["level"])
    assert loaded["math500"][0].answer == "\\left( 3, \\frac{\\pi}{2} \\right)"


def test_aime_keeps_verbatim_answers_and_accepted_integers(
    loaded: dict[str, list[Problem]], raw: dict[str, list[dict[str, Any]]]
) -> None:
    by_id = {p.id: p for p in loaded["aime"]}
    special = by_id["2022-II-8"]
    assert special.answer == "080 or 081 (both were accepted)"
    assert special.answer_spec == IntegerAnswer(accepted=[80, 81])
    for r in raw["aime"]:
        p = by_id[r["ID"]]
        assert p.answer == r["Answer"] and p.answer_type is AnswerType.INTEGER
        assert p.metadata["Year"] == r["Year"] and p.metadata["Problem Number"] == r["Problem Number"]
        if r["ID"] != "2022-II-8":
            assert p.answer_spec == IntegerAnswer(accepted=[int(r["Answer"])])
    assert by_id["1983-1"].answer_spec == IntegerAnswer(accepted=[60])
    assert "Part" not in by_id["1983-1"].metadata  # null upstream
    assert by_id["2022-II-8"].metadata["Part"] == "II"


def test_logiqa_question_options_and_all_four_letters(
    loaded: dict[str, list[Problem]], raw: dict[str, list[dict[str, Any]]]
) -> None:
    problems = loaded["logiqa"]
    for p, r in zip(problems, raw["logiqa"], strict=True):
        assert p.question == f"{r['context']}\n\n{r['query']}"
        assert p.choices == r["options"]
        assert p.answer == "ABCD"[r["correct_option"]]
    letters = Counter(p.answer for p in problems)
    assert set(letters) == {"A", "B", "C", "D"}
    assert letters["D"] == sum(r["correct_option"] == 3 for r in raw["logiqa"]) == 181
    assert problems[3].answer == "D" and problems[3].id == "logiqa-test-3"


def test_scienceqa_hint_as_context_and_index_gold(
    loaded: dict[str, list[Problem]], raw: dict[str, list[dict[str, Any]]]
) -> None:
    for p, r in zip(loaded["scienceqa"], raw["scienceqa"], strict=True):
        assert p.id == r["id"]
        assert p.choices == r["choices"]
        assert p.answer == "ABCDE"[r["answer"]]
        expected = f"{r['hint']}\n\n{r['question']}" if r["hint"] else r["question"]
        assert p.question == expected
    lasagna = next(p for p in loaded["scienceqa"] if p.id == "26")
    assert lasagna.question == "Select the better estimate.\n\nHow long does it take to bake lasagna in the oven?"
    assert lasagna.choices == ["33 minutes", "33 hours"] and lasagna.answer == "A"


def test_medqa_letter_is_answer_idx_and_option_text_is_answer(
    loaded: dict[str, list[Problem]], raw: dict[str, list[dict[str, Any]]]
) -> None:
    for p, r in zip(loaded["medqa"], raw["medqa"], strict=True):
        assert p.answer == r["answer_idx"]
        assert p.choices == [r["options"][k] for k in "ABCD"]
        assert p.choices["ABCD".index(p.answer)] == r["answer"]
        assert p.metadata["meta_info"] == r["meta_info"]
    assert loaded["medqa"][0].answer == "B"


def test_mmlu_index_gold_and_subjects(loaded: dict[str, list[Problem]], raw: dict[str, list[dict[str, Any]]]) -> None:
    for p, r in zip(loaded["mmlu"], raw["mmlu"], strict=True):
        assert p.answer == "ABCD"[r["answer"]] and p.choices == r["choices"]
    assert len({p.metadata["subject"] for p in loaded["mmlu"]}) == 57
    assert set(Counter(p.answer for p in loaded["mmlu"])) == {"A", "B", "C", "D"}


def test_simpleqa_free_text_and_parsed_metadata(
    loaded: dict[str, list[Problem]], raw: dict[str, list[dict[str, Any]]]
) -> None:
    for p, r in zip(loaded["simpleqa"], raw["simpleqa"], strict=True):
        assert (p.question, p.answer, p.choices) == (r["problem"], r["answer"], [])
        assert p.answer_type is AnswerType.FREE_TEXT
    first = loaded["simpleqa"][0]
    assert first.answer == "Michio Sugeno"
    assert first.metadata["topic"] == "Science and technology"
    assert first.metadata["answer_kind"] == "Person"
    assert first.metadata["urls"][0] == "https://en.wikipedia.org/wiki/IEEE_Frank_Rosenblatt_Award"


def test_commonsenseqa_five_options_and_gold(
    loaded: dict[str, list[Problem]], raw: dict[str, list[dict[str, Any]]]
) -> None:
    for p, r in zip(loaded["commonsenseqa"], raw["commonsenseqa"], strict=True):
        assert p.id == r["id"]
        assert len(p.choices) == 5 and p.choices == r["choices"]["text"]
        assert p.answer == r["answerKey"] != ""
        assert p.metadata["question_concept"] == r["question_concept"]
    assert set(Counter(p.answer for p in loaded["commonsenseqa"])) == set("ABCDE")


def test_socialiqa_three_options_and_label_mapping(
    loaded: dict[str, list[Problem]], raw: dict[str, list[dict[str, Any]]]
) -> None:
    for p, r in zip(loaded["socialiqa"], raw["socialiqa"], strict=True):
        assert p.choices == [r["answerA"], r["answerB"], r["answerC"]]
        assert p.answer == {"1": "A", "2": "B", "3": "C"}[r["label"]]
        assert p.question == f"{r['context']}\n\n{r['question']}"
    first = loaded["socialiqa"][0]
    assert raw["socialiqa"][0]["label"] == "3" and first.answer == "C"
    assert first.choices[2] == "Find somewhere to go"
    assert "A. make a new plan" in first.prompt_text()


# ---------------------------------------------------------------------------------------------------------
# MaScQA
# ---------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mascqa(loaded: dict[str, list[Problem]]) -> dict[str, Problem]:
    return {p.id: p for p in loaded["mascqa"]}


def ranges_of(problem: Problem) -> list[tuple[float, float, float, bool]]:
    spec = problem.answer_spec
    assert isinstance(spec, RangeAnswer), spec
    return [(r.lo, r.hi, r.rel_tol, r.single) for r in spec.ranges]


def test_mascqa_num_ranges(mascqa: dict[str, Problem]) -> None:
    led = mascqa["G-XEC-2013-15"]  # "0.85 to 0.89"
    assert led.answer_type is AnswerType.NUMERIC_RANGE and led.answer == "0.85 to 0.89"
    assert ranges_of(led) == [(0.85, 0.89, RANGE_REL_TOL, False)] and led.metadata["gold_raw"] == "0.85 to 0.89"
    single = mascqa["G-META-15-38"]  # "0.5": a single number keeps the documented 1 % tolerance
    assert ranges_of(single) == [(0.5, 0.5, SINGLE_VALUE_REL_TOL, True)] and single.answer == "0.5"
    colon = mascqa["G-XEC-2016-14"]  # "6.00 : 7.30"
    assert ranges_of(colon) == [(6.0, 7.3, RANGE_REL_TOL, False)]
    typo = mascqa["G-META-20-22"]  # "48O TO 494"
    assert ranges_of(typo) == [(480.0, 494.0, RANGE_REL_TOL, False)] and typo.metadata["gold_raw"] == "48O TO 494"
    either = mascqa["G-META-21-42"]  # "0.90 TO 0.94 OR -0.94 TO -0.90": both ranges, not only the first
    assert ranges_of(either) == [(0.9, 0.94, RANGE_REL_TOL, False), (-0.94, -0.9, RANGE_REL_TOL, False)]
    voided = mascqa["G-XEC-2013-21"]  # "Marks to all" on a NUM question: nothing to judge against
    assert voided.answer_type is AnswerType.FREE_TEXT and voided.metadata["all_accepted"] is True
    assert isinstance(voided.answer_spec, NotJudgeable)


def test_mascqa_numeric_golds_score_through_the_loader(mascqa: dict[str, Problem]) -> None:
    """The loader → metric path on the real rows the first-range-only reading got wrong."""
    single = next(p for p in mascqa.values() if p.metadata.get("gold_raw") == "840000")
    assert check_correct_offline(single, "The answer is 8.45 × 10^5.").correct is True  # within 1 %
    assert check_correct_offline(single, "The answer is 860000.").correct is False  # 2.4 % off
    either = mascqa["G-META-21-42"]
    assert check_correct_offline(either, "So the answer is -0.92").correct is True  # the second range
    assert check_correct_offline(either, "So the answer is 0.92").correct is True
    assert check_correct_offline(either, "So the answer is 0.5").correct is False
    for voided in (mascqa["G-XEC-2013-21"], mascqa["G-META-20-7"]):
        assert check_correct_offline(voided, "The answer is 3.").correct is None  # not judgeable, never False


def test_mascqa_options_parsed_from_question(mascqa: dict[str, Problem], raw: dict[str, list[dict]]) -> None:
    first = mascqa["G-XEC-2012-3"]
    assert first.question == "Which of the following techniques is NOT used to grow single crystals of semiconductors?"
    assert first.choices == ["Calendering", "Czochralski", "Float zone", "Bridgman"]
    assert first.answer == "A" and first.answer_type is AnswerType.LETTER
    # "(A)" also occurs inside the stem ("$(G_(A))^(0,L)$"): the options are the last (A)-(D) run.
    tricky = mascqa["G-META-18-26"]
    assert tricky.choices[0] == "1000 J $mol^(-1)$" and "(G_(A))" in tricky.question
    single_letter = [r for r in raw["mascqa"] if r["question_type"] != "NUM" and r["answer"] in list("ABCD")]
    letters = [p for p in mascqa.values() if p.answer_type is AnswerType.LETTER]
    assert len(letters) == len(single_letter) == 409
    assert all(len(p.choices) == 4 and p.metadata["gold_raw"] == p.answer for p in letters)


def test_mascqa_multi_answers_and_duplicate_qid(mascqa: dict[str, Problem]) -> None:
    multi = mascqa["G-META-22-30"]
    assert (multi.answer_type, multi.answer, multi.metadata["gold_raw"]) == (
        AnswerType.FREE_TEXT,
        "A,B,C",
        "A,B,C",
    )
    assert multi.metadata["gold_letters"] == ["A", "B", "C"] and len(multi.choices) == 4
    assert multi.answer_spec == LetterAnswer(accepted=["A", "B", "C"], all_required=True)
    assert mascqa["G-META-18-36"].answer_spec == LetterAnswer(accepted=["C", "D"])
    assert mascqa["G-XEC-2021-8"].metadata["gold_letters"] == ["B", "D"]  # "B; D"
    assert mascqa["G-META-18-36"].metadata["accepted"] == ["C", "D"]  # "C OR D"
    voided = mascqa["G-META-20-7"]
    assert voided.metadata["gold_raw"] == "MARKS TO ALL" and voided.metadata["all_accepted"] is True
    assert mascqa["G-XEC-2016-14"].metadata["source_row"] < mascqa["G-XEC-2016-14-dup2"].metadata["source_row"]


def test_mascqa_without_source_says_there_is_no_hub_dataset() -> None:
    with pytest.raises(UserError, match=r"mascqa.*no Hugging Face dataset.*local"):
        load_problems("mascqa")


def test_answer_parsers() -> None:
    assert parse_integers("080 or 081 (both were accepted)") == [80, 81]
    assert parse_integers("0") == [0] and parse_integers("12.5") is None
    ranges = parse_ranges("350 T0 350")
    assert ranges is not None and (ranges[0].lo, ranges[0].hi) == (350.0, 350.0)
    assert parse_ranges("Marks to all") is None
    assert split_options("What? (A) x (B) y (C) z") is None  # no (D): not clear options


# ---------------------------------------------------------------------------------------------------------
# Sampling and local sources
# ---------------------------------------------------------------------------------------------------------


def test_seeded_sampling_is_deterministic(shared_benchmarks: Path, loaded: dict[str, list[Problem]]) -> None:
    a = load_problems("logiqa", shared_benchmarks / "logiqa", n=20, seed=7)
    b = load_problems("logiqa", shared_benchmarks / "logiqa" / "test.jsonl", n=20, seed=7)
    c = load_problems("logiqa", shared_benchmarks / "logiqa", n=20, seed=8)
    assert [p.id for p in a] == [p.id for p in b]
    assert [p.id for p in a] != [p.id for p in c]
    expected = random.Random(7).sample(range(651), 20)  # sampled order, not sorted
    assert [p.metadata["source_row"] for p in a] == expected
    full = loaded["logiqa"]
    assert all(p == full[p.metadata["source_row"]] for p in a)


def test_sampling_mascqa_keeps_whole_dataset_ids(shared_benchmarks: Path) -> None:
    sample = load_problems("mascqa", shared_benchmarks / "mascqa", n=650, seed=3)
    assert {"G-XEC-2016-14", "G-XEC-2016-14-dup2"} <= {p.id for p in sample}


def test_other_split_from_folder(shared_benchmarks: Path) -> None:
    dev = load_problems("mmlu", shared_benchmarks / "mmlu", split="dev")
    assert len(dev) == 285 and dev[0].id == "mmlu-dev-0" and dev[0].answer == "B"
    # a file named after its split gives that split's ids
    assert load_problems("mmlu", shared_benchmarks / "mmlu" / "dev.jsonl", n=1)[0].id.startswith("mmlu-dev-")


def test_scienceqa_skips_image_rows_and_falls_back_to_row_ids(tmp_path: Path) -> None:
    rows = [
        {"question": "Q1?", "hint": "", "choices": ["a", "b"], "answer": 1, "image": None},
        {"question": "Q2?", "hint": "", "choices": ["a", "b"], "answer": 0, "image": "img.png"},
        {"question": "Q3?", "hint": "Context.", "choices": ["a", "b", "c"], "answer": 2, "image": None},
    ]
    path = tmp_path / "test.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    problems = load_problems("scienceqa", path)
    assert [p.id for p in problems] == ["scienceqa-test-0", "scienceqa-test-2"]
    assert [p.answer for p in problems] == ["B", "C"]
    assert problems[1].question == "Context.\n\nQ3?"


# ---------------------------------------------------------------------------------------------------------
# Generic loader and mappings
# ---------------------------------------------------------------------------------------------------------


def test_parse_mapping_compact_form() -> None:
    m = parse_mapping("question=context+query, choices=options, answer=correct_option, gold=index0, domain=logic")
    assert m.question == ("context", "query") and m.choices == ("options",)
    assert m.answer_type is AnswerType.LETTER and m.gold == "index0" and m.domain == "logic"
    latex = parse_mapping("question=problem,answer=answer,answer_type=latex,id=unique_id,metadata=subject+level")
    assert latex.answer_type is AnswerType.LATEX and latex.metadata == ("subject", "level") and latex.id == "unique_id"
    assert parse_mapping("question=q,answer=a").answer_type is AnswerType.FREE_TEXT


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("question=q,answer=a,colour=red", "unknown key 'colour'"),
        ("question=q,answer", "is not key=value"),
        ("answer=a", "question=<field> is required"),
        ("question=q,answer=a,choices=opts", "gold"),
        ("question=q,answer=a,gold=index0", "gold applies only to answer_type letter"),
        ("question=q,answer=a,answer_type=multiple", "answer_type"),
        ("question=q,answer=a,answer=b", "given twice"),
        ("question=q,answer=a,choices=o,gold=zero_based", "gold"),
    ],
)
def test_parse_mapping_errors(text: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        parse_mapping(text)


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_generic_jsonl_list_choices_and_gold_forms(tmp_path: Path) -> None:
    rows = [
        {
            "uid": "q1",
            "stem": "2+2?",
            "ctx": "Arithmetic.",
            "opts": ["3", "4", "5"],
            "gold": 1,
            "subj": "math",
        },
        {"uid": "q2", "stem": "3+3?", "ctx": "", "opts": ["6", "7"], "gold": 0, "subj": "math"},
    ]
    path = _write_jsonl(tmp_path / "mine.jsonl", rows)
    base = {"question": "ctx+stem", "choices": "opts", "answer": "gold", "answer_type": "letter", "id": "uid"}
    index0 = load_generic(path, FieldMapping(**base, gold="index0", metadata="subj", domain="arithmetic"))
    assert [(p.id, p.answer) for p in index0] == [("q1", "B"), ("q2", "A")]
    assert index0[0].question == "Arithmetic.\n\n2+2?" and index0[1].question == "3+3?"
    assert index0[0].benchmark == "mine" and index0[0].domain == "arithmetic"
    assert index0[0].metadata["subj"] == "math" and index0[0].metadata["split"] == "train"
    one_based = _write_jsonl(tmp_path / "one.jsonl", [{**rows[0], "gold": 3}, {**rows[1], "gold": 1}])
    index1 = load_generic(one_based, {**base, "gold": "index1"}, n=2, seed=0, name="one-based")
    order = random.Random(0).sample([0, 1], 2)
    assert [p.id for p in index1] == [["q1", "q2"][i] for i in order]
    assert {p.id: p.answer for p in index1} == {"q1": "C", "q2": "A"}
    assert index1[0].benchmark == "one-based"
    by_text = _write_jsonl(tmp_path / "text.jsonl", [{**rows[0], "gold": "4"}])
    assert load_generic(by_text, {**base, "gold": "text"})[0].answer == "B"
    by_letter = _write_jsonl(tmp_path / "letter.jsonl", [{**rows[0], "gold": "c"}])
    assert load_generic(by_letter, {**base, "gold": "letter"})[0].answer == "C"


def test_generic_csv_with_option_columns_and_dict_cells(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "q": ["Capital of France?", "Largest planet?"],
            "A": ["Paris", "Mars"],
            "B": ["Rome", "Jupiter"],
            "C": ["Oslo", "Venus"],
            "key": ["A", "B"],
            "opts": [json.dumps({"A": "Paris", "B": "Rome"}), "{'A': 'Mars', 'B': 'Jupiter'}"],
        }
    )
    path = tmp_path / "quiz.csv"
    frame.to_csv(path, index=False)
    columns = load_generic(path, "question=q,choices=A+B+C,answer=key,gold=letter,domain=geography")
    assert [p.choices for p in columns] == [["Paris", "Rome", "Oslo"], ["Mars", "Jupiter", "Venus"]]
    assert [p.answer for p in columns] == ["A", "B"]
    assert [p.id for p in columns] == ["quiz-train-0", "quiz-train-1"]
    cells = load_generic(path, "question=q,choices=opts,answer=key,gold=letter")
    assert [p.choices for p in cells] == [["Paris", "Rome"], ["Mars", "Jupiter"]]


def test_generic_parquet_with_label_text_choices(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "question": ["Pick the fruit", "Pick the colour"],
            "choices": [
                {"label": ["B", "A", "C"], "text": ["stone", "apple", "chair"]},
                {"label": ["A", "B", "C"], "text": ["red", "table", "dog"]},
            ],
            "answerKey": ["A", "A"],
            "answer_num": [7, 8],
        }
    )
    path = tmp_path / "validation.parquet"
    frame.to_parquet(path)
    problems = load_generic(path, "question=question,choices=choices,answer=answerKey,gold=letter")
    assert problems[0].choices == ["apple", "stone", "chair"] and problems[0].answer == "A"  # labels sorted
    assert problems[0].id == f"{tmp_path.name}-validation-0"
    integers = load_generic(path, "question=question,answer=answer_num,answer_type=integer")
    assert [(p.answer, p.answer_spec) for p in integers] == [
        ("7", IntegerAnswer(accepted=[7])),
        ("8", IntegerAnswer(accepted=[8])),
    ]


def test_generic_dict_options_of_varying_size_and_numeric_labels(tmp_path: Path) -> None:
    rows = [
        {"q": "Three?", "opts": {"A": "x", "B": "y", "C": "z"}, "key": "C"},
        {"q": "Two?", "opts": {"A": "u", "B": "v"}, "key": "B"},  # read back with "C": null
    ]
    problems = load_generic(
        _write_jsonl(tmp_path / "opts.jsonl", rows), "question=q,choices=opts,answer=key,gold=letter"
    )
    assert [(p.choices, p.answer) for p in problems] == [(["x", "y", "z"], "C"), (["u", "v"], "B")]
    numbered = [{"q": "Which?", "opts": {str(i): f"o{i}" for i in range(1, 12)}, "key": "10"}]
    (p,) = load_generic(
        _write_jsonl(tmp_path / "num.jsonl", numbered), "question=q,choices=opts,answer=key,gold=letter"
    )
    assert p.choices[:3] == ["o1", "o2", "o3"] and p.choices[9] == "o10" and p.answer == "J"


def test_generic_on_shared_files_matches_named_loaders(
    shared_benchmarks: Path, loaded: dict[str, list[Problem]]
) -> None:
    siqa = load_generic(
        shared_benchmarks / "socialiqa" / "validation.jsonl",
        "question=context+question,choices=answerA+answerB+answerC,answer=label,gold=index1,domain=social",
    )
    assert siqa[0].benchmark == "socialiqa" and siqa[0].id == "socialiqa-validation-0"
    assert [(p.question, p.choices, p.answer) for p in siqa] == [
        (p.question, p.choices, p.answer) for p in loaded["socialiqa"]
    ]
    math = load_generic(
        shared_benchmarks / "math500",
        "question=problem,answer=answer,answer_type=latex,id=unique_id,solution=solution",
        n=5,
        seed=1,
    )
    assert [p.id for p in math] == [p.id for p in load_problems("math500", shared_benchmarks / "math500", 5, 1)]
    # MaScQA mixes answer types: read as numeric ranges throughout, its first (MCQS) row is rejected
    with pytest.raises(UserError, match=r"test\.jsonl: row 1: gold 'A' in field 'answer' is not a number"):
        load_generic(
            shared_benchmarks / "mascqa" / "test.jsonl",
            FieldMapping(question="question", answer="answer", answer_type=AnswerType.NUMERIC_RANGE, id="qid"),
        )


def test_generic_does_not_mutate_caller_data() -> None:
    import datasets  # seconds to import: in the test that uses it, not at collection

    rows = [{"q": "Which?", "o": ["x", "y"], "a": 1, "m": {"tags": ["t"]}}]
    ds = datasets.Dataset.from_list(rows)
    before = ds.to_list()
    mapping = FieldMapping(question="q", choices="o", answer="a", answer_type="letter", gold="index0", metadata="m")
    snapshot = mapping.model_dump()
    problems = load_generic(ds, mapping)
    problems[0].metadata["m"]["tags"].append("changed")
    problems[0].choices.append("z")
    assert ds.to_list() == before and mapping.model_dump() == snapshot
    assert problems[0].answer == "B" and problems[0].benchmark == "dataset"
    assert load_generic(ds, mapping)[0].choices == ["x", "y"]


# ---------------------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------------------


def test_unknown_benchmark_lists_known_names() -> None:
    with pytest.raises(UserError, match="unknown benchmark 'gsm8k'") as info:
        load_problems("gsm8k")
    assert all(name in str(info.value) for name in EXPECTED_ROWS)


def test_missing_file_and_unsupported_type(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such file or folder"):
        load_problems("aime", tmp_path / "nope.jsonl")
    with pytest.raises(UserError, match="no such file or folder"):
        load_generic(tmp_path / "nope.csv", "question=q,answer=a")
    with pytest.raises(UserError, match="no such file or folder"):
        load_generic(str(tmp_path / "nope.parquet"), "question=q,answer=a")
    (tmp_path / "data.txt").write_text("hello", encoding="utf-8")
    with pytest.raises(UserError, match="unsupported file type"):
        load_generic(tmp_path / "data.txt", "question=q,answer=a")
    bad = tmp_path / "broken.jsonl"
    bad.write_text('{"q": "x", "a": \n', encoding="utf-8")
    with pytest.raises(UserError, match=r"broken\.jsonl: could not be read as json"):
        load_generic(bad, "question=q,answer=a")


def test_folder_resolution_errors(shared_benchmarks: Path, tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"no data file for split 'train'.*dev\.jsonl, test\.jsonl"):
        load_problems("mmlu", shared_benchmarks / "mmlu", split="train")
    with pytest.raises(UserError, match="holds several data files"):
        load_generic(shared_benchmarks / "mmlu", "question=question,answer=answer")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UserError, match="found: no data files"):
        load_generic(empty, "question=q,answer=a")


def test_missing_field_names_file_row_and_field(tmp_path: Path, shared_benchmarks: Path) -> None:
    path = _write_jsonl(tmp_path / "rows.jsonl", [{"q": "a?", "a": "x"}, {"q": "b?"}, {"q": "c?", "a": "z"}])
    with pytest.raises(UserError, match=r"rows\.jsonl: row 2: missing field 'a'"):
        load_generic(path, "question=q,answer=a")
    with pytest.raises(UserError, match=r"rows\.jsonl: row 1: missing field 'problem' \(fields: q, a\)"):
        load_generic(path, "question=problem,answer=a")
    with pytest.raises(UserError, match=r"validation\.jsonl: row 1: missing field 'answerKey'"):
        load_problems("commonsenseqa", shared_benchmarks / "socialiqa")


@pytest.mark.parametrize(
    ("row", "gold", "message"),
    [
        (
            {"q": "?", "o": ["a", "b", "c", "d"], "g": "E"},
            "letter",
            r"row 2: gold 'E' in field 'g' is not one of",
        ),
        (
            {"q": "?", "o": ["a", "b", "c", "d"], "g": 4},
            "index0",
            r"row 2: gold 4 in field 'g' is not a 0-based",
        ),
        (
            {"q": "?", "o": ["a", "b", "c"], "g": "0"},
            "index1",
            r"row 2: gold '0' in field 'g' is not a 1-based",
        ),
        ({"q": "?", "o": ["a", "b"], "g": "zz"}, "text", r"row 2: gold 'zz' in field 'g' is not the text"),
        ({"q": "?", "o": ["a", "b"], "g": ""}, "letter", r"row 2: field 'g' is empty: no gold answer"),
        ({"q": "?", "o": ["a"], "g": "A"}, "letter", r"row 2: options field\(s\) o hold 1 options"),
        ({"q": "?", "o": "not a list", "g": "A"}, "letter", r"row 2: field 'o' should hold a list or dict"),
        ({"q": "?", "o": ["a", None], "g": "A"}, "letter", r"row 2: option 2 in field 'o' is null"),
        ({"q": "  ", "o": ["a", "b"], "g": "A"}, "letter", r"row 2: question field\(s\) q are empty"),
    ],
)
def test_bad_gold_and_rows_name_row_and_value(tmp_path: Path, row: dict[str, Any], gold: str, message: str) -> None:
    good_gold = {"letter": "A", "index0": 1, "index1": "1", "text": "a"}[gold]
    path = _write_jsonl(tmp_path / "bad.jsonl", [{"q": "fine?", "o": ["a", "b"], "g": good_gold}, row])
    with pytest.raises(UserError, match=message):
        load_generic(path, f"question=q,choices=o,answer=g,gold={gold}")


def test_unlabelled_split_is_rejected(tmp_path: Path) -> None:
    """CommonsenseQA's test split has blank answerKeys: loading it must fail, not yield empty gold answers."""
    row = {
        "id": "x1",
        "question": "Where?",
        "question_concept": "c",
        "choices": {"label": ["A", "B", "C", "D", "E"], "text": ["a", "b", "c", "d", "e"]},
        "answerKey": "",
    }
    path = _write_jsonl(tmp_path / "test.jsonl", [row])
    with pytest.raises(UserError, match=r"test\.jsonl: row 1: field 'answerKey' is empty: no gold answer"):
        load_problems("commonsenseqa", path)


def test_mascqa_unknown_gold_and_bad_range(tmp_path: Path) -> None:
    mcq = {
        "qid": "x",
        "topic": "t",
        "question_type": "MCQS",
        "question": "Q? (A) a (B) b (C) c (D) d",
        "answer": "E",
    }
    num = {"qid": "y", "topic": "t", "question_type": "NUM", "question": "How much?", "answer": "about 3"}
    with pytest.raises(UserError, match=r"row 1: gold 'E' in field 'answer' is not one of the option letters"):
        load_problems("mascqa", _write_jsonl(tmp_path / "a.jsonl", [mcq]))
    with pytest.raises(UserError, match=r"row 2: gold 'about 3' in field 'answer' is not a number"):
        load_problems("mascqa", _write_jsonl(tmp_path / "b.jsonl", [{**mcq, "answer": "D"}, num]))
    whole = {**mcq, "question": "Which is right: a or b?", "answer": "A"}
    (p,) = load_problems("mascqa", _write_jsonl(tmp_path / "c.jsonl", [whole]))
    assert p.answer_type is AnswerType.FREE_TEXT and p.choices == [] and p.question == whole["question"]


def test_empty_or_duplicate_ids(tmp_path: Path) -> None:
    dup = _write_jsonl(tmp_path / "d.jsonl", [{"k": "a", "q": "1?", "a": "x"}, {"k": "a", "q": "2?", "a": "y"}])
    assert [p.id for p in load_generic(dup, "question=q,answer=a,id=k")] == ["a", "a-dup2"]
    blank = _write_jsonl(tmp_path / "e.jsonl", [{"k": "a", "q": "1?", "a": "x"}, {"k": " ", "q": "2?", "a": "y"}])
    with pytest.raises(UserError, match=r"e\.jsonl: row 2: id field 'k' is empty"):
        load_generic(blank, "question=q,answer=a,id=k")


def test_bad_sample_sizes(shared_benchmarks: Path) -> None:
    with pytest.raises(UserError, match="asked for n=934 problems but only 933 are available"):
        load_problems("aime", shared_benchmarks / "aime", n=934)
    with pytest.raises(UserError, match="n must be at least 1"):
        load_problems("aime", shared_benchmarks / "aime", n=0)


def test_hub_failure_is_a_user_error() -> None:
    """Tests run offline (conftest sets HF_HUB_OFFLINE): a Hub load fails with a one-line UserError."""
    with pytest.raises(UserError, match=r"Hugging Face dataset HuggingFaceH4/MATH-500 \(default config, test split\)"):
        load_problems("math500")
    with pytest.raises(UserError, match=r"Hugging Face dataset someone/thing"):
        load_generic("someone/thing", "question=q,answer=a")
