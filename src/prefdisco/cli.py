"""The ``prefdisco`` command line. Parsing and printing only: every command calls into the library.

Sub-command groups live beside the code they drive (``build/cli.py``, ``analysis/cli.py``,
``annotate/cli.py``, ``dialogue/cli.py``) and are imported here; heavy imports stay inside command bodies.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

import typer
from rich.console import Console
from rich.text import Text

from prefdisco.errors import UserError

app = typer.Typer(
    name="prefdisco",
    help="Build PrefDisco benchmarks, evaluate models in baseline/discovery/oracle modes, report the results.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
err_console = Console(stderr=True)


_registered = False


def _print_error(error: UserError) -> None:
    # a Text object, so brackets in the message are never read as rich markup
    err_console.print(Text.assemble(("error: ", "bold red"), str(error)), highlight=False, soft_wrap=True)


def _register() -> None:
    global _registered
    if _registered:
        return
    _registered = True
    from prefdisco.analysis.cli import register as register_analysis
    from prefdisco.annotate.cli import register as register_annotate
    from prefdisco.build.cli import register as register_build
    from prefdisco.build.release_cli import register as register_release
    from prefdisco.dialogue.cli import register as register_dialogue

    for register in (
        register_dialogue,
        register_build,
        register_release,
        register_analysis,
        register_annotate,
    ):
        register(app)
    _wrap_errors(app)


def _wrap_errors(typer_app: typer.Typer) -> None:
    """Make every command print a UserError as one ``error: ...`` line on stderr and exit 2."""
    for command in typer_app.registered_commands:
        if command.callback is not None and not getattr(command.callback, "_prefdisco_wrapped", False):
            command.callback = _reporting_errors(command.callback)
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _wrap_errors(group.typer_instance)


def _reporting_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except UserError as e:
            _print_error(e)
            raise typer.Exit(e.exit_code) from None

    wrapper._prefdisco_wrapped = True  # type: ignore[attr-defined]
    return wrapper


def main(argv: list[str] | None = None) -> None:
    _register()
    try:
        app(args=argv, standalone_mode=True)
    except UserError as e:  # raised outside a command body (e.g. while registering)
        _print_error(e)
        sys.exit(e.exit_code)
