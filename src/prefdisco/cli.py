"""The ``prefdisco`` command line. Parsing and printing only: every command calls into the library.

Sub-command groups live beside the code they drive (``builder/cli.py``, ``release/cli.py``,
``evaluation/cli.py``, ``analysis/report/cli.py``, ``annotate/cli.py``, ``policies/cli.py``, ``training/cli.py``,
``env/cli.py``, ``publish/cli.py``) and
are imported here; ``demo`` is the one command of its own, since it runs the evaluation and summarizes it as the
analysis does. Heavy imports stay inside command bodies.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from prefdisco.cli_paths import CheckedGroup
from prefdisco.errors import UserError, print_error
from prefdisco.wording import counted

app = typer.Typer(
    cls=CheckedGroup,
    name="prefdisco",
    help="Build PrefDisco benchmarks, evaluate models in baseline/discovery/oracle modes, report the results.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
console = Console()


_registered = False


def _register() -> None:
    global _registered
    if _registered:
        return
    _registered = True
    from prefdisco.analysis.leaderboard.cli import register as register_leaderboard
    from prefdisco.analysis.report.cli import register as register_analysis
    from prefdisco.analysis.strategies.cli import register as register_strategies
    from prefdisco.analysis.validity.calibrate_cli import register as register_calibrate
    from prefdisco.annotate.cli import register as register_annotate
    from prefdisco.builder.cli import register as register_build
    from prefdisco.env.cli import register as register_env
    from prefdisco.evaluation.cli import register as register_evaluation
    from prefdisco.evaluation.later.judge_cli import register as register_judge
    from prefdisco.policies.cli import register as register_policies
    from prefdisco.publish.cli import register as register_publish
    from prefdisco.release.cli import register as register_release
    from prefdisco.scoring.cli import register as register_scoring
    from prefdisco.sessions.cli import register as register_sessions
    from prefdisco.simfidelity.cli import register as register_simfidelity
    from prefdisco.training.cli import register as register_training

    app.callback()(_main)
    app.command("demo")(demo)
    for register in (
        register_evaluation,
        register_judge,
        register_simfidelity,
        register_build,
        register_release,
        register_publish,
        register_scoring,
        register_analysis,
        register_calibrate,
        register_leaderboard,
        register_annotate,
        register_policies,
        register_training,
        register_strategies,
        register_sessions,
        register_env,
    ):
        register(app)
    _wrap_errors(app)


def _print_version(value: bool) -> None:
    if value:
        from prefdisco.version import __version__

        print(f"prefdisco {__version__}")
        raise typer.Exit()


def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Build PrefDisco benchmarks, evaluate models in baseline/discovery/oracle modes, report the results."""


def demo(
    out: Annotated[
        Path | None,
        typer.Option(
            help="Output folder (logs, results tables, summary.json); default: prefdisco-demo, one per --limit and "
            "--model (prefdisco-demo-2, prefdisco-demo-openai-gpt-4.1)."
        ),
    ] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Run only the first N demo scenarios.")] = None,
    display: Annotated[str, typer.Option(help="inspect display: full, rich, plain, log, none.")] = "plain",
    model: Annotated[
        str, typer.Option(help="Model in every role (default: the embedded one, offline).")
    ] = "prefdisco/smollm2",
) -> None:
    """Run baseline, discovery and oracle on the packaged demo scenarios (the embedded model, offline, by default)
    and write the HTML report."""
    from prefdisco.demo import default_out, format_number, norm_align_line, run_demo

    out = out or default_out(limit, model)
    summary = run_demo(out=out, limit=limit, display=display, model=model)
    for line in summary["caveats"]:  # the report's own caveats, before the numbers they qualify (as its top)
        console.print(line, soft_wrap=True, highlight=False, markup=False)
    title = f"PrefDisco demo — {counted(summary['n_scenarios'], 'scenario')}, model {summary['models']['assistant']}"
    table = Table(title=title)
    for column in ("mode", "PrefAlign (1-5)", "accuracy", "questions asked", "n", "judge invalid", "failed"):
        table.add_column(column, justify="left" if column == "mode" else "right")
    for mode, row in summary["modes"].items():
        table.add_row(
            mode,
            format_number(row["pref_align_mean"]),
            format_number(row["accuracy"]),
            format_number(row["mean_questions"], 1),
            str(row["n"]),
            str(row["judge_invalid"]),
            str(row["failed"]),
        )
    console.print(table)
    console.print(norm_align_line(summary), soft_wrap=True, highlight=False, markup=False)
    console.print(
        f"Wrote {out / 'summary.json'}; logs in {summary['log_dir']} (inspect view --log-dir {summary['log_dir']})"
    )
    console.print(f"report: {summary['report']}", highlight=False, soft_wrap=True)


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
            print_error(e)
            raise typer.Exit(e.exit_code) from None

    wrapper._prefdisco_wrapped = True  # type: ignore[attr-defined]
    return wrapper


HELP_WIDTH = 160
"""Columns of ``--help`` printed outside a terminal (a pipe, a file): wide enough that no option's name is cut (rich
fits help to 80 columns when it knows no width, and cut 37 of ``eval``'s names to ``--judge-max-cr…``)."""


def _help_width() -> None:
    """Outside a terminal, and unless ``TERMINAL_WIDTH`` says otherwise, help is ``HELP_WIDTH`` columns wide."""
    import os

    import typer.rich_utils

    if not os.environ.get("TERMINAL_WIDTH") and not os.environ.get("COLUMNS") and not sys.stdout.isatty():
        typer.rich_utils.MAX_WIDTH = HELP_WIDTH


def main(argv: list[str] | None = None) -> None:
    _register()
    _help_width()
    try:
        app(args=argv, standalone_mode=True)
    except UserError as e:  # raised outside a command body (e.g. while registering)
        print_error(e)
        sys.exit(e.exit_code)
