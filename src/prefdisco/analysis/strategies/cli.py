"""``prefdisco compare-strategies``: parse, call ``compare.compare_strategies``, print the table."""

from __future__ import annotations

from pathlib import Path

import typer

HELP = """Compare elicitation strategies across runs: NormAlign and mean elicited weight against the question
budget K for the model's own fixed-K questions (naive), the checklist and information-gain policies
(prefdisco/checklist, prefdisco/infogain with -S k=K) and free discovery, plus mean P@K / R@K of the policies'
inferred attribute sets. Give every run whose rows should count (baseline and oracle rows included: they are
NormAlign's ends); writes strategies.csv and fig_strategies.png to --out."""


def register(app: typer.Typer) -> None:
    @app.command("compare-strategies", help=HELP)
    def compare_strategies_command(
        runs: list[Path] = typer.Argument(..., help="Run folders (or results tables) to compare."),
        out: Path = typer.Option(..., "--out", help="Folder for strategies.csv and fig_strategies.png."),
    ) -> None:
        import pandas as pd
        from rich.console import Console
        from rich.table import Table

        from prefdisco.analysis.section.shown import num
        from prefdisco.analysis.strategies.compare import compare_strategies

        table, written = compare_strategies(runs, out)
        shown = Table(title="Elicitation strategies")
        for column in ("model", "task", "strategy", "K", "n", "NormAlign", "elicited weight", "P@K", "R@K"):
            shown.add_column(column, justify="left" if column in ("model", "task", "strategy") else "right")
        for row in table.itertuples(index=False):
            shown.add_row(
                row.model,
                row.task,
                row.strategy,
                "free" if pd.isna(row.k) else str(int(row.k)),
                str(row.n),
                num(row.normalign, 1),
                num(row.mean_elicited_weight, 3),
                num(row.mean_precision_at_k, 3),
                num(row.mean_recall_at_k, 3),
            )
        console = Console()
        console.print(shown)
        console.print(f"wrote {', '.join(str(p) for p in written)}", highlight=False, soft_wrap=True)
