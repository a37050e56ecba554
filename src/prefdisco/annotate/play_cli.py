"""``prefdisco annotate serve-play | export-play``: a person plays the user of a model under test, live."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from prefdisco.annotate.serve_options import (
    Host,
    Port,
    TokensFile,
    TokenSpecs,
    announce_and_serve,
    check_port,
    console,
    db_option,
    read_tokens,
)

SERVE_HELP = """Serve the play-the-user study for BENCH_DIR (binds to 127.0.0.1 unless --host says otherwise).

A participant logs in, sees a persona card and that person's preferences for the problem (values and reasons),
and answers, in the page, the questions the model under test (--model) asks in discovery (at most --k questions)
or fixed-K (exactly --k). The model and the judge (--judge-model) are called by this server through inspect;
their keys stay in its environment. Every step is saved in --db: a participant who closes the page resumes where
they were. A finished dialogue is scored by the judge as a simulated one is; baseline and oracle are played once
per scenario (unless --no-references) so NormAlign is defined. `annotate export-play` writes the run folder."""


def register_play(annotate: typer.Typer) -> None:
    @annotate.command("serve-play", help=SERVE_HELP)
    def serve_play_command(
        bench_dir: Annotated[Path, typer.Argument(help="benchmark folder (written by prefdisco build)")],
        model: Annotated[str, typer.Option("--model", help="the model under test (inspect name, provider/model)")],
        judge_model: Annotated[str, typer.Option("--judge-model", help="the judge (inspect name, provider/model)")],
        db: Annotated[Path, db_option("dialogues")],
        mode: Annotated[str, typer.Option("--mode", help="discovery (at most K questions) or fixed_k")] = "discovery",
        k: Annotated[int, typer.Option("--k", help="the question budget K")] = 5,
        host: Host = "127.0.0.1",
        port: Port = 8000,
        per_task: Annotated[
            int | None, typer.Option(min=1, help="problems drawn per task on first start [default: every scenario]")
        ] = None,
        seed: Annotated[int, typer.Option(help="the run seed of the calls' seeds and the draw (as eval --seed)")] = 0,
        judge: Annotated[str, typer.Option("--judge", help="per_criterion or structured")] = "per_criterion",
        references: Annotated[
            bool, typer.Option("--references/--no-references", help="play baseline and oracle once per scenario")
        ] = True,
        token: TokenSpecs = None,
        tokens_file: TokensFile = None,
    ) -> None:
        from prefdisco.annotate.play_service import load_models, prepare_play, serve_play
        from prefdisco.annotate.play_session import PlaySettings
        from prefdisco.errors import UserError
        from prefdisco.scoring.judging import JUDGES

        if judge not in JUDGES:
            raise UserError(f"--judge: expected one of {', '.join(JUDGES)}, got {judge!r}")
        settings = PlaySettings(mode=mode, k=k, seed=seed, judge=judge, references=references)
        check_port(host, port)  # a busy port fails before the database is written
        tokens = read_tokens(token, tokens_file)
        load_models(model, judge_model)  # an unknown provider or a missing key fails before anything is written
        prepared = prepare_play(bench_dir, db, model, judge_model, settings, per_task=per_task)
        state = "drawn and stored" if prepared.created else "loaded from the database"
        console.print(f"{len(prepared.items)} scenarios {state}", highlight=False)
        console.print(
            f"model {model}, judge {judge_model}, {settings.condition} (K {settings.k}), seed {settings.seed}",
            highlight=False,
        )
        announce_and_serve([], tokens, host, port, lambda: serve_play(db, model, judge_model, host, port, tokens))

    @annotate.command("export-play")
    def export_play_command(
        db: Annotated[Path, typer.Option("--db", help="annotation database with a play study")],
        out: Annotated[Path, typer.Option("--out", help="run folder to write (results, attributes, transcripts)")],
        overwrite: Annotated[bool, typer.Option("--overwrite", help="replace the tables --out holds")] = False,
    ) -> None:
        """Write the play study's scored dialogues (and its baseline and oracle) as a run folder `prefdisco report`
        reads: results.csv, attributes.csv, transcripts.jsonl, protocol.json (user_type human) and play.json."""
        from prefdisco.annotate.play_export import export_play

        done = export_play(db, out, overwrite=overwrite)
        console.print(
            f"wrote {done.dialogues} dialogues of {done.participants} participants and {done.references} baseline/"
            f"oracle responses to {out} (protocol {done.protocol_id})",
            highlight=False,
        )
