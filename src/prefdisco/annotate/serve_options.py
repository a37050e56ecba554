"""What ``annotate serve`` and ``annotate serve-ratings`` share: their server options and their start-up lines.

Both commands take ``--db``, ``--host``, ``--port``, ``--seed``, ``--token`` (repeated) and ``--tokens-file``; after
preparing their items both print the notes, the annotators with tokens, a warning when the app is reachable from
other machines and the address, then serve until Ctrl+C.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from prefdisco.annotate.auth import Tokens, parse_tokens

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
console = Console()

Host = Annotated[str, typer.Option(help="interface to bind")]
Port = Annotated[int, typer.Option(min=1, max=65535)]
TokenSpecs = Annotated[list[str] | None, typer.Option("--token", help="NAME=TOKEN; repeat for each annotator")]
TokensFile = Annotated[Path | None, typer.Option(help="file with one NAME=TOKEN per line ('#' comments allowed)")]
Seed = Annotated[int | None, typer.Option(help="sampling seed on first start [default: 0]")]


def db_option(answers: str) -> Any:
    """``--db``: the SQLite file for the items and ``answers`` (created if absent)."""
    return typer.Option("--db", help=f"SQLite file for items and {answers} (created if absent)")


def read_tokens(token: list[str] | None, tokens_file: Path | None) -> Tokens:
    """The ``--token`` and ``--tokens-file`` access tokens (none: anyone may log in with a name)."""
    return parse_tokens(token or [], tokens_file)


def announce_and_serve(notes: list[str], tokens: Tokens, host: str, port: int, serve: Callable[[], None]) -> None:
    """The start-up lines after the item summary, then ``serve()``."""
    for note in notes:
        console.print(f"[yellow]note:[/] {note}", highlight=False)
    if tokens:
        console.print(f"access tokens configured for: {', '.join(tokens.annotators)}")
    if host not in LOCAL_HOSTS:
        console.print(f"[yellow]warning:[/] binding to {host}: the app is reachable from other machines")
    console.print(f"open http://{host}:{port}/ (Ctrl+C to stop)")
    serve()
