"""The README's comparison of two models runs as written (issue 49, finding 3). Before, the README's recipe ran each
model with ``eval … --model M`` alone, so the simulated user and the judge defaulted to the model under test and
``leaderboard`` refused the two runs as "different protocols". The README's own lines are read here, their
placeholders (M, N the models; U the simulated user; J the judge; ``bench/math500`` the benchmark) given models of
the mock server, and run in that order from an empty folder.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

import prefdisco.cli as cli
from mock_openai import MockOpenAI, mock_env, tagged_scenarios, write_scenarios
from test_readme_runs import readme_commands

pytestmark = pytest.mark.slow  # four runs of six tasks each and two leaderboards: about 30 s


def recipe() -> tuple[list[str], str]:
    """The README's two ``eval`` lines of one benchmark into ``runs/m`` and ``runs/n``, and its ``leaderboard`` line."""
    commands = readme_commands()
    evals = [c for c in commands if c.startswith(".venv/bin/prefdisco eval bench/math500 ") and "--log-dir runs/" in c]
    evals = [c for c in evals if "--log-dir runs/m " in c + " " or "--log-dir runs/n " in c + " "]
    board = [c for c in commands if c.startswith(".venv/bin/prefdisco leaderboard runs/")]
    assert len(evals) == 2 and len(board) == 1, (evals, board)
    return evals, board[0]


def submitted() -> list[str]:
    """The README's "Submit a result" lines: ``submit`` of the two runs, and the board of their submissions."""
    commands = readme_commands()
    lines = [c for c in commands if c.startswith(".venv/bin/prefdisco submit runs/")]
    lines += [c for c in commands if c.startswith(".venv/bin/prefdisco leaderboard --submissions ")]
    assert len(lines) == 2, lines
    return lines


def run_as_written(commands: list[str], names: dict[str, str]) -> list[tuple[str, int, str]]:
    """Each command, its placeholders named, in the current folder: (command, exit code, output)."""
    cli._register()
    done = []
    for command in commands:
        argv = [names.get(arg, arg) for arg in shlex.split(command)[1:]]
        result = CliRunner().invoke(cli.app, argv)
        done.append((command, result.exit_code, result.output))
    return done


def test_the_readmes_two_models_and_leaderboard_run_as_written(tmp_path: Path, monkeypatch) -> None:
    evals, board = recipe()
    monkeypatch.chdir(tmp_path)
    write_scenarios(Path("bench/math500/scenarios.jsonl"), tagged_scenarios(2))
    with MockOpenAI() as mock:
        mock_env(monkeypatch, mock, tmp_path)
        names = {
            k: f"openai-api/mock/{v}{mock.port}" for k, v in dict(M="alpha", N="beta", U="user", J="judge").items()
        }
        for command, code, output in run_as_written([*evals, board], names):
            assert code == 0, (command, output[-3000:])
        assert (tmp_path / "board").is_dir()
        # the README's "Submit a result": a submission per model, and their board ranks as the board of the runs
        ranked = (tmp_path / "board" / "leaderboard.csv").read_bytes()
        for command, code, output in run_as_written(submitted(), names):
            assert code == 0, (command, output[-3000:])
        assert len(list((tmp_path / "submissions").glob("*.json"))) == 2
        assert (tmp_path / "board-sub" / "leaderboard.csv").read_bytes() == ranked

        # the same two runs without the fixed user and judge: each model met its own, and the refusal says so
        alone = [c.replace(" --user-model U --judge-model J", "") for c in evals]
        alone = [c.replace("runs/", "alone/") for c in alone]
        refused = run_as_written(
            [*alone, board.replace("runs/", "alone/").replace("--out board", "--out board2")], names
        )
    assert [code for _, code, _ in refused] == [0, 0, 2]
    said = " ".join(refused[-1][2].split())
    assert "ran different protocols (user_model" in said
    assert "run each model with the same --user-model and --judge-model to compare them" in said
