"""Empty paths refused on the command line, before any command runs.

``Path("")`` is the current folder, so ``prefdisco eval … --log-dir ""`` (an unset shell variable, a typo) ran and
wrote seven files and a 3 MB log index into whatever folder the shell was in. ``CheckedGroup`` is the class of
``prefdisco``'s command groups (``typer.Typer(cls=CheckedGroup)``): it reads a command's raw arguments as the group
hands them over, and refuses an empty value given to any option or argument whose type is a path, as a usage error
naming it (exit 2, nothing written).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperArgument, TyperGroup, TyperOption

EMPTY = "an empty path; give a file or folder (an unset shell variable?)"


def is_path(annotation: Any) -> bool:
    """Whether a parameter's annotation is a path (``Path``, ``Path | None``, ``list[Path]``, …)."""
    if annotation is Path:
        return True
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is not None:
        return any(is_path(arg) for arg in typing.get_args(annotation))
    return False


def refuse_empty_paths(command: Any, args: Sequence[str], ctx: Any) -> None:
    """Raise a usage error when ``args`` (a command's raw arguments) give an empty value to a path parameter."""
    params = list(command.params)
    options = {opt: p for p in params if isinstance(p, TyperOption) for opt in (*p.opts, *p.secondary_opts)}
    arguments = [p for p in params if isinstance(p, TyperArgument)]
    place, i, positional_only = 0, 0, False
    while i < len(args):
        arg = args[i]
        if not positional_only and arg == "--":
            positional_only = True
        elif not positional_only and arg.startswith("--") and "=" in arg:
            name, value = arg.split("=", 1)
            _check(options.get(name), value, ctx)
        elif not positional_only and arg in options:
            option = options[arg]
            if not option.is_flag and not option.count:
                _check(option, args[i + 1] if i + 1 < len(args) else None, ctx)
                i += 1
        elif (positional_only or not arg.startswith("-") or arg == "-") and place < len(arguments):
            _check(arguments[place], arg, ctx)
            place += 1 if arguments[place].nargs == 1 else 0
        i += 1


def _check(param: Any, value: str | None, ctx: Any) -> None:
    if param is not None and value is not None and not value.strip() and is_path(param.type_descriptor.annotation):
        raise typer.BadParameter(EMPTY, ctx=ctx, param=param)


class CheckedGroup(TyperGroup):
    """A typer command group that refuses an empty path given to any of its commands (``refuse_empty_paths``)."""

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None and not isinstance(command, TyperGroup):  # a group checks its own commands
            refuse_empty_paths(command, rest, ctx)
        return name, command, rest
