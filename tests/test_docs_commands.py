"""Every ``prefdisco`` command in a code block of README.md and docs/*.md is parsed by the real command line.

The commands name real models and data, so they are not executed; each is parsed as ``prefdisco`` would parse it
(every command's body replaced by nothing): the command exists, each option exists, takes a value of
its type and every required option and argument is given. Optional groups written ``[--seed 0]`` are dropped,
``a|b|c`` stands for its first choice, a ``# comment`` ends the line, and a line with an elision (``...``) is a
fragment, not a command.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from typer.main import get_command

import prefdisco.cli as cli

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def documented_commands() -> list[tuple[str, str]]:
    """(file:line, command) for every ``prefdisco`` line of a fenced code block, continuation lines joined."""
    found = []
    for path in DOCS:
        lines = path.read_text(encoding="utf-8").splitlines()
        fenced = False
        i = 0
        while i < len(lines):
            line, start = lines[i], i + 1
            if line.lstrip().startswith("```"):
                fenced = not fenced
            elif fenced and re.match(r"^\s*(\.venv/bin/)?prefdisco\b", line):
                while line.rstrip().endswith("\\") and i + 1 < len(lines):
                    i += 1
                    line = line.rstrip()[:-1] + " " + lines[i].strip()
                found.append((f"{path.relative_to(REPO)}:{start}", line.strip()))
            i += 1
    return found


def words(command: str) -> list[str] | None:
    """The arguments after ``prefdisco`` as the shell passes them; None for a fragment with an elision."""
    command = re.sub(r"\s#.*$", "", command)
    command = re.sub(r"\[[^\]]*\]", " ", command)  # an optional group
    parts = shlex.split(command)[1:]
    if any(p in ("...", "…") for p in parts):
        return None
    return [p.split("|")[0] if re.fullmatch(r"\w+(\|\w+)+", p) else p for p in parts]


COMMANDS = [(where, command) for where, command in documented_commands() if words(command) is not None]
"""Every documented command but the fragments with an elision (``prefdisco build ... --dry-run``), which are
options of a command shown whole beside them."""


def silenced(command: Any) -> Any:
    """The command tree with every command's body replaced by nothing: parsing is all that runs."""
    command.callback = lambda *args, **kwargs: None
    for sub in getattr(command, "commands", {}).values():
        silenced(sub)
    return command


@pytest.mark.parametrize(("where", "command"), COMMANDS, ids=[where for where, _ in COMMANDS])
def test_a_documented_command_parses(where: str, command: str) -> None:
    args = words(command)
    assert args is not None
    cli._register()
    app = silenced(get_command(cli.app))
    try:
        app.main(list(args), prog_name="prefdisco", standalone_mode=False)
    except Exception as e:
        if hasattr(e, "format_message"):  # click's usage errors (typer carries its own copy of click)
            pytest.fail(f"{where}: {command}\n  {e.format_message()}")
        raise
