"""A large single-process run cut into blocks run one after another (evaluation/scaleout/blocks.py): the same
table as one eval-set, a resume that repeats no finished call, and a refused change of the cut."""

from __future__ import annotations

import json
from collections import Counter

import pandas as pd
import pytest

from mock_openai import MockConfig, MockOpenAI, tagged_scenarios, write_scenarios
from prefdisco.evaluation.scaleout import blocks
from prefdisco.evaluation.scaleout.blocks import block_plan
from prefdisco.evaluation.settings.config import RunConfig
from test_reliability import app, mock_env, run_eval  # noqa: F401  (app is a fixture)

COLUMNS = ["scenario_id", "mode", "pref_align", "correct", "n_questions", "failed", "input_tokens", "assistant_seed"]
FLAGS = ("--max-connections", "8", "--retry-attempts", "0")  # a rejected sample fails at once (no retry after 5 s)


def _table(run) -> pd.DataFrame:
    return pd.read_csv(run / "results.csv")[COLUMNS].sort_values(["scenario_id", "mode"]).reset_index(drop=True)


def _completions(mock: MockOpenAI) -> Counter[str]:
    """The mock's answered calls by scenario and condition (``case|mode``)."""
    return Counter(mock.stats()["by_case"])


def test_the_plan_cuts_by_scenario_trials_round_robin(tmp_path, monkeypatch):
    monkeypatch.setattr(blocks, "SCENARIOS_PER_BLOCK", 4)
    scenarios = tagged_scenarios(9)
    plan = block_plan(scenarios, RunConfig(log_dir=tmp_path))
    assert [s.name for s in plan] == ["block-1of3", "block-2of3", "block-3of3"]
    assert [[s.id for s in shard.scenarios] for shard in plan] == [
        [scenarios[i].id for i in (0, 3, 6)],
        [scenarios[i].id for i in (1, 4, 7)],
        [scenarios[i].id for i in (2, 5, 8)],
    ]
    assert all(shard.config.log_dir == tmp_path / shard.name and not shard.config.write_tables for shard in plan)
    # trials, not scenarios: 3 scenarios × 2 epochs need two blocks of at most 4
    assert len(block_plan(scenarios[:3], RunConfig(log_dir=tmp_path, epochs=2))) == 2
    assert len(block_plan(scenarios[:4], RunConfig(log_dir=tmp_path))) == 1


@pytest.mark.slow
def test_blocks_give_the_one_eval_set_table_and_resume_without_repeating_a_call(app, tmp_path, monkeypatch):  # noqa: F811
    scenarios = tagged_scenarios(5)
    bench = write_scenarios(tmp_path / "scenarios.jsonl", scenarios)
    with MockOpenAI(MockConfig(seed=5)) as mock:
        mock_env(monkeypatch, mock, tmp_path)
        whole = run_eval(app, mock, bench, tmp_path / "one", *FLAGS)
        assert whole.exit_code == 0, whole.output
        reference = _completions(mock)
        mock.reset()

        monkeypatch.setattr(blocks, "SCENARIOS_PER_BLOCK", 2)  # 5 scenarios: blocks of 2, 2 and 1
        plan = block_plan(scenarios, RunConfig(log_dir=tmp_path / "cut"))
        failing = plan[1].scenarios[0].id  # the second block stops the run; the third never starts
        mock.config.reject_case, mock.config.reject_role = failing, "judge"
        first = run_eval(app, mock, bench, tmp_path / "cut", *FLAGS)
        before = _completions(mock)
        third_started = (tmp_path / "cut" / "block-3of3").exists()
        failed_rows = pd.read_csv(tmp_path / "cut" / "results.csv").query("failed == 1")
        mock.config.reject_case = mock.config.reject_role = None  # the provider recovers
        mock.reset()
        second = run_eval(app, mock, bench, tmp_path / "cut", *FLAGS)
        after = _completions(mock)
        mock.reset()
        again = run_eval(app, mock, bench, tmp_path / "cut", *FLAGS)
        rerun = mock.stats()["completions"]
        refused = run_eval(app, mock, bench, tmp_path / "cut", "--workers", "2")

    assert first.exit_code == 2 and "2 of 3 block(s) did not finish; first: block-2of3" in first.output
    assert not third_started
    assert set(failed_rows["scenario_id"]) == {failing}  # the tables of what finished, written before the error
    assert second.exit_code == 0, second.output
    # no finished block called again, and the calls of both runs together are the one eval-set's, case by case
    assert not {s.id for s in plan[0].scenarios} & {key.split("|")[0] for key in after}
    assert before + after == reference
    assert rerun == 0 and again.exit_code == 0
    assert sorted(p.name for p in (tmp_path / "cut").iterdir() if p.name.startswith("block-")) == [
        "block-1of3",
        "block-2of3",
        "block-3of3",
    ]
    split = json.loads((tmp_path / "cut" / "workers.json").read_text())
    assert split["blocks"] == ["block-1of3", "block-2of3", "block-3of3"]
    pd.testing.assert_frame_equal(_table(tmp_path / "one"), _table(tmp_path / "cut"))
    assert refused.exit_code == 2 and "cut into 3 block(s)" in refused.output
