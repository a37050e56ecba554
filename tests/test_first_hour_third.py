"""A researcher's first hour, third pass (issue 49): the smaller dead ends a new user met with the README only.
Every test here failed before its fix; the bad inputs among them are rows of ``tests/test_bad_inputs.py``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import prefdisco.cli as cli

REPO = Path(__file__).resolve().parents[1]


# ---- finding 11: help cut outside a terminal -------------------------------------------------------------------


def commands(group: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Every command below ``group`` (typer's own click) with its path of names."""
    found = [(path, group)]
    if hasattr(group, "commands"):
        for name, command in sorted(group.commands.items()):
            found += commands(command, (*path, name))
    return found


def test_help_piped_to_a_file_names_every_option_whole(capsys, monkeypatch) -> None:
    """Before: rich fitted help to 80 columns outside a terminal and cut 13 option names of ``build`` and 37 of
    ``eval`` (``--judge-max-cr…``). Now every option of every command is printed whole, as ``prefdisco`` itself
    prints it (``cli.main``) to a pipe."""
    import typer.rich_utils

    monkeypatch.delenv("TERMINAL_WIDTH", raising=False)
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(typer.rich_utils, "MAX_WIDTH", typer.rich_utils.MAX_WIDTH)  # main() sets it; undone after
    cli._register()
    cut = {}
    for path, command in commands(typer.main.get_command(cli.app)):
        with pytest.raises(SystemExit) as ended:
            cli.main([*path, "--help"])
        assert ended.value.code in (0, None)
        shown = capsys.readouterr().out
        names = [opt for param in command.params for opt in (*param.opts, *param.secondary_opts)]
        missing = [opt for opt in names if opt.startswith("-") and not re.search(rf"{re.escape(opt)}(?![\w-])", shown)]
        if missing or "…" in shown:
            cut[" ".join(path) or "prefdisco"] = missing or ["…"]
    assert len(commands(typer.main.get_command(cli.app))) > 30  # every command was looked at
    assert not cut, cut


# ---- findings 8 and 9: nonsense accepted in silence, wrong output --------------------------------------------


@pytest.fixture(scope="module")
def app():
    cli._register()
    return cli.app


def two_scenarios(tmp_path: Path) -> Path:
    from prefdisco.demo import demo_scenarios

    path = tmp_path / "scenarios.jsonl"
    path.write_text("".join(s.model_dump_json() + "\n" for s in demo_scenarios()[:2]))
    return path


def test_a_limit_above_the_scenarios_given_says_all_of_them_run(app, tmp_path: Path) -> None:
    """Before: ``--limit 1000000`` with 14 scenarios said nothing. Now one note on stderr, and the plan is the 2."""
    from typer.testing import CliRunner

    args = ["eval", str(two_scenarios(tmp_path)), "--model", "openai-api/mock/m", "--log-dir", str(tmp_path / "run")]
    result = CliRunner().invoke(app, [*args, "--modes", "baseline", "--limit", "1000000", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert result.stderr.strip() == "note: --limit 1000000 is more than the 2 scenarios given: all 2 run"
    planned = CliRunner().invoke(app, [*args, "--modes", "baseline", "--dry-run"]).stdout
    assert result.stdout == planned  # the same plan as without a limit
    within = CliRunner().invoke(app, [*args, "--modes", "baseline", "--limit", "2", "--dry-run"])
    assert within.exit_code == 0 and within.stderr == ""


def test_the_dry_runs_total_is_unknown_when_no_model_has_a_price(app, tmp_path: Path) -> None:
    """Before: a dry run of models without a price totalled ``0.0000`` USD. Now ``unknown``; and with one model
    priced and one not, the priced part as a lower bound (``≥``): here the assistant at $2 / $8 per 1M tokens
    (the ``--prices`` file) and the simulated user and judge on a model of no price."""
    import json

    from typer.testing import CliRunner

    bench = two_scenarios(tmp_path)
    args = ["eval", str(bench), "--log-dir", str(tmp_path / "run"), "--modes", "baseline", "--dry-run"]
    unpriced = CliRunner().invoke(app, [*args, "--model", "openai-api/mock/m"])
    assert unpriced.exit_code == 0, unpriced.output
    total = next(line for line in unpriced.stdout.splitlines() if line.startswith("total"))
    assert total.split()[-1] == "unknown" and "0.0000" not in total

    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"openai-api/mock/priced": {"input": 2.0, "output": 8.0}}))
    roles = ["--user-model", "openai-api/mock/m", "--judge-model", "openai-api/mock/m", "--prices", str(prices)]
    some = CliRunner().invoke(app, [*args, "--model", "openai-api/mock/priced", *roles])
    assert some.exit_code == 0, some.output
    lines = some.stdout.splitlines()
    assistant = next(line for line in lines if line.startswith("assistant"))
    total = next(line for line in lines if line.startswith("total"))
    assert total.split()[-2:] == ["≥", assistant.split()[-1]]  # the one priced line, as a lower bound


def test_a_held_out_split_that_holds_nothing_out_is_refused(app, tmp_path: Path) -> None:
    """Before: ``policy fit --train-split 0.5`` on one problem fitted on it and held nothing out, silently (a family
    keeps at least one training problem). Now one line; ``--train-split 1.0`` still fits on all of it."""
    from typer.testing import CliRunner

    from prefdisco.demo import demo_scenarios

    one_problem = [s for s in demo_scenarios() if s.problem.id == demo_scenarios()[0].problem.id]
    bench = tmp_path / "one.jsonl"
    bench.write_text("".join(s.model_dump_json() + "\n" for s in one_problem))
    out = tmp_path / "policy.json"
    refused = CliRunner().invoke(app, ["policy", "fit", str(bench), "--out", str(out), "--train-split", "0.5"])
    lines = refused.stderr.strip().splitlines()
    assert refused.exit_code == 2 and len(lines) == 1, refused.output
    family = one_problem[0].problem.benchmark
    assert lines[0].startswith("error: --train-split 0.5: every problem would be fitted on and none held out")
    assert f"problems: {family} 1)" in lines[0]
    assert not out.exists()
    assert (
        CliRunner().invoke(app, ["policy", "fit", str(bench), "--out", str(out), "--train-split", "1.0"]).exit_code == 0
    )


# ---- finding 12: a licence file, and how to cite the project ----------------------------------------------------


def test_the_licence_and_the_citation_file_agree_with_the_package() -> None:
    """Before: only pyproject.toml said Apache-2.0, and nothing said how to cite the project. Now LICENSE holds the
    Apache License 2.0, the package ships it, and CITATION.cff (Citation File Format 1.2.0: its required keys)
    names the package's licence and version and the paper it implements (arXiv 2510.00177)."""
    import tomllib

    import yaml

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    licence = (REPO / "LICENSE").read_text()
    assert licence.lstrip().startswith("Apache License") and "Version 2.0, January 2004" in licence
    assert "END OF TERMS AND CONDITIONS" in licence and project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]

    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert {"cff-version", "message", "title", "authors"} <= set(cff) and cff["cff-version"] == "1.2.0"
    assert cff["license"] == project["license"] and cff["version"] == project["version"]
    assert all("name" in a or "family-names" in a for a in cff["authors"])
    (paper,) = [r for r in cff["references"] if r["type"] == "article"]
    assert paper["title"] == "Personalized Reasoning: Just-in-time Personalization and Why LLMs Fail at It"
    assert paper["url"] == "https://arxiv.org/abs/2510.00177" and len(paper["authors"]) == 7
