"""``prefdisco leaderboard RUN [RUN …] --out DIR``: parse, call ``analysis.leaderboard_page.make_leaderboard``,
print the overall ranking and where the files went."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("leaderboard")
    def leaderboard(
        runs: list[Path] = typer.Argument(
            ...,
            help="Eval run folders (or results tables), one submission each; merged into one table when their "
            "protocols agree.",
        ),
        out: Path = typer.Option(..., "--out", help="Folder for leaderboard.html, leaderboard.csv, pairwise.csv."),
        seed: int = typer.Option(0, "--seed", help="Seed of every bootstrap."),
        bootstrap: int = typer.Option(
            1000,
            "--bootstrap",
            min=0,
            help="Bootstrap resamples per interval and per pair (0: none, no tests; else at least 200).",
        ),
        allow_mixed: bool = typer.Option(
            False,
            "--allow-mixed",
            help="Rank runs of different protocols together anyway (their differences are listed on the page).",
        ),
        overwrite: bool = typer.Option(False, "--overwrite", help="Replace a leaderboard already in --out."),
        reference_table: Path | None = typer.Option(
            None,
            "--reference-table",
            help="The --out of a prefdisco simfidelity --reference run: the protocol box names each simulator's "
            "reference fidelity against the people where it measured the same simulated user (its whole protocol).",
        ),
    ) -> None:
        """Rank models by NormAlign, overall and per task, with paired tests and groups (HTML page and CSV)."""
        import pandas as pd
        from rich.console import Console

        from prefdisco.analysis.leaderboard import OVERALL
        from prefdisco.analysis.leaderboard_page import make_leaderboard
        from prefdisco.analysis.render import interval, num

        board, written = make_leaderboard(
            runs,
            out,
            seed=seed,
            n_boot=bootstrap,
            allow_mixed=allow_mixed,
            overwrite=overwrite,
            reference_table=reference_table,
        )
        console = Console()
        for line in [*board.notes, *board.caveats]:  # before the numbers they qualify (the page's top says them)
            console.print(line, highlight=False, soft_wrap=True, markup=False)
        overall = board.table.loc[board.table["task"] == OVERALL]
        for r in overall.to_dict("records"):
            if pd.isna(r["rank"]):
                line = f"-. {r['model']}: no NormAlign ({r['normalign_reason']})"
            else:
                value = (
                    num(r["normalign"], 1)
                    + " "
                    + (
                        f"({r['normalign_reason']})"
                        if r["normalign_reason"]
                        else interval(r["normalign_low"], r["normalign_high"])
                    )
                )
                line = f"{r['rank']}. {r['model']} (group {r['group']}): NormAlign {value}"
            console.print(line, highlight=False, soft_wrap=True, markup=False)
        console.print(f"leaderboard: {out / 'leaderboard.html'}", highlight=False, soft_wrap=True)
        names = ", ".join(p.name for p in written)
        console.print(f"wrote {len(written)} files to {out}: {names}", highlight=False, soft_wrap=True)
