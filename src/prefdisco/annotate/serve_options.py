"""What every study's serve command shares (``annotate serve``, ``serve-ratings``, ``serve-play``): their server
options, their start-up lines and the server itself (``serve_app``).

All take ``--db``, ``--host``, ``--port``, ``--seed``, ``--token`` (repeated) and ``--tokens-file``; all
check first that they can listen on ``--host``/``--port`` (a busy port fails before anything is written); after
preparing their items all print the notes, the annotators with tokens, a warning when the app is reachable from
other machines and the address, then serve until Ctrl+C.
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from prefdisco.annotate.auth import Tokens, parse_tokens
from prefdisco.errors import UserError

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


def check_port(host: str, port: int) -> None:
    """Fail in one line, before any item is prepared or the database written, when the app could not listen on
    ``host:port`` (another server holds the port, or the host is not an address of this machine)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as e:
        raise UserError(f"--host {host}: not an address of this machine ({e.strerror})") from None
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: a closed port is free
        try:
            probe.bind(address)
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                busy = f"--port {port}: {host}:{port} is in use (another server?); give another --port"
                raise UserError(busy) from None
            raise UserError(f"--host {host} --port {port}: cannot listen there ({e.strerror})") from None


def serve_app(app: Any, host: str, port: int) -> None:
    """Serve a study's ASGI app with uvicorn until Ctrl+C (every study's ``serve``)."""
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level="info")


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
