"""Correctness scoring by each benchmark's own metric, on real rows of the shared benchmark copies."""

from __future__ import annotations

import itertools
import json
import threading
from pathlib import Path

import pytest
from inspect_ai.model import GenerateConfig, ModelOutput, ModelUsage, get_model

from prefdisco.prompts import render
from prefdisco.schema import AnswerType, Problem
from prefdisco.scoring.correctness import (
    CorrectnessResult,
    check_correct,
    check_correct_offline,
    gold_ranges,
    grade_simpleqa,
    math_verify_equivalent,
    parse_grade,
)
from prefdisco.scoring.extract import extract_choice, final_number, find_numbers, last_boxed, normalize_text

# ---------------------------------------------------------------------------------------------------------
# Real rows -> Problems (built here; the real loaders live elsewhere)
# ---------------------------------------------------------------------------------------------------------


def _rows(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="module")
def medqa(shared_benchmarks: Path) -> list[Problem]:
    return [
        Problem(
            id=f"medqa-{i}",
            benchmark="medqa",
            question=r["question"],
            choices=[r["options"][k] for k in sorted(r["options"])],
            answer=r["answer_idx"],
            answer_type=AnswerType.LETTER,
        )
        for i, r in enumerate(_rows(shared_benchmarks / "medqa" / "test.jsonl")[:40])
    ]


@pytest.fixture(scope="module")
def math500(shared_benchmarks: Path) -> list[Problem]:
    return [
        Problem(
            id=r["unique_id"],
            benchmark="math500",
            question=r["problem"],
            answer=r["answer"],
            answer_type=AnswerType.LATEX,
            solution=r["solution"],
        )
        for r in _rows(shared_benchmarks / "math500" / "test.jsonl")
    ]


@pytest.fixture(scope="module")
def aime(shared_benchmarks: Path) -> list[Problem]:
    return [
        Problem(id=r["ID"], benchmark="aime", question=r["Question"], answer=r["Answer"], answer_type="integer")
        for r in _rows(shared_benchmarks / "aime" / "train.jsonl")
    ]


@pytest.fixture(scope="module")
def mascqa_num(shared_benchmarks: Path) -> list[Problem]:
    return [
        Problem(
            id=f"{r['qid']}-{i}",
            benchmark="mascqa",
            question=r["question"],
            answer=r["answer"],
            answer_type=AnswerType.NUMERIC_RANGE,
        )
        for i, r in enumerate(_rows(shared_benchmarks / "mascqa" / "test.jsonl"))
        if r["question_type"] == "NUM"
    ]


@pytest.fixture(scope="module")
def simpleqa(shared_benchmarks: Path) -> list[Problem]:
    return [
        Problem(
            id=f"simpleqa-{i}",
            benchmark="simpleqa",
            question=r["problem"],
            answer=r["answer"],
            answer_type=AnswerType.FREE_TEXT,
        )
        for i, r in enumerate(_rows(shared_benchmarks / "simpleqa" / "test.jsonl")[:5])
    ]


def _by_id(problems: list[Problem], pid: str) -> Problem:
    return next(p for p in problems if p.id == pid)


# ---------------------------------------------------------------------------------------------------------
# Multiple choice
# ---------------------------------------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------------------------------------
# MATH-500
# ---------------------------------------------------------------------------------------------------------


def _latex(gold: str) -> Problem:
    return Problem(id="t", benchmark="math500", question="q", answer=gold, answer_type=AnswerType.LATEX)


@pytest.mark.parametrize(
    ("gold", "response"),
    [
        ("\\frac{1}{2}", "The answer is 0.5."),
        ("0.5", "so the answer is \\boxed{\\frac{1}{2}}"),
        ("\\dfrac{3}{4}", "Therefore \\boxed{\\frac34}."),
        ("\\left( 3, \\frac{\\pi}{2} \\right)", "In polar form: \\boxed{(3,\\frac{\\pi}{2})}"),
        ("3\\sqrt{2}", "We get $\\sqrt{18}$, i.e. \\boxed{\\sqrt{18}}"),
        ("(2,\\infty)", "The solution set is $x \\in (2, \\infty)$"),
        ("x \\in [-2,7]", "\\boxed{[-2,7]}"),
        ("90^\\circ", "The angle is \\boxed{90}"),
        ("5", "Solving gives \\boxed{x = 5}"),
        ("\\text{(C)}", "The answer is \\boxed{C}"),
        ("10,\\!080", "There are \\boxed{10080} ways."),
        ("\\frac{270}7\\text{ degrees}", "\\boxed{\\frac{270}{7}}"),
        ("1 \\pm \\sqrt{19}", "\\boxed{1+\\sqrt{19}, 1-\\sqrt{19}}"),
        ("\\$18.90", "The final answer is $\\$18.90$."),
    ],
)
def test_math_equivalences(gold: str, response: str) -> None:
    result = check_correct_offline(_latex(gold), response)
    assert result.correct is True, result
    assert result.method == "math_verify"


@pytest.mark.parametrize(
    ("gold", "response"),
    [
        ("\\frac{1}{2}", "\\boxed{\\frac{1}{3}}"),
        ("\\left( 3, \\frac{\\pi}{2} \\right)", "\\boxed{(3, \\pi)}"),
        ("(-\\infty, 0]", "\\boxed{(-\\infty, 0)}"),  # open vs closed end
        ("\\frac{1}{3}", "\\boxed{0.33}"),  # too coarse a rounding
        ("\\text{east}", "\\boxed{\\text{west}}"),
        ("3", "I am not sure."),
    ],
)
def test_math_wrong_answers_rejected(gold: str, response: str) -> None:
    result = check_correct_offline(_latex(gold), response)
    assert result.correct is False, result


def test_math_last_boxed_with_nested_braces_wins() -> None:
    response = "First try \\boxed{2}. No: the area is \\boxed{\\frac{\\sqrt{3}}{4}}"
    assert last_boxed(response) == "\\frac{\\sqrt{3}}{4}"
    assert check_correct_offline(_latex("\\frac{\\sqrt3}{4}"), response).correct is True


def test_math_verify_failure_is_not_equivalent_with_detail() -> None:
    result = check_correct_offline(_latex("\\frac{1}{2}"), "\\boxed{\\frac{1}{}}}")
    assert result.correct is False
    assert "math-verify" in result.detail


def test_math_verify_errors_and_timeouts_count_as_not_equivalent(monkeypatch: pytest.MonkeyPatch) -> None:
    import math_verify
    from math_verify.errors import TimeoutException

    def boom(*args: object, **kwargs: object) -> bool:
        raise RuntimeError("sympy exploded")

    def slow(*args: object, **kwargs: object) -> bool:
        raise TimeoutException("Operation timed out!")

    monkeypatch.setattr(math_verify, "verify", boom)
    result = check_correct_offline(_latex("\\frac{1}{2}"), "\\boxed{0.5}")
    assert result.correct is False and "math-verify error: RuntimeError" in result.detail
    monkeypatch.setattr(math_verify, "verify", slow)
    result = check_correct_offline(_latex("\\frac{1}{2}"), "\\boxed{0.5}")
    assert result.correct is False and "timed out" in result.detail


def test_math_verify_works_off_the_main_thread() -> None:
    # math-verify's signal-based timeouts raise in worker threads; the wrapper switches them off there
    results: list[CorrectnessResult] = []
    worker = threading.Thread(
        target=lambda: results.append(check_correct_offline(_latex("\\frac{1}{2}"), "\\boxed{0.5}"))
    )
    worker.start()
    worker.join()
    assert results[0].correct is True and "math-verify" in results[0].detail


def test_math500_first_50_rows_in_several_phrasings(math500: list[Problem]) -> None:
    phrasings = [
        "... so the answer is \\boxed{%s}",
        "Thus the final answer is $%s$.",
        "Final Answer: The final answer is $%s$. I hope it is correct.",
        "Putting it together we obtain\n\\[%s\\]",
    ]
    for p in math500[:50]:
        for template in phrasings:
            result = check_correct_offline(p, template % p.answer)
            assert result.correct is True, (p.id, template, result)


def test_math500_all_500_self_verify(math500: list[Problem]) -> None:
    failures = [
        p.id for p in math500 if not check_correct_offline(p, f"so the answer is \\boxed{{{p.answer}}}").correct
    ]
    assert failures == []
    # and by math-verify itself, without the string fast path
    mv_failures = [p.answer for p in math500 if not math_verify_equivalent(p.answer, p.answer)[0]]
    assert mv_failures == []


def test_math500_neighbouring_answers_are_rejected(math500: list[Problem]) -> None:
    checked = 0
    for p, other in itertools.pairwise(math500[:61]):
        if {p.answer, other.answer} == {"5", "x=5"} or p.answer.replace(" ", "") == other.answer.replace(" ", ""):
            continue  # genuinely the same value
        result = check_correct_offline(p, f"so the answer is \\boxed{{{other.answer}}}")
        assert result.correct is False, (p.answer, other.answer)
        checked += 1
    assert checked >= 50


# ---------------------------------------------------------------------------------------------------------
# AIME
# ---------------------------------------------------------------------------------------------------------


def test_aime_leading_zeros_and_phrasings(aime: list[Problem]) -> None:
    for p in aime[:200]:
        gold = int(p.answer)
        for response in [
            f"... so the answer is \\boxed{{{gold:03d}}}",
            f"The answer is {gold}.",
            f"Adding up, we get {gold}",
            f"**Answer:** $\\boxed{{{gold}}}$",
        ]:
            result = check_correct_offline(p, response)
            assert result.correct is True, (p.id, response, result)
        wrong = check_correct_offline(p, f"\\boxed{{{(gold + 1) % 1000:03d}}}")
        assert wrong.correct is False


def test_aime_leading_zero_in_gold(aime: list[Problem]) -> None:
    p = next(p for p in aime if p.answer.startswith("0") and p.answer.isdigit())
    assert check_correct_offline(p, f"\\boxed{{{int(p.answer)}}}").correct is True


def test_aime_multi_answer_row(aime: list[Problem]) -> None:
    p = _by_id(aime, "2022-II-8")
    assert p.answer == "080 or 081 (both were accepted)"
    for response in ["\\boxed{080}", "\\boxed{81}", "The answer is 081.", "so we get 80"]:
        assert check_correct_offline(p, response).correct is True, response
    for response in ["\\boxed{82}", "\\boxed{8}", "The answer is 79."]:
        assert check_correct_offline(p, response).correct is False, response
    # metadata wins over the gold string
    p2 = p.model_copy(update={"metadata": {"accepted": [81]}})
    assert check_correct_offline(p2, "\\boxed{80}").correct is False
    assert check_correct_offline(p2, "\\boxed{81}").correct is True


def test_aime_boxed_expression_compared_symbolically(aime: list[Problem]) -> None:
    p = aime[0].model_copy(update={"answer": "512"})
    assert check_correct_offline(p, "\\boxed{2^{9}}").correct is True
    assert check_correct_offline(p, "\\boxed{2^{10}}").correct is False
    assert check_correct_offline(p, "The answer is 512.5").correct is False


# ---------------------------------------------------------------------------------------------------------
# MaScQA numeric ranges
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1.2e-3", 1.2e-3),
        ("1.2E+03 J", 1200.0),
        ("1.2 × 10^-3 m", 1.2e-3),
        ("1.2 \\times 10^{-3}", 1.2e-3),
        ("1.2 x 10⁻³", 1.2e-3),
        ("12,345.6 J/mol", 12345.6),
        ("6\\,850 Å", 6850.0),
        ("−0.92", -0.92),
    ],
)
def test_number_reading(text: str, value: float) -> None:
    nums = find_numbers(text)
    assert len(nums) == 1 and nums[0][0] == pytest.approx(value), nums


def test_final_number_skips_unit_exponents() -> None:
    assert final_number("so the strain rate is 3.5 × 10^-4 s^{-1}")[0] == pytest.approx(3.5e-4)  # type: ignore[index]
    assert final_number("The area is 25 m^2")[0] == 25  # type: ignore[index]
    assert final_number("The answer is 0.87 μm (within 0.85–0.89).")[0] == 0.87  # type: ignore[index]


def test_mascqa_gold_quirks(mascqa_num: list[Problem]) -> None:
    golds = {p.answer: gold_ranges(p) for p in mascqa_num}
    assert golds["0.85 to 0.89"] == [(0.85, 0.89, False)]
    assert golds["6850 : 6950"] == [(6850, 6950, False)]
    assert golds["48O TO 494"] == [(480, 494, False)]
    assert golds["350 T0 350"] == [(350, 350, False)]
    assert golds["0.90 TO 0.94 OR -0.94 TO -0.90"] == [(0.9, 0.94, False), (-0.94, -0.9, False)]
    assert golds["840000"] == [(840000, 840000, True)]
    assert golds["Marks to all"] is None
    assert all(v is None or len(v) >= 1 for v in golds.values())  # every NUM gold parses


def test_mascqa_ranges_inside_boundary_outside(mascqa_num: list[Problem]) -> None:
    checked = 0
    for p in mascqa_num:
        ranges = gold_ranges(p)
        if ranges is None or ranges[0][2]:
            continue
        lo, hi, _ = ranges[0]
        mid = (lo + hi) / 2
        width = max(hi - lo, abs(hi) * 0.05, 1e-6)
        for value in (lo, hi, mid):
            result = check_correct_offline(p, f"Working through the numbers, the answer is {value:.10g} units.")
            assert result.correct is True, (p.answer, value, result)
        for value in (hi + width, lo - width):
            if len(ranges) > 1 and any(a <= value <= b for a, b, _ in ranges):
                continue
            result = check_correct_offline(p, f"The final answer is {value:.10g}.")
            assert result.correct is False, (p.answer, value, result)
        sci = f"{mid:.6e}".replace("e", " × 10^")
        assert check_correct_offline(p, f"So x ≈ {sci} (rounded)").correct is True, (p.answer, sci)
        checked += 1
    assert checked >= 150


def test_mascqa_scientific_notation_and_separators() -> None:
    p = Problem(id="n", benchmark="mascqa", question="q", answer="0.0011 to 0.0013", answer_type="numeric_range")
    assert check_correct_offline(p, "The answer is 1.2e-3 mol").correct is True
    assert check_correct_offline(p, "The answer is 1.2 × 10^-3 mol").correct is True
    assert check_correct_offline(p, "The answer is 1.2 \\times 10^{-3}").correct is True
    assert check_correct_offline(p, "The answer is 1.2 × 10^-2 mol").correct is False
    big = Problem(id="b", benchmark="mascqa", question="q", answer="9600 to 9800", answer_type="numeric_range")
    assert check_correct_offline(big, "≈ 9,700 J").correct is True
    assert check_correct_offline(big, "≈ 9,900 J").correct is False


def test_mascqa_single_value_gold_uses_one_percent(mascqa_num: list[Problem]) -> None:
    p = next(p for p in mascqa_num if p.answer == "840000")
    assert check_correct_offline(p, "The answer is 8.45 × 10^5").correct is True  # 0.6% off
    assert check_correct_offline(p, "The answer is 850000").correct is False  # 1.2% off


def test_mascqa_metadata_bounds_and_voided(mascqa_num: list[Problem]) -> None:
    p = next(p for p in mascqa_num if p.answer == "0.85 to 0.89")
    narrowed = p.model_copy(update={"metadata": {"lo": 0.86, "hi": 0.87}})
    assert check_correct_offline(narrowed, "0.88").correct is False
    assert check_correct_offline(p, "0.88").correct is True
    voided = next(p for p in mascqa_num if p.answer == "Marks to all")
    result = check_correct_offline(voided, "The answer is 3.")
    assert result.correct is None and "voided" in result.detail


# ---------------------------------------------------------------------------------------------------------
# Free text: normalized match and the SimpleQA grader
# ---------------------------------------------------------------------------------------------------------


def test_squad_normalization() -> None:
    assert normalize_text("The  Eiffel-Tower!") == "eiffeltower"
    assert normalize_text("An apple, a day") == "apple day"


def test_free_text_normalized_match(simpleqa: list[Problem]) -> None:
    p = simpleqa[0]  # Michio Sugeno
    assert check_correct_offline(p, p.answer).correct is True
    assert check_correct_offline(p, f"After checking the records, the answer is {p.answer.upper()}.").correct is True
    assert check_correct_offline(p, f"Reasoning first.\n**{p.answer}**").correct is True
    assert check_correct_offline(p, "The answer is Lotfi Zadeh.").correct is False
    result = check_correct_offline(p, "")
    assert result.correct is False and result.method == "normalized_match"


def test_grader_prompt_renders_the_three_inputs() -> None:
    text = render("simpleqa_grader", question="Who won?", target="Ann $5", response="It was Ann.")
    assert "Who won?" in text and "Ann $5" in text and "It was Ann." in text
    assert all(grade in text for grade in ("CORRECT", "INCORRECT", "NOT_ATTEMPTED"))


def _grader(contents: list[str], seen: list[GenerateConfig]):
    replies = iter(contents)

    def respond(input, tools, tool_choice, config):
        seen.append(config)
        output = ModelOutput.from_content(model="mockllm", content=next(replies))
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download
        return output

    return get_model("mockllm/model", custom_outputs=respond)


@pytest.mark.parametrize(
    ("text", "grade"),
    [
        ('{"grade": "CORRECT"}', "CORRECT"),
        ('```json\n{"grade": "NOT_ATTEMPTED"}\n```', "NOT_ATTEMPTED"),
        ("INCORRECT", "INCORRECT"),
        ("not attempted.", "NOT_ATTEMPTED"),
        ("The response is CORRECT", "CORRECT"),
        ("B", "INCORRECT"),
        ("(C)", "NOT_ATTEMPTED"),
        ("CORRECT or INCORRECT, hard to say", None),
        ("I like turtles", None),
        ('{"grade": "MAYBE"}', None),
    ],
)
def test_parse_grade(text: str, grade: str | None) -> None:
    assert parse_grade(text) == grade


@pytest.mark.asyncio
async def test_simpleqa_grader_json_and_config(simpleqa: list[Problem]) -> None:
    p = simpleqa[0]
    seen: list[GenerateConfig] = []
    grader = _grader(['{"grade": "CORRECT"}'], seen)
    result = await grade_simpleqa(p.question, p.answer, f"I believe it was {p.answer}.", grader)
    assert result.correct is True and result.grade == "CORRECT" and result.method == "simpleqa_grader"
    config = seen[0]
    assert config.temperature == 0
    assert config.max_tokens is not None and config.max_tokens > 0
    schema = config.response_schema
    assert schema is not None and schema.json_schema.properties is not None
    assert schema.json_schema.properties["grade"].enum == ["CORRECT", "INCORRECT", "NOT_ATTEMPTED"]


@pytest.mark.asyncio
async def test_simpleqa_grader_bare_words(simpleqa: list[Problem]) -> None:
    p = simpleqa[1]
    seen: list[GenerateConfig] = []
    result = await grade_simpleqa(p.question, p.answer, "I don't know.", _grader(["NOT_ATTEMPTED"], seen))
    assert result.correct is False and result.grade == "NOT_ATTEMPTED"
    result = await grade_simpleqa(p.question, p.answer, "Marie Curie", _grader(["INCORRECT"], seen))
    assert result.correct is False and result.grade == "INCORRECT"


@pytest.mark.asyncio
async def test_simpleqa_grader_retries_then_succeeds(simpleqa: list[Problem]) -> None:
    p = simpleqa[2]
    seen: list[GenerateConfig] = []
    grader = _grader(["hmm, let me think", "???", '{"grade": "CORRECT"}'], seen)
    result = await grade_simpleqa(p.question, p.answer, p.answer, grader)
    assert result.correct is True and result.grade == "CORRECT"
    assert len(seen) == 3


@pytest.mark.asyncio
async def test_simpleqa_grader_unparseable_is_none(simpleqa: list[Problem]) -> None:
    p = simpleqa[2]
    seen: list[GenerateConfig] = []
    grader = _grader(["garbage"] * 5, seen)
    result = await grade_simpleqa(p.question, p.answer, p.answer, grader)
    assert result.correct is None and result.grade is None
    assert result.detail == "grader output unparseable"
    assert len(seen) == 3  # one call and two retries


@pytest.mark.asyncio
async def test_check_correct_dispatch(simpleqa: list[Problem], medqa: list[Problem]) -> None:
    p = simpleqa[0]
    seen: list[GenerateConfig] = []
    graded = await check_correct(p, "Some other person.", grader=_grader(['{"grade": "INCORRECT"}'], seen))
    assert graded.method == "simpleqa_grader" and graded.correct is False and len(seen) == 1
    # without a grader: normalized match
    offline = await check_correct(p, p.answer)
    assert offline.method == "normalized_match" and offline.correct is True
    # a free-text problem of another benchmark uses the grader only when its metadata asks for it
    other = p.model_copy(update={"benchmark": "trivia"})
    assert (await check_correct(other, p.answer, grader=_grader([], seen))).method == "normalized_match"
    asks = other.model_copy(update={"metadata": {"grader": "model"}})
    graded = await check_correct(asks, p.answer, grader=_grader(['{"grade": "CORRECT"}'], seen))
    assert graded.method == "simpleqa_grader" and graded.correct is True
    # non-free-text problems never call the grader
    mc = await check_correct(medqa[0], f"Answer: {medqa[0].answer}", grader=_grader([], seen))
    assert mc.method == "letter" and mc.correct is True
