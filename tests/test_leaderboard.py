"""The leaderboard (issue 25 part 4): the paired bootstrap, Holm and the grouping rule against figures worked out by
hand; then ``prefdisco leaderboard`` on three mock runs with one model planted clearly better, and its refusals."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from leaderboard_world import N_SCENARIOS
from prefdisco.analysis.stats.pairwise import bootstrap_p, groups, holm, pair_rng, paired_bootstrap, pairwise_table
from prefdisco.analysis.stats.pairwise import shared_scenarios as shared_of


def frame(rows: dict[str, list[tuple[str, str, float, float, float]]]) -> pd.DataFrame:
    """``scenario_table`` rows from ``{model: [(task, scenario_id, baseline, discovery, oracle), …]}``."""
    out = [
        {"model": m, "task": t, "scenario_id": s, "baseline": b, "discovery": d, "oracle": o}
        for m, entries in rows.items()
        for t, s, b, d, o in entries
    ]
    return pd.DataFrame(out)


def four(discovery: list[float]) -> list[tuple[str, str, float, float, float]]:
    """Four scenarios of task t, baseline 1 and oracle 5 each (every resample's denominator is 4, none dropped)."""
    return [("t", f"s{i}", 1.0, d, 5.0) for i, d in enumerate(discovery, start=1)]


# Three models on the same four scenarios; per-scenario NormAlign = 25 · (discovery − 1):
#   A: 100, 100, 100, 0  → NormAlign 75;   B: 100, 100, 0, 0 → 50;   C: 0, 0, 0, 0 → 0.
# On a resample (4 draws with replacement, the same draws for both models of a pair), with k_i the draws of s_i:
#   A − B = 25 · k3            ≤ 0 iff k3 = 0:        P = (3/4)^4 = 81/256  → p = 2 · 81/256 = 0.6328125
#   A − C = 25 · (4 − k4)      ≤ 0 iff k4 = 4:        P = (1/4)^4 = 1/256   → p = 2/256      = 0.0078125
#   B − C = 25 · (k1 + k2)     ≤ 0 iff k1 = k2 = 0:   P = (1/2)^4 = 1/16    → p = 2/16       = 0.125
# (each difference is never negative, so the share ≥ 0 is 1 and p = 2 · share ≤ 0).
# Intervals (2.5th, 97.5th percentiles): A − B: P(k3 = 0) = .316 > .025, P(k3 ≤ 2) = .949 < .975 ≤ P(k3 ≤ 3) = .996
# → [0, 75]; A − C: P(4 − k4 ≤ 0) = .0039 < .025 ≤ P(4 − k4 ≤ 1) = .051, top 100 → [25, 100]; B − C: P(k1+k2 = 0) =
# .0625 → 0, P(k1+k2 ≤ 3) = .9375 < .975 → [0, 100].
# Holm over m = 3, p ascending: 0.0078125 (A,C), 0.125 (B,C), 0.6328125 (A,B):
#   (A,C): 3 · 0.0078125 = 0.0234375;  (B,C): max(0.0234375, 2 · 0.125) = 0.25;  (A,B): max(0.25, 0.6328125) = 0.6328125
# so only A and C are distinguishable (0.0234 < 0.05).
# Groups: A opens group 1; B is not significantly worse than A (p_holm .63): group 1; C is significantly worse than
# the group's first model A: it opens group 2 — although C is not distinguishable from B, the model just above it.
THREE = frame({"A": four([5, 5, 5, 1]), "B": four([5, 5, 1, 1]), "C": four([1, 1, 1, 1])})
EXACT_P = {("A", "B"): 2 * 81 / 256, ("A", "C"): 2 / 256, ("B", "C"): 2 / 16}
EXACT_HOLM = {("A", "C"): 0.0234375, ("B", "C"): 0.25, ("A", "B"): 0.6328125}
N_BOOT = 20_000
# Monte Carlo error of a share q over N_BOOT resamples: sqrt(q(1-q)/N); p = 2q, so 4 standard errors of p:
TOLERANCE = {pair: 4 * 2 * (p / 2 * (1 - p / 2) / N_BOOT) ** 0.5 for pair, p in EXACT_P.items()}


def test_holm_step_down_by_hand():
    assert holm([0.6328125, 0.0078125, 0.125]) == [0.6328125, 0.0234375, 0.25]
    # the running maximum: 0.01 · 4 = 0.04, then 0.011 · 3 = 0.033 is raised to 0.04, 0.03 · 2 = 0.06, 0.5 · 1 = 0.5
    assert holm([0.5, 0.011, None, 0.03, 0.01]) == pytest.approx([0.5, 0.04, None, 0.06, 0.04])
    assert holm([0.4, 0.3]) == [0.6, 0.6]  # 0.3 · 2 = 0.6; 0.4 · 1 = 0.4 raised to 0.6
    assert holm([0.9, 0.8, 0.7]) == [1.0, 1.0, 1.0]  # capped at 1
    assert holm([]) == []


def test_the_bootstrap_p_is_two_sided_and_never_below_one_over_the_resamples():
    assert bootstrap_p(pd.Series([1.0, 2.0, 3.0, 4.0]).to_numpy()) == 0.25  # 2 · 0 → 1/4
    assert bootstrap_p(pd.Series([-1.0, 1.0, 2.0, 3.0]).to_numpy()) == 0.5  # 2 · min(1/4, 3/4)
    assert bootstrap_p(pd.Series([0.0, 0.0, 1.0, -1.0]).to_numpy()) == 1.0  # 2 · min(3/4, 3/4) capped at 1


def test_paired_differences_intervals_and_holm_by_hand():
    table = pairwise_table(THREE, ["A", "B", "C"], "t", seed=3, n_boot=N_BOOT)
    got = {(r["model_a"], r["model_b"]): r for r in table.to_dict("records")}
    assert list(got) == [("A", "B"), ("A", "C"), ("B", "C")]
    assert [got[k]["difference"] for k in got] == [25.0, 75.0, 50.0]
    assert [(got[k]["normalign_a"], got[k]["normalign_b"]) for k in got] == [(75.0, 50.0), (75.0, 0.0), (50.0, 0.0)]
    assert [(got[k]["low"], got[k]["high"]) for k in got] == [(0.0, 75.0), (25.0, 100.0), (0.0, 100.0)]
    for pair, exact in EXACT_P.items():
        assert got[pair]["p"] == pytest.approx(exact, abs=TOLERANCE[pair])
        assert got[pair]["n_shared"] == 4 and got[pair]["bootstrap_kept"] == N_BOOT
    assert got[("A", "C")]["p_holm"] == pytest.approx(EXACT_HOLM[("A", "C")], abs=3 * TOLERANCE[("A", "C")])
    assert got[("B", "C")]["p_holm"] == pytest.approx(EXACT_HOLM[("B", "C")], abs=2 * TOLERANCE[("B", "C")])
    assert got[("A", "B")]["p_holm"] == pytest.approx(EXACT_HOLM[("A", "B")], abs=TOLERANCE[("A", "B")])
    assert [got[k]["distinguishable"] for k in got] == [False, True, False]
    assert groups(["A", "B", "C"], table) == {"A": 1, "B": 1, "C": 2}


def test_the_grouping_rule_compares_with_the_groups_first_model():
    def pairs(rows):
        cols = ["model_a", "model_b", "difference", "distinguishable"]
        return pd.DataFrame([dict(zip(cols, r, strict=True)) for r in rows])

    # W > X > Y > Z; only W–Y, W–Z and X–Z are significant: X joins W's group; Y is significantly worse than W
    # and leads group 2; Z is not distinguishable from Y (its leader) and joins group 2, though worse than W and X.
    table = pairs(
        [
            ("W", "X", 5.0, False),
            ("W", "Y", 20.0, True),
            ("W", "Z", 30.0, True),
            ("X", "Y", 15.0, False),
            ("X", "Z", 25.0, True),
            ("Y", "Z", 10.0, False),
        ]
    )
    assert groups(["W", "X", "Y", "Z"], table) == {"W": 1, "X": 1, "Y": 2, "Z": 2}
    # significant, but the leader is *below* on their shared scenarios: not "significantly worse", so it joins
    assert groups(["W", "X"], pairs([("W", "X", -12.0, True)])) == {"W": 1, "X": 1}
    # every pair significant: a group each
    every = pairs([("W", "X", 5.0, True), ("W", "Y", 9.0, True), ("X", "Y", 4.0, True)])
    assert groups(["W", "X", "Y"], every) == {"W": 1, "X": 2, "Y": 3}
    assert groups([], pairs([])) == {}


def test_the_overall_bootstrap_is_stratified_by_task_and_paired():
    # A gains everything on task x and nothing on task y, B the reverse; 4 scenarios per task (per-scenario
    # NormAlign 100 or 0, denominators 4). Pooled, both are 50. Resampled within each task (4 from x, 4 from y),
    # both stay exactly 50 on every resample: the difference is 0 every time, the interval [0, 0] and p = 2 · min(1,
    # 1) capped at 1. Resampled over the pooled 8 scenarios instead, A − B = 100 · (draws from x − 4) / 8 would vary.
    x = [("x", f"x{i}", 1.0, 5.0, 5.0) for i in range(4)]
    y = [("y", f"y{i}", 1.0, 1.0, 5.0) for i in range(4)]
    flip = [(t, s, b, 6.0 - d, o) for t, s, b, d, o in x + y]
    rows = frame({"A": x + y, "B": flip})
    shared = shared_of(rows[rows["model"] == "A"], rows[rows["model"] == "B"])
    test = paired_bootstrap(shared, pair_rng(0, "A", "B", "overall"), 2000)
    assert (test["normalign_a"], test["normalign_b"], test["difference"]) == (50.0, 50.0, 0.0)
    assert (test["low"], test["high"], test["p"]) == (0.0, 0.0, 1.0)
    # only the scenarios both scored count: B without y3 shares 7
    part = shared_of(rows[rows["model"] == "A"], rows[(rows["model"] == "B") & (rows["scenario_id"] != "y3")])
    assert len(part) == 7 and set(part["scenario_id"]) == {*(f"x{i}" for i in range(4)), "y0", "y1", "y2"}


def test_a_pair_with_too_few_shared_scenarios_is_not_tested():
    rows = frame({"A": four([5, 5, 5, 1])[:3], "B": four([5, 5, 1, 1])[:3]})
    table = pairwise_table(rows, ["A", "B"], "t", seed=0, n_boot=100)
    r = table.iloc[0]
    assert r["difference"] == pytest.approx(100 * 3 / 3 - 100 * 2 / 3)  # A: 100 on 3; B: 100, 100, 0
    assert r["p"] is None and r["p_holm"] is None and not r["distinguishable"]
    assert r["reason"] == "too few scenarios (n = 3)"
    assert groups(["A", "B"], table) == {"A": 1, "B": None}  # untested: in no group (it joined A's before)


# --- three mock runs through the real CLI ---------------------------------------------------------------------


def invoke(cli_app, *args: str):
    return CliRunner().invoke(cli_app, list(args))


@pytest.fixture
def runs(leaderboard_runs):
    """The session's leaderboard world (``tests/leaderboard_world.py``): good, fair and poor on 8 scenarios of two
    tasks on the default protocol; late: good with the simulated user at temperature 1.0."""
    import prefdisco.cli as cli

    cli._register()
    folder, port = leaderboard_runs
    return cli.app, folder, port


def test_the_planted_model_ranks_first_in_a_group_of_its_own(runs, tmp_path):
    cli_app, base, port = runs
    out = tmp_path / "board"
    args = [str(base / n) for n in ("fair", "good", "poor")]
    made = invoke(cli_app, "leaderboard", *args, "--out", str(out), "--bootstrap", "400", "--seed", "1")
    assert made.exit_code == 0, made.output
    assert sorted(p.name for p in out.iterdir()) == ["leaderboard.csv", "leaderboard.html", "pairwise.csv"]
    good, fair, poor = (f"openai-api/mock/{m}{port}" for m in ("good", "fair", "poor"))

    table = pd.read_csv(out / "leaderboard.csv")
    assert list(dict.fromkeys(table["task"])) == ["overall", "alpha", "beta"]
    for task, n in (("overall", N_SCENARIOS), ("alpha", N_SCENARIOS // 2), ("beta", N_SCENARIOS // 2)):
        rows = table[table["task"] == task].set_index("model")
        assert rows.loc[good, "rank"] == 1 and rows.loc[good, "normalign"] == 100.0
        assert rows.loc[good, "group"] == 1 and set(rows.loc[[fair, poor], "group"]) == {2}  # good alone in group 1
        assert sorted(rows["rank"]) == [1, 2, 3] and set(rows["n_scenarios"]) == {n}
        assert (rows.loc[[fair, poor], "normalign_high"] < rows.loc[good, "normalign_low"]).all()
        # baseline 1 and oracle 5 on every criterion: PrefAlign is 1 and 5 for every model and scenario
        assert set(rows["oracle_pref_align"]) == {5.0} and set(rows["mean_baseline"]) == {1.0}
        assert set(rows["mean_questions"]) == {2.0}  # the mock asks two questions
    overall = table[table["task"] == "overall"].set_index("model")
    assert overall.loc[poor, "normalign"] == pytest.approx(
        100 * (overall.loc[poor, "mean_discovery"] - 1.0) / (5.0 - 1.0)
    )
    assert {"harm:breakage[discovery]", "harm:repair[oracle]_high", "accuracy_oracle_low"} <= set(table.columns)

    pairs = pd.read_csv(out / "pairwise.csv")
    assert list(pairs.columns[:3]) == ["task", "model_a", "model_b"]
    assert len(pairs) == 3 * 3  # three pairs per ranking
    against_good = pairs[pairs["model_a"] == good]
    assert len(against_good) == 6 and (against_good["p_holm"] < 0.05).all() and against_good["distinguishable"].all()
    assert (against_good["low"] > 0).all()
    alike = pairs[pairs["model_a"] != good]  # fair and poor, planted alike: a difference of 0 on every resample
    assert len(alike) == 3 and (alike["difference"] == 0).all() and (alike["p"] == 1.0).all()
    assert not alike["distinguishable"].any()

    html = (out / "leaderboard.html").read_text()
    assert "<script" not in html and "<link" not in html and "src=" not in html and "@import" not in html
    assert "protocol <code>default-v1.0</code>" in html
    assert f"simulator (user model) <code>openai-api/mock/m{port}</code>" in html
    assert f"judge <code>openai-api/mock/m{port}</code>" in html
    assert f"<b>Group 1</b>: {good} · <b>Group 2</b>:" in html
    assert html.count("<svg") == 3 and "Mixed protocols" not in html
    assert f"1. {good} (group 1): NormAlign 100.0 [100.0, 100.0]" in made.output


def test_the_same_seed_gives_the_same_leaderboard(runs, tmp_path):
    cli_app, base, _port = runs
    args = [str(base / n) for n in ("good", "fair", "poor")]
    for name in ("one", "two"):
        out = invoke(cli_app, "leaderboard", *args, "--out", str(tmp_path / name), "--bootstrap", "200")
        assert out.exit_code == 0, out.output
    for f in ("leaderboard.csv", "pairwise.csv"):
        assert (tmp_path / "one" / f).read_bytes() == (tmp_path / "two" / f).read_bytes()


def test_mixed_protocols_are_refused_naming_the_difference_unless_allowed(runs, tmp_path):
    cli_app, base, port = runs
    args = [str(base / n) for n in ("good", "fair", "poor", "late")]
    refused = invoke(cli_app, "leaderboard", *args, "--out", str(tmp_path / "mixed"), "--bootstrap", "200")
    assert refused.exit_code == 2
    assert len(refused.output.strip().splitlines()) == 1
    assert "ran different protocols (user_temperature 0.7 vs 1.0)" in refused.output
    assert not (tmp_path / "mixed").exists()

    mixed = invoke(
        cli_app, "leaderboard", *args, "--out", str(tmp_path / "mixed"), "--bootstrap", "200", "--allow-mixed"
    )
    assert mixed.exit_code == 0, mixed.output
    html = (tmp_path / "mixed" / "leaderboard.html").read_text()
    assert html.index("Mixed protocols") < html.index("Overall (every task)")  # before any number
    assert "user_temperature 0.7 vs 1.0" in html and "Protocols</b>" in html
    models = set(pd.read_csv(tmp_path / "mixed" / "leaderboard.csv")["model"])
    assert {f"openai-api/mock/good{port} @ good", f"openai-api/mock/good{port} @ late"} <= models


def test_an_out_holding_a_leaderboard_is_refused_without_overwrite(runs, tmp_path):
    cli_app, base, _port = runs
    out = tmp_path / "board"
    args = [str(base / n) for n in ("good", "fair")]
    assert invoke(cli_app, "leaderboard", *args, "--out", str(out), "--bootstrap", "200").exit_code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    again = invoke(cli_app, "leaderboard", str(base / "good"), "--out", str(out), "--bootstrap", "200")
    assert again.exit_code == 2 and "give --overwrite to replace it" in again.output
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    replaced = invoke(
        cli_app, "leaderboard", str(base / "good"), "--out", str(out), "--overwrite", "--bootstrap", "200"
    )
    assert replaced.exit_code == 0, replaced.output
    assert "Pairwise differences" in (out / "leaderboard.html").read_text()
    assert len(pd.read_csv(out / "pairwise.csv")) == 0  # one model: no pair
    bad = invoke(cli_app, "leaderboard", str(tmp_path / "nowhere"), "--out", str(tmp_path / "x"))
    assert bad.exit_code == 2 and len(bad.output.strip().splitlines()) == 1 and not (tmp_path / "x").exists()


# --- a sessions run: the transfer columns -----------------------------------------------------------------------


def test_a_sessions_runs_transfer_gain_is_the_reports_and_a_tie_is_one_group(tmp_path, transfer_runs):
    """The planted sessions world of ``tests/test_transfer.py`` (worked out by hand there): the smart assistant's
    transfer gain after position 1 is 0, 50, −10 with the transcript (mean 20, slope −5) and 0, 50, 30 with notes
    (mean 40, slope 15); the forgetful one's is 0 everywhere. Both cold (discovery) arms are the same dialogues, W =
    .6, .5, .4 per position, PrefAlign 1 + 4·W against baseline 1 and oracle 5: NormAlign 100 · mean W = 50 each, a
    tie ranked by name, a difference of 0 on every paired resample (interval [0, 0], p = 1): one group."""
    from prefdisco.analysis.leaderboard.page import make_leaderboard
    from transfer_world import N_SESSIONS, SMART

    # the session's transfer world, as tests/test_transfer.py reads it (smart's two identical trials average to one)
    runs = [transfer_runs(SMART, epochs=2), transfer_runs("forgetful")]
    board, _ = make_leaderboard(runs, tmp_path / "board", n_boot=200)
    rows = board.table.set_index(["task", "model"])
    smart, forgetful = ("demo", f"scripted/{SMART}"), ("demo", "scripted/forgetful")
    expected = {
        smart: {"carry_transcript": (20.0, -5.0), "carry_notes": (40.0, 15.0)},
        forgetful: {"carry_transcript": (0.0, 0.0), "carry_notes": (0.0, 0.0)},
    }
    for key, arms in expected.items():
        for arm, (mean, slope) in arms.items():
            assert rows.loc[key, f"transfer_gain[{arm}]"] == pytest.approx(mean)
            assert rows.loc[key, f"transfer_gain_slope[{arm}]"] == pytest.approx(slope)
            # every session is the same, so every resample gives the same slope
            assert rows.loc[key, f"transfer_gain_slope[{arm}]_low"] == pytest.approx(slope)
            assert rows.loc[key, f"transfer_gain_slope[{arm}]_high"] == pytest.approx(slope)
        assert rows.loc[key, "normalign"] == pytest.approx(50.0) and rows.loc[key, "n_scenarios"] == 3 * N_SESSIONS
    assert pd.isna(rows.loc[("overall", f"scripted/{SMART}"), "transfer_gain[carry_notes]"])  # per task only
    assert [rows.loc[k, "rank"] for k in (forgetful, smart)] == [1, 2]  # the tie, by name
    assert [rows.loc[k, "group"] for k in (forgetful, smart)] == [1, 1]
    pair = board.pairwise[board.pairwise["task"] == "demo"].iloc[0]
    assert (pair["model_a"], pair["model_b"]) == ("scripted/forgetful", f"scripted/{SMART}")
    assert (pair["difference"], pair["low"], pair["high"], pair["p"]) == (0.0, 0.0, 0.0, 1.0)
    assert not pair["distinguishable"]
    html = (tmp_path / "board" / "leaderboard.html").read_text()
    assert "mean transfer gain · carry_notes" in html and "Harms and Transfer figures" in html


def test_an_untested_pair_is_shown_as_untested_never_in_the_leaders_group():
    """Issue 31, defect 5: D shares only 3 scenarios with A (fewer than 4: not tested), so the data say nothing of
    the two; before, D joined A's group as if indistinguishable. Now D has no group and says why, and the next
    model (C) is still compared with A, the leader."""
    rows = {
        "A": four([5, 5, 5, 1]),
        "C": four([1, 1, 1, 1]),
        "D": [("t", f"s{i}", 1.0, 4.0, 5.0) for i in (1, 2, 3)],
    }
    scenarios = frame(rows)
    table = pairwise_table(scenarios, ["A", "D", "C"], "t", seed=3, n_boot=2000)
    got = {(r["model_a"], r["model_b"]): r for r in table.to_dict("records")}
    assert pd.isna(got[("A", "D")]["p"]) and got[("A", "D")]["reason"] == "too few scenarios (n = 3)"
    from prefdisco.analysis.stats.pairwise import grouping

    group_of, why = grouping(["A", "D", "C"], table)
    assert group_of == {"A": 1, "D": None, "C": 2}
    assert why == {"D": "untested against A, the leader of group 1: too few scenarios (n = 3)"}


def test_the_overall_interval_resamples_each_task_within_itself_as_the_pairwise_tests_do():
    """The overall ranking's NormAlign interval draws each task's scenarios within that task (the pairwise tests'
    strata), by hand: per resample, the tasks' draws in sorted task order from the cell's stream."""
    import numpy as np

    from prefdisco.analysis.stats.normalign import bootstrap_interval, cell_seed

    num = np.array([4.0, 4.0, 0.0, 4.0, 2.0, 0.0, 1.0])
    den = np.array([4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0])
    tasks = np.array(["b", "b", "b", "a", "a", "a", "a"])
    strata = [np.flatnonzero(tasks == t) for t in ("a", "b")]
    lo, hi, kept = bootstrap_interval(num, den, cell_seed(0, "m", "overall"), 3000, strata)
    rng = cell_seed(0, "m", "overall")
    draws = rng.integers(0, 4, size=(3000, 4)), rng.integers(0, 3, size=(3000, 3))
    rows = np.concatenate([strata[0][draws[0]], strata[1][draws[1]]], axis=1)
    hand = 100 * num[rows].mean(axis=1) / den[rows].mean(axis=1)
    assert kept == 3000 and (lo, hi) == pytest.approx(tuple(np.percentile(hand, [2.5, 97.5])))
    # every resample keeps 4 scenarios of a and 3 of b: an unstratified one would not, and its interval differs
    unstratified = bootstrap_interval(num, den, cell_seed(0, "m", "overall"), 3000)
    assert unstratified[:2] != (lo, hi)


def test_the_rankings_axis_labels_never_overlap_whatever_the_range():
    """Issue 49: a NormAlign interval down to -4000 put the lines of 0 and 100 eleven pixels apart and their labels,
    centred under them, overlapped ("0100"). Each label's box is measured with matplotlib's renderer at the page's
    11 px (DejaVu Sans, wider than the browsers' default fonts), over intervals from -110 down to -100000, the
    gap between the two lines from 214 px down to half a pixel."""
    import re

    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties

    from prefdisco.analysis.leaderboard.page import _svg

    renderer = RendererAgg(1000, 200, 72)  # at 72 dpi a point is a pixel
    font = FontProperties(family="DejaVu Sans", size=11)
    for low in [*range(-110, -6000, -37), -100000]:  # the lines' gap from 214 px down to 0.5 px
        rows = [
            {"rank": 1, "group": 1, "model": "a", "normalign": 40.0, "normalign_low": 0.0, "normalign_high": 90.0},
            {"rank": 2, "group": 1, "model": "b", "normalign": -40.0, "normalign_low": low, "normalign_high": 100.0},
        ]
        svg = _svg(rows)
        width = float(re.search(r'<svg [^>]*width="([\d.]+)"', svg).group(1))
        height = float(re.search(r'<svg [^>]*height="([\d.]+)"', svg).group(1))
        boxes = []
        for x, y, anchor, text in re.findall(r'<text x="([\d.]+)" y="([\d.]+)"[^>]*text-anchor="(\w+)">([^<]*)<', svg):
            if float(y) != height - 8:  # the axis row, under the rankings
                continue
            w = renderer.get_text_width_height_descent(text, font, ismath=False)[0]
            start = {"start": float(x), "middle": float(x) - w / 2, "end": float(x) - w}[anchor]
            boxes.append((start, start + w, text))
        assert [t for _, _, t in boxes] == ["0", "100"], svg
        (a0, a1, _), (b0, b1, _) = boxes
        assert a1 + 1 <= b0, (low, boxes)  # a pixel apart at least
        assert a0 >= 0 and b1 <= width, (low, boxes, width)


def test_a_one_task_leaderboard_gives_its_overall_and_task_rows_the_same_intervals(tmp_path):
    """Issue 49: with one task the overall ranking holds the task's scenarios and nothing else, yet its intervals
    came from streams named ``overall``: two different intervals (and p-values) for the same data on one page.
    Every stream is now named by the one task its scenarios hold (``normalign.stream_task``)."""
    from prefdisco.analysis.leaderboard.board import build_leaderboard
    from prefdisco.results.table import load_results
    from test_report import HEADER, r, write_csv

    rows = []
    for i, (da, db) in enumerate([(4.0, 2.0), (3.5, 3.0), (5.0, 1.5), (2.5, 2.0), (4.5, 3.5)], start=1):
        for model, d in (("m-a", da), ("m-b", db)):
            rows += [r(model, "t1", f"s{i}", "baseline", 1.5, 1), r(model, "t1", f"s{i}", "discovery", d, 1)]
            rows.append(r(model, "t1", f"s{i}", "oracle", 4.0 + i / 10, 1))
    data = load_results(write_csv(tmp_path / "results.csv", HEADER, rows))
    board = build_leaderboard(data, seed=3, n_boot=400)
    table = board.table.set_index(["task", "model"])
    columns = ["normalign", "normalign_low", "normalign_high", "oracle_pref_align_low", "oracle_pref_align_high"]
    for model in ("m-a", "m-b"):
        overall, task = table.loc[("overall", model), columns], table.loc[("t1", model), columns]
        assert overall["normalign_low"] is not None and overall["oracle_pref_align_low"] is not None
        assert overall.to_dict() == task.to_dict(), model
    pairs = board.pairwise.set_index("task")[["low", "high", "p", "p_holm"]]
    assert pairs.loc["overall"].to_dict() == pairs.loc["t1"].to_dict() and pairs.loc["t1", "low"] is not None


def test_the_leaderboard_says_the_reports_caveats_at_its_top_and_on_its_console(tmp_path):
    """Issue 35, class 5: the leaderboard ranked the embedded model first with NormAlign 100.0 and no word that its
    numbers prove only the plumbing. Now its page's top and its console carry every caveat the report of the same
    results shows (``analysis/report/caveats.py``), the embedded model's first."""
    import pandas as pd
    from typer.testing import CliRunner

    import prefdisco.cli as cli
    from prefdisco.analysis.report.build import make_report
    from prefdisco.analysis.report.caveats import PLUMBING_NOTE
    from test_report import make_run_dir

    run = make_run_dir(tmp_path / "run")
    for name in ("results.csv", "attributes.csv"):
        table = pd.read_csv(run / name, dtype=str, keep_default_na=False)
        table["model"] = table["model"].replace({"m-a": "prefdisco/smollm2"})
        table.to_csv(run / name, index=False)
    report, _ = make_report(run, tmp_path / "report", n_boot=0, figures=False)
    assert report.caveats[0] == PLUMBING_NOTE
    cli._register()
    made = CliRunner().invoke(cli.app, ["leaderboard", str(run), "--out", str(tmp_path / "lb"), "--bootstrap", "0"])
    assert made.exit_code == 0, made.output
    page = (tmp_path / "lb" / "leaderboard.html").read_text()
    top = page[: page.index('id="protocol"')]
    console = " ".join(made.output.split())
    for line in report.caveats:
        assert f"<li>{line}</li>" in top and " ".join(line.split()) in console, line
        # issue 49: before the numbers they qualify (the ranking's lines)
        assert console.index(" ".join(line.split())) < console.index(": NormAlign "), console


def test_usd_per_scenario_sums_each_conditions_mean_and_says_nothing_without_a_price(tmp_path):
    """Issue 34: what a scenario costs in all its conditions, per model and task and overall, by hand: a/t1 costs
    0.01 + 0.03 + 0.01 = $0.05, a/t2 twice that; overall per condition over both tasks' scenarios (0.015, 0.045,
    0.015) = $0.075; b has a row without a price, so none. Then through ``prefdisco leaderboard``: its CSV and page."""
    import numpy as np
    import pandas as pd
    from typer.testing import CliRunner

    import prefdisco.cli as cli
    from prefdisco.analysis.leaderboard.board import USD_PER_SCENARIO, _usd_per_scenario
    from test_report import make_run_dir

    rows = pd.DataFrame(
        {
            "model": ["a"] * 6 + ["b"] * 3,
            "task": ["t1"] * 3 + ["t2"] * 3 + ["t1"] * 3,
            "mode": ["baseline", "discovery", "oracle"] * 3,
            "fixed_k": [np.nan] * 9,
            "failed": [False] * 9,
            "cost_usd": [0.01, 0.03, 0.01, 0.02, 0.06, 0.02, 0.01, np.nan, 0.01],
        }
    )
    usd = _usd_per_scenario(rows)[USD_PER_SCENARIO]
    assert usd[("a", "t1")] == pytest.approx(0.05) and usd[("a", "t2")] == pytest.approx(0.10)
    assert usd[("a", "overall")] == pytest.approx(0.075)
    assert np.isnan(usd[("b", "t1")]) and np.isnan(usd[("b", "overall")])

    run = make_run_dir(tmp_path / "run")
    table = pd.read_csv(run / "results.csv")
    table.assign(cost_usd=0.01).to_csv(run / "results.csv", index=False)  # every response a cent
    cli._register()
    made = CliRunner().invoke(cli.app, ["leaderboard", str(run), "--out", str(tmp_path / "lb"), "--bootstrap", "0"])
    assert made.exit_code == 0, made.output
    board = pd.read_csv(tmp_path / "lb" / "leaderboard.csv")
    ok = table.loc[table["failed"].fillna(0) == 0]
    for r in board.to_dict("records"):  # a cent per condition (a mode, each fixed K its own) the model ran
        where = ok.loc[ok["model"] == r["model"]]
        if r["task"] != "overall":
            where = where.loc[where["task"] == r["task"]]
        conditions = len(where[["mode", "fixed_k"]].fillna(-1).drop_duplicates())
        assert r[USD_PER_SCENARIO] == pytest.approx(0.01 * conditions), r
    assert "USD per scenario (all conditions)" in (tmp_path / "lb" / "leaderboard.html").read_text()
