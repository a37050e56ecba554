"""``prefdisco sessions``: plan a session set on a benchmark and write it (``docs/sessions.md``)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console


def register(app: typer.Typer) -> None:
    """Add ``sessions`` to ``app``."""

    @app.command("sessions")
    def sessions_cmd(
        bench: Path = typer.Argument(
            ..., help="A benchmark folder, a scenarios.jsonl file, or a prefq-bench release JSONL file."
        ),
        length: int = typer.Option(..., "--length", min=2, help="Problems per session (K)."),
        out: Path = typer.Option(..., "--out", help="Session file to write (JSONL)."),
        count: int | None = typer.Option(
            None, "--count", min=1, help="How many sessions (default: every one that can be made)."
        ),
        seed: int = typer.Option(0, "--seed", help="Seed of the order, the choice of sessions and the drift."),
        drift: float = typer.Option(
            0.0,
            "--drift",
            min=0.0,
            max=1.0,
            help="Share of the recurring attributes whose value changes from the middle of each session on.",
        ),
        overwrite: bool = typer.Option(False, "--overwrite", help="Replace the file --out holds."),
    ) -> None:
        """Choose sessions: one person and K of their scenarios of different problems, in a seeded order, with
        each position's attributes labelled recurring, changed or new (optionally drifted)."""
        from prefdisco.overwrite import refuse_overwrite
        from prefdisco.release.convert import load_scenarios
        from prefdisco.sessions.model import write_session_set
        from prefdisco.sessions.plan import plan_sessions, summary_line

        refuse_overwrite(out, overwrite)
        scenarios = load_scenarios(bench)
        session_set = plan_sessions(scenarios, length, count=count, seed=seed, drift=drift, source=str(bench))
        write_session_set(out, session_set)
        Console(highlight=False, soft_wrap=True).print(summary_line(session_set, str(out)), markup=False)
