"""``prefdisco annotate``: the human studies, one app (``annotate/study.py``'s plug-ins on one server).

* ``serve BENCH_DIR --study NAME ...`` — one server hosting any set of the registered studies from one ``--db``
  (default: ``--study relevance``); ``serve-ratings`` and ``serve-play`` are its one-study aliases;
* ``export --study NAME`` — a study's answers (default: relevance labels); ``export-ratings`` and ``export-play``
  are its aliases;
* ``stats`` — the relevance study's agreement statistics."""

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
    console,
    db_option,
)
from prefdisco.cli_paths import CheckedGroup

if TYPE_CHECKING:
    from prefdisco.annotate.stats import AgreementStats

SERVE_HELP = """Serve the human studies for BENCH_DIR from one app and one --db (binds to 127.0.0.1 unless --host
says otherwise).

--study picks the studies (repeat it; default: relevance): relevance (annotators mark which candidate attributes
matter for a task), rating (annotators score one response of the eval run --run on one criterion, 1-5, blind to
the judge) and play (a participant answers, live, the questions of the model under test --model; the judge
--judge-model scores the dialogue). Each study lives under its own path (/annotate, /rate, /play); one log-in and
one overview cover them all. The first start draws each study's items and stores them in --db; later starts and
all annotators see the same items. Annotators log in with a name; with --token/--tokens-file only the listed
annotators may log in, each with their token. Prefer --tokens-file: command-line arguments are visible to other
users of the machine. An option no served study reads is an error."""

RATINGS_HELP = """Serve the response-rating study for the eval run RUN_DIR (alias of `annotate serve --study
rating`; binds to 127.0.0.1 unless --host says otherwise).

Annotators see the problem, one response and one rubric criterion with its five level anchors, never the judge's
score, the model or the condition, and give a score 1-5. The first start draws the items from the run (stratified
by mode and judge score, seeded) and stores them in --db; later starts and all annotators see the same items.
Log-in and --token/--tokens-file work as in `annotate serve`."""

PLAY_HELP = """Serve the play-the-user study for BENCH_DIR (alias of `annotate serve --study play`; binds to
127.0.0.1 unless --host says otherwise).

A participant logs in, sees a persona card and that person's preferences for the problem (values and reasons),
and answers, in the page, the questions the model under test (--model) asks in discovery (at most --k questions)
or fixed-K (exactly --k). The model and the judge (--judge-model) are called by this server through inspect;
their keys stay in its environment. Every step is saved in --db: a participant who closes the page resumes where
they were. A finished dialogue is scored by the judge as a simulated one is; baseline and oracle are played once
per scenario (unless --no-references) so NormAlign is defined. `annotate export-play` writes the run folder."""

EXPORT_HELP = """Write a study's answers from --db: relevance (default) the labels as CSV (annotator, scenario_id,
attribute, llm_relevant, label 0/1); rating the ratings as CSV (see export-ratings); play the run folder (see
export-play)."""

BenchDir = Annotated[Path, typer.Argument(help="benchmark folder (written by prefdisco build)")]
StudyNames = Annotated[
    list[str] | None,
    typer.Option("--study", help="a study to serve (repeat): relevance, rating, play (default: relevance)"),
]
RunDir = Annotated[Path | None, typer.Option("--run", help="rating: the eval run folder (prefdisco eval --log-dir)")]
RelevancePerTask = Annotated[
    int | None,
    typer.Option(
        min=1, help="per task on first start: relevance scenarios (default: 2), play problems (default: every scenario)"
    ),
]
Items = Annotated[int | None, typer.Option("--items", min=1, help="rating: items drawn on first start (default: 60)")]
Model = Annotated[str | None, typer.Option("--model", help="play: the model under test (inspect name, provider/model)")]
JudgeModel = Annotated[str | None, typer.Option("--judge-model", help="play: the judge (inspect name, provider/model)")]
Mode = Annotated[
    str | None, typer.Option("--mode", help="play: discovery (at most K questions) or fixed_k (default: discovery)")
]
K = Annotated[int | None, typer.Option("--k", help="play: the question budget K (default: 5)")]
Judge = Annotated[
    str | None, typer.Option("--judge", help="play: per_criterion or structured (default: per_criterion)")
]
References = Annotated[
    bool | None,
    typer.Option(
        "--references/--no-references", help="play: play baseline and oracle once per scenario (default: yes)"
    ),
]
Ask = Annotated[
    str | None,
    typer.Option(
        "--ask",
        "--protocol",
        help="play: the ask channel, text (QUESTION:) or tools (ask_user) (default: text); --protocol is its older "
        "name",
    ),
]
Preset = Annotated[
    str | None,
    typer.Option("--preset", help="play: the prompts and fixed settings, default or paper (default: default)"),
]
Out = Annotated[Path, typer.Option("--out", help="CSV (or, for play, run folder) to write (atomically)")]
Overwrite = Annotated[bool, typer.Option("--overwrite", help="play: replace the tables --out holds")]

STATS_HELP = f"""Agreement statistics: Fleiss' kappa over the items every annotator labelled, each
annotator's accuracy against the majority of the others (and of all), and the builder LLM's agreement with
the human majority (accuracy, precision, recall, Cohen's kappa). Tie rule: {TIE_RULE}."""


def register(app: typer.Typer) -> None:
    annotate = typer.Typer(
        cls=CheckedGroup,
        name="annotate",
        help="Human studies: attribute relevance, response ratings, play the user.",
        no_args_is_help=True,
    )

    @annotate.command("serve", help=SERVE_HELP)
    def serve_command(
        bench_dir: BenchDir,
        db: Annotated[Path, db_option("answers")],
        study: StudyNames = None,
        run: RunDir = None,
        host: Host = "127.0.0.1",
        port: Port = 8000,
        per_task: RelevancePerTask = None,
        seed: Seed = None,
        items: Items = None,
        model: Model = None,
        judge_model: JudgeModel = None,
        mode: Mode = None,
        k: K = None,
        judge: Judge = None,
        references: References = None,
        ask: Ask = None,
        preset: Preset = None,
        token: TokenSpecs = None,
        tokens_file: TokensFile = None,
    ) -> None:
        from prefdisco.annotate.serve_options import serve_studies
        from prefdisco.annotate.study import DEFAULT_STUDY, ServeOptions

        options = ServeOptions(
            bench=bench_dir, run=run, per_task=per_task, seed=seed, items=items, model=model,
            judge_model=judge_model, mode=mode, k=k, judge=judge, references=references, ask=ask,
            preset=preset,
        )  # fmt: skip
        serve_studies(study or [DEFAULT_STUDY], db, options, host, port, token, tokens_file)

    @annotate.command("serve-ratings", help=RATINGS_HELP)
    def serve_ratings_command(
        run_dir: Annotated[Path, typer.Argument(help="eval run folder (prefdisco eval --log-dir)")],
        db: Annotated[Path, db_option("ratings")],
        bench: Annotated[
            Path | None,
            typer.Option("--bench", help="the benchmark the run evaluated (folder, scenarios.jsonl or release file)"),
        ] = None,
        host: Host = "127.0.0.1",
        port: Port = 8000,
        items: Items = None,
        seed: Seed = None,
        token: TokenSpecs = None,
        tokens_file: TokensFile = None,
    ) -> None:
        from prefdisco.annotate.serve_options import serve_studies
        from prefdisco.annotate.study import ServeOptions

        options = ServeOptions(bench=bench, run=run_dir, items=items, seed=seed)
        serve_studies(["rating"], db, options, host, port, token, tokens_file)

    @annotate.command("serve-play", help=PLAY_HELP)
    def serve_play_command(
        bench_dir: BenchDir,
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
        ask: Annotated[
            str,
            typer.Option(
                "--ask",
                "--protocol",
                help="the ask channel, text (QUESTION:) or tools (ask_user); --protocol is its older name",
            ),
        ] = "text",
        preset: Annotated[
            str, typer.Option("--preset", help="the prompts and fixed settings: default or paper (prefdisco eval's)")
        ] = "default",
        token: TokenSpecs = None,
        tokens_file: TokensFile = None,
    ) -> None:
        from prefdisco.annotate.serve_options import serve_studies
        from prefdisco.annotate.study import ServeOptions

        options = ServeOptions(
            bench=bench_dir, model=model, judge_model=judge_model, mode=mode, k=k, per_task=per_task, seed=seed,
            judge=judge, references=references, ask=ask, preset=preset,
        )  # fmt: skip
        serve_studies(["play"], db, options, host, port, token, tokens_file)

    def export(name: str, db: Path, out: Path, overwrite: bool = False) -> None:
        from prefdisco.annotate.study import ServeOptions, study_class

        console.print(study_class(name)(db, ServeOptions()).export(out, overwrite), highlight=False)

    @annotate.command("export", help=EXPORT_HELP)
    def export_command(
        db: Annotated[Path, typer.Option("--db", help="annotation database")],
        out: Out,
        study: Annotated[
            str, typer.Option("--study", help="the study to export: relevance, rating, play")
        ] = "relevance",
        overwrite: Overwrite = False,
    ) -> None:
        export(study, db, out, overwrite)

    @annotate.command("export-ratings")
    def export_ratings_command(
        db: Annotated[Path, typer.Option("--db", help="annotation database with rating items")],
        out: Annotated[Path, typer.Option("--out", help="CSV to write (atomically)")],
    ) -> None:
        """Write every rating as CSV: annotator, scenario_id, mode, attribute, score (1-5), plus model, task,
        fixed_k and epoch when the run has several (input of `prefdisco calibrate --human`; alias of `annotate
        export --study rating`)."""
        export("rating", db, out)

    @annotate.command("export-play")
    def export_play_command(
        db: Annotated[Path, typer.Option("--db", help="annotation database with a play study")],
        out: Annotated[Path, typer.Option("--out", help="run folder to write (results, attributes, transcripts)")],
        overwrite: Annotated[bool, typer.Option("--overwrite", help="replace the tables --out holds")] = False,
        prices: Annotated[
            Path | None,
            typer.Option("--prices", help='JSON {"provider/model": {"input": USD/1M, "output": USD/1M}} for cost_usd'),
        ] = None,
    ) -> None:
        """Write the play study's scored dialogues (and its baseline and oracle) as a run folder `prefdisco report`
        reads: results.csv, attributes.csv, transcripts.jsonl, protocol.json (user_type human) and play.json, with
        the tokens each dialogue cost and cost_usd at the packaged prices (--prices over them) (alias of `annotate
        export --study play`)."""
        from prefdisco.annotate.play_service import PlayUserStudy
        from prefdisco.annotate.study import ServeOptions

        said = PlayUserStudy(db, ServeOptions()).export(out, overwrite, prices)
        console.print(said, highlight=False, markup=False, soft_wrap=True)

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
