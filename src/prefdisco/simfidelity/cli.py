"""``prefdisco simfidelity --human RUN --sim RUN [--sim RUN …] --bench BENCH --out DIR``: how far each simulated
user is from people (the replay in ``simfidelity/replay.py``, the measures in ``simfidelity/measures.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

console = Console()


def _transcripts(data: Any) -> list[dict[str, Any]]:
    from prefdisco.benchio import json_lines
    from prefdisco.errors import UserError

    if data.transcript_rows is not None:
        return [dict(r) for r in data.transcript_rows.to_dict("records")]
    if data.transcripts is None:
        raise UserError(f"--human {data.source}: no transcripts.jsonl beside the results: nothing to replay")
    rows = []
    for lineno, obj in json_lines(Path(data.transcripts)):
        if isinstance(obj, json.JSONDecodeError):
            raise UserError(f"{data.transcripts}: line {lineno}: not a JSON object ({obj.msg})")
        rows.append(obj)
    return rows


OUTPUTS = ("summary.json", "fidelity.csv", "replay_measures.csv", "replay_turns.csv", "outcome.csv", "replay.jsonl")
"""What ``prefdisco simfidelity`` writes into ``--out``."""
USER_SIDE = ("user_type", "user_temperature", "user_max_tokens", "user_reasoning_effort", "user_retry", "user_model")
"""The protocol settings that make a simulated user: what the compared runs may differ in."""


def beyond_the_user(human: Any, sim: Any) -> list[str]:
    """What differs between two protocol records besides the simulated user (``differences``; the prompt hash is
    compared only when the user types agree, since it holds the user's own templates)."""
    from prefdisco.results.protocol_record import differences

    same_user = human.settings.get("user_type") == sim.settings.get("user_type")
    return [
        d
        for d in differences(human, sim)
        if d.split(" ", 1)[0] not in USER_SIDE and (same_user or not d.startswith("prompts "))
    ]


def refuse_written(out: Path, overwrite: bool) -> None:
    """An ``--out`` holding an earlier result is refused in one line unless ``--overwrite``."""
    from prefdisco.errors import UserError

    held = [name for name in OUTPUTS if (out / name).is_file()] if out.is_dir() else []
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a folder")
    if held and not overwrite:
        raise UserError(
            f"--out {out}: holds a simulator fidelity result ({', '.join(held)}); give --overwrite to replace it "
            "(its calls replay from the cache), or another --out"
        )


def simfidelity_command(
    out: Annotated[Path, typer.Option(help="Folder for fidelity.csv, the replay and outcome tables, summary.json.")],
    human: Annotated[Path | None, typer.Option(help="The run whose user was a person (or the reference run).")] = None,
    sim: Annotated[
        list[Path] | None, typer.Option(help="A simulated run (repeat): its user type and model are replayed.")
    ] = None,
    bench: Annotated[
        Path | None, typer.Option(help="The benchmark the runs used (personas, profiles, problems).")
    ] = None,
    reference: Annotated[
        tuple[str, Path] | None,
        typer.Option(
            metavar="KIND PATH",
            help="Measure simulated users against real people's answers instead of a run: qulac PATH (Qulac's "
            "qulac.json) or clariq PATH (a TSV with question, answer and facet_desc columns).",
        ),
    ] = None,
    user_type: Annotated[
        list[str] | None,
        typer.Option(help="--reference: a simulated user type to measure (repeat; paired with --user-model)."),
    ] = None,
    user_model: Annotated[
        list[str] | None,
        typer.Option(help="--reference: its user model (repeat, one per --user-type, or one for all)."),
    ] = None,
    user_temperature: Annotated[
        list[float] | None,
        typer.Option(
            help="--reference: the simulated users' temperature (eval's default 0.7; repeat, one per --user-type, "
            "or one for all)."
        ),
    ] = None,
    user_max_tokens: Annotated[int | None, typer.Option(help="--reference: max tokens per reply.")] = None,
    user_reasoning_effort: Annotated[str | None, typer.Option(help="--reference: the users' reasoning effort.")] = None,
    user_retry: Annotated[
        int, typer.Option(min=0, max=3, help="--reference: redraws of a flagged reply (eval's --user-retry).")
    ] = 0,
    limit: Annotated[
        int | None, typer.Option(min=1, help="--reference: N rows, a seeded sample stratified by topic.")
    ] = None,
    topics: Annotated[
        str, typer.Option(help="--reference: all, fit or heldout: the half of the topics to draw rows from.")
    ] = "all",
    dry_run: Annotated[bool, typer.Option(help="--reference: print the calls and their cost, make none.")] = False,
    prices: Annotated[Path | None, typer.Option(help="--reference --dry-run: a prices file (eval's --prices).")] = None,
    judge_model: Annotated[
        str | None,
        typer.Option(
            help="The grader of the replay's audits (default: the human run's first judge); with --reference, the "
            "targeted user's question mapper."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the replay's calls and of the bootstrap.")] = 0,
    bootstrap: Annotated[int, typer.Option(min=0, help="Bootstrap resamples of each outcome difference.")] = 1000,
    allow_mixed: Annotated[
        bool,
        typer.Option(
            help="Compare runs whose protocols differ beyond the simulated user (another judge, preset, budget...)."
        ),
    ] = False,
    overwrite: Annotated[
        bool, typer.Option(help="Replace what --out holds (its calls replay from the cache).")
    ] = False,
) -> None:
    """Replay every question a model asked a person to each simulator, compare the replies (revealed, volunteered,
    length, flags, values) and the outcomes (PrefAlign, NormAlign), and rank the simulators by fidelity; or, with
    --reference, ask each simulated user the questions real people answered and compare how they answer."""
    from prefdisco.errors import UserError

    if reference is not None and reference[0] is not None:
        if human is not None or sim or bench is not None:
            raise UserError(
                "--reference: measures simulated users against people's answers: drop --human, --sim, --bench"
            )
        from prefdisco.simfidelity.reference_cli import reference_fidelity

        reference_fidelity(
            reference[0], Path(reference[1]), out, user_type or ["passive"], user_model or [], seed=seed,
            temperatures=user_temperature, max_tokens=user_max_tokens, reasoning_effort=user_reasoning_effort,
            user_retry=user_retry, limit=limit, judge_model=judge_model, bootstrap=bootstrap,
            overwrite=overwrite, dry_run=dry_run, prices=prices, topics=topics,
        )  # fmt: skip
        return
    only = (("--user-type", user_type), ("--user-model", user_model), ("--limit", limit))
    given = [f for f, v in (*only, ("--topics", topics != "all")) if v]
    if given or dry_run:
        raise UserError(f"{(given or ['--dry-run'])[0]}: only with --reference (a run's simulator is its own)")
    if human is None or not sim or bench is None:
        missing = [f for f, v in (("--human", human), ("--sim", sim), ("--bench", bench)) if not v]
        raise UserError(f"{missing[0]}: needed (or --reference KIND PATH to measure against people's answers)")
    from prefdisco.analysis.section.shown import plain
    from prefdisco.analysis.stats.trials import average_trials
    from prefdisco.atomic import atomic_write
    from prefdisco.evaluation.protocol.protocols import rubrics_hash
    from prefdisco.evaluation.running.task import load_scenarios
    from prefdisco.results.protocol_record import read_record
    from prefdisco.results.table import load_results
    from prefdisco.simfidelity.measures import (
        COMPONENTS,
        fidelity_caveats,
        outcome_table,
        replay_fidelity_table,
        replay_measures,
        shared_components,
        turn_table,
    )
    from prefdisco.simfidelity.replay import Simulator, replay

    refuse_written(out, overwrite)
    scenarios = load_scenarios(bench)
    rubrics = rubrics_hash(scenarios)
    human_data = load_results(human)
    human_record = read_record(human) if human.is_dir() else None
    if human_record is None and not allow_mixed:
        raise UserError(
            f"--human {human}: no protocol.json, so what its numbers were made under is not recorded; give its run "
            "folder, or --allow-mixed to compare without checking"
        )
    simulators, simulated = [], {}
    for run in sim:
        record = read_record(run) if run.is_dir() else None
        if record is None:
            raise UserError(f"--sim {run}: no protocol.json, so its simulated user is not recorded; give a run folder")
        for name, rec in (("--human", human_record), ("--sim", record)):
            if rec is not None and rec.rubrics is not None and rec.rubrics != rubrics:
                raise UserError(
                    f"{name} {run if name == '--sim' else human}: ran another benchmark than --bench {bench}"
                )
        if human_record is not None and not allow_mixed:
            apart = beyond_the_user(human_record, record)
            if apart:
                more = f" (and {len(apart) - 1} more)" if len(apart) > 1 else ""
                raise UserError(
                    f"--sim {run}: another protocol than --human {human} beyond the simulated user: {apart[0]}{more}; "
                    "the outcome difference would measure that too (--allow-mixed to compare anyway)"
                )
        label = run.name or str(run)
        if label in simulated:
            raise UserError(f"--sim {run}: two simulated runs named {label!r}; give folders of different names")
        settings = record.settings
        simulators.append(
            Simulator(
                label,
                str(settings["user_type"]),
                record.user_model,
                settings.get("user_temperature"),
                settings.get("user_max_tokens"),
                settings.get("user_reasoning_effort"),
                int(settings.get("user_retry") or 0),
            )
        )
        simulated[label] = average_trials(load_results(run).results)
    grader = judge_model or (human_record.judges[0] if human_record is not None else None)
    if grader is None:
        raise UserError("--judge-model: the human run records no judge (no protocol.json); name the grader")
    records = replay(_transcripts(human_data), {s.id: s for s in scenarios}, simulators, grader, out, seed=seed)
    turns = turn_table(records)
    measures = replay_measures(turns)
    outcome, ranks = outcome_table(average_trials(human_data.results), simulated, seed=seed, n_boot=bootstrap)
    fidelity = replay_fidelity_table(measures, outcome)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / "replay.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    for name, table in (
        ("fidelity.csv", fidelity),
        ("replay_measures.csv", measures),
        ("replay_turns.csv", turns),
        ("outcome.csv", outcome),
    ):
        atomic_write(out / name, table.to_csv(index=False))
    shared = shared_components(fidelity)
    left = [c for c in COMPONENTS if c not in shared]
    summary = {
        "human": str(human),
        "bench": str(bench),
        "judge_model": grader,
        "seed": seed,
        "bootstrap": bootstrap,
        "allow_mixed": allow_mixed,
        "simulators": [dict(s.__dict__) for s in simulators],
        "replay_fidelity_components": shared,
        "components_left_out": left,
        "replay_fidelity": json.loads(fidelity.to_json(orient="records")),
        "replay": json.loads(measures.to_json(orient="records")),
        "outcome": json.loads(outcome.to_json(orient="records")),
        "rank_correlation": ranks,
    }
    invalid = int(measures["value_judgements_invalid"].sum()) if len(measures) else 0
    summary["caveats"] = fidelity_caveats([*(s.user_model for s in simulators), grader], left, invalid)
    atomic_write(out / "summary.json", json.dumps(plain(summary), indent=2, allow_nan=False))  # NaN: null
    for row in fidelity.to_dict("records"):
        score = "—" if row["replay_fidelity"] is None else f"{row['replay_fidelity']:.3f}"
        console.print(f"{row['rank']}. {row['simulator']}: replay fidelity {score}", markup=False, highlight=False)
    for note in summary["caveats"]:  # the same lines the summary keeps
        console.print(note, markup=False, highlight=False, soft_wrap=True)
    console.print(
        f"{len(records)} replayed replies; wrote fidelity.csv, replay_measures.csv, replay_turns.csv, outcome.csv, "
        f"replay.jsonl, summary.json to {out}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    app.command("simfidelity")(simfidelity_command)
