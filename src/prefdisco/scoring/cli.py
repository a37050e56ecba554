"""``prefdisco selfcheck``: parse, load the problems, call ``scoring.selfcheck``, print, exit 1 on a failure."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from prefdisco.errors import UserError

SHOWN_FAILURES = 20


def selfcheck_command(
    path: Annotated[
        Path | None, typer.Argument(help="A benchmark folder, scenarios.jsonl or prefq-bench release file.")
    ] = None,
    benchmark: Annotated[str | None, typer.Option(help="A registered benchmark, or generic with --map.")] = None,
    source: Annotated[str | None, typer.Option(help="Local copy of the benchmark (file or folder).")] = None,
    split: Annotated[str | None, typer.Option(help="Split (default: the benchmark's).")] = None,
    mapping: Annotated[str | None, typer.Option("--map", help="Field mapping for --benchmark generic.")] = None,
    grader: Annotated[str | None, typer.Option(help="Grader model for model-graded answers (SimpleQA).")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Check only the first N problems.")] = None,
) -> None:
    """Score every problem's own gold answer and a wrong one through its real metric.

    Prints `gold accepted A/N, wrong rejected R/N, not judgeable U` per benchmark and lists each failure; exits 1
    when a gold answer is rejected or a wrong one accepted. Offline; model-graded answers need --grader MODEL and
    are skipped (and pass) without it.
    """
    from inspect_ai.model import GenerateConfig, get_model

    from prefdisco.benchmarks import load_generic, load_problems
    from prefdisco.release.convert import load_scenarios
    from prefdisco.scoring.selfcheck import selfcheck

    if (path is None) == (benchmark is None):
        raise UserError("selfcheck: give a PATH (benchmark folder, scenarios or release file) or --benchmark NAME")
    if path is not None:
        unique = {(s.problem.benchmark, s.problem.id): s.problem for s in load_scenarios(path)}
        problems = list(unique.values())
    elif benchmark == "generic":
        if not source or not mapping:
            raise UserError("--benchmark generic needs --source PATH and --map question=...,answer=...")
        problems = load_generic(source, mapping, split=split)
    else:
        assert benchmark is not None
        problems = load_problems(benchmark, source=source, split=split)
    problems = problems[:limit] if limit else problems
    model = get_model(grader, config=GenerateConfig(temperature=0.0)) if grader else None
    reports = selfcheck(problems, grader=model)
    for report in reports:
        typer.echo(report.summary())
        for failure in report.failures[:SHOWN_FAILURES]:
            typer.echo(f"  {failure.problem_id}: {failure.what}: {failure.response!r} ({failure.detail})")
        if len(report.failures) > SHOWN_FAILURES:
            typer.echo(f"  (+{len(report.failures) - SHOWN_FAILURES} more failures)")
    if any(not r.ok for r in reports):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("selfcheck")(selfcheck_command)
