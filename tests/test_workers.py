"""`prefdisco eval --workers N`: the scenarios split over N processes with their own log folders, merged."""

from __future__ import annotations

import pandas as pd
import pytest

from mock_openai import MockOpenAI, tagged_scenarios, write_scenarios
from prefdisco.evaluation.scaleout.workers import shards
from test_reliability import app, mock_env, run_eval  # noqa: F401  (app is a fixture)


def test_shards_are_round_robin_and_drop_empty_parts():
    scenarios = tagged_scenarios(5)
    parts = shards(scenarios, 3)
    assert [[s.id for s in p] for p in parts] == [
        [scenarios[i].id for i in (0, 3)],
        [scenarios[i].id for i in (1, 4)],
        [scenarios[2].id],
    ]
    assert len(shards(scenarios[:1], 4)) == 1


@pytest.mark.slow
def test_two_workers_give_the_single_process_table_and_resume_without_calls(app, tmp_path, monkeypatch):  # noqa: F811
    scenarios = tagged_scenarios(6)
    bench = write_scenarios(tmp_path / "scenarios.jsonl", scenarios)
    with MockOpenAI() as mock:
        mock_env(monkeypatch, mock, tmp_path)
        one = run_eval(app, mock, bench, tmp_path / "one", "--max-connections", "8")
        assert one.exit_code == 0, one.output
        single_calls = mock.stats()["completions"]
        two = run_eval(app, mock, bench, tmp_path / "two", "--workers", "2", "--max-connections", "8")
        assert two.exit_code == 0, two.output
        split_calls = mock.stats()["completions"] - single_calls
        again = run_eval(app, mock, bench, tmp_path / "two", "--workers", "2", "--max-connections", "8")
        assert again.exit_code == 0, again.output
        rerun_calls = mock.stats()["completions"] - single_calls - split_calls
        other = run_eval(app, mock, bench, tmp_path / "two", "--workers", "3")
        mixed = run_eval(app, mock, bench, tmp_path / "one", "--workers", "2")

    assert split_calls == single_calls  # the same work, just spread over two processes
    assert rerun_calls == 0
    assert sorted(p.name for p in (tmp_path / "two").iterdir() if p.is_dir()) == ["worker-1", "worker-2"]
    cols = ["scenario_id", "mode", "pref_align", "correct", "n_questions", "failed"]
    a = pd.read_csv(tmp_path / "one" / "results.csv")[cols].sort_values(["scenario_id", "mode"])
    b = pd.read_csv(tmp_path / "two" / "results.csv")[cols].sort_values(["scenario_id", "mode"])
    assert len(b) == 3 * len(scenarios) and not b.duplicated(["scenario_id", "mode"]).any()
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))
    # another worker count, or a split into a single-process folder, is refused (one line, exit 2)
    assert other.exit_code == 2 and "split over 2 worker(s)" in other.output
    assert mixed.exit_code == 2 and "single-process run" in mixed.output
