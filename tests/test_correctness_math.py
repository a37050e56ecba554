"""MATH-500 (math-verify equivalence) and AIME (integer) correctness, on real rows."""

from __future__ import annotations

import itertools
import threading
from pathlib import Path

import pytest

import benchmark_rows
from prefdisco.schema import AnswerType, Problem
from prefdisco.scoring.correctness import CorrectnessResult, check_correct_offline
from prefdisco.scoring.correctness.latex import math_verify_equivalent
from prefdisco.scoring.extract.markup import last_boxed


@pytest.fixture(scope="module")
def math500(shared_benchmarks: Path) -> list[Problem]:
    return benchmark_rows.math500(shared_benchmarks)


@pytest.fixture(scope="module")
def aime(shared_benchmarks: Path) -> list[Problem]:
    return benchmark_rows.aime(shared_benchmarks)


def _by_id(problems: list[Problem], pid: str) -> Problem:
    return next(p for p in problems if p.id == pid)


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
    # accepted values given in the metadata win over the gold string
    p2 = Problem.model_validate({**p.model_dump(exclude={"answer_spec"}), "metadata": {"accepted": [81]}})
    assert check_correct_offline(p2, "\\boxed{80}").correct is False
    assert check_correct_offline(p2, "\\boxed{81}").correct is True


def test_aime_boxed_expression_compared_symbolically(aime: list[Problem]) -> None:
    p = Problem.model_validate({**aime[0].model_dump(exclude={"answer_spec"}), "answer": "512"})
    assert check_correct_offline(p, "\\boxed{2^{9}}").correct is True
    assert check_correct_offline(p, "\\boxed{2^{10}}").correct is False
    assert check_correct_offline(p, "The answer is 512.5").correct is False


def _integer(gold: str) -> Problem:
    return Problem(id="t", benchmark="demo", question="q", answer=gold, answer_type=AnswerType.INTEGER)


def test_integer_gold_with_thousands_separators_is_one_number() -> None:
    p = _integer("1,000")
    for response in ["\\boxed{1000}", "The answer is 1,000.", "so we get $1{,}000$", "\\boxed{1\\,000}"]:
        assert check_correct_offline(p, response).correct is True, response
    for response in ["\\boxed{1}", "\\boxed{0}", "The answer is 100."]:  # read as "1 or 0" before
        assert check_correct_offline(p, response).correct is False, response
    # alternatives are joined by "or" only; a grouped value is one of them
    q = _integer("1,024 or 2,048")
    assert [check_correct_offline(q, f"\\boxed{{{v}}}").correct for v in (1024, 2048, 1, 24, 2, 48)] == [
        True, True, False, False, False, False,
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("gold", "accepted", "rejected"),
    [
        ("x=12, y=5", ["\\boxed{x = 12, y = 5}", "The answer is $(12, 5)$."], ["\\boxed{12}", "\\boxed{5}", "so 12"]),
        ("12, 5", ["\\boxed{12, 5}", "\\boxed{5, 12}"], ["\\boxed{12}", "The answer is 5."]),
        ("1/2", ["\\boxed{\\frac{1}{2}}", "The answer is 0.5."], ["\\boxed{1}", "\\boxed{2}"]),
    ],
)
def test_integer_gold_of_several_numbers_never_accepts_one_alone(
    gold: str, accepted: list[str], rejected: list[str]
) -> None:
    p = _integer(gold)
    for response in accepted:
        assert check_correct_offline(p, response).correct is True, response
    for response in rejected:
        assert check_correct_offline(p, response).correct is False, response
