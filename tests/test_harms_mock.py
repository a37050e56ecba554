"""Every harm probe on the fault-injecting mock server (``tests/mock_openai.py``, as ``tests/test_reliability.py``
runs it) end to end: ``prefdisco eval --modes baseline,discovery,oracle,oracle_distractor,stated_belief --pushback
2`` with 429s, 500s and one rejected scenario, resumed, then ``prefdisco report`` (issue 23's "done means")."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

import prefdisco.cli as cli
from harms_world import MODES, PERSONALIZED
from mock_openai import MockConfig, MockOpenAI, tagged_scenarios, write_scenarios
from prefdisco.dialogue.wrong_answers import wrong_answer, wrong_answer_key
from prefdisco.seeds import seed_scope
from test_harms import values
from test_reliability import mock_env, run_eval


@pytest.mark.slow
def test_every_probe_on_the_fault_mock_resumes_without_repeating_a_call_and_reports_its_harms(tmp_path, monkeypatch):
    """``--modes baseline,discovery,oracle,oracle_distractor,stated_belief --pushback 2`` against the faulty mock
    (429s, 500s, one scenario rejected): the rejected scenario's rows fail, the rerun repeats no finished call, and
    ``prefdisco report`` has the Harms section and ``summary.json``'s ``harms``. The mock answers B to everything,
    pushback included, so nothing breaks, nothing is repaired and nothing flips; it agrees with the stated belief
    exactly where the person's wrong answer is B."""
    cli._register()
    cases = tagged_scenarios(5)
    bench = write_scenarios(tmp_path / "scenarios.jsonl", cases)
    run, out = tmp_path / "run", tmp_path / "report"
    probes = ("--modes", ",".join(MODES), "--pushback", "2")
    faults = MockConfig(rate_429=0.1, retry_after_s=0.2, rate_500=0.05, seed=11, reject_case="c0002")
    with MockOpenAI(faults) as mock:
        mock_env(monkeypatch, mock, tmp_path)
        first = run_eval(cli.app, mock, bench, run, *probes)
        assert first.exit_code == 2, first.output
        assert mock.stats()["fault_429"] > 0 and mock.stats()["fault_500"] > 0
        failed = pd.read_csv(run / "results.csv").query("failed == 1")
        assert sorted(failed["scenario_id"]) == ["c0002"] * len(MODES)
        mock.config.reject_case = None  # the provider recovers
        mock.reset()
        second = run_eval(cli.app, mock, bench, run, *probes)
        assert second.exit_code == 0, second.output
        assert {key.split("|")[0] for key in mock.stats()["by_case"]} == {"c0002"}  # no finished call repeated
    results = pd.read_csv(run / "results.csv")
    assert len(results) == len(cases) * len(MODES) and (results["failed"] == 0).all()
    assert results["pushback_target"].notna().all() and results["correct_after_pushback"].notna().all()

    report = CliRunner().invoke(cli.app, ["report", str(run), "--out", str(out), "--bootstrap", "200"])
    assert report.exit_code == 0, report.output
    [model], [task] = results["model"].unique(), results["task"].unique()
    cell = json.loads((out / "summary.json").read_text())["harms"][model][task]
    assert values(cell["breakage"]) == values(cell["repair"]) == dict.fromkeys(PERSONALIZED, 0.0)
    assert all(e["n"] == len(cases) and e["ci_low"] == e["ci_high"] == 0.0 for e in cell["breakage"].values())
    # c0000 and c0004 (gold B) are right in every condition, and stay right
    assert values(cell["flip_rate"]) == dict.fromkeys(MODES, 0.0)
    assert all(e["n_scenarios"] == 2 for e in cell["flip_rate"].values())
    agreeing = [c.id for c in cases if wrong_answer(c.problem, wrong_answer_key(seed_scope(0), c.id)) == "B"]
    assert cell["belief_agreement"]["agreement"]["value"] == pytest.approx(len(agreeing) / len(cases))
    assert set(cell["distractor_drop"]) == {"pref_align", "accuracy"}
    assert cell["distractor_drop"]["accuracy"]["value"] == 0.0
    if "quality" in results.columns and results["quality"].notna().any():  # the general quality judge was on
        assert set(cell["quality_drop"]) == set(PERSONALIZED)
    assert '<h2 id="harms">Harms</h2>' in (out / "report.html").read_text()
    assert (out / "fig_harms_flip.png").stat().st_size > 0 and (out / "table_harms.csv").is_file()
