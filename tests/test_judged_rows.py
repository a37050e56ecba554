"""A non-answer is never a judgement (issue 45, defect 2): the rows a judge actually judged (``panel.judged_rows``)
are what every judge statistic reads, and a further judge and ``belief_agreement`` follow ``--refusals exclude``.

The planted panel: one model, one task, baseline, one criterion (``Explanation depth``, weight 1) of six scenarios;
judges A and B score it twice each (repeats 1, 2). s1-s5 are answers; s6 was refused, so every judge and repeat
holds the rule's 1 for it (``scoring/non_answer.py``), as the scorer records it:

    scenario   s1  s2  s3  s4  s5 | s6 (refused)
    A repeat 1  4   4   5   5   4 |  1
    A repeat 2  4   5   5   5   4 |  1
    B (1 and 2) 4   5   5   4   4 |  1

A's repeat-means are 4, 4.5, 5, 5, 4 (| 1); the panel score (the mean of A's and B's) 4, 4.75, 5, 4.5, 4 (| 1).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.solver import generate

from mock_openai import write_scenarios
from prefdisco.analysis.report.build import build_report
from prefdisco.analysis.stats.panel import judged_rows, plain_keys
from prefdisco.analysis.stats.trials import average_trials
from prefdisco.analysis.validity.calibrate import calibrate
from prefdisco.analysis.validity.effective_judges import effective_judges
from prefdisco.analysis.validity.further_judges import further_judge_table
from prefdisco.analysis.validity.judges import judge_agreement, judge_noise
from prefdisco.analysis.validity.variance import variance_parts
from prefdisco.annotate.rating_run import read_run
from prefdisco.dialogue.scenario import scenario_sample
from prefdisco.dialogue.wrong_answers import WRONG_ANSWER_KEY
from prefdisco.results.table import load_results
from prefdisco.scoring.deferred import prefdisco_judge
from prefdisco.scoring.scorer import prefdisco_scorer
from scripted import Scripted, constant, make_scenario

CRITERION = "Explanation depth"  # make_scenario(weights=(1.0,))'s one criterion
SIDS = [f"s{i}" for i in range(1, 7)]
A1 = dict(zip(SIDS, [4, 4, 5, 5, 4, 1], strict=True))
A2 = dict(zip(SIDS, [4, 5, 5, 5, 4, 1], strict=True))
B = dict(zip(SIDS, [4, 5, 5, 4, 4, 1], strict=True))
REFUSED = "s6"
RESULTS = ["model", "family", "task", "scenario_id", "mode", "fixed_k", "epoch", "pref_align", "pref_align_reason"]
RESULTS += ["correct", "n_questions", "judge_invalid", "input_tokens", "output_tokens", "refused", "empty", "failed"]
ATTRIBUTES = ["model", "task", "scenario_id", "mode", "fixed_k", "epoch", "attribute", "weight", "score", "judge"]
ATTRIBUTES += ["repeat", "in_pref_align"]
LENGTHS = dict(zip(SIDS, [10, 30, 20, 40, 50], strict=False))


def write(path: Path, header: list[str], rows: list[list[object]]) -> None:
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(["" if v is None else v for v in row] for row in rows)


def panel_run(folder: Path, refusals: str = "score", further: dict[str, float] | None = None) -> Path:
    """The planted panel's run folder, its refusal ruled by ``refusals``; ``further``: a further judge C's scores
    (``in_pref_align`` 0; the rule's 1 for s6, as ``prefdisco judge`` records it)."""
    folder.mkdir(parents=True)
    results, attributes = [], []
    for sid in SIDS:
        panel = ((A1[sid] + A2[sid]) / 2 + B[sid]) / 2
        ruled = sid == REFUSED
        left_out = ruled and refusals == "exclude"
        results.append(["m", "mock", "t", sid, "baseline", None, 1, None if left_out else panel,
                        "refused" if left_out else None, None if left_out else int(not ruled), 0, 0, 10, 5,
                        int(ruled), 0, 0])  # fmt: skip
        for judge, repeat, score in (("A", 1, A1), ("A", 2, A2), ("B", 1, B), ("B", 2, B)):
            attributes.append(["m", "t", sid, "baseline", None, 1, CRITERION, 1.0, score[sid], judge, repeat, 1])
        if further is not None:
            attributes.append(["m", "t", sid, "baseline", None, 1, CRITERION, 1.0, further[sid], "C", 1, 0])
    write(folder / "results.csv", RESULTS, results)
    write(folder / "attributes.csv", ATTRIBUTES, attributes)
    with (folder / "transcripts.jsonl").open("w") as fh:
        for sid in SIDS:
            key = {"model": "m", "task": "t", "scenario_id": sid, "mode": "baseline", "fixed_k": None, "epoch": 1}
            text = "I can't help with that." if sid == REFUSED else "y" * LENGTHS[sid]
            fh.write(json.dumps({**key, "messages": [], "turns": [], "final_response": text}) + "\n")
    return folder


def test_a_refusal_counts_in_no_judge_agreement_noise_or_effective_number_of_judges(tmp_path):
    """By hand (Krippendorff's ordinal α: δ²(c, k) = (Σ_{g=c..k} n_g − (n_c + n_k)/2)², α = 1 − (n − 1)·Σ o·δ² /
    Σ n_c·n_k·δ², o the coincidences of the pairs within a unit, both orders; n the values).

    Agreement (A's repeat-means against B's), without s6: values 4 ×5, 4.5 ×1, 5 ×4 (n = 10); the disagreeing units
    s2 (4.5, 5) and s4 (5, 4) give o = 2 each way; δ²(4.5, 5) = (0.5 + 2)² = 6.25, δ²(4, 5) = (2.5 + 1 + 2)² =
    30.25, δ²(4, 4.5) = (2.5 + 0.5)² = 9. Σ o·δ² = 2·6.25 + 2·30.25 = 73; Σ n·n·δ² = 2·(5·1·9 + 1·4·6.25 +
    5·4·30.25) = 1350; α = 1 − 9·73/1350 = 0.51333. With s6 (1, 1): n = 12, n_1 = 2, Σ o·δ² still 73 (1 agrees with
    1), Σ n·n·δ² gains 2·(2·5·12.25 + 2·1·42.25 + 2·4·81) = 1710 → 3060; α = 1 − 11·73/3060 = 0.73758.

    A's noise (its two repeats), without s6: 4 ×5, 5 ×5 (n = 10), s2's (4, 5) the one disagreement, δ²(4, 5) =
    (2.5 + 2.5)² = 25: α = 1 − 9·(2·25)/(2·5·5·25) = 0.64; the mean SD over the units, (0 + 1/√2 + 0 + 0 + 0)/5 =
    0.14142. With s6: n_1 = 2, δ²(4, 5) still 25, δ²(1, 4) = (1 + 2.5)² = 12.25, δ²(1, 5) = (1 + 5 + 2.5)² = 72.25:
    α = 1 − 11·50/(2·(2·5·12.25 + 5·5·25 + 2·5·72.25)) = 1 − 550/2940 = 0.81293; the mean SD (1/√2)/6 = 0.11785.

    Effective judges, n / (1 + (n − 1)·r), Pearson r of A's and B's repeat-means: without s6, A = 4, 4.5, 5, 5, 4
    (mean 4.5), B = 4, 5, 5, 4, 4 (mean 4.4): Σ dA·dB = 0.2 + 0 + 0.3 − 0.2 + 0.2 = 0.5, Σ dA² = 1, Σ dB² = 1.2,
    r = 0.5/√1.2 = 0.45644, n_eff = 2/1.45644 = 1.37322. With s6 (1, 1): Σ AB − 6·ĀB̄ = 100.5 − 23.5·23/6 = 125/12,
    Σ A² − 6Ā² = 134.5/12, Σ B² − 6B̄² = 130/12: r = 125/√(134.5·130) = 0.94532, n_eff = 2/1.94532 = 1.02811.

    A refusal scored by rule raises agreement (0.51 → 0.74), lowers noise (0.64 → 0.81 α) and makes two judges
    worth one (1.37 → 1.03): the report's figures are the ones without it. Length bias: five responses, not six.
    """
    data = load_results(panel_run(tmp_path / "run"))
    summary = build_report(data, n_boot=0, figures=False).summary
    assert summary["judge_agreement"]["m"]["t"]["alpha"] == pytest.approx(1 - 9 * 73 / 1350)
    assert summary["judge_agreement"]["m"]["t"]["n_units"] == 5
    assert summary["judge_noise"]["A"]["alpha"] == pytest.approx(0.64)
    assert summary["judge_noise"]["A"]["mean_sd"] == pytest.approx(1 / math.sqrt(2) / 5)
    assert summary["effective_judges"]["rho_bar"] == pytest.approx(0.5 / math.sqrt(1.2))
    assert summary["effective_judges"]["n_eff"] == pytest.approx(2 / (1 + 0.5 / math.sqrt(1.2)))
    assert summary["length_bias"]["A"]["baseline"]["n"] == 5  # the refusal's length is no point of the judge's

    # the same statistics over every row (the rule's scores as judgements): the figures with s6, by hand above
    every = plain_keys(data.attributes)
    assert judge_agreement(every)["alpha"].item() == pytest.approx(1 - 11 * 73 / 3060)
    noise = judge_noise(every).set_index("judge")
    assert noise.loc["A", "alpha"] == pytest.approx(1 - 550 / 2940)
    assert noise.loc["A", "mean_sd"] == pytest.approx(1 / math.sqrt(2) / 6)
    assert effective_judges(every).n_eff == pytest.approx(2 / (1 + 125 / math.sqrt(134.5 * 130)))
    # the accessor: every row of s1-s5, none of s6
    judged = judged_rows(data.attributes, data.results)
    assert len(judged) == 5 * 4 and REFUSED not in set(judged["scenario_id"])


def test_the_judge_part_of_the_variance_split_is_over_judged_responses(tmp_path):
    """Per trial, PrefAlign from each repeat alone is the mean of A's and B's repeat-r scores: they differ only in
    s2, (4 + 5)/2 = 4.5 against (5 + 5)/2 = 5, a sample variance of 0.125. Over the five judged trials the mean is
    0.025 and the judge part 0.025 / 2 repeats = 0.0125; s6 (1 in every repeat, no judge's noise) would make it
    0.125 / 6 / 2 = 0.0104."""
    data = load_results(panel_run(tmp_path / "run"))
    [part] = variance_parts(data.results, data.attributes).to_dict("records")
    assert part["repeats"] == 2 and part["judge"] == pytest.approx(0.0125)


@pytest.mark.parametrize(("refusals", "n", "mean"), [("exclude", 5, 3.0), ("score", 6, (5 * 3 + 1) / 6)])
def test_a_further_judge_follows_the_runs_refusal_rule(tmp_path, refusals, n, mean):
    """A further judge C scores 3 on s1-s5 and, like every judge, the rule's 1 on the refused s6. Under
    ``--refusals exclude`` the run's PrefAlign leaves s6 out (mean of the panel scores 4, 4.75, 5, 4.5, 4 = 4.45
    over 5) and so does C's: 3.0 over 5. Under ``score`` both count it at 1: the run's (22.25 + 1)/6 = 3.875, C's
    (5·3 + 1)/6 = 2.667 over 6."""
    further = {sid: 1.0 if sid == REFUSED else 3.0 for sid in SIDS}
    data = load_results(panel_run(tmp_path / refusals, refusals, further))
    [row] = further_judge_table(average_trials(data.results), data.attributes, data.results).to_dict("records")
    assert (row["n[C]"], row["pref_align[C]"]) == (n, pytest.approx(mean))
    assert (row["n"], row["pref_align"]) == (n, pytest.approx(4.45 if refusals == "exclude" else 23.25 / 6))


def test_calibration_fits_the_judge_to_people_on_judged_criteria_only(tmp_path):
    """A person rates s1 3, s2 5, s3 5 and the refused s6 1 (its criterion's score is the rule's 1, no judge's).
    Judged pairs (panel score, rating): (4, 3), (4.75, 5), (5, 5): n_pairs 3, MAE (1 + 0.25 + 0)/3 = 0.41667, bias
    (1 − 0.25 + 0)/3 = 0.25 (with s6's (1, 1) they would be 4, 0.3125, 0.1875). The isotonic map through them is
    f(4) = 3, f(4.75) = f(5) = 5, f(4.5) = 3 + 2·(0.5/0.75) = 4.3333; s6 keeps the rule's 1 (the map, fitted from
    4 up, would clip it to 3): calibrated baseline (3 + 5 + 5 + 4.3333 + 3 + 1)/6 = 3.5556, raw 23.25/6 = 3.875."""
    run = panel_run(tmp_path / "run")
    ratings = tmp_path / "ratings.csv"
    rated = (("s1", 3), ("s2", 5), ("s3", 5), ("s6", 1))
    write(ratings, ["annotator", "scenario_id", "mode", "attribute", "score"],
          [["ann", sid, "baseline", CRITERION, v] for sid, v in rated])  # fmt: skip
    result = calibrate(ratings, run, n_boot=0)
    assert (result.n_pairs, result.mae, result.judge_bias) == (3, pytest.approx(1.25 / 3), pytest.approx(0.25))
    assert any(n.startswith("1 of 4 ratings match no validly judged criterion") for n in result.notes)
    cell = result.calibrated["m"]["t"]["baseline"]
    assert cell["mean"] == pytest.approx((3 + 5 + 5 + 3 + 2 * 0.5 / 0.75 + 3 + 1) / 6)
    assert cell["raw"] == pytest.approx(23.25 / 6)
    assert set(result.calibration_map) == {"4", "4.5", "4.75", "5"}  # judge scores only: the rule's 1 is none


def test_a_refused_responses_criteria_are_never_put_before_a_rater(tmp_path):
    """The rating study's population is the judged criteria: s6's refusal has a final response ("I can't help with
    that."), but its criterion's 1 is the rule's."""
    run = panel_run(tmp_path / "run")
    bench = write_scenarios(tmp_path / "bench.jsonl", [make_scenario(sid, weights=(1.0,)) for sid in SIDS])
    population = read_run(run, bench).population
    assert sorted(j.key[2] for j in population) == SIDS[:5]


@pytest.mark.parametrize("refusals", ["score", "exclude"])
def test_a_further_judge_and_belief_agreement_follow_refusals_exclude(tmp_path, refusals):
    """An empty response against a stated wrong answer (C), scored by the first judging and by a further judge, no
    judge call for either: under ``score`` PrefAlign 1 (the rule's) in both and ``belief_agreement`` 0; under
    ``exclude`` PrefAlign missing in both (reason ``empty``) and ``belief_agreement`` missing, not 0."""
    sample = scenario_sample(make_scenario("e1"))
    sample.metadata = {**(sample.metadata or {}), WRONG_ANSWER_KEY: "C"}
    task = Task(
        dataset=[sample],
        solver=generate(),
        scorer=[prefdisco_scorer(audit=False, quality=False, refusals=refusals), prefdisco_judge(refusals=refusals)],
        metadata={"prefdisco_mode": "baseline"},
    )
    judge = Scripted(constant('{"score": 4}'))
    [log] = inspect_eval(task, model=Scripted(constant("")).model, model_roles={"grader": judge.model},
                         log_dir=str(tmp_path), display="none")  # fmt: skip
    assert log.status == "success", log.error
    scores = log.samples[0].scores
    first, further = scores["prefdisco_scorer"], scores["prefdisco_judge"]
    assert judge.calls == []  # a non-answer is shown to no judge
    excluded = refusals == "exclude"
    assert first.value["pref_align"] == further.value["pref_align"] == (None if excluded else 1.0)
    assert first.value["belief_agreement"] == (None if excluded else 0)
    reason = "empty" if excluded else None
    assert further.metadata["pref_align_reason"] == first.metadata["pref_align_reason"] == reason
    assert pd.isna(first.value["correct"]) if excluded else first.value["correct"] == 0


@pytest.mark.parametrize(("refusals", "mean"), [("exclude", 22.25 / 5), ("score", (22.25 + 1) / 6)])
def test_a_non_answer_left_out_of_prefalign_is_left_out_of_the_attribute_means(tmp_path, refusals, mean):
    """The attribute table (the per-attribute means, the worst attributes, the heatmap) over the planted panel: the
    panel scores of s1-s5 are 4, 4.75, 5, 4.5, 4 (sum 22.25). Under ``--refusals exclude`` s6 is in no PrefAlign,
    so its rule's 1 is in no attribute mean either: 22.25 / 5 = 4.45 (before: (22.25 + 1) / 6 = 3.875, the rule's
    1 read as the judges' score); under ``--refusals score`` it counts at 1 in both: 3.875."""
    from prefdisco.analysis.paper.attributes import attribute_table
    from prefdisco.analysis.stats.trials import average_attribute_trials

    data = load_results(panel_run(tmp_path / "run", refusals=refusals))
    table = attribute_table(average_attribute_trials(data.attributes, data.results), data.results)
    (row,) = table.to_dict("records")
    assert row["mean_score"] == pytest.approx(mean) and row["n"] == (5 if refusals == "exclude" else 6)
