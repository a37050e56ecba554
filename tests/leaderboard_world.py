"""The leaderboard's planted world (``tests/test_leaderboard.py``): four ``prefdisco eval`` runs on the mock OpenAI
server, built once per test session (``conftest.leaderboard_runs``).

Runs ``good``, ``fair`` and ``poor`` (one model each) on 8 scenarios of two tasks (alpha, beta: 4 each, the fewest a
pairwise test takes) on the default protocol; ``late``: the model good again, with the simulated user at
temperature 1.0 (another ask), on the first 4 scenarios. The judge (``planted``): baseline 1 and oracle 5 on
every criterion for every model; in discovery ``good`` scores 5 (NormAlign 100 on every scenario), the others 1-3
from the transcript's hash (NormAlign at most 50 per scenario, about 25 on average) — so good is better than fair and
poor on every scenario and every resample, whatever the number of scenarios, and fair and poor score alike on every
criterion (the hash leaves the model's name and the mock's port out): their difference is 0 on every resample.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mock_openai import MockOpenAI, mock_env, tagged_scenarios, write_scenarios

N_SCENARIOS = 8
RUNS = (
    ("good", "good", ()),
    ("fair", "fair", ()),
    ("poor", "poor", ()),
    ("late", "good", ("--user-temperature", "1.0", "--limit", "4")),
)
"""(run folder, model, extra flags). ``late`` is only read for its protocol: 4 scenarios are enough."""


def planted(model: str, mode: str | None, h: int) -> int | None:
    """The judge's score per criterion (module docstring). The hash leaves the model's name (and the mock's port in
    it) out, so fair and poor score alike on every criterion: their difference is 0 on every resample, p = 1, and
    they share a group on every run (the hash once held the port, and on some ports fair and poor drew scores far
    enough apart to split)."""
    if mode == "baseline":
        return 1
    if mode == "oracle":
        return 5
    if mode == "discovery":
        return 5 if model.startswith("good") else 1 + h % 3
    return None


def build(folder: Path) -> Path:
    """The four runs in ``folder`` and ``port.json`` (the mock's port, part of every model's name); returns
    ``folder``."""
    import prefdisco.cli as cli

    cli._register()
    scenarios = [
        s.model_copy(update={"problem": s.problem.model_copy(update={"benchmark": "alpha" if i % 2 else "beta"})})
        for i, s in enumerate(tagged_scenarios(N_SCENARIOS))
    ]
    bench = write_scenarios(folder / "scenarios.jsonl", scenarios)
    monkeypatch = pytest.MonkeyPatch()
    try:
        with MockOpenAI(scores=planted) as mock:
            mock_env(monkeypatch, mock, folder)
            roles = ["--user-model", f"openai-api/mock/m{mock.port}", "--judge-model", f"openai-api/mock/m{mock.port}"]
            common = ["--modes", "baseline,discovery,oracle", "--no-quality", "--display", "none", *roles]
            for name, model, extra in RUNS:
                full = f"openai-api/mock/{model}{mock.port}"
                args = ["eval", str(bench), "--model", full, "--log-dir", str(folder / name), *common, *extra]
                out = CliRunner().invoke(cli.app, args)
                assert out.exit_code == 0, out.output
            (folder / "port.json").write_text(json.dumps({"port": mock.port}))
    finally:
        monkeypatch.undo()
    return folder
