"""``prefdisco calibrate``: parse, call ``analysis.calibrate.calibrate``, print a table or the JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from prefdisco.analysis.validity.calibrate import Calibration

HELP = """Compare the run's judge with human 1-5 ratings (from `prefdisco annotate export-ratings`): Spearman,
quadratic-weighted kappa, MAE, judge bias, Krippendorff's alpha among the annotators; then PrefAlign per mode
and NormAlign after calibrating the judge's scores to the human scale (isotonic regression fitted on the rated
items, a seeded bootstrap over them for the 95 % interval). Definitions: docs/evaluation.md, "Human calibration"."""


def register(app: typer.Typer) -> None:
    @app.command("calibrate", help=HELP)
    def calibrate_command(
        human: Path = typer.Option(..., "--human", help="Ratings CSV (from annotate export-ratings)."),
        run: Path = typer.Option(..., "--run", help="The eval run folder (or results table) the ratings rate."),
        as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
        seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap over the rated items."),
        bootstrap: int = typer.Option(
            1000, "--bootstrap", min=0, help="Bootstrap resamples (0: no interval; else at least 200)."
        ),
    ) -> None:
        from prefdisco.analysis.validity.calibrate import calibrate

        result = calibrate(human, run, seed=seed, n_boot=bootstrap)
        if as_json:
            typer.echo(json.dumps(result.to_json(), indent=2))
            return
        _print(result)


def _print(result: Calibration) -> None:
    from rich.console import Console
    from rich.table import Table

    from prefdisco.analysis.section.shown import num

    console = Console()
    console.print(
        f"{result.n_pairs} rated items, {result.n_ratings} ratings by {result.n_annotators} annotator(s)",
        highlight=False,
    )
    agreement = Table("statistic", "value", title="Judge vs humans")
    for name in ("spearman", "weighted_kappa", "mae", "judge_bias", "human_alpha"):
        agreement.add_row(name, num(getattr(result, name), 3))
    console.print(agreement)

    def interval(cell: dict, digits: int) -> str:
        if cell["ci_low"] is None:
            return ""
        return f"[{num(cell['ci_low'], digits)}, {num(cell['ci_high'], digits)}]"

    table = Table("model", "task", "mode", "judge", "calibrated", "95 % CI", "n", title="PrefAlign (1-5)")
    for model, tasks in result.calibrated.items():
        for task, modes in tasks.items():
            for mode, cell in modes.items():
                row = (num(cell["raw"], 3), num(cell["mean"], 3), interval(cell, 2), str(cell["n_scenarios"]))
                table.add_row(model, task, mode, *row)
    console.print(table)
    norm = Table("model", "task", "judge", "calibrated", "95 % CI", "note", title="NormAlign (%)")
    for model, cells in result.calibrated_normalign.items():
        for task, value in cells.items():
            norm.add_row(model, task, num(value["raw"], 1), num(value["mean"], 1), interval(value, 1), value["reason"])
    console.print(norm)
    console.print(f"method: {result.method}, bootstrap {result.bootstrap} resamples, seed {result.seed}")
    for note in result.notes:
        console.print(f"note: {note}", highlight=False)
