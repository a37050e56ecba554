"""The ``prefdisco`` command line. Parsing and printing only: every command calls into the library.

Sub-command groups live beside the code they drive (``build/cli.py``, ``analysis/cli.py``,
``annotate/cli.py``, ``dialogue/cli.py``) and are imported here; heavy imports stay inside command bodies.
"""

from __future__ import annotations

import sys

import typer
from rich.console import Console

from prefdisco.errors import UserError

app = typer.Typer(
    name="prefdisco",
    help="Build PrefDisco benchmarks, evaluate models in baseline/discovery/oracle modes, report the results.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
err_console = Console(stderr=True)


def _register() -> None:
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


def main(argv: list[str] | None = None) -> None:
    _register()
    try:
        app(args=argv, standalone_mode=True)
    except UserError as e:
        err_console.print(f"[bold red]error:[/] {e}", highlight=False, soft_wrap=True)
        sys.exit(e.exit_code)
