"""The one server (``serve_studies``) and its options: ``annotate serve --study ...`` and its aliases
``serve-ratings`` and ``serve-play`` all start it.

All take ``--db``, ``--host``, ``--port``, ``--seed``, ``--token`` (repeated) and ``--tokens-file``. The server
checks each study's options, then that it can listen on ``--host``/``--port`` (a busy port fails before anything
is written), loads what the studies need (the play study's models), prepares each study's items in the one
database, prints their summaries, the notes, the annotators with tokens, a warning when the app is reachable from
other machines and the address, then serves every study from one app (``task_app.StudyServer``: one log-in, one
token set, one overview) until Ctrl+C.
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from prefdisco.annotate.auth import CookieSigner, Tokens, parse_tokens
from prefdisco.annotate.middleware import MAX_BODY_BYTES
from prefdisco.annotate.study import ServeOptions, Study, select_studies
from prefdisco.annotate.task_app import StudyServer
from prefdisco.errors import UserError

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
console = Console()

Host = Annotated[str, typer.Option(help="interface to bind")]
Port = Annotated[int, typer.Option(min=1, max=65535)]
TokenSpecs = Annotated[list[str] | None, typer.Option("--token", help="NAME=TOKEN; repeat for each annotator")]
TokensFile = Annotated[Path | None, typer.Option(help="file with one NAME=TOKEN per line ('#' comments allowed)")]
Seed = Annotated[int | None, typer.Option(help="every study's sampling seed on first start (default: 0)")]


def db_option(answers: str) -> Any:
    """``--db``: the SQLite file for the items and ``answers`` (created if absent)."""
    return typer.Option("--db", help=f"SQLite file for items and {answers} (created if absent)")


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
    """Serve the ASGI app with uvicorn until Ctrl+C."""
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level="info")


def build_app(studies: list[Study], tokens: Tokens, max_body: int = MAX_BODY_BYTES) -> Any:
    """The one ASGI app: each prepared study's handlers on the shared shell, with one token set and cookie."""
    signer = CookieSigner()
    return StudyServer([study.handlers(tokens, signer) for study in studies]).asgi(max_body)


def serve_studies(
    names: list[str],
    db: Path,
    options: ServeOptions,
    host: str,
    port: int,
    token: list[str] | None,
    tokens_file: Path | None,
) -> None:
    """``annotate serve``: check, load, prepare and serve the named studies from one database and one app."""
    studies = select_studies(names, db, options)  # the options' one-line errors come first
    check_port(host, port)  # a busy port fails before the database is written
    tokens = parse_tokens(token or [], tokens_file)  # none: anyone may log in with a name
    for study in studies:
        study.load()  # e.g. an unknown provider or a missing key fails before anything is written
    notes: list[str] = []
    for study in studies:
        started = study.prepare()
        for line in started.lines:
            console.print(line if len(studies) == 1 else f"{study.name}: {line}", highlight=False)
        notes += [note if len(studies) == 1 else f"{study.name}: {note}" for note in started.notes]
    app = build_app(studies, tokens)
    if len(studies) > 1:
        console.print(f"studies: {', '.join(f'{s.name} ({s.pages.path})' for s in studies)}", highlight=False)
    announce_and_serve(notes, tokens, host, port, lambda: serve_app(app, host, port))


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
