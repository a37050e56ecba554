"""The plan's differential test (issue 31): for every condition under every preset, ask channel and pushback, the
dry run (``evaluation/estimate/plan.py``, which plans each dialogue from ``dialogue/plan.py`` without a call) counts the
calls per role that the real run then makes on the mock. The mock asks the whole question budget, so every dialogue's
length is known before it is played and the plan must be exact. The carry arms are the sessions test's
(``test_eval_dry_run.py``, with and without pushback); that every driver (the solvers, the RL episode, verl,
verifiers, OpenEnv, the engine by hand) plays the same turns as ``eval`` is ``test_engine.py``'s cross-driver test.
"""

from __future__ import annotations

import pytest

from mock_openai import MockConfig, MockOpenAI, tagged_scenarios, write_scenarios
from test_reliability import app, mock_env, run_eval  # noqa: F401  (app is a fixture)

CONDITIONS = "baseline,discovery,oracle,wrong_persona,oracle_distractor,stated_belief"
SETTINGS = [
    pytest.param(preset, ask, pushback, id=f"{preset}-{ask}-pushback{pushback}")
    for preset, ask in (("default", "text"), ("default", "tools"), ("paper", "text"))
    for pushback in (0, 1)
]


def planned_by_model(output: str) -> dict[str, int]:
    """The dry run's calls per model (its table: role, part, model, calls, ...)."""
    out: dict[str, int] = {}
    for line in output.splitlines()[2:]:
        cells = line.split()
        if cells and cells[0] in ("assistant", "user", "grader"):
            out[cells[2]] = out.get(cells[2], 0) + int(cells[3])
    return out


@pytest.mark.slow
@pytest.mark.parametrize(("preset", "ask", "pushback"), SETTINGS)
def test_the_dry_run_counts_every_call_the_run_makes_per_role(app, tmp_path, monkeypatch, preset, ask, pushback):  # noqa: F811
    """Each role its own model name on the one mock (the assistant m, the simulated user u, the judge j: the judge's
    calls include the audit, the quality judge and the correctness grader), so the mock counts each role's calls
    by the name it was asked under, whatever the prompt looks like."""
    bench = write_scenarios(tmp_path / "scenarios.jsonl", tagged_scenarios(2))
    command = ("--modes", CONDITIONS, "--fixed-k", "2", "--preset", preset, "--ask", ask, "--pushback", str(pushback))
    run = tmp_path / "run"
    with MockOpenAI(MockConfig(questions=5)) as mock:
        mock_env(monkeypatch, mock, tmp_path)
        roles = {role: f"openai-api/mock/{role[0]}{mock.port}" for role in ("user", "judge")}
        command += ("--user-model", roles["user"], "--judge-model", roles["judge"])
        dry = run_eval(app, mock, bench, run, *command, "--dry-run")
        assert dry.exit_code == 0, dry.output
        assert mock.stats()["received"] == 0 and not run.exists()
        real = run_eval(app, mock, bench, run, *command)
        made = mock.stats()
    assert real.exit_code == 0, real.output
    names = {name.removeprefix("openai-api/mock/"): name for name in (*roles.values(), f"openai-api/mock/m{mock.port}")}
    by_model = {names.get(name, name): n for name, n in made["by_model"].items()}
    assert planned_by_model(dry.output) == by_model
    assert int(dry.output.splitlines()[0].removesuffix(" model calls")) == made["completions"]
    assert set(by_model) == set(names.values())  # every role made calls: dialogues were played, not only answers
