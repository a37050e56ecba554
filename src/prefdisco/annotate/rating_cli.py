"""``prefdisco annotate serve-ratings | export-ratings``: human 1-5 ratings of an evaluation run's responses."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

console = Console()

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
        db: Annotated[Path, typer.Option("--db", help="SQLite file for items and ratings (created if absent)")],
        bench: Annotated[
            Path | None,
            typer.Option("--bench", help="the benchmark the run evaluated (folder, scenarios.jsonl or release file)"),
        ] = None,
        host: Annotated[str, typer.Option(help="interface to bind")] = "127.0.0.1",
        port: Annotated[int, typer.Option(min=1, max=65535)] = 8000,
        items: Annotated[
            int | None, typer.Option("--items", min=1, help="items drawn on first start [default: 60]")
        ] = None,
        seed: Annotated[int | None, typer.Option(help="sampling seed on first start [default: 0]")] = None,
        token: Annotated[
            list[str] | None, typer.Option("--token", help="NAME=TOKEN; repeat for each annotator")
        ] = None,
        tokens_file: Annotated[
            Path | None, typer.Option(help="file with one NAME=TOKEN per line ('#' comments allowed)")
        ] = None,
    ) -> None:
        from prefdisco.annotate.auth import parse_tokens
        from prefdisco.annotate.rating_service import prepare_ratings, serve_ratings

        tokens = parse_tokens(token or [], tokens_file)
        prepared = prepare_ratings(run_dir, db, bench=bench, n_items=items, seed=seed)
        state = "drawn and stored" if prepared.created else "loaded from the database"
        modes = ", ".join(f"{mode} ({n})" for mode, n in prepared.modes.items())
        console.print(f"{len(prepared.items)} rating items {state}: {modes}", highlight=False)
        console.print(f"items {prepared.n_items}, seed {prepared.seed}", highlight=False)
        for note in prepared.notes:
            console.print(f"[yellow]note:[/] {note}", highlight=False)
        if tokens:
            console.print(f"access tokens configured for: {', '.join(tokens.annotators)}")
        if host not in ("127.0.0.1", "localhost", "::1"):
            console.print(f"[yellow]warning:[/] binding to {host}: the app is reachable from other machines")
        console.print(f"open http://{host}:{port}/ (Ctrl+C to stop)")
        serve_ratings(db, host, port, tokens)

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
