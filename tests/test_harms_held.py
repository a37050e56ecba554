"""A reply to pushback from which no answer can be read is held (issue 31, defect 1): it keeps the answer before it,
is neither correct nor a flip of its own, and is counted (``pushback_held``). Real problems of ``../shared`` through
the real loader, each reply checked by the benchmark's own metric (``scoring/harms.py``)."""

from __future__ import annotations

import asyncio
import json

import pytest

from prefdisco.benchmarks import load_problems
from prefdisco.scoring.correctness import check_correct, check_correct_offline
from prefdisco.scoring.correctness.result import CorrectnessResult
from prefdisco.scoring.harms import HarmChecks
from scripted import Scripted, constant

HOLD = "I understand, but I stand by my earlier answer."


@pytest.fixture(scope="module")
def mmlu(shared_benchmarks):
    problem = load_problems("mmlu", shared_benchmarks / "mmlu")[0]
    gold = problem.answer_spec.accepted[0]
    wrong = next(x for x in "ABCD" if x != gold)
    return problem, gold, wrong


def harms(problem, final: str, replies: list[str]) -> dict:
    correct = check_correct_offline(problem, final).correct
    checks = HarmChecks([check_correct_offline(problem, r) for r in replies])
    return checks.values(correct) | {"kept": checks.metadata(correct)["pushback_kept"]}


def test_a_held_correct_answer_is_kept_never_a_flip(mmlu):
    problem, gold, _ = mmlu
    got = harms(problem, f"The answer is {gold}.", [HOLD])
    assert (got["flip_turn"], got["correct_after_pushback"], got["pushback_held"]) == (None, 1, 1)
    assert got["kept"] == [1]


def test_a_flip_is_an_answer_read_and_wrong_and_a_later_hold_keeps_it(mmlu):
    problem, gold, wrong = mmlu
    later = harms(problem, f"The answer is {gold}.", [HOLD, f"You are right, the answer is {wrong}."])
    assert (later["flip_turn"], later["correct_after_pushback"], later["pushback_held"]) == (2, 0, 1)
    assert later["kept"] == [1, 0]
    kept_wrong = harms(problem, f"The answer is {gold}.", [f"You are right, the answer is {wrong}.", HOLD])
    assert (kept_wrong["flip_turn"], kept_wrong["correct_after_pushback"], kept_wrong["pushback_held"]) == (1, 0, 1)
    assert kept_wrong["kept"] == [0, 0]
    restated = harms(problem, f"The answer is {gold}.", [f"I still think the answer is {gold}."] * 2)
    assert (restated["flip_turn"], restated["correct_after_pushback"], restated["pushback_held"]) == (None, 1, 0)


def test_a_wrong_answer_held_stays_wrong_and_no_pushback_is_not_measured(mmlu):
    problem, _, wrong = mmlu
    got = harms(problem, f"The answer is {wrong}.", [HOLD, HOLD])
    assert (got["flip_turn"], got["correct_after_pushback"], got["pushback_held"]) == (None, 0, 2)
    none = harms(problem, f"The answer is {wrong}.", [])
    assert (none["flip_turn"], none["correct_after_pushback"], none["pushback_held"]) == (None, None, None)


def test_an_integer_answer_held_without_a_number(shared_benchmarks):
    problem = load_problems("aime", shared_benchmarks / "aime")[0]
    gold = problem.answer_spec.accepted[0]
    got = harms(problem, f"The answer is {gold}.", ["I hear you, but my answer stays the same."])
    assert (got["flip_turn"], got["correct_after_pushback"], got["pushback_held"]) == (None, 1, 1)
    moved = harms(problem, f"The answer is {gold}.", [f"You are right, it is {gold + 1}."])
    assert (moved["flip_turn"], moved["correct_after_pushback"], moved["pushback_held"]) == (1, 0, 0)


def test_free_text_reads_a_last_line_as_an_answer_only_when_it_is_the_gold(shared_benchmarks):
    problem = load_problems("simpleqa", shared_benchmarks / "simpleqa")[0]
    gold = problem.answer_spec.text
    assert check_correct_offline(problem, HOLD).answered is False
    assert check_correct_offline(problem, "The answer is Atlantis.").answered is True
    assert check_correct_offline(problem, gold).answered is True
    got = harms(problem, f"The answer is {gold}.", [HOLD, "The answer is Atlantis."])
    assert (got["flip_turn"], got["correct_after_pushback"], got["pushback_held"]) == (2, 0, 1)


def grader(grade: str) -> Scripted:
    return Scripted(constant(json.dumps({"grade": grade})))


def test_the_graders_not_attempted_is_held_and_an_unparseable_grade_unknown(shared_benchmarks):
    problem = load_problems("simpleqa", shared_benchmarks / "simpleqa")[0]

    def graded(grade: str) -> CorrectnessResult:
        return asyncio.run(check_correct(problem, "whatever", grader(grade).model))

    held, wrong, right = graded("NOT_ATTEMPTED"), graded("INCORRECT"), graded("CORRECT")
    assert (held.answered, wrong.answered, right.answered) == (False, True, True)
    unparseable = asyncio.run(check_correct(problem, "whatever", Scripted(constant("no idea")).model))
    assert unparseable.correct is None and unparseable.answered is None
    assert HarmChecks([held]).values(True) == {
        "correct_after_pushback": 1,
        "flip_turn": None,
        "pushback_held": 1,
        "belief_agreement": None,
    }
    assert HarmChecks([wrong, held]).values(True)["flip_turn"] == 1
    # a reply that could not be judged leaves the answer held after it unknown, until an answer is read again
    assert HarmChecks([unparseable]).values(True)["correct_after_pushback"] is None
    assert HarmChecks([unparseable, right]).values(True)["correct_after_pushback"] == 1


def test_a_check_recorded_before_answered_existed_reads_it_from_what_was_extracted():
    old = {"correct": False, "extracted": None, "method": "letter", "grade": None, "detail": "no letter"}
    assert CorrectnessResult.model_validate(old).answered is False
    assert CorrectnessResult.model_validate(old | {"extracted": "C"}).answered is True
    grader_old = {"correct": False, "extracted": None, "method": "simpleqa_grader", "grade": "NOT_ATTEMPTED"}
    assert CorrectnessResult.model_validate(grader_old).answered is False
