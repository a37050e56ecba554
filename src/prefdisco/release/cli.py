"""CLI commands for benchmark files: ``validate``, ``import-release``, ``export-release``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console


def register(app: typer.Typer) -> None:
    """Add ``validate``, ``import-release`` and ``export-release`` to ``app``."""

    @app.command("validate")
    def validate(
        path: Path = typer.Argument(
            ..., help="A benchmark folder, a scenarios.jsonl file, or a prefq-bench release JSONL file."
        ),
    ) -> None:
        """Check a benchmark in either format; print every problem as path:line: message."""
        from prefdisco.release.validate import validate_path

        report = validate_path(path)
        console = Console(highlight=False, soft_wrap=True)
        if report.ok:
            console.print(report.summary(), markup=False)
            return
        for issue in report.issues:
            console.print(str(issue), markup=False)
        console.print(report.summary(), markup=False)
        raise typer.Exit(1)

    @app.command("import-release")
    def import_release_cmd(
        src: Path = typer.Argument(..., help="A prefq-bench JSONL file (the paper's released format)."),
        out: Path = typer.Option(..., "--out", help="Benchmark folder to write."),
    ) -> None:
        """Convert the paper's released benchmark file into a benchmark folder."""
        from prefdisco.release.convert import import_release_to_bench

        manifest = import_release_to_bench(src, out)
        counts = manifest["counts"]
        Console(highlight=False, soft_wrap=True).print(
            f"wrote {out}: {counts['scenarios']} scenarios, {counts['problems']} problems, "
            f"{counts['personas']} personas, {counts['attributes']} attributes",
            markup=False,
        )

    @app.command("export-release")
    def export_release_cmd(
        src: Path = typer.Argument(..., help="A benchmark folder (or scenarios.jsonl / release JSONL)."),
        out: Path = typer.Option(..., "--out", help="prefq-bench JSONL file to write."),
    ) -> None:
        """Write scenarios in the paper's released format, readable by its evaluator."""
        from prefdisco.release.convert import export_bench_to_release

        n = export_bench_to_release(src, out)
        Console(highlight=False, soft_wrap=True).print(f"wrote {out}: {n} records", markup=False)
