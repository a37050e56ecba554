"""The run-level metrics over ``prefdisco_scorer``'s dict value, and the epoch reducer.

"Not measured" (``None``; NaN once epochs are reduced) stays out of every mean — a sample with no valid
judgement lowers no average, and a run with none reports NaN, never 0.
"""

from __future__ import annotations

import math

from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    ScoreReducer,
    Value,
    mean_score,
    metric,
    score_reducer,
    value_to_float,
)

_to_float = value_to_float()


def _none_as_nan(value: Value) -> float:
    return float("nan") if value is None else _to_float(value)


@score_reducer(name="prefdisco_mean")
def none_aware_reducer() -> ScoreReducer:
    """Epoch reducer that keeps "not measured" (None) out of means instead of turning it into 0: per key, the mean
    over the trials that measured it (inspect's ``mean_score`` leaves a NaN out of each key's mean), NaN only when no
    trial did. So one unmeasured trial leaves a sample's reduced PrefAlign to the others, as the report's trial
    average does (``tests/test_epochs.py`` pins it).

    The reduced score keeps no metadata: inspect's mean keeps the first trial's (every judgement with its rationale,
    about 3.4 KB a sample), which is no trial's mean, and a log holds the reductions twice (its header, and the
    eval-set's ``logs.json`` uncompressed), so it was the largest part of a run folder's bytes a sample after the
    logged samples themselves (``benchmarks/scale.py``). Every judgement stays in its sample's score, where the
    results are read from."""
    mean = mean_score(value_to_float=_none_as_nan)

    def reduce(scores: list[Score]) -> Score:
        return mean(scores).model_copy(update={"metadata": None})

    return reduce


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


PREFDISCO_METRICS = [pref_align_mean(), accuracy_judged(), mean_questions(), judge_invalid_total(), user_leak_rate()]
