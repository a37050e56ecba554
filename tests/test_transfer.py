"""The planted test of the Transfer metrics (issue 22, part 6): the real sessions orchestration run on scripted
models (``tests/transfer_world.py``: the world, the ``scripted/<name>`` model API that lets the orchestration
resolve scripted models by name), then ``prefdisco report``'s own code; every number below is worked out by hand
from the plant.

The world (``transfer_world.py``): four people, one session of three problems each, the same layout for all:
position 1 D old .6 / A .4; position 2 D old .5 / V .5; position 3 D **new** .4 / A .3 / V .3 (D changed,
A and V recurring). The judge gives 5 when the response holds the criterion's value, else 1, so PrefAlign =
1 + 4·W, baseline 1, oracle 5 and NormAlign = 100·W (W: the weight of the values the response holds).

Each dialogue asks one question about the first of D, V, A the assistant does not know — unless it knew two
attributes before starting, then it answers at once — and answers with every value it knows.

| arm | pos 1 | pos 2 | pos 3 |
|---|---|---|---|
| cold (discovery; both assistants) | asks D: W .6 | asks D: .5 | asks D (new value): .4 |
| smart carry_transcript | asks D: .6 | knows D, asks V: D + V = 1 | knows old D, V: asks nothing, V only = .3 |
| smart carry_notes (notes: the last problem only) | asks D: .6 | notes D, asks V: 1 | notes V, asks D: D + V = .7 |
| forgetful, both carry arms | as cold | as cold | as cold |

So the smart transcript gains 0, 50, −10 (slope (−10 − 0) / 2 = −5, mean after position 1: 20) and the notes 0, 50,
30 (slope 15, mean 40). Re-ask (a question about an attribute revealed at an earlier position of the same session
and arm): cold asks D again at 2 and 3 → 1, 1; smart transcript asks V at 2 (new) → 0, nothing at 3 → not
measured; smart notes V at 2 → 0, D at 3 (revealed at 1) → 1; forgetful's carry arms → 1, 1. Stale application
on D at position 3: smart transcript applies the old value, 1 − 5 = −4; smart notes asked, 5 − 5 = 0; forgetful 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from prefdisco.analysis.report.build import make_report
from transfer_world import N_SESSIONS, SMART

GAINS = {"carry_transcript": [0.0, 50.0, -10.0], "carry_notes": [0.0, 50.0, 30.0]}


@pytest.fixture(scope="module")
def planted(world, transfer_runs):
    """The two assistants' runs of the session's transfer world (smart with two identical trials: the metrics
    average trials first) and their reports (built once per test session, whichever worker asks first)."""

    def reported(kind: str, run: Path) -> Path:
        def make(folder: Path) -> Path:
            make_report(run, folder / "report", n_boot=200)
            return folder / "report"

        return world.get(f"transfer-report-{kind}", make)

    runs = {"smart": transfer_runs(SMART, epochs=2), "forgetful": transfer_runs("forgetful")}
    out: dict = {"runs": runs}
    for kind, run in runs.items():
        report = reported(kind, run)
        out[f"report-{kind}"] = report
        model = f"scripted/{SMART if kind == 'smart' else kind}"
        out[kind] = json.loads((report / "summary.json").read_text())["transfer"][model]["demo"]
    return out


def by_position(entries: list[dict], key: str) -> list:
    return [e[key] for e in entries]


def test_a_smart_assistant_gains_what_the_plant_gives_it(planted):
    t = planted["smart"]
    assert by_position(t["discovery"], "normalign") == pytest.approx([60.0, 50.0, 40.0])
    assert by_position(t["carry_transcript"], "normalign") == pytest.approx([60.0, 100.0, 30.0])
    assert by_position(t["carry_notes"], "normalign") == pytest.approx([60.0, 100.0, 70.0])
    assert by_position(t["carry_notes"], "pref_align") == pytest.approx([3.4, 5.0, 3.8])  # 1 + 4 W
    assert all(e["n"] == N_SESSIONS and e["normalign_n"] == N_SESSIONS for arm in GAINS for e in t[arm])
    for arm, gains in GAINS.items():
        gain = t["transfer_gain"][arm]
        assert [g["gain"] for g in gain["by_position"]] == pytest.approx(gains)
        assert gain["mean_gain"] == pytest.approx({"carry_transcript": 20.0, "carry_notes": 40.0}[arm])
        assert gain["slope"] == pytest.approx({"carry_transcript": -5.0, "carry_notes": 15.0}[arm])
        # every session is the same, so every resample gives the same slope
        assert gain["slope_ci"] == pytest.approx([gain["slope"]] * 2) and gain["n_sessions"] == N_SESSIONS
    # questions: one per dialogue, but none at the transcript's third problem
    assert by_position(t["carry_transcript"], "n_questions") == [1.0, 1.0, 0.0]
    assert by_position(t["carry_transcript"], "questions_saved") == [0.0, 0.0, 1.0]
    assert by_position(t["carry_notes"], "questions_saved") == [0.0, 0.0, 0.0]
    assert by_position(t["discovery"], "questions_saved") == [None, None, None]
    # re-ask: never measured at position 1 (nothing revealed before), nor where nothing was asked
    assert by_position(t["discovery"], "reask_rate") == [None, 1.0, 1.0]
    assert by_position(t["carry_transcript"], "reask_rate") == [None, 0.0, None]
    assert by_position(t["carry_notes"], "reask_rate") == [None, 0.0, 1.0]
    assert by_position(t["carry_notes"], "reask_n") == [0, N_SESSIONS, N_SESSIONS]
    # elicited weight: what the targeted user revealed (the transcript's third problem asked nothing)
    assert by_position(t["carry_transcript"], "elicited_weight") == pytest.approx([0.6, 0.5, 0.0])
    # stale application on D at position 3 (carry − cold criterion score)
    stale = t["stale_application"]
    assert stale["carry_transcript"]["stale"] == pytest.approx(-4.0) and stale["carry_transcript"]["n"] == N_SESSIONS
    assert stale["carry_notes"]["stale"] == 0.0
    assert [p["position"] for p in stale["carry_transcript"]["by_position"]] == [3]
    # recurring vs new: position 2 recurring D, new V; position 3 recurring A (.3) and V (.3), changed D
    labels = {arm: {e["position"]: e for e in entries} for arm, entries in t["by_label"].items()}
    assert (labels["discovery"][2]["recurring"], labels["discovery"][2]["new"]) == (5.0, 1.0)
    assert (labels["carry_transcript"][2]["recurring"], labels["carry_transcript"][2]["new"]) == (5.0, 5.0)
    assert labels["discovery"][3]["recurring"] == 1.0 and labels["carry_notes"][3]["recurring"] == 3.0
    assert labels["carry_transcript"][3]["changed"] == 1.0 and labels["discovery"][3]["changed"] == 5.0
    assert labels["discovery"][1]["recurring"] is None and labels["discovery"][1]["new"] == pytest.approx(3.4)


def test_a_forgetful_assistant_gains_exactly_nothing(planted):
    t = planted["forgetful"]
    for arm in GAINS:
        assert by_position(t[arm], "normalign") == pytest.approx(by_position(t["discovery"], "normalign"))
        gain = t["transfer_gain"][arm]
        assert [g["gain"] for g in gain["by_position"]] == [0.0, 0.0, 0.0]
        assert gain["slope"] == 0.0 and gain["mean_gain"] == 0.0
        assert by_position(t[arm], "reask_rate") == [None, 1.0, 1.0]  # it asks D again every time
        assert t["stale_application"][arm]["stale"] == 0.0
        assert by_position(t[arm], "questions_saved") == [0.0, 0.0, 0.0]


def test_the_report_reads_the_plant_in_one_line_each_and_writes_its_tables(planted):
    readings = {
        kind: json.loads((planted[f"report-{kind}"] / "summary.json").read_text())["transfer_readings"]
        for kind in ("smart", "forgetful")
    }
    smart = {r["instrument"].split(" (")[0]: r for r in readings["smart"]}
    forgetful = {r["instrument"].split(" (")[0]: r for r in readings["forgetful"]}
    assert "carry_transcript: +20.0 points after position 1, slope -5.0" in smart["Transfer gain"]["finding"]
    assert smart["Transfer gain"]["reading"].startswith("every carry arm reaches a higher NormAlign")
    assert forgetful["Transfer gain"]["reading"].startswith("no carry arm gains anything")
    questions = smart["Questions saved and re-ask rate"]
    assert "discovery re-asks 1.00, carry_transcript re-asks 0.00, 0.50 saved" in questions["finding"]
    assert questions["reading"].startswith("the carry arms ask again less often than the cold arm")
    assert forgetful["Questions saved and re-ask rate"]["reading"].startswith("the carry arms ask again exactly as")
    assert "carry_transcript: -4.00" in smart["Stale application"]["finding"]
    assert forgetful["Stale application"]["reading"].startswith("zero")
    report = planted["report-smart"]
    positions = pd.read_csv(report / "table_transfer_positions.csv")
    assert len(positions) == 3 * 3 and set(positions["arm"]) == {"discovery", "carry_transcript", "carry_notes"}
    assert {"table_transfer_gain.csv", "table_transfer_labels.csv", "table_transfer_stale.csv"} <= {
        p.name for p in report.iterdir()
    }
    markdown = (report / "report.md").read_text()
    assert "## Transfer" in markdown and "(fig_transfer_normalign.png)" in markdown
    assert "(fig_transfer_questions.png)" in markdown and "(fig_transfer_labels.png)" in markdown
    html = (report / "report.html").read_text()
    assert 'id="transfer"' in html and '<a href="#transfer">Transfer</a>' in html


def test_without_a_user_that_records_what_it_revealed_the_reask_rate_is_not_measured(transfer_runs, tmp_path):
    """The passive user does not say what it revealed: the re-ask rate is null at every position, never 0, and the
    reading says how to measure it."""
    run = transfer_runs(SMART, user_type="passive")
    report, _ = make_report(run, tmp_path / "report-passive", n_boot=0, figures=False)
    t = report.summary["transfer"][f"scripted/{SMART}"]["demo"]
    for arm in ("discovery", "carry_transcript", "carry_notes"):
        assert by_position(t[arm], "reask_rate") == [None, None, None]
        assert by_position(t[arm], "reask_n") == [0, 0, 0]
    [line] = [r for r in report.summary["transfer_readings"] if r["instrument"].startswith("Questions")]
    assert "re-ask rate not measured (no reply records what it revealed)" in line["reading"]


def test_the_gain_is_the_difference_of_the_normaligns_printed_beside_it_with_a_row_missing(transfer_runs, tmp_path):
    """Issue 31, defect 3: the forgetful run's results with one cold row gone (session 1, position 2) and that
    scenario's carry_transcript PrefAlign raised to 5 (NormAlign 100; every other scenario there is at 50). Each
    arm's NormAlign at a position and the gain are over the same compared scenarios (the other three), so carry
    NormAlign 50 − cold 50 = gain 0 exactly; before, carry_transcript's NormAlign kept the changed scenario (62.5)
    beside cold 50 and a gain of 0."""
    from prefdisco.analysis.stats.trials import average_trials
    from prefdisco.analysis.transfer.measures import gain_tables, position_table
    from prefdisco.results.table import read_table, validate_results

    results = pd.read_csv(transfer_runs("forgetful") / "results.csv")
    first = sorted(results["session_id"].dropna().unique())[0]
    at = (results["session_id"] == first) & (results["position"] == 2)
    assert set(results.loc[at, "pref_align"].round(9)) == {1.0, 3.0, 5.0}  # baseline, every arm (W .5), oracle
    results = results.loc[~(at & (results["mode"] == "discovery"))]
    results.loc[at & (results["mode"] == "carry_transcript"), "pref_align"] = 5.0
    path = tmp_path / "results.csv"
    results.to_csv(path, index=False)
    rows = average_trials(validate_results(read_table(path), str(path)))

    positions = position_table(rows, None, seed=0, n_boot=0).set_index(["arm", "position"])
    gains = gain_tables(rows, seed=0, n_boot=0)[0].set_index(["arm", "position"])
    assert positions.loc[("carry_transcript", 2), ["normalign", "normalign_n"]].tolist() == [50.0, N_SESSIONS - 1]
    assert positions.loc[("discovery", 2), ["normalign", "normalign_n"]].tolist() == [50.0, N_SESSIONS - 1]
    for (arm, position), gain in gains.iterrows():
        carry, cold = positions.loc[(arm, position)], positions.loc[("discovery", position)]
        assert gain["gain"] == pytest.approx(carry["normalign"] - cold["normalign"], abs=1e-9), (arm, position)
        assert gain["gain_n"] == carry["normalign_n"] == cold["normalign_n"], (arm, position)


def test_only_a_sessions_run_has_a_transfer_section(planted, tmp_path):
    """A run without sessions (the same rows without session_id / position) has no Transfer section, tables or
    key."""
    run = planted["runs"]["forgetful"]
    results = pd.read_csv(run / "results.csv")
    plain = results.loc[results["mode"].isin(["baseline", "discovery", "oracle"])].drop(
        columns=["session_id", "position"]
    )
    plain.to_csv(tmp_path / "results.csv", index=False)
    report, written = make_report(tmp_path / "results.csv", tmp_path / "report", n_boot=0)
    assert "transfer" not in report.summary and "transfer_readings" not in report.summary
    assert report.part("transfer") is None
    assert not any("transfer" in p.name for p in written)
    assert 'id="transfer"' not in (tmp_path / "report" / "report.html").read_text()
    # ... and with its sessions, the same folder's report has one
    sessions, _ = make_report(run, tmp_path / "sessions", n_boot=0, figures=False)
    assert sessions.part("transfer") is not None and "transfer" in sessions.summary


def test_a_sessions_run_without_a_carry_arm_says_what_it_cannot_measure(planted, tmp_path):
    """The forgetful run's cold and per-scenario rows only (as a run with --modes baseline,discovery,oracle): the
    cold arm's numbers by position stay, and the gain and stale readings name the arm that is missing."""
    run = planted["runs"]["forgetful"]
    for name in ("results.csv", "attributes.csv"):
        table = pd.read_csv(run / name)
        table.loc[table["mode"].isin(["baseline", "discovery", "oracle"])].to_csv(tmp_path / name, index=False)
    report, written = make_report(tmp_path / "results.csv", tmp_path / "report", n_boot=0)
    t = report.summary["transfer"]["scripted/forgetful"]["demo"]
    assert set(t) == {"discovery", "transfer_gain", "by_label", "stale_application"}
    assert by_position(t["discovery"], "normalign") == pytest.approx([60.0, 50.0, 40.0])
    assert t["transfer_gain"] == {} and t["stale_application"] == {}
    readings = {r["instrument"].split(" (")[0]: r for r in report.summary["transfer_readings"]}
    assert readings["Transfer gain"]["finding"] == "no carry arm run"
    assert readings["Stale application"]["finding"] == (
        "changed attributes were scored, but not in both the cold arm and a carry arm"
    )
    assert "table_transfer_gain.csv" not in {p.name for p in written}
