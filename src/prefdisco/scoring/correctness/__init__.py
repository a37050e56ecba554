"""Correctness of a final response, by each benchmark's own metric: one module per answer type.

Entry points: ``check_correct`` (async; may call a grader model) and ``check_correct_offline`` (sync, no
model). Dispatch is on ``Problem.answer_type``:

* LETTER (``letter``): the chosen option letter equals the gold letter, or one of ``metadata["accepted"]``.
* INTEGER (``integer``, AIME): the final integer equals an accepted value; a boxed expression is compared
  symbolically.
* LATEX (``latex``, MATH-500): the final answer is equivalent to the gold by ``math_verify.verify``.
* NUMERIC_RANGE (``numeric_range``, MaScQA NUM): the final number lies in a gold range (a single-number gold
  within 1%); a voided question is not judged.
* FREE_TEXT (``free_text``): SQuAD-normalized exact match of the final answer with the gold, or, with a grader
  model for SimpleQA (or ``metadata["grader"] == "model"``), SimpleQA's three-way grade
  (``simpleqa_grader``).

``correct=None`` means "could not be judged" (grader reply invalid after retries, voided question); it is
never folded into False.
"""

from __future__ import annotations

from inspect_ai.model import CachePolicy, Model

from prefdisco.schema import AnswerType, Problem
from prefdisco.scoring.correctness.free_text import check_normalized_match
from prefdisco.scoring.correctness.integer import check_integer
from prefdisco.scoring.correctness.latex import check_latex
from prefdisco.scoring.correctness.letter import check_letter
from prefdisco.scoring.correctness.numeric_range import check_numeric_range
from prefdisco.scoring.correctness.result import CorrectnessResult
from prefdisco.scoring.correctness.simpleqa_grader import grade_simpleqa

__all__ = ["CorrectnessResult", "check_correct", "check_correct_offline", "uses_model_grader"]


async def check_correct(
    problem: Problem, response: str, grader: Model | None = None, *, cache: CachePolicy | bool = False
) -> CorrectnessResult:
    """Judge ``response`` by the problem's metric; free text goes to ``grader`` if its benchmark wants it (every
    grader call, retries included, cached under ``cache``)."""
    if problem.answer_type is AnswerType.FREE_TEXT and grader is not None and uses_model_grader(problem):
        return await grade_simpleqa(problem.question, problem.answer, response, grader, cache=cache)
    return check_correct_offline(problem, response)


def check_correct_offline(problem: Problem, response: str) -> CorrectnessResult:
    """Judge ``response`` without any model (free text by normalized exact match)."""
    match problem.answer_type:
        case AnswerType.LETTER:
            return check_letter(problem, response)
        case AnswerType.INTEGER:
            return check_integer(problem, response)
        case AnswerType.LATEX:
            return check_latex(problem.answer, response)
        case AnswerType.NUMERIC_RANGE:
            return check_numeric_range(problem, response)
        case AnswerType.FREE_TEXT:
            return check_normalized_match(problem.answer, response)
    raise AssertionError(f"unhandled answer type {problem.answer_type!r}")  # pragma: no cover


def uses_model_grader(problem: Problem) -> bool:
    return problem.benchmark.strip().lower() == "simpleqa" or problem.metadata.get("grader") == "model"
