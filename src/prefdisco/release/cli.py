"""CLI commands for benchmark files: ``validate``, ``import-release``, ``export-release``.

Errors go to the error output as ``error: …`` (exit 2) through the app's handler; warnings and skipped lines are
printed one per line, ``path:line: warning: …`` / ``path:line: skipped: …``, on the error output too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import typer
from rich.console import Console

from prefdisco.wording import counted


def _console(stderr: bool = False) -> Console:
    return Console(highlight=False, soft_wrap=True, stderr=stderr)


def register(app: typer.Typer) -> None:
    """Add ``validate``, ``import-release`` and ``export-release`` to ``app``."""

    @app.command("validate")
    def validate(
        path: Path = typer.Argument(
            ..., help="A benchmark folder, a scenarios.jsonl file, or a prefq-bench release JSONL file."
        ),
        skip_images: bool = typer.Option(
            False, "--skip-images", help="Release files: do not check that relative image paths exist."
        ),
        reseal: bool = typer.Option(
            False,
            "--reseal",
            help="A benchmark folder changed on purpose (a rubric corrected by hand): when every file is valid, "
            "record the files' new content hash in manifest.json (the old one is kept in its resealed list).",
        ),
    ) -> None:
        """Check a benchmark in either format; print every error and warning as path:line: message.

        Exit 1 when there is an error; warnings (what is accepted, and how it is read) do not fail.
        """
        from prefdisco.release.validate import reseal_bench, validate_path

        report = validate_path(path, skip_images=skip_images)
        console = _console()
        if reseal:
            line = reseal_bench(path, report)  # refuses in one line unless the hash is the only error
            console.print(line, markup=False, highlight=False, soft_wrap=True)
            return
        for issue in report.issues:
            console.print(str(issue), markup=False)
        console.print(report.summary(), markup=False)
        if not report.ok:
            raise typer.Exit(1)

    @app.command("import-release")
    def import_release_cmd(
        src: Path = typer.Argument(..., help="A prefq-bench JSONL file (the paper's released format)."),
        out: Path = typer.Option(..., "--out", help="Benchmark folder to write."),
        skip_invalid: bool = typer.Option(
            False,
            "--skip-invalid",
            help="Write the records that can be scored and list the lines skipped (default: write nothing).",
        ),
        overwrite: bool = typer.Option(
            False, "--overwrite", help="Replace the benchmark --out holds (and drop its build checkpoint)."
        ),
    ) -> None:
        """Convert the paper's released benchmark file into a benchmark folder (with its images)."""
        from prefdisco.overwrite import refuse_overwrite
        from prefdisco.release.convert import import_release_to_bench
        from prefdisco.release.report import summarized

        refuse_overwrite(out, overwrite)
        summary = import_release_to_bench(src, out, skip_invalid=skip_invalid)
        if overwrite:  # a build's checkpoint left in the folder would describe another benchmark
            shutil.rmtree(out / ".checkpoint", ignore_errors=True)
        err = _console(stderr=True)
        for text in summarized(summary.read.warnings):
            err.print(text, markup=False)
        for line, messages in summary.read.error_lines():
            err.print(f"{src}:{line}: skipped: {'; '.join(messages)}", markup=False)
        counts = summary.manifest["counts"]
        skipped = len(summary.read.error_lines())
        _console().print(
            f"wrote {out}: {counted(counts['scenarios'], 'scenario')}, {counted(counts['problems'], 'problem')}, "
            f"{counted(counts['personas'], 'persona')}, {counted(counts['attributes'], 'attribute')}"
            + (f", {counted(len(summary.images), 'image')}" if summary.images else "")
            + (f"; skipped {skipped} line(s)" if skipped else "")
            + (f"; {len(summary.read.warnings)} warning(s)" if summary.read.warnings else ""),
            markup=False,
        )

    @app.command("export-release")
    def export_release_cmd(
        src: Path = typer.Argument(..., help="A benchmark folder (or scenarios.jsonl / release JSONL)."),
        out: Path = typer.Option(..., "--out", help="prefq-bench JSONL file to write."),
        skip_invalid: bool = typer.Option(
            False, "--skip-invalid", help="A release file as SRC: leave out the lines nothing can score."
        ),
        overwrite: bool = typer.Option(False, "--overwrite", help="Replace the file --out holds."),
    ) -> None:
        """Write scenarios in the paper's released format, readable by its evaluator (images copied beside it)."""
        from prefdisco.overwrite import refuse_overwrite
        from prefdisco.release.convert import export_bench_to_release
        from prefdisco.release.report import summarized

        refuse_overwrite(out, overwrite)
        summary = export_bench_to_release(src, out, skip_invalid=skip_invalid)
        err = _console(stderr=True)
        for text in summarized([i for i in summary.issues if i.severity == "warning"]):
            err.print(text, markup=False)
        for issue in summary.issues:
            if issue.severity == "error":
                err.print(f"{issue.path}:{issue.line}: skipped: {issue.message}", markup=False)
        for rel in summary.missing_images:
            err.print(f"warning: image {rel} not found next to {src}: not copied", markup=False)
        images = f", {counted(len(summary.images), 'image')}" if summary.images else ""
        _console().print(f"wrote {out}: {counted(summary.records, 'record')}{images}", markup=False)
