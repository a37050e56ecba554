"""The Validity section's readings: each instrument's finding and its one-line reading, from its table."""

from __future__ import annotations

import pandas as pd

from prefdisco.analysis.judges import JudgeReliability
from prefdisco.analysis.validity import (
    Validity,
    control_reading,
    judge_readings,
    simulator_reading,
    variance_reading,
)


def test_the_control_reading_names_the_flagged_cells_and_says_what_it_means() -> None:
    assert control_reading(None).finding == "not run"
    control = pd.DataFrame(
        {"model": ["m", "m"], "task": ["a", "b"], "gap": [1.8, 0.1], "ci_low": [1.5, -0.2], "ci_high": [2.1, 0.4],
         "flagged": [False, True]}
    )  # fmt: skip
    reading = control_reading(control)
    assert reading.finding == "m/a 1.80 [1.50, 2.10], m/b 0.10 [-0.20, 0.40]"
    assert reading.reading.startswith("in 1 of 2 cell(s) (m/b) the judge does not clearly score the true profile")
    assert control_reading(control.iloc[:1]).reading.startswith("in every cell")


def test_the_simulator_reading_tells_no_question_from_no_valid_audit() -> None:
    base = {"model": ["m"], "task": ["t"], "mode": ["discovery"], "n": [4], "elicited_weight": [0.0]}
    silent = pd.DataFrame(base | {"n_hit_rate": [0], "n_audited": [0], "critical_share": [None]})
    assert simulator_reading(silent).reading.startswith("no dialogue asked a question")
    invalid = pd.DataFrame(base | {"n_hit_rate": [4], "n_audited": [0], "critical_share": [None]})
    assert simulator_reading(invalid).reading.startswith("no valid audit")
    clean = pd.DataFrame(base | {"n_hit_rate": [4], "n_audited": [4], "critical_share": [0.0]})
    assert "found no dialogue" in simulator_reading(clean).reading
    bad = pd.DataFrame(base | {"n_hit_rate": [4], "n_audited": [4], "critical_share": [0.25]})
    assert simulator_reading(bad).finding.startswith("dialogues with a critical simulator error: at most 25.0 %")


def test_judge_readings_word_alpha_against_the_usual_thresholds() -> None:
    def reliability(alpha: float | None, reason: str = "") -> JudgeReliability:
        return JudgeReliability(
            agreement=pd.DataFrame(
                {"model": ["m"], "task": ["t"], "alpha": [alpha], "n_units": [10], "reason": [reason]}
            ),
            noise=pd.DataFrame({"judge": ["j"], "alpha": [None], "mean_sd": [None], "reason": ["one repeat"]}),
            length=pd.DataFrame({"judge": ["j"], "spearman": [0.5], "p": [0.01], "n": [30], "reason": [None]}),
        )

    agreement, noise, length = judge_readings(reliability(0.9))
    assert "agree well" in agreement.reading and noise.finding == "not measured"
    assert length.finding == "|ρ| at most 0.50" and "longer responses" in length.reading
    assert "disagree" in judge_readings(reliability(0.5))[0].reading
    assert "agree moderately" in judge_readings(reliability(0.7))[0].reading
    single = judge_readings(reliability(None, "a single judge"))[0]
    assert single.finding == "a single judge" and "--judge-model" in single.reading


def test_variance_reading_gives_shares_and_the_detectable_difference() -> None:
    variance = pd.DataFrame(
        {"assistant": [0.3, 0.1], "simulator": [0.0, 0.2], "judge": [0.2, 0.2], "reason": ["", ""]}
    )  # fmt: skip
    parts, mde = variance_reading(variance, pd.DataFrame({"mde": [12.0, 20.0]}))
    assert parts.finding == "assistant 40 %, simulator 20 %, judge 40 %"
    assert mde.finding == "12.0 to 20.0 NormAlign points"
    summary = Validity(readings=[parts, mde]).summary()
    assert [r["instrument"] for r in summary["validity"]] == [parts.instrument, mde.instrument]
    assert summary["variance"] == {} and summary["calibration"] is None
