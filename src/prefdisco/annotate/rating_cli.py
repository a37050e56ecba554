"""``prefdisco annotate serve-ratings | export-ratings``: human 1-5 ratings of an evaluation run's responses."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

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

SERVE_HELP = """Serve the response-rating app for the eval run RUN_DIR (binds to 127.0.0.1 unless --host says
otherwise).

Annotators see the problem, one response and one rubric criterion with its five level anchors, never the judge's
score, the model or the condition, and give a score 1-5. The first start draws the items from the run (stratified
by mode and judge score, seeded) and stores them in --db; later starts and all annotators see the same items.
Log-in and --token/--tokens-file work as in `annotate serve`."""


def register_ratings(annotate: typer.Typer) -> None:
    @annotate.command("serve-ratings", help=SERVE_HELP)
    def serve_ratings_command(
        run_dir: Annotated[Path, typer.Argument(help="eval run folder (prefdisco eval --log-dir)")],
        db: Annotated[Path, db_option("ratings")],
        bench: Annotated[
            Path | None,
            typer.Option("--bench", help="the benchmark the run evaluated (folder, scenarios.jsonl or release file)"),
        ] = None,
        host: Host = "127.0.0.1",
        port: Port = 8000,
        items: Annotated[
            int | None, typer.Option("--items", min=1, help="items drawn on first start [default: 60]")
        ] = None,
        seed: Seed = None,
        token: TokenSpecs = None,
        tokens_file: TokensFile = None,
    ) -> None:
        from prefdisco.annotate.rating_service import prepare_ratings, serve_ratings

        check_port(host, port)  # a busy port fails before the database is written
        tokens = read_tokens(token, tokens_file)
        prepared = prepare_ratings(run_dir, db, bench=bench, n_items=items, seed=seed)
        state = "drawn and stored" if prepared.created else "loaded from the database"
        modes = ", ".join(f"{mode} ({n})" for mode, n in prepared.modes.items())
        console.print(f"{len(prepared.items)} rating items {state}: {modes}", highlight=False)
        console.print(f"items {prepared.n_items}, seed {prepared.seed}", highlight=False)
        announce_and_serve(prepared.notes, tokens, host, port, lambda: serve_ratings(db, host, port, tokens))

    @annotate.command("export-ratings")
    def export_ratings_command(
        db: Annotated[Path, typer.Option("--db", help="annotation database with rating items")],
        out: Annotated[Path, typer.Option("--out", help="CSV to write (atomically)")],
    ) -> None:
        """Write every rating as CSV: annotator, scenario_id, mode, attribute, score (1-5), plus model, task,
        fixed_k and epoch when the run has several (input of `prefdisco calibrate --human`)."""
        from prefdisco.annotate.rating_service import export_ratings

        n, columns = export_ratings(db, out)
        console.print(f"wrote {n} ratings to {out} (columns: {', '.join(columns)})", highlight=False)
