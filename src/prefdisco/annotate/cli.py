"""``prefdisco annotate serve | export | stats``: human validation of a benchmark's relevant attributes.

``serve-ratings | export-ratings`` (human 1-5 ratings of a run's responses) are ``rating_cli``'s;
``serve-play | export-play`` (a person plays the user of a model under test) are ``play_cli``'s."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from prefdisco.annotate.labels import TIE_RULE
from prefdisco.annotate.serve_options import (
    Host,
    Port,
    Seed,
    TokensFile,
    TokenSpecs,
    announce_and_serve,
    check_port,
    console,
    db_option,
    read_tokens,
)

if TYPE_CHECKING:
    from prefdisco.annotate.stats import AgreementStats

SERVE_HELP = """Serve the annotation web app for BENCH_DIR (binds to 127.0.0.1 unless --host says otherwise).

The first start samples the items (per task, seeded) and stores them in --db; later starts and all
annotators see the same items. Annotators log in with a name; with --token/--tokens-file only the listed
annotators may log in, each with their token. Prefer --tokens-file: command-line arguments are visible to
other users of the machine."""

STATS_HELP = f"""Agreement statistics: Fleiss' kappa over the items every annotator labelled, each
annotator's accuracy against the majority of the others (and of all), and the builder LLM's agreement with
the human majority (accuracy, precision, recall, Cohen's kappa). Tie rule: {TIE_RULE}."""


def register(app: typer.Typer) -> None:
    annotate = typer.Typer(
        name="annotate",
        help="Human studies: attribute relevance, response ratings, play the user.",
        no_args_is_help=True,
    )

    @annotate.command("serve", help=SERVE_HELP)
    def serve_command(
        bench_dir: Annotated[Path, typer.Argument(help="benchmark folder (written by prefdisco build)")],
        db: Annotated[Path, db_option("labels")],
        host: Host = "127.0.0.1",
        port: Port = 8000,
        per_task: Annotated[
            int | None, typer.Option(min=1, help="scenarios sampled per task on first start [default: 2]")
        ] = None,
        seed: Seed = None,
        token: TokenSpecs = None,
        tokens_file: TokensFile = None,
    ) -> None:
        from prefdisco.annotate.service import prepare, serve

        check_port(host, port)  # a busy port fails before the database is written
        tokens = read_tokens(token, tokens_file)
        prepared = prepare(bench_dir, db, per_task=per_task, seed=seed)
        state = "sampled and stored" if prepared.created else "loaded from the database"
        tasks = ", ".join(f"{task} ({n})" for task, n in prepared.tasks.items())
        console.print(f"{len(prepared.items)} items {state}: {tasks}")
        console.print(f"per task {prepared.per_task}, seed {prepared.seed}, {2 * prepared.per_side} candidates each")
        announce_and_serve(prepared.notes, tokens, host, port, lambda: serve(db, host, port, tokens))

    @annotate.command("export")
    def export_command(
        db: Annotated[Path, typer.Option("--db", help="annotation database")],
        out: Annotated[Path, typer.Option("--out", help="CSV to write (atomically)")],
    ) -> None:
        """Write every label as CSV: annotator, scenario_id, attribute, llm_relevant, label (0/1)."""
        from prefdisco.annotate.service import export

        n = export(db, out)
        console.print(f"wrote {n} labels to {out}")

    @annotate.command("stats", help=STATS_HELP)
    def stats_command(
        db: Annotated[Path | None, typer.Option("--db", help="annotation database")] = None,
        from_csv: Annotated[Path | None, typer.Option("--from", help="CSV written by `annotate export`")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="print the statistics as JSON")] = False,
    ) -> None:
        from prefdisco.annotate.stats import stats

        result = stats(db=db, csv=from_csv)
        if as_json:
            typer.echo(json.dumps(result.to_json(), indent=2))
            return
        _print_stats(result)

    from prefdisco.annotate.play_cli import register_play
    from prefdisco.annotate.rating_cli import register_ratings

    register_ratings(annotate)
    register_play(annotate)
    app.add_typer(annotate, name="annotate")


def _print_stats(result: AgreementStats) -> None:
    def fmt(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    console.print(f"{result.n_annotators} annotators, {result.n_items} items labelled by all", highlight=False)
    if result.n_items_partial:
        console.print(f"{result.n_items_partial} items not labelled by everyone were left out", highlight=False)
    kappa = fmt(result.fleiss_kappa)
    console.print(f"Fleiss' kappa: {kappa}" + (f" ({result.fleiss_kappa_note})" if result.fleiss_kappa_note else ""))
    table = Table("annotator", "accuracy vs majority of others", "accuracy vs majority of all")
    for name, accuracy in result.annotator_accuracy_vs_majority.items():
        table.add_row(name, fmt(accuracy), fmt(result.annotator_accuracy_vs_majority_all.get(name)))
    console.print(table)
    console.print(f"mean accuracy vs majority of others: {fmt(result.mean_accuracy_vs_majority)}")
    llm = ", ".join(f"{k} {fmt(v)}" for k, v in result.llm_vs_majority.items())
    console.print(f"builder LLM vs human majority: {llm}", highlight=False)
    console.print(f"tie rule: {result.tie_rule}", highlight=False)
