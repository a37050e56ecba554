"""The PrefDisco scorer: rubric judgements, PrefAlign, correctness and dialogue facts for one sample.

The score value is a dict so ``inspect view`` shows each part and the results table is read straight from
the logs::

    {"pref_align": float | None, "correct": 1 | 0 | None, "n_questions": int, "judge_invalid": int}

``None`` means "not measured" (every judgement invalid; correctness not judgeable) and is excluded from the
metrics — never a zero. Per-attribute judgements, the correctness detail and the dialogue turns go into the
score's metadata.
"""

from __future__ import annotations

import math

from inspect_ai.model import get_model
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    ScoreReducer,
    Target,
    Value,
    mean_score,
    metric,
    scorer,
    value_to_float,
)
from inspect_ai.solver import TaskState

from prefdisco.cache import cache_policy
from prefdisco.dialogue.solver import scenario_of
from prefdisco.scoring.alignment import pref_align
from prefdisco.scoring.audit import audit_user
from prefdisco.scoring.judge import judge_all
from prefdisco.scoring.judge_structured import judge_structured

_to_float = value_to_float()


def _none_as_nan(value: Value) -> float:
    return float("nan") if value is None else _to_float(value)


def none_aware_reducer() -> ScoreReducer:
    """Epoch reducer that keeps "not measured" (None) out of means instead of turning it into 0."""
    return mean_score(value_to_float=_none_as_nan)


def _number(score: SampleScore, key: str) -> float | None:
    """The score's ``key`` as a float; None when absent or not measured (None, or NaN after reduction)."""
    value = score.score.value
    item = value.get(key) if isinstance(value, dict) else None
    if item is None or isinstance(item, str) or (isinstance(item, float) and math.isnan(item)):
        return None
    return float(item)


def _mean_of(key: str) -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        values = [v for s in scores if (v := _number(s, key)) is not None]
        return sum(values) / len(values) if values else float("nan")

    return compute


@metric
def pref_align_mean() -> Metric:
    """Mean PrefAlign over samples with at least one valid judgement."""
    return _mean_of("pref_align")


@metric
def accuracy_judged() -> Metric:
    """Share correct among samples whose correctness could be judged."""
    return _mean_of("correct")


@metric
def mean_questions() -> Metric:
    return _mean_of("n_questions")


@metric
def user_leak_rate() -> Metric:
    """Share of audited simulated-user replies that revealed a preference the question did not ask about."""

    def compute(scores: list[SampleScore]) -> float:
        turns = leaks = 0.0
        for s in scores:
            n = _number(s, "user_turns")
            if n is not None:
                turns += n
                leaks += _number(s, "user_leaks") or 0.0
        return leaks / turns if turns else float("nan")

    return compute


@metric
def judge_invalid_total() -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        return sum(_number(s, "judge_invalid") or 0.0 for s in scores)

    return compute


JUDGES = ("per_criterion", "structured")


@scorer(metrics=[pref_align_mean(), accuracy_judged(), mean_questions(), judge_invalid_total(), user_leak_rate()])
def prefdisco_scorer(
    judge: str = "per_criterion", logprobs: bool = False, audit: bool = True, cache_scope: str | None = None
):
    """Judge the rubric (role ``grader``), check correctness and audit the simulated user.

    Args:
        judge: ``per_criterion`` (one call per criterion, concurrent — the paper's method) or ``structured``
            (one call scoring every criterion).
        logprobs: use probability-weighted scores where the grader returns log-probabilities.
        audit: run the simulator-leak audit on dialogues with at least one question (one grader call).
        cache_scope: cache grader calls under this run scope (see ``dialogue/cache.py``); None: no cache.
    """
    if judge not in JUDGES:
        raise ValueError(f"unknown judge {judge!r}: expected one of {', '.join(JUDGES)}")

    async def score(state: TaskState, target: Target) -> Score:
        from prefdisco.scoring.correctness import check_correct

        scenario = scenario_of(state)
        response = state.store.get("prefdisco:final_response", state.output.completion or "")
        turns = state.store.get("prefdisco:turns", [])
        condition = state.store.get("prefdisco:condition", "")
        grader = get_model(role="grader")
        cache = cache_policy(cache_scope, scenario.id, condition, "grader")
        items = {i.attribute: i for i in scenario.profile.items}
        if judge == "structured":
            judgements = await judge_structured(
                grader, scenario.problem, response, scenario.rubric, items, logprobs=logprobs, cache=cache
            )
        else:
            judgements = await judge_all(
                grader, scenario.problem, response, scenario.rubric, items, logprobs=logprobs, cache=cache
            )
        correctness = await check_correct(scenario.problem, response, grader=grader, cache=cache)
        user_audit = await audit_user(grader, scenario.profile, turns, cache=cache) if audit else None
        audited = user_audit is not None and user_audit.audit_valid
        value = {
            "pref_align": pref_align(judgements),
            "correct": None if correctness.correct is None else int(correctness.correct),
            "n_questions": int(state.store.get("prefdisco:n_questions", 0)),
            "judge_invalid": sum(not j.valid for j in judgements),
            "user_turns": user_audit.user_turns if audited else None,
            "user_leaks": user_audit.leaked_turns if audited else None,
        }
        return Score(
            value=value,
            answer=response,
            explanation=correctness.detail or None,
            metadata={
                "judgements": [j.model_dump() for j in judgements],
                "correctness": correctness.model_dump(),
                "turns": turns,
                "unmarked_turns": state.store.get("prefdisco:unmarked_turns", 0),
                "user_audit": user_audit.model_dump() if user_audit else None,
            },
        )

    return score
