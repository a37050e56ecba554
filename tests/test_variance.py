"""Variance by source, on planted noise: each trial's score is a scenario mean plus assistant noise (and, in
discovery, simulator noise) drawn per trial, plus judge noise drawn per repeat — with known standard deviations;
the estimated parts must recover them. And the smallest detectable NormAlign difference, by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from prefdisco.analysis.variance import detectable_difference, variance_parts

S, N, R = 80, 4, 4  # scenarios, trials (--epochs), judge repeats (--judge-repeats)
SD_ASSISTANT, SD_USER, SD_JUDGE = 0.3, 0.2, 0.4


def planted(seed: int = 11) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Results (one row per trial) and attributes (one criterion of weight 1, one row per repeat)."""
    rng = np.random.default_rng(seed)
    results, attributes = [], []
    means = rng.uniform(2.5, 3.5, size=S)
    for mode in ("oracle", "discovery"):
        for s in range(S):
            for e in range(1, N + 1):
                trial = means[s] + rng.normal(0, SD_ASSISTANT) + (rng.normal(0, SD_USER) if mode == "discovery" else 0)
                scores = trial + rng.normal(0, SD_JUDGE, size=R)
                key = {"model": "m", "task": "t", "scenario_id": f"s{s}", "mode": mode, "fixed_k": np.nan, "epoch": e}
                results.append(key | {"pref_align": scores.mean(), "scored": True, "failed": False})
                for r, score in enumerate(scores, start=1):
                    attributes.append(
                        key | {"attribute": "a", "weight": 1.0, "score": score, "judge": "j", "repeat": r}
                    )
    return pd.DataFrame(results), pd.DataFrame(attributes).assign(row=lambda f: range(2, len(f) + 2))


def test_the_parts_recover_the_planted_variances() -> None:
    results, attributes = planted()
    parts = variance_parts(results, attributes).set_index("mode")
    assert parts.loc["oracle", "epochs"] == N and parts.loc["oracle", "repeats"] == R
    judge = SD_JUDGE**2 / R  # a trial's PrefAlign averages its R repeats
    # oracle: no simulated user, so everything but the judge is the assistant's
    assert parts.loc["oracle", "judge"] == pytest.approx(judge, rel=0.2)
    assert parts.loc["oracle", "assistant"] == pytest.approx(SD_ASSISTANT**2, rel=0.25)
    assert parts.loc["oracle", "simulator"] == 0.0
    # discovery: the assistant's part taken from the oracle cell, the rest is the simulator's
    assert parts.loc["discovery", "judge"] == pytest.approx(judge, rel=0.2)
    assert parts.loc["discovery", "assistant"] == parts.loc["oracle", "assistant"]
    assert parts.loc["discovery", "simulator"] == pytest.approx(SD_USER**2, abs=0.025)
    assert parts.loc["discovery", "split"] == "assistant part from the oracle cell"
    # the parts add up to the between-trial variance (nothing floored at 0 here)
    total = parts.loc["discovery", ["assistant", "simulator", "judge"]].sum()
    assert total == pytest.approx(parts.loc["discovery", "between"])


def test_a_part_the_run_cannot_measure_is_null_with_its_reason() -> None:
    results, attributes = planted()
    one_trial = results.loc[results["epoch"] == 1]
    parts = variance_parts(one_trial, attributes.loc[attributes["epoch"] == 1]).set_index("mode")
    assert pd.isna(parts.loc["oracle", "assistant"]) and pd.isna(parts.loc["discovery", "simulator"])
    assert "--epochs 2" in parts.loc["oracle", "reason"]
    assert parts.loc["oracle", "judge"] == pytest.approx(SD_JUDGE**2 / R, rel=0.3)
    one_repeat = attributes.loc[attributes["repeat"] == 1]
    parts = variance_parts(results, one_repeat).set_index("mode")
    assert pd.isna(parts.loc["oracle", "judge"])
    assert "--judge-repeats 2" in parts.loc["oracle", "reason"]


def test_the_smallest_detectable_difference_is_computed_from_the_interval() -> None:
    cells = pd.DataFrame({"model": ["m"], "task": ["t"], "ci_low": [40.0], "ci_high": [50.0]})
    [row] = detectable_difference(cells).to_dict("records")
    se = 10 / (2 * 1.959964)
    assert row["se"] == pytest.approx(se)
    assert row["mde"] == pytest.approx((1.959964 + 0.841621) * math.sqrt(2) * se)  # 10.11 NormAlign points
    assert row["mde"] == pytest.approx(10.107, abs=1e-3)
