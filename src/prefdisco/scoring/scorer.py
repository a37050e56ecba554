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

from prefdisco.dialogue.solver import scenario_of
from prefdisco.scoring.alignment import pref_align
from prefdisco.scoring.judge import judge_all

_to_float = value_to_float()


def _none_as_nan(value: Value) -> float:
    return float("nan") if value is None else _to_float(value)


def none_aware_reducer() -> ScoreReducer:
    """Epoch reducer that keeps "not measured" (None) out of means instead of turning it into 0."""
    return mean_score(value_to_float=_none_as_nan)


def _mean_of(key: str) -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        values = []
        for s in scores:
            value = s.score.value
            item = value.get(key) if isinstance(value, dict) else None
            if item is not None and not (isinstance(item, float) and math.isnan(item)):
                values.append(float(item))
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
def judge_invalid_total() -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        return float(
            sum(int(s.score.value.get("judge_invalid", 0)) for s in scores if isinstance(s.score.value, dict))
        )

    return compute


@scorer(metrics=[pref_align_mean(), accuracy_judged(), mean_questions(), judge_invalid_total()])
def prefdisco_scorer(judge: str = "per_criterion", logprobs: bool = False):
    """Judge every rubric criterion (role ``grader``) and check correctness.

    Args:
        judge: ``per_criterion`` (one call per criterion, concurrent).
        logprobs: use probability-weighted scores where the grader returns log-probabilities.
    """
    if judge != "per_criterion":
        raise ValueError(f"unknown judge {judge!r}: expected 'per_criterion'")

    async def score(state: TaskState, target: Target) -> Score:
        from prefdisco.scoring.correctness import check_correct

        scenario = scenario_of(state)
        response = state.store.get("prefdisco:final_response", state.output.completion or "")
        grader = get_model(role="grader")
        items = {i.attribute: i for i in scenario.profile.items}
        judgements = await judge_all(
            grader, scenario.problem, response, scenario.rubric, items, logprobs=logprobs
        )
        correctness = await check_correct(scenario.problem, response, grader=grader)
        value = {
            "pref_align": pref_align(judgements),
            "correct": None if correctness.correct is None else int(correctness.correct),
            "n_questions": int(state.store.get("prefdisco:n_questions", 0)),
            "judge_invalid": sum(not j.valid for j in judgements),
        }
        return Score(
            value=value,
            answer=response,
            explanation=correctness.detail or None,
            metadata={
                "judgements": [j.model_dump() for j in judgements],
                "correctness": correctness.model_dump(),
                "turns": state.store.get("prefdisco:turns", []),
                "unmarked_turns": state.store.get("prefdisco:unmarked_turns", 0),
            },
        )

    return score
