"""``prefdisco judge RUN_DIR``: judge a ``prefdisco eval --judge later`` run, or add a further judge to any run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

console = Console()


def judge_command(
    run_dir: Annotated[Path, typer.Argument(help="A prefdisco eval run folder (its run.json and logs).")],
    judge_model: Annotated[
        list[str] | None,
        typer.Option(
            help="Judge model (default: the run's own --judge-model). Repeat for a panel. Judges that have not "
            "judged the run yet add their criterion scores beside the first judging."
        ),
    ] = None,
    judge: Annotated[
        str | None,
        typer.Option(
            help="per_criterion (the paper's) or structured (one call); default: the run's, else per_criterion."
        ),
    ] = None,
    judge_repeats: Annotated[
        int | None, typer.Option(min=1, help="Times each judge scores each criterion (default: the run's).")
    ] = None,
    judge_temperature: Annotated[
        float | None, typer.Option(help="Temperature of the judge(s) (default: the run's --judge-temperature).")
    ] = None,
    batch: Annotated[
        bool, typer.Option(help="Send the judge calls through the provider's batch API where inspect has one.")
    ] = False,
    judge_max_connections: Annotated[
        int | None, typer.Option(min=1, help="Judge calls in flight at most, across the run.")
    ] = None,
    prices: Annotated[
        Path | None,
        typer.Option(
            help='JSON {"provider/model": {"input": USD/1M, "output": USD/1M}}, over the packaged table of common '
            "models' prices."
        ),
    ] = None,
) -> None:
    """Judge the dialogues of RUN_DIR without rerunning the assistant or the user, then rewrite its tables.

    Resumable and idempotent: a log already judged by these judges is skipped, and calls a crash interrupted
    replay from the run's cache. Writes RUN_DIR/results.csv, attributes.csv, transcripts.jsonl and judgings.json.
    """
    from prefdisco.evaluation.later.judge_later import JudgeOptions, judge_run
    from prefdisco.prices import prices as price_book

    options = JudgeOptions(
        judge_models=list(judge_model) if judge_model else None,
        judge=judge,
        judge_repeats=judge_repeats,
        temperature=judge_temperature,
        batch=batch,
        judge_max_connections=judge_max_connections,
        prices=price_book(prices),  # the packaged table, --prices over it
    )
    outcome = judge_run(run_dir, options)
    for note in outcome.notes:
        console.print(note, markup=False, highlight=False, soft_wrap=True)
    results = outcome.tables.results
    pending = int((results["judged"] == 0).sum()) if len(results) else 0
    failed = int(results["failed"].sum()) if len(results) else 0
    console.print(
        f"judged {len(outcome.judged)} log(s), {len(outcome.skipped)} already judged; {len(results)} result rows "
        f"({pending} not judged, {failed} failed) → {run_dir / 'results.csv'}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    console.print(
        f"next: prefdisco report {run_dir} --out {run_dir / 'report'}", markup=False, highlight=False, soft_wrap=True
    )


def regrade_command(
    run_dir: Annotated[Path, typer.Argument(help="A prefdisco eval run folder.")],
    bench: Annotated[
        Path,
        typer.Option(help="The corrected benchmark: every scenario of the run; only rubrics, weights, golds differ."),
    ],
    out: Annotated[Path, typer.Option(help="The new run folder: the run's dialogues, judged again.")],
    judge_model: Annotated[
        list[str] | None, typer.Option(help="Judge model(s) (default: the run's). Repeat for a panel.")
    ] = None,
    judge: Annotated[str | None, typer.Option(help="per_criterion or structured (default: the run's).")] = None,
    judge_repeats: Annotated[int | None, typer.Option(min=1, help="Times each judge scores each criterion.")] = None,
    judge_temperature: Annotated[
        float | None, typer.Option(help="Temperature of the judge(s) (default: the run's).")
    ] = None,
    judge_max_connections: Annotated[
        int | None, typer.Option(min=1, help="Judge calls in flight at most, across the run.")
    ] = None,
    prices: Annotated[
        Path | None, typer.Option(help="JSON prices over the packaged table (as prefdisco eval).")
    ] = None,
) -> None:
    """Judge RUN_DIR's dialogues again against a corrected benchmark (or with another judge) into --out, without
    rerunning them; record the protocol change. Unchanged criteria replay the run's judgements from its cache."""
    from prefdisco.evaluation.later.judge_later import JudgeOptions
    from prefdisco.evaluation.later.regrade import RegradeOptions, regrade_run
    from prefdisco.prices import prices as price_book

    options = RegradeOptions(
        bench=bench,
        judging=JudgeOptions(
            judge_models=list(judge_model) if judge_model else None,
            judge=judge,
            judge_repeats=judge_repeats,
            temperature=judge_temperature,
            judge_max_connections=judge_max_connections,
            prices=price_book(prices),
        ),
    )
    outcome = regrade_run(run_dir, out, options)
    record = outcome.record
    changes = (record.regraded_from or {}).get("changes") or ["nothing but the judging"]
    console.print(
        f"regraded {outcome.judged} log(s) ({outcome.skipped} already regraded); {len(outcome.changed)} scenario(s) "
        f"with changed rubrics, weights or golds; {outcome.results_rows} result rows → {out / 'results.csv'}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    console.print(
        f"protocol: {record.described()}; changed: {'; '.join(changes)}", markup=False, highlight=False, soft_wrap=True
    )
    console.print(f"next: prefdisco report {out} --out {out / 'report'}", markup=False, highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("judge")(judge_command)
    app.command("regrade")(regrade_command)
