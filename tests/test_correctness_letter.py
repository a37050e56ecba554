"""Multiple-choice correctness: reading the chosen letter, on hand-made phrasings and real MedQA rows."""

from __future__ import annotations

from pathlib import Path

import pytest

import benchmark_rows
from prefdisco.schema import AnswerType, Problem
from prefdisco.scoring.correctness import CorrectnessResult, check_correct_offline
from prefdisco.scoring.extract.choice import extract_choice


@pytest.fixture(scope="module")
def medqa(shared_benchmarks: Path) -> list[Problem]:
    return benchmark_rows.medqa(shared_benchmarks)


CHOICES = ["a cat", "a dog", "a bird", "a fish"]

LETTER_POSITIVE = [
    ("The answer is (C)", "C"),
    ("Answer: C", "C"),
    ("C.", "C"),
    ("**C**", "C"),
    ("(c)", "C"),
    ("option C", "C"),
    ("\\boxed{C}", "C"),
    ("\\boxed{\\text{(C)}}", "C"),
    ("Let me weigh each option carefully.\nBirds fly.\nC", "C"),
    ("**Final answer:** C", "C"),
    ("I would go with option C because birds have feathers.", "C"),
    ("Option C is correct.", "C"),
    ("C is the correct answer.", "C"),
    ("The correct answer is C) a bird", "C"),
    ("The answer is $C$.", "C"),
    ("The answer is A.", "A"),
    ("Answer: A because cats purr.", "A"),
    ("It flies, so: a bird.", "C"),  # the option text itself
    ("A BIRD", "C"),
    # the last explicit statement wins over earlier mentions and statements
    ("Option A is tempting and option B too. The answer is (B). Re-checking, the answer is actually D.", "D"),
    ("A cat would not fly. A dog neither. The answer is C.", "C"),
    ("The answer is B.\n\nOn reflection:\n\\boxed{D}", "D"),
]


@pytest.mark.parametrize(("response", "letter"), LETTER_POSITIVE)
def test_choice_extraction_patterns(response: str, letter: str) -> None:
    found = extract_choice(response, CHOICES)
    assert found.letter == letter, found


LETTER_NEGATIVE = [
    ("A cat is an animal, and so is a dog.", "ambiguous"),  # the article is not option A; two option texts
    ("A dog barks.", "option text"),  # not "A": the quoted option text is "a dog" -> B, checked below
    ("The answer is A or C.", "ambiguous"),
    ("Answer: (A) and (C)", "ambiguous"),
    ("\\boxed{A, C}", "ambiguous"),
    ("The answer is a bit unclear to me.", "no answer"),
    ("Answer: a difficult question.", "no answer"),
    ("I honestly cannot tell.", "no answer"),
    ("Another option is B, though I am unsure.", "no answer"),  # "option is" alone is not a final answer
    ("", "empty"),
]


@pytest.mark.parametrize(("response", "why"), LETTER_NEGATIVE)
def test_choice_extraction_negatives(response: str, why: str) -> None:
    found = extract_choice(response, CHOICES)
    if why == "option text":
        assert found.letter == "B"  # "A dog" quotes option B's text; "A" itself is never read as a letter
    else:
        assert found.letter is None
        assert why in found.how


def test_statement_list_stops_at_prose() -> None:
    # "and C is wrong" continues the sentence; it is not a second answer
    assert extract_choice("The answer is B, and C is wrong.", CHOICES).letter == "B"


def test_letter_outside_the_options_is_not_read() -> None:
    assert extract_choice("The answer is E.", CHOICES).letter is None


def test_letter_ambiguous_result_is_false_with_reason(medqa: list[Problem]) -> None:
    p = medqa[0]
    result = check_correct_offline(p, "It is either (A) or (D), I cannot decide.")
    assert result == CorrectnessResult(
        correct=False,
        extracted=None,
        method="letter",
        detail="ambiguous: no final answer statement; options A, D mentioned",
    )


def test_medqa_real_rows_in_many_phrasings(medqa: list[Problem]) -> None:
    for p in medqa:
        gold = p.answer
        gold_text = p.choices[p.letters.index(gold)]
        wrong = next(x for x in p.letters if x != gold)
        right = [
            f"Considering the findings, the answer is ({gold}).",
            f"Answer: {gold}",
            f"**{gold}**",
            f"The most appropriate choice here.\n\n{gold}. {gold_text}",
            f"The correct answer is {gold_text}.",
            f"\\boxed{{{gold}}}",
            f"Initially I leaned to ({wrong}). However, the final answer is {gold}.",
        ]
        for response in right:
            result = check_correct_offline(p, response)
            assert result.correct is True, (p.id, response, result)
            assert result.extracted == gold
        for response in [
            f"The answer is ({wrong}).",
            f"Answer: {wrong}",
            f"The answer is {gold}.\nAnswer: {wrong}",
        ]:
            result = check_correct_offline(p, response)
            assert result.correct is False and result.extracted == wrong, (p.id, response, result)


def test_accepted_letters_in_metadata() -> None:
    p = Problem(
        id="m1", benchmark="mascqa", question="q", choices=["w", "x", "y", "z"], answer="B",
        answer_type=AnswerType.LETTER, metadata={"accepted": ["B", "D"]},
    )  # fmt: skip
    assert check_correct_offline(p, "Answer: D").correct is True
    assert check_correct_offline(p, "Answer: A").correct is False


def test_multiple_select_gold_needs_exactly_its_letters() -> None:
    p = Problem(
        id="m2", benchmark="mascqa", question="q", choices=["w", "x", "y", "z"], answer="A,C",
        answer_type=AnswerType.FREE_TEXT, metadata={"gold_letters": ["A", "C"]},
    )  # fmt: skip
    assert check_correct_offline(p, "The answer is A and C.").correct is True
    assert check_correct_offline(p, "Answer: C, A").correct is True
    assert check_correct_offline(p, "The answer is A.").correct is False
    assert check_correct_offline(p, "The answer is A, B and C.").correct is False
