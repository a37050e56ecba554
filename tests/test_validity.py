"""The Validity section's readings: each instrument's finding and its one-line reading, from its table."""

from __future__ import annotations

import pandas as pd

from prefdisco.analysis.validity.judges import JudgeReliability
from prefdisco.analysis.validity.readings import (
    control_reading,
    judge_readings,
    simulator_reading,
    variance_reading,
    variance_summary,
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
    silent = pd.DataFrame(base | {"n_hit_rate": [0], "n_audited": [0], "critical_share": [None], "n_asked": [0]})
    assert simulator_reading(silent).reading.startswith("no dialogue asked a question")
    # questions asked, the audit off: not blamed on the questions (issue 35: it said "no dialogue asked a question")
    off = pd.DataFrame(base | {"n_hit_rate": [0], "n_audited": [0], "critical_share": [None], "n_asked": [4]})
    assert simulator_reading(off).reading.startswith("4 dialogues asked questions but none has a valid audit")
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
    assert variance_summary(None, None) == {"variance": {}, "normalign_mde": {}}


def test_variance_shares_are_given_only_when_all_three_parts_were_measured() -> None:
    # --epochs 1 --judge-repeats 2: only the judge part is known; it is not "judge 100 %"
    one_trial = pd.DataFrame(
        {"mode": ["oracle", "discovery"], "between": [None, None], "assistant": [None, None],
         "simulator": [None, None], "judge": [0.02, 0.03]}
    )  # fmt: skip
    [parts] = variance_reading(one_trial, None)[:1]
    assert "%" not in parts.finding
    assert parts.finding == (
        "assistant part not measured (needs --epochs 2 or more); simulator part not measured (needs --epochs 2 or more)"
    )
    assert parts.reading.startswith("shares are given only when the assistant, simulator and judge parts are all")
    # --epochs 2, one repeat: the judge part is missing, and the shares are not given either
    one_repeat = one_trial.assign(between=[0.2, 0.3], assistant=[0.2, 0.2], simulator=[0.0, 0.1], judge=None)
    assert variance_reading(one_repeat, None)[0].finding == "judge part not measured (needs --judge-repeats 2 or more)"
    # a dialogue cell without an oracle cell: the simulator part cannot be told from the assistant's
    no_oracle = pd.DataFrame(
        {"mode": ["discovery"], "between": [0.3], "assistant": [0.3], "simulator": [None], "judge": [0.02]}
    )
    assert variance_reading(no_oracle, None)[0].finding == (
        "simulator part not measured (needs oracle in --modes (with --epochs 2 or more))"
    )
    # all three measured: assistant 0.2 + 0.2, simulator 0 + 0.1, judge 0.02 + 0.03 → 0.4 / 0.1 / 0.05 of 0.55
    full = one_repeat.assign(judge=[0.02, 0.03])
    assert variance_reading(full, None)[0].finding == "assistant 73 %, simulator 18 %, judge 9 %"
