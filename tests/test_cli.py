"""The spine's bad-input contract: one line naming the problem, a non-zero exit, nothing written."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from prefdisco.demo import demo_scenarios


def write_scenario(path, edit):
    data = json.loads(demo_scenarios()[0].model_dump_json())
    edit(data)
    path.write_text(json.dumps(data) + "\n")
    return path


def drop_weight(data):
    data["profile"]["items"][0]["weight"] = round(data["profile"]["items"][0]["weight"] - 0.3, 6)


def drop_level(data):
    del data["rubric"][0]["levels"]["4"]


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "prefdisco", *args], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize(
    ("edit", "model", "expected"),
    [
        (drop_weight, "prefdisco/smollm2", "profile weights must sum to 1, got 0.7"),
        (drop_level, "prefdisco/smollm2", "rubric levels must describe every score 1..5; missing [4]"),
        (lambda d: None, "nosuch/model", "model 'nosuch/model' cannot be used"),
    ],
    ids=["weights-0.7", "missing-level", "unknown-model"],
)
def test_bad_input_gives_one_line_and_nonzero_exit(tmp_path, edit, model, expected):
    scenarios = write_scenario(tmp_path / "scenarios.jsonl", edit)
    log_dir = tmp_path / "run"
    result = run_cli("eval", str(scenarios), "--model", model, "--log-dir", str(log_dir))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and expected in lines[0]
    if edit is not None and model.startswith("prefdisco"):
        assert "scenarios.jsonl:1" in lines[0]
    assert "Traceback" not in result.stderr
    assert not log_dir.exists()
