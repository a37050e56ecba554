"""``prefdisco report``: parse, call ``analysis.report.make_report``, print where the files went."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report(
        results: list[Path] = typer.Argument(
            ...,
            help="A results table (results.csv / results.parquet) or an eval run folder; several make one table "
            "when their protocols agree.",
        ),
        out: Path = typer.Option(..., "--out", help="Folder for report.html, report.md, summary.json, PNG, CSV."),
        seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap (and of the scatter subsample)."),
        bootstrap: int = typer.Option(
            1000, "--bootstrap", min=0, help="Bootstrap resamples per cell (0: none; else at least 200)."
        ),
        examples: int = typer.Option(2, "--examples", min=0, help="Qualitative examples picked per kind."),
        scenario: list[str] = typer.Option(
            [], "--scenario", help="Also show this scenario id as an example (repeatable)."
        ),
        human: Path | None = typer.Option(
            None, "--human", help="Human ratings CSV (annotate export-ratings): calibrate the judge in the report."
        ),
        allow_mixed: bool = typer.Option(
            False,
            "--allow-mixed",
            help="Put runs of different protocols in one table anyway (their differences are listed in the report).",
        ),
        reference_table: Path | None = typer.Option(
            None,
            "--reference-table",
            help="The --out of a prefdisco simfidelity --reference run: its table in the Validity section, and this "
            "run's simulator's reference fidelity and per-statistic distances from the people where it measured "
            "the same simulated user (its whole protocol).",
        ),
        overwrite: bool = typer.Option(
            False,
            "--overwrite",
            help="Replace what --out holds (the report of other results, a benchmark); the report of the same "
            "results is always replaced.",
        ),
        figures: bool = typer.Option(
            True,
            "--figures/--no-figures",
            help="Draw the figures (PNG, inline in the HTML); --no-figures writes every number, table and "
            "summary.json without them (faster when only the numbers are read).",
        ),
    ) -> None:
        """Write the PrefDisco report (NormAlign, accuracy, questions, fixed-K, attributes, examples)."""
        from rich.console import Console
        from rich.table import Table

        from prefdisco.analysis.report.build import make_report
        from prefdisco.analysis.section.shown import num

        made, written = make_report(
            results,
            out,
            seed=seed,
            n_boot=bootstrap,
            n_examples=examples,
            chosen=list(scenario),
            human=human,
            allow_mixed=allow_mixed,
            figures=figures,
            overwrite=overwrite,
            reference_table=reference_table,
        )
        console = Console()
        s = made.summary
        for line in made.caveats:  # first, before the numbers they qualify (the report's top says the same lines)
            console.print(line, highlight=False, soft_wrap=True, markup=False)
        pending = s["trials"]["not_judged"]
        if pending:
            console.print(
                f"not judged yet: {pending} of {s['trials']['total']} trial rows (--judge later) are left out of "
                f"every PrefAlign number; judge them with: prefdisco judge RUN_DIR",
                highlight=False,
                soft_wrap=True,
            )
        table = Table(title="NormAlign (%)", show_lines=False)
        table.add_column("model")
        for task in s["tasks"]:
            table.add_column(task, justify="right")
        for model in s["models"]:
            row = s["normalign"].get(model, {})
            table.add_row(model, *(num(row.get(t), 1) if t in row else "" for t in s["tasks"]))
        console.print(table)
        pct = s["pct_negative"]
        console.print(
            f"negative cells: {'—' if pct is None else f'{pct:.1f} %'} "
            f"({s['n_cells_negative']} of {s['n_cells_defined']} defined); "
            f"Pearson r: {num(s['pearson_r'], 3)}" + (f" ({s['pearson_reason']})" if s["pearson_reason"] else "")
        )
        if made.settings.get("protocol"):
            console.print(f"protocol: {made.settings['protocol']}", highlight=False, soft_wrap=True, markup=False)
        console.print(f"report: {out / 'report.html'}", highlight=False)
        names = ", ".join(p.name for p in written)
        console.print(f"wrote {len(written)} files to {out}: {names}", highlight=False, soft_wrap=True)
