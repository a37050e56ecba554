"""``prefdisco selfcheck``: does each problem's own metric accept its gold answer and reject a wrong one?

For every problem a response stating its gold answer and a response stating a wrong one are scored through the
real metric (``scoring/correctness/``, dispatching on the problem's answer spec):

* gold (each must be accepted): every accepted letter (a multiple-select gold: its set), every accepted integer
  boxed (from 1,000 on also written with thousands separators) and an integer gold as written (unless it lists
  alternatives or the metadata names the accepted values: "1,000" must mean 1000), the expression boxed, a
  value inside every range (a single-number gold: the number and one half its tolerance away), the gold text;
* wrong: another option letter (for a multiple-select gold, the set without one of its letters), the next integer
  not accepted, the expression plus one, a number outside every range, another problem's gold text.

A problem whose spec is not judgeable is counted apart; a model-graded answer (SimpleQA) needs a grader model
and is counted as skipped without one. This is the check a user mapping a new dataset with ``--map`` runs first:
a gold rejected or a wrong answer accepted means the mapping or the metric is wrong for that row.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from inspect_ai.model import Model

from prefdisco.answer_spec import IntegerAnswer, LetterAnswer, MathAnswer, NotJudgeable, RangeAnswer, TextAnswer
from prefdisco.schema import Problem, option_letters
from prefdisco.scoring.correctness import check_correct
from prefdisco.scoring.extract.text import normalize_text


@dataclass(frozen=True)
class SelfCheckFailure:
    problem_id: str
    what: str  # "gold rejected" | "wrong accepted" | "gold not judged" | "wrong not judged"
    response: str
    detail: str


@dataclass
class SelfCheckReport:
    benchmark: str
    problems: int = 0
    gold_accepted: int = 0
    wrong_rejected: int = 0
    checked: int = 0
    not_judgeable: int = 0
    needs_grader: int = 0
    failures: list[SelfCheckFailure] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def summary(self) -> str:
        line = (
            f"{self.benchmark}: gold accepted {self.gold_accepted}/{self.checked}, "
            f"wrong rejected {self.wrong_rejected}/{self.checked}, not judgeable {self.not_judgeable}"
        )
        if self.needs_grader:
            line += f", needs --grader MODEL {self.needs_grader} (skipped)"
        return line


def gold_responses(problem: Problem) -> list[str]:
    """Responses that must all be accepted: every accepted letter or integer (and an integer gold as written), a
    value in every range (and, for a single-number gold, one half its tolerance away), the expression, the
    text."""
    spec = problem.answer_spec
    match spec:
        case LetterAnswer(all_required=True):
            return [f"The answer is {', '.join(spec.accepted)}."]
        case LetterAnswer():
            return [f"The answer is {letter}." for letter in spec.accepted]
        case IntegerAnswer():
            stated = [f"The answer is \\boxed{{{value}}}." for value in spec.accepted]
            stated += [f"The answer is {value:,}." for value in spec.accepted if abs(value) >= 1000]
            written = problem.answer.strip()
            if "accepted" not in problem.metadata and not re.search(r"\bor\b", written, re.IGNORECASE):
                stated.append(f"The answer is \\boxed{{{written}}}.")
            return stated
        case MathAnswer():
            return [f"The answer is \\boxed{{{spec.expression}}}."]
        case RangeAnswer():
            values = []
            for r in spec.ranges:
                values += [r.lo, r.lo * (1 + r.rel_tol / 2)] if r.single else [(r.lo + r.hi) / 2]
            return [f"The answer is {value:.12g}." for value in values]
        case TextAnswer():
            return [f"The answer is: {spec.text}"]
    raise ValueError(f"problem {problem.id}: nothing to state for {spec!r}")


def wrong_response(problem: Problem, others: Sequence[Problem]) -> str | None:
    """A response stating a wrong answer, or None when the problem admits none (every option accepted)."""
    spec = problem.answer_spec
    match spec:
        case LetterAnswer(all_required=True) if len(spec.accepted) > 1:
            return f"The answer is {', '.join(spec.accepted[:-1])}."
        case LetterAnswer():
            wrong = [x for x in option_letters(len(problem.choices)) if x not in spec.accepted]
            return f"The answer is {wrong[0]}." if wrong else None
        case IntegerAnswer():
            value = spec.accepted[0] + 1
            while value in spec.accepted:
                value += 1
            return f"The answer is \\boxed{{{value}}}."
        case MathAnswer():
            return f"The answer is \\boxed{{{spec.expression} + 1}}."
        case RangeAnswer():
            top = max(r.hi for r in spec.ranges)
            outside = top + max(abs(top) * 0.5, 1.0)
            return f"The answer is {outside:.12g}."
        case TextAnswer():
            gold = normalize_text(spec.text)
            for other in others:
                text = other.answer_spec.text if isinstance(other.answer_spec, TextAnswer) else ""
                if text and normalize_text(text) != gold:
                    return f"The answer is: {text}"
            return None
    return None


async def _check(problems: Sequence[Problem], benchmark: str, grader: Model | None) -> SelfCheckReport:
    report = SelfCheckReport(benchmark=benchmark, problems=len(problems))
    for index, problem in enumerate(problems):
        spec = problem.answer_spec
        if isinstance(spec, NotJudgeable):
            report.not_judgeable += 1
            continue
        if isinstance(spec, TextAnswer) and spec.grader == "model" and grader is None:
            report.needs_grader += 1
            continue
        report.checked += 1
        gold_ok = True
        for response in gold_responses(problem):
            result = await check_correct(problem, response, grader=grader)
            if result.correct is not True:
                gold_ok = False
                what = "gold not judged" if result.correct is None else "gold rejected"
                report.failures.append(
                    SelfCheckFailure(problem.id, what, response, f"{result.method}: {result.detail}")
                )
        report.gold_accepted += gold_ok
        wrong = wrong_response(problem, [*problems[index + 1 :], *problems[:index]])
        if wrong is None:  # every option is accepted: nothing is wrong to reject
            report.wrong_rejected += 1
            continue
        result = await check_correct(problem, wrong, grader=grader)
        if result.correct is False:
            report.wrong_rejected += 1
        else:
            what = "wrong not judged" if result.correct is None else "wrong accepted"
            report.failures.append(SelfCheckFailure(problem.id, what, wrong, f"{result.method}: {result.detail}"))
    return report


def selfcheck(problems: Sequence[Problem], grader: Model | None = None) -> list[SelfCheckReport]:
    """One report per benchmark of ``problems`` (in order of first appearance)."""
    by_benchmark: dict[str, list[Problem]] = {}
    for problem in problems:
        by_benchmark.setdefault(problem.benchmark, []).append(problem)

    async def run() -> list[SelfCheckReport]:
        return [await _check(group, name, grader) for name, group in by_benchmark.items()]

    return asyncio.run(run())
