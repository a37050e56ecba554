"""A call the run's own cache answers keeps its tokens in its sample (evaluation/running/cached_usage.py).

A run whose samples are all replayed from its cache (its logs lost, as after a kill before any task log was
written) must give every sample the tokens and cost of the run that made the calls. Before the fix inspect counted a
cache hit nowhere, so the replayed run's rows said 0 tokens for every cached call: its assistant, user and grader
token columns were 0 where the first run's were not, and the report's cost per scenario fell with every resume.
"""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from mock_openai import MockConfig, MockOpenAI, mock_env, tagged_scenarios, write_scenarios
from test_reliability import app, run_eval  # noqa: F401 (app: a fixture)

pytestmark = pytest.mark.xdist_group("test_reliability")

TOKENS = [
    "input_tokens",
    "output_tokens",
    "user_input_tokens",
    "user_output_tokens",
    "grader_input_tokens",
    "grader_output_tokens",
]
KEY = ["scenario_id", "mode"]


def _tokens(run) -> pd.DataFrame:
    table = pd.read_csv(run / "results.csv")
    return table[KEY + TOKENS].sort_values(KEY).reset_index(drop=True)


def test_a_run_replayed_from_its_cache_keeps_every_calls_tokens(app, tmp_path, monkeypatch):  # noqa: F811
    bench = write_scenarios(tmp_path / "scenarios.jsonl", tagged_scenarios(2))
    with MockOpenAI(MockConfig(seed=5)) as mock:
        mock_env(monkeypatch, mock, tmp_path)
        first = run_eval(app, mock, bench, tmp_path / "run", "--modes", "baseline,discovery")
        assert first.exit_code == 0, first.output
        made = mock.stats()["completions"]
        # the same run folder with its logs and rows gone: the run (run.json, its cache) is the same one
        replay = tmp_path / "replay"
        shutil.copytree(tmp_path / "run", replay, ignore=shutil.ignore_patterns("*.eval", "rows", "results.*"))
        mock.reset()
        again = run_eval(app, mock, bench, replay, "--modes", "baseline,discovery")
        assert again.exit_code == 0, again.output
        assert mock.stats()["received"] == 0  # every call answered from the run's cache
    before, after = _tokens(tmp_path / "run"), _tokens(replay)
    assert made > 0 and (before[TOKENS].to_numpy() > 0).any(axis=0)[[0, 1, 4, 5]].all()
    assert (before.loc[before["mode"] == "discovery", ["user_input_tokens", "user_output_tokens"]] > 0).all().all()
    pd.testing.assert_frame_equal(after, before)
