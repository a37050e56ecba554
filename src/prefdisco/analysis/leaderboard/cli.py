"""``prefdisco leaderboard RUN [RUN …] --out DIR`` (or ``--submissions DIR``: a folder of ``prefdisco submit``'s
submissions): parse, call ``analysis/leaderboard/page.make_leaderboard``, print the overall ranking and where the
files went. ``prefdisco submit RUN [RUN …] --out DIR``: ``analysis/leaderboard/submission.make_submissions``."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("leaderboard")
    def leaderboard(
        runs: list[Path] = typer.Argument(
            None,
            help="Eval run folders (or results tables), one submission each; merged into one table when their "
            "protocols agree.",
            show_default=False,
        ),
        out: Path = typer.Option(..., "--out", help="Folder for leaderboard.html, leaderboard.csv, pairwise.csv."),
        seed: int | None = typer.Option(
            None, "--seed", help="Seed of every bootstrap [default: 0; with --submissions: theirs]."
        ),
        bootstrap: int | None = typer.Option(
            None,
            "--bootstrap",
            min=0,
            help="Bootstrap resamples per interval and per pair (0: none, no tests; else at least 200) [default: "
            "1000; with --submissions: theirs].",
        ),
        submissions: Path | None = typer.Option(
            None,
            "--submissions",
            help="Rank the submissions in this folder (prefdisco submit's --out: one JSON per model) instead of runs; "
            "refused when they differ in benchmark or protocol.",
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

        from prefdisco.analysis.leaderboard.board import OVERALL
        from prefdisco.analysis.leaderboard.page import make_leaderboard
        from prefdisco.analysis.section.shown import interval, num

        board, written = make_leaderboard(
            runs or [],
            out,
            seed=seed,
            n_boot=bootstrap,
            allow_mixed=allow_mixed,
            overwrite=overwrite,
            reference_table=reference_table,
            submissions=submissions,
        )
        console = Console()
        for line in [*board.notes, *board.caveats]:  # before the numbers they qualify (the page's top says them)
            console.print(line, highlight=False, soft_wrap=True, markup=False)
        overall = board.table.loc[board.table["task"] == OVERALL]
        for r in overall.to_dict("records"):
            if pd.isna(r["rank"]):
                line = f"-. {r['model']}: no NormAlign ({r['normalign_reason']})"
            else:
                reason = r["normalign_reason"]
                said = f"({reason})" if reason else interval(r["normalign_low"], r["normalign_high"])
                line = f"{r['rank']}. {r['model']} (group {r['group']}): NormAlign {num(r['normalign'], 1)} {said}"
            console.print(line, highlight=False, soft_wrap=True, markup=False)
        console.print(f"leaderboard: {out / 'leaderboard.html'}", highlight=False, soft_wrap=True)
        names = ", ".join(p.name for p in written)
        console.print(f"wrote {len(written)} files to {out}: {names}", highlight=False, soft_wrap=True)

    @app.command("submit")
    def submit(
        runs: list[Path] = typer.Argument(..., help="Eval run folders: one submission per model of each."),
        out: Path = typer.Option(..., "--out", help="Folder for the submissions (MODEL.json each)."),
        seed: int = typer.Option(0, "--seed", help="Seed of every bootstrap (as prefdisco report's)."),
        bootstrap: int = typer.Option(
            1000, "--bootstrap", min=0, help="Bootstrap resamples per interval (0: none; else at least 200)."
        ),
        reference_table: Path | None = typer.Option(
            None,
            "--reference-table",
            help="The --out of a prefdisco simfidelity --reference run: each submission names its simulated user's "
            "reference fidelity against the people where that table measured the same simulated user.",
        ),
        overwrite: bool = typer.Option(False, "--overwrite", help="Replace submissions already in --out."),
    ) -> None:
        """Write one submission per model (JSON, prefdisco/analysis/leaderboard/schemas/submission.schema.json)."""
        from rich.console import Console

        from prefdisco.analysis.leaderboard.submission import make_submissions
        from prefdisco.wording import counted

        written = make_submissions(
            runs, out, seed=seed, n_boot=bootstrap, reference_table=reference_table, overwrite=overwrite
        )
        names = ", ".join(p.name for p in written)
        said = f"wrote {counted(len(written), 'submission')} to {out}: {names}"
        Console().print(said, highlight=False, soft_wrap=True, markup=False)
