"""Variance by source: hand-computed cells (two scenarios, two trials, two repeats, every variance worked out), the
same rule on planted random noise of known standard deviations (the estimated parts must recover them), and the
smallest detectable NormAlign difference, by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from prefdisco.analysis.validity.variance import detectable_difference, variance_parts

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


# (mode, scenario, trial) -> (judge A's repeat 1, repeat 2) of the one criterion (weight 1)
HAND = {
    ("oracle", "s1", 1): (3, 4), ("oracle", "s1", 2): (2, 2), ("oracle", "s2", 1): (4, 4), ("oracle", "s2", 2): (5, 3),
    ("discovery", "s1", 1): (2, 2), ("discovery", "s1", 2): (4, 4),
    ("discovery", "s2", 1): (3, 5), ("discovery", "s2", 2): (1, 1),
}  # fmt: skip


def hand_tables(further: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    results, attributes = [], []
    for (mode, sid, epoch), scores in HAND.items():
        key = {"model": "m", "task": "t", "scenario_id": sid, "mode": mode, "fixed_k": np.nan, "epoch": epoch}
        results.append(key | {"pref_align": sum(scores) / 2, "scored": True, "failed": False})
        for r, score in enumerate(scores, start=1):
            row = {"attribute": "a", "weight": 1.0, "score": float(score), "judge": "A", "repeat": r}
            attributes.append(key | row | {"in_pref_align": True})
            if further:  # a judge added afterwards, far noisier: never part of PrefAlign, so not of its variance
                attributes.append(key | row | {"score": 1.0 + 4 * (r - 1), "judge": "B", "in_pref_align": False})
    return pd.DataFrame(results), pd.DataFrame(attributes).assign(row=lambda f: range(2, len(f) + 2))


@pytest.mark.parametrize("further", [False, True], ids=["run-judge", "with-a-further-judge"])
def test_the_parts_of_a_hand_made_cell(further: bool) -> None:
    parts = variance_parts(*hand_tables(further)).set_index("mode")
    # oracle: repeat variances (ddof 1) 0.5, 0, 0, 2 -> mean 0.625, / R = 2 -> judge 0.3125; trial PrefAligns
    # s1 3.5 and 2 (variance 1.125), s2 4 and 4 (0) -> between 0.5625; assistant 0.5625 - 0.3125 = 0.25
    assert parts.loc["oracle", "judge"] == pytest.approx(0.3125)
    assert parts.loc["oracle", "between"] == pytest.approx(0.5625)
    assert parts.loc["oracle", "assistant"] == pytest.approx(0.25) and parts.loc["oracle", "simulator"] == 0.0
    # discovery: repeat variances 0, 0, 2, 0 -> judge 0.25; trials s1 2 and 4 (2), s2 4 and 1 (4.5) -> between
    # 3.25; assistant + simulator 3.0, the assistant's 0.25 from the oracle cell, the simulator 2.75
    assert parts.loc["discovery", "judge"] == pytest.approx(0.25)
    assert parts.loc["discovery", "between"] == pytest.approx(3.25)
    assert parts.loc["discovery", "assistant"] == pytest.approx(0.25)
    assert parts.loc["discovery", "simulator"] == pytest.approx(2.75)
    assert parts.loc["discovery", "reason"] == "" and pd.isna(parts.loc["discovery", "fixed_k"])


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
    # SE = width / (2 * 1.959964) = 10 / 3.919928 = 2.55107; MDE = (1.959964 + 0.841621) * 1.414214 * 2.55107
    # = 2.801585 * 1.414214 * 2.55107 = 10.1074 NormAlign points
    assert row["se"] == pytest.approx(2.55107, abs=1e-5)
    assert row["mde"] == pytest.approx(10.1074, abs=1e-4)
