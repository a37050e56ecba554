"""A run's estimate (estimate.json) is planned once: a rerun of the same run reads it back, another run plans anew."""

from __future__ import annotations

import json

import pytest

from mock_openai import tagged_scenarios
from prefdisco.evaluation.estimate import recorded
from prefdisco.evaluation.estimate.recorded import ESTIMATE_FILE, run_estimate
from prefdisco.evaluation.settings.config import RunConfig

MODEL = "openai-api/mock/m"


def _config(tmp_path, **settings) -> RunConfig:
    return RunConfig(models=[MODEL], user_model=MODEL, grader_model=MODEL, log_dir=tmp_path, **settings)


def test_a_rerun_reads_the_estimate_back_and_another_run_plans_again(tmp_path, monkeypatch):
    scenarios = tagged_scenarios(3)
    first = run_estimate(tmp_path, scenarios, _config(tmp_path))
    written = json.loads((tmp_path / ESTIMATE_FILE).read_text())
    assert written["made_for"] == first.made_for and first.calls > 0

    planned: list[int] = []
    real = recorded.estimate_run

    def counting(scenarios, config):
        planned.append(len(scenarios))
        return real(scenarios, config)

    monkeypatch.setattr(recorded, "estimate_run", counting)
    again = run_estimate(tmp_path, scenarios, _config(tmp_path, max_connections=99))  # a free setting
    assert planned == [] and again == first
    # another scenario set, another result setting, other prices: planned again, and recorded for the new run
    fewer = run_estimate(tmp_path, scenarios[:2], _config(tmp_path))
    assert fewer.calls < first.calls
    run_estimate(tmp_path, scenarios, _config(tmp_path, max_questions=2))
    priced = run_estimate(tmp_path, scenarios, _config(tmp_path, prices={MODEL: {"input": 1.0, "output": 2.0}}))
    assert planned == [2, 3, 3] and priced.priced
    assert json.loads((tmp_path / ESTIMATE_FILE).read_text())["made_for"] == priced.made_for


@pytest.mark.parametrize("damaged", ["{not json", '{"lines": "?"}'])
def test_a_damaged_estimate_file_is_planned_again(tmp_path, damaged):
    (tmp_path / ESTIMATE_FILE).write_text(damaged)
    estimate = run_estimate(tmp_path, tagged_scenarios(2), _config(tmp_path))
    assert estimate.calls > 0 and json.loads((tmp_path / ESTIMATE_FILE).read_text())["made_for"] == estimate.made_for
