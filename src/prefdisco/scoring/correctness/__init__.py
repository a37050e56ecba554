"""Correctness of a final response, by each benchmark's own metric: one module per kind of answer spec.

Entry points: ``check_correct`` (async; may call a grader model) and ``check_correct_offline`` (sync, no
model). Dispatch is on ``Problem.answer_spec`` (``answer_spec.py``), read once when the problem was built; no
metric reads the gold text or metadata itself:

* ``letter``: the chosen option letter is accepted (or, multiple-select, the chosen set is the gold set);
* ``integer`` (AIME): the final integer equals an accepted value; a boxed expression is compared symbolically;
* ``math`` (MATH-500): the final answer is equivalent to the gold by ``math_verify.verify``;
* ``numeric_range`` (MaScQA NUM): the final number lies in a gold range, each with its tolerance;
* ``text``: SQuAD-normalized exact match, or with a grader model (SimpleQA) SimpleQA's three-way grade;
* ``not_judgeable``: ``correct=None``.

``correct=None`` means "could not be judged" (no gold, a voided question, a grader reply invalid after retries,
a model-graded answer without a grader); it is never folded into False.
"""

from __future__ import annotations

from inspect_ai.model import CachePolicy, Model

from prefdisco.answer_spec import (
    IntegerAnswer,
    LetterAnswer,
    MathAnswer,
    NotJudgeable,
    RangeAnswer,
    TextAnswer,
)
from prefdisco.schema import Problem
from prefdisco.scoring.correctness.free_text import check_normalized_match
from prefdisco.scoring.correctness.integer import check_integer
from prefdisco.scoring.correctness.latex import check_latex
from prefdisco.scoring.correctness.letter import check_letter
from prefdisco.scoring.correctness.numeric_range import check_numeric_range
from prefdisco.scoring.correctness.result import CorrectnessResult
from prefdisco.scoring.correctness.simpleqa_grader import grade_simpleqa

__all__ = ["CorrectnessResult", "check_correct", "check_correct_offline", "needs_grader"]

METHOD_NOT_JUDGEABLE = "not_judgeable"


def needs_grader(problem: Problem) -> bool:
    """Whether the problem's answer is graded by a model (SimpleQA)."""
    spec = problem.answer_spec
    return isinstance(spec, TextAnswer) and spec.grader == "model"


async def check_correct(
    problem: Problem, response: str, grader: Model | None = None, *, cache: CachePolicy | bool = False
) -> CorrectnessResult:
    """Judge ``response`` by the problem's metric; a model-graded answer goes to ``grader`` (every grader call,
    retries included, cached under ``cache``)."""
    spec = problem.answer_spec
    if isinstance(spec, TextAnswer) and spec.grader == "model" and grader is not None:
        return await grade_simpleqa(problem.question, spec.text, response, grader, cache=cache)
    return check_correct_offline(problem, response)


def check_correct_offline(problem: Problem, response: str) -> CorrectnessResult:
    """Judge ``response`` without any model (a model-graded answer falls back to normalized exact match)."""
    spec = problem.answer_spec
    match spec:
        case LetterAnswer():
            return check_letter(spec, problem.choices, response)
        case IntegerAnswer():
            return check_integer(spec, response)
        case MathAnswer():
            return check_latex(spec.expression, response)
        case RangeAnswer():
            return check_numeric_range(spec, response)
        case TextAnswer():
            return check_normalized_match(spec.text, response)
        case NotJudgeable():
            return CorrectnessResult(correct=None, extracted=None, method=METHOD_NOT_JUDGEABLE, detail=spec.reason)
    raise AssertionError(f"unhandled answer spec {spec!r}")  # pragma: no cover
