"""``prefdisco calibrate``: every number checked against a hand computation on a hand-made run and ratings CSV.

Also the run-folder writer the response-rating tests use (``write_run``).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from prefdisco.analysis.validity.calibrate import calibrate
from prefdisco.analysis.validity.calibrate_cli import register
from prefdisco.analysis.validity.human_ratings import criterion_scores
from prefdisco.errors import UserError
from prefdisco.results.table import ResultsData

Sample = tuple[str, str, str, str, int | None, int]  # model, task, scenario_id, mode, fixed_k, epoch
RESULT_HEADER = [
    "model", "family", "task", "scenario_id", "mode", "fixed_k", "epoch", "pref_align", "correct",
    "n_questions", "judge_invalid", "input_tokens", "output_tokens", "failed", "error",
]  # fmt: skip
ATTRIBUTE_HEADER = ["model", "task", "scenario_id", "mode", "fixed_k", "epoch", "attribute", "weight", "score"]


def write_csv(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(["" if v is None else v for v in row] for row in rows)
    return path


def write_run(
    folder: Path,
    samples: dict[Sample, dict[str, tuple[float, float | None]]],
    responses: dict[Sample, str] | None = None,
    failed: set[Sample] = frozenset(),  # type: ignore[assignment]
) -> Path:
    """results.csv, attributes.csv and transcripts.jsonl of a run: per sample, attribute -> (weight, judge score);
    PrefAlign is the weighted mean of the valid scores, as the scorer computes it."""
    folder.mkdir(parents=True, exist_ok=True)
    results, attributes, transcripts = [], [], []
    for sample, criteria in samples.items():
        model, task, sid, mode, k, epoch = sample
        valid = [(w, s) for w, s in criteria.values() if s is not None]
        pref = sum(w * s for w, s in valid) / sum(w for w, _ in valid) if valid else None
        bad = sample in failed
        results.append(
            [model, "mock", task, sid, mode, k, epoch, None if bad else pref, 1, 0, 0, 10, 20, int(bad),
             "boom" if bad else None]
        )  # fmt: skip
        for attribute, (weight, score) in criteria.items():
            attributes.append([model, task, sid, mode, k, epoch, attribute, weight, score])
        text = (responses or {}).get(sample, f"response of {model} to {sid} in {mode}")
        transcripts.append(
            {"model": model, "task": task, "scenario_id": sid, "mode": mode, "fixed_k": k, "epoch": epoch,
             "messages": [], "turns": [], "final_response": text}
        )  # fmt: skip
    write_csv(folder / "results.csv", RESULT_HEADER, results)
    write_csv(folder / "attributes.csv", ATTRIBUTE_HEADER, attributes)
    (folder / "transcripts.jsonl").write_text("".join(json.dumps(t) + "\n" for t in transcripts))
    return folder


# The hand-made run: one model, one task, scenarios s1..s3 in the three conditions, two criteria per response,
# a (weight 0.75) and b (weight 0.25), integer judge scores.
JUDGE = {
    ("s1", "baseline"): (1, 2), ("s1", "discovery"): (3, 2), ("s1", "oracle"): (5, 4),
    ("s2", "baseline"): (2, 1), ("s2", "discovery"): (2, 3), ("s2", "oracle"): (4, 5),
    ("s3", "baseline"): (1, 1), ("s3", "discovery"): (3, 4), ("s3", "oracle"): (5, 5),
}  # fmt: skip
# Six rated items (scenario, mode, attribute) -> {annotator: score}; F is rated by ann1 only.
RATINGS = {
    ("s1", "baseline", "a"): {"ann1": 2, "ann2": 2},  # judge 1, human mean 2
    ("s2", "baseline", "a"): {"ann1": 1, "ann2": 2},  # judge 2, human mean 1.5
    ("s1", "discovery", "a"): {"ann1": 3, "ann2": 3},  # judge 3, human mean 3
    ("s2", "oracle", "a"): {"ann1": 5, "ann2": 5},  # judge 4, human mean 5
    ("s1", "oracle", "a"): {"ann1": 4, "ann2": 5},  # judge 5, human mean 4.5
    ("s2", "discovery", "b"): {"ann1": 3},  # judge 3, human mean 3
}


def hand_run(tmp_path: Path) -> Path:
    samples = {
        ("m", "t", sid, mode, None, 1): {"a": (0.75, float(a)), "b": (0.25, float(b))}
        for (sid, mode), (a, b) in JUDGE.items()
    }
    return write_run(tmp_path / "run", samples)


def hand_ratings(path: Path, extra: list[list[object]] = ()) -> Path:  # type: ignore[assignment]
    rows = [[name, sid, mode, attribute, score] for (sid, mode, attribute), by in RATINGS.items()
            for name, score in by.items()]  # fmt: skip
    return write_csv(path, ["annotator", "scenario_id", "mode", "attribute", "score"], rows + list(extra))


def test_agreement_statistics_by_hand(tmp_path: Path) -> None:
    import krippendorff  # these three take a second and a half to import: in the test, not at collection
    from scipy.stats import spearmanr
    from sklearn.metrics import cohen_kappa_score

    extra = [["ann1", "s9", "baseline", "a", 3]]  # a scenario the run does not have: left out, noted
    result = calibrate(hand_ratings(tmp_path / "r.csv", extra), hand_run(tmp_path), n_boot=0)
    assert (result.n_pairs, result.n_ratings, result.n_annotators) == (6, 11, 2)
    assert result.notes[0] == "1 of 12 ratings match no validly judged criterion of the run: left out"
    # items in key order (scenario, mode, attribute): judge scores and human means
    judge = np.array([1, 3, 5, 2, 3, 4], dtype=float)
    human = np.array([2, 3, 4.5, 1.5, 3, 5])
    # |judge - human| = 1, 0, .5, .5, 0, 1 -> 3 / 6; judge - human = -1, 0, .5, .5, 0, -1 -> -1 / 6
    assert result.mae == pytest.approx(0.5)
    assert result.judge_bias == pytest.approx(-1 / 6)
    # Spearman = Pearson of the (average) ranks: judge ranks 1, 3.5, 6, 2, 3.5, 5; human 2, 3.5, 5, 1, 3.5, 6
    ranks_j, ranks_h = np.array([1, 3.5, 6, 2, 3.5, 5]), np.array([2, 3.5, 5, 1, 3.5, 6])
    assert result.spearman == pytest.approx(np.corrcoef(ranks_j, ranks_h)[0, 1])
    assert result.spearman == pytest.approx(spearmanr(judge, human).statistic)
    # quadratic κ over the 11 (judge level, annotator score) pairs: 1 - Σ w·O / Σ w·E, w = (i - j)² / 16
    pairs = [(1, 2), (1, 2), (3, 3), (3, 3), (5, 4), (5, 5), (2, 1), (2, 2), (3, 3), (4, 5), (4, 5)]
    observed = np.zeros((5, 5))
    for j, h in pairs:
        observed[j - 1, h - 1] += 1
    expected = np.outer(observed.sum(1), observed.sum(0)) / len(pairs)
    w = np.array([[(i - j) ** 2 for j in range(5)] for i in range(5)]) / 16
    kappa = 1 - (w * observed).sum() / (w * expected).sum()
    assert result.weighted_kappa == pytest.approx(kappa)
    a, b = zip(*pairs, strict=True)
    assert kappa == pytest.approx(cohen_kappa_score(a, b, labels=[1, 2, 3, 4, 5], weights="quadratic"))
    # Krippendorff's ordinal α, annotators x items (same item order), ann2 did not rate item F
    matrix = [[2, 3, 4, 1, 3, 5], [2, 3, 5, 2, np.nan, 5]]
    alpha = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5])
    assert result.human_alpha == pytest.approx(alpha)


def test_perfect_agreement_gives_alpha_one_and_undefined_values_are_none(tmp_path: Path) -> None:
    rows = [["x", "s1", "baseline", "a", 2], ["y", "s1", "baseline", "a", 2], ["x", "s2", "oracle", "a", 4],
            ["y", "s2", "oracle", "a", 4]]  # fmt: skip
    path = write_csv(tmp_path / "r.csv", ["annotator", "scenario_id", "mode", "attribute", "score"], rows)
    result = calibrate(path, hand_run(tmp_path), n_boot=0)
    assert result.human_alpha == pytest.approx(1.0)
    one = write_csv(tmp_path / "one.csv", ["annotator", "scenario_id", "mode", "attribute", "score"], rows[:1])
    single = calibrate(one, hand_run(tmp_path), n_boot=0)
    assert single.spearman is None and single.human_alpha is None
    assert any(n.startswith("spearman is undefined") for n in single.notes)


# The isotonic map by hand (pool adjacent violators over the six items): judge 1 -> 2 and 2 -> 1.5 pool to 1.75;
# judge 3 -> 3 (two items); judge 4 -> 5 and 5 -> 4.5 pool to 4.75.
F = {1: 1.75, 2: 1.75, 3: 3.0, 4: 4.75, 5: 4.75}


def calibrated_means(f: dict[int, float]) -> dict[str, float]:
    """Per condition, the mean over s1..s3 of 0.75·f(a) + 0.25·f(b)."""
    out = {}
    for mode in ("baseline", "discovery", "oracle"):
        values = [0.75 * f[a] + 0.25 * f[b] for (sid, m), (a, b) in JUDGE.items() if m == mode]
        out[mode] = sum(values) / 3
    return out


def test_calibrated_prefalign_and_normalign_by_hand(tmp_path: Path) -> None:
    result = calibrate(hand_ratings(tmp_path / "r.csv"), hand_run(tmp_path), n_boot=0)
    assert result.calibration_map == pytest.approx({"1": 1.75, "2": 1.75, "3": 3.0, "4": 4.75, "5": 4.75})
    cells = result.calibrated["m"]["t"]
    # baseline: 1.75 for every scenario; discovery: (2.6875 + 2.0625 + 3.4375) / 3; oracle: 4.75 everywhere
    assert cells["baseline"]["mean"] == pytest.approx(1.75)
    assert cells["discovery"]["mean"] == pytest.approx(8.1875 / 3)
    assert cells["oracle"]["mean"] == pytest.approx(4.75)
    # the judge's own means: baseline (1.25 + 1.75 + 1) / 3, discovery (2.75 + 2.25 + 3.25) / 3, oracle 14 / 3
    assert cells["baseline"]["raw"] == pytest.approx(4 / 3)
    assert cells["discovery"]["raw"] == pytest.approx(2.75)
    assert cells["oracle"]["raw"] == pytest.approx(14 / 3)
    assert {m: c["n_scenarios"] for m, c in cells.items()} == {"baseline": 3, "discovery": 3, "oracle": 3}
    norm = result.calibrated_normalign["m"]["t"]
    assert norm["mean"] == pytest.approx(100 * (8.1875 / 3 - 1.75) / (4.75 - 1.75))  # 32.64
    assert norm["raw"] == pytest.approx(100 * (2.75 - 4 / 3) / (14 / 3 - 4 / 3))  # 42.5
    assert norm["reason"] == "" and norm["ci_low"] is None
    assert calibrated_means(F) == pytest.approx({m: cells[m]["mean"] for m in cells})


def test_bootstrap_interval_by_hand(tmp_path: Path) -> None:
    # two rated items: judge 1 -> human 2 (s3 baseline a), judge 5 -> human 4 (s1 oracle a). A resample of the two
    # draws both items (p = 1/2: the map through (1, 2) and (5, 4), f(u) = 1.5 + u / 2), or one item twice
    # (p = 1/4 each: the constant map 2, or the constant map 4). Of 200 resamples far more than 5 (2.5 %) draw
    # each constant map, so every cell's interval runs from the constant 2 to the constant 4, the most and least
    # a mean of 1-5 scores can be mapped to; the point estimate is the two-point map's.
    rows = [["x", "s3", "baseline", "a", 2], ["x", "s1", "oracle", "a", 4]]
    human = write_csv(tmp_path / "r.csv", ["annotator", "scenario_id", "mode", "attribute", "score"], rows)
    result = calibrate(human, hand_run(tmp_path), n_boot=200, seed=3)
    raw = {"baseline": 4 / 3, "discovery": 2.75, "oracle": 14 / 3}  # the judge's own means (above)
    for mode, cell in result.calibrated["m"]["t"].items():
        assert cell["mean"] == pytest.approx(1.5 + raw[mode] / 2)  # f is affine, so f(mean) = mean of f
        assert (cell["ci_low"], cell["ci_high"]) == (pytest.approx(2.0), pytest.approx(4.0))
    # NormAlign: a constant map has no denominator (dropped); every two-point resample is the same affine map, and
    # an affine map leaves NormAlign unchanged: the interval is the judge's own NormAlign, 42.5, at both ends
    norm = result.calibrated_normalign["m"]["t"]
    assert norm["mean"] == pytest.approx(42.5) and norm["raw"] == pytest.approx(42.5)
    assert (norm["ci_low"], norm["ci_high"]) == (pytest.approx(42.5), pytest.approx(42.5))
    again = calibrate(human, hand_run(tmp_path), n_boot=200, seed=3)
    assert again.to_json() == result.to_json()


def test_trials_and_fixed_k_and_models_are_joined_on_their_columns(tmp_path: Path) -> None:
    # two models, two trials of s1 baseline for m1, and a fixed-K condition: the ratings need model and epoch
    samples = {
        ("m1", "t", "s1", "baseline", None, 1): {"a": (1.0, 2.0)},
        ("m1", "t", "s1", "baseline", None, 2): {"a": (1.0, 4.0)},
        ("m2", "t", "s1", "baseline", None, 1): {"a": (1.0, 5.0)},
        ("m1", "t", "s1", "fixed_k", 2, 1): {"a": (1.0, 3.0)},
    }
    run = write_run(tmp_path / "run", samples)
    header = ["annotator", "scenario_id", "mode", "attribute", "score"]
    ambiguous = write_csv(tmp_path / "amb.csv", header, [["x", "s1", "baseline", "a", 3]])
    with pytest.raises(UserError, match=r"amb\.csv row 2: names 3 judged criteria .* differ in model, epoch\); "
                                        r"add column\(s\) model, epoch"):  # fmt: skip
        calibrate(ambiguous, run, n_boot=0)
    rows = [["x", "m1", "s1", "baseline", 1, "a", 1], ["x", "m1", "s1", "baseline", 2, "a", 5],
            ["x", "m2", "s1", "baseline", 1, "a", 5], ["x", "m1", "s1", "fixed_k", 1, "a", 3]]  # fmt: skip
    path = write_csv(tmp_path / "ok.csv", ["annotator", "model", "scenario_id", "mode", "epoch", "attribute",
                                           "score"], rows)  # fmt: skip
    result = calibrate(path, run, n_boot=0)
    assert result.n_pairs == 4
    # (judge, human) = (2, 1), (4, 5), (5, 5), (3, 3): |d| = 1, 1, 0, 0; d = 1, -1, 0, 0
    assert (result.mae, result.judge_bias) == (pytest.approx(0.5), pytest.approx(0.0))
    # isotonic over x = 2, 3, 4, 5 -> y = 1, 3, 5, 5 is already increasing: f = the human scores
    m1 = result.calibrated["m1"]["t"]
    assert m1["baseline"]["mean"] == pytest.approx((1 + 5) / 2)  # the two trials averaged, then one scenario
    assert m1["baseline"]["raw"] == pytest.approx((2 + 4) / 2)
    assert m1["fixed_k=2"]["mean"] == pytest.approx(3.0)
    assert result.calibrated["m2"]["t"]["baseline"]["mean"] == pytest.approx(5.0)
    assert "no scenario is scored in all three modes" in result.calibrated_normalign["m1"]["t"]["reason"]


def test_criterion_scores_follow_the_panel_rule_and_skip_unscored_samples() -> None:
    key = {"model": "m", "task": "t", "scenario_id": "s1", "mode": "baseline", "fixed_k": np.nan, "epoch": 1}
    attributes = pd.DataFrame(
        [key | {"attribute": "a", "weight": 0.5, "score": s, "judge": j, "repeat": r}
         for s, j, r in ((2.0, "j1", 1), (3.0, "j1", 2), (5.0, "j2", 1), (np.nan, "j2", 2))]
        + [key | {"scenario_id": "s2", "attribute": "a", "weight": 1.0, "score": 4.0, "judge": "j1", "repeat": 1}]
    ).assign(row=lambda f: range(2, len(f) + 2))  # fmt: skip
    results = pd.DataFrame([key | {"scored": True}, key | {"scenario_id": "s2", "scored": False}])
    items = criterion_scores(ResultsData(results=results, attributes=attributes, transcripts=None, source="x"), "x")
    assert items["scenario_id"].tolist() == ["s1"]  # s2's results row is not scored
    # the panel rule: each judge's repeat-mean (the invalid repeat left out), then the mean over judges
    assert items["score"].tolist() == pytest.approx([((2 + 3) / 2 + 5) / 2])
    assert items["fixed_k"].tolist() == [-1]


@pytest.mark.parametrize(
    ("rows", "header", "message"),
    [
        ([["x", "s1", "baseline", "a"]], ["annotator", "scenario_id", "mode", "attribute"],
         r"r\.csv: missing column\(s\) score \(expected annotator, scenario_id, mode, attribute, score\)"),
        ([["x", "s1", "baseline", "a", 6]], None, r"r\.csv row 2: column score: '6' is not an integer in 1–5"),
        ([["x", "s1", "baseline", "a", "2.5"]], None, r"r\.csv row 2: column score: '2\.5' is not an integer in 1–5"),
        ([["x", "s1", "sideways", "a", 2]], None, r"r\.csv row 2: column mode: unknown value 'sideways'"),
        ([["x", "s1", "baseline", "a", 2], ["x", "s1", "baseline", "a", 3]], None,
         r"r\.csv row 3: a second rating by 'x' of the item in row 2"),
        ([["x", "zz", "baseline", "a", 2]], None, r"r\.csv: no rating matches a validly judged criterion of .*run"),
        ([], None, r"r\.csv: no ratings"),
    ],
    ids=["missing-column", "score-6", "score-fraction", "bad-mode", "duplicate", "no-overlap", "empty"],
)  # fmt: skip
def test_bad_ratings_are_one_line_errors(tmp_path: Path, rows: list, header: list | None, message: str) -> None:
    path = write_csv(tmp_path / "r.csv", header or ["annotator", "scenario_id", "mode", "attribute", "score"], rows)
    with pytest.raises(UserError, match=message) as error:
        calibrate(path, hand_run(tmp_path), n_boot=0)
    assert "\n" not in str(error.value)


def test_a_run_without_attribute_table_is_refused(tmp_path: Path) -> None:
    run = hand_run(tmp_path)
    (run / "attributes.csv").unlink()
    with pytest.raises(UserError, match=r"run: no per-attribute table \(attributes\.csv\)"):
        calibrate(hand_ratings(tmp_path / "r.csv"), run, n_boot=0)


def test_cli_prints_a_table_and_json(tmp_path: Path) -> None:
    cli = typer.Typer()
    register(cli)
    cli.command("noop")(lambda: None)  # a second command, so typer keeps "calibrate" as a sub-command
    human, run = hand_ratings(tmp_path / "r.csv"), hand_run(tmp_path)
    runner = CliRunner()
    result = runner.invoke(cli, ["calibrate", "--human", str(human), "--run", str(run), "--json", "--bootstrap", "200"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    for key in ("n_pairs", "spearman", "weighted_kappa", "mae", "judge_bias", "human_alpha", "calibrated"):
        assert key in payload
    assert payload["calibrated"]["m"]["t"]["oracle"]["mean"] == pytest.approx(4.75)
    discovery = payload["calibrated"]["m"]["t"]["discovery"]
    assert 1 <= discovery["ci_low"] <= discovery["ci_high"] <= 5
    table = runner.invoke(cli, ["calibrate", "--human", str(human), "--run", str(run), "--bootstrap", "0"])
    assert table.exit_code == 0, table.output
    assert "PrefAlign (1-5)" in table.stdout and "NormAlign (%)" in table.stdout and "32.6" in table.stdout
