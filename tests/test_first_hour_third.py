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
