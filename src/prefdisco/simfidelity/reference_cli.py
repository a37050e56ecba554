"""``prefdisco simfidelity --reference KIND PATH --user-type T --user-model M [...] --out DIR``: how each simulated user
answers the questions real people answered (``reference_replay.py``), against how they did
(``simfidelity/answer_behaviour.py``, the tables ``simfidelity/table.py``). Writes ``answers.csv``, ``reference.csv``,
``reference_pairs.csv``, ``reference_by_facet.csv``, ``summary.json`` and the page ``reference.html``
(``simfidelity/page.py``) to ``--out``; ``--dry-run`` prints the calls and their cost and makes none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console

from prefdisco.analysis.validity.reference import distances_text, pair_text
from prefdisco.atomic import atomic_write
from prefdisco.dialogue.user import USER_TYPES
from prefdisco.dialogue.user_reply import USER_MAX_TOKENS
from prefdisco.errors import UserError
from prefdisco.evaluation.protocol.protocols import user_prompts
from prefdisco.simfidelity.answer_behaviour import measured
from prefdisco.simfidelity.page import render_reference_page
from prefdisco.simfidelity.reference_replay import (
    ANSWERS_FILE,
    check_out,
    draw_rows,
    reference_scenario,
    replay_reference,
    run_settings,
)
from prefdisco.simfidelity.replay import Simulator
from prefdisco.simfidelity.rows import ReferenceRow, in_split, read_reference
from prefdisco.simfidelity.table import pairs_table, reference_table

console = Console()
DEFAULT_TEMPERATURE = 0.7
"""``prefdisco eval``'s user temperature."""
MEASURES = ("words", "starts_no", "starts_yes", "bare_yes_no", "dont_know", "disclosure", "discloses_any", "polarity")


def simulators_of(
    user_types: list[str],
    user_models: list[str],
    temperatures: list[float] | None,
    max_tokens: int | None,
    reasoning_effort: str | None,
    user_retry: int,
) -> list[Simulator]:
    """One simulator per ``--user-type``, paired with ``--user-model`` and ``--user-temperature`` by position (one
    given: every type's). Labelled ``USER_TYPE@USER_MODEL``, with its temperature where two share a type and model."""
    if not user_models:
        raise UserError("--user-model: name the simulated users' model (one, or one per --user-type)")
    for flag, given in (("--user-model", user_models), ("--user-temperature", temperatures or [])):
        if len(given) > 1 and len(given) != len(user_types):
            raise UserError(f"{flag}: {len(given)} given for {len(user_types)} --user-type; give one, or one per type")
    models = user_models * len(user_types) if len(user_models) == 1 else user_models
    temps = temperatures or [DEFAULT_TEMPERATURE]
    temps = temps * len(user_types) if len(temps) == 1 else temps
    seen: list[tuple[str, str, float]] = []
    for user_type, model, t in zip(user_types, models, temps, strict=True):
        if user_type not in USER_TYPES:
            raise UserError(f"--user-type: unknown {user_type!r}; expected one of {', '.join(USER_TYPES)}")
        if (user_type, model, t) in seen:
            raise UserError(f"--user-type {user_type} with --user-model {model}: given twice")
        seen.append((user_type, model, t))
    out: list[Simulator] = []
    for user_type, model, t in seen:
        shared = sum(1 for other in seen if other[:2] == (user_type, model)) > 1
        label = f"{user_type}@{model}" + (f" (user_temperature {t:g})" if shared else "")
        out.append(Simulator(label, user_type, model, t, max_tokens, reasoning_effort, user_retry))
    return out


def user_protocol_of(simulator: Simulator) -> dict[str, Any]:
    """The simulated user's whole protocol a reference run measured (``protocol_record.USER_PROTOCOL``): what a run's
    record must agree on for the reading to be its simulator's (``analysis/validity/reference.py``)."""
    return {
        "user_type": simulator.user_type,
        "user_model": simulator.user_model,
        "user_temperature": simulator.temperature,
        "user_max_tokens": simulator.max_tokens,
        "user_reasoning_effort": simulator.reasoning_effort,
        "user_reasoning_tokens": None,  # a reference run asks for none
        "user_retry": simulator.user_retry,
        "user_prompts": user_prompts(simulator.user_type),
    }


def print_dry_run(rows: list[ReferenceRow], simulators: list[Simulator], layout: str, prices: Path | None) -> None:
    """The calls each simulator would make, their input tokens (about 4 characters a token), the output bound and
    its price; no call is made."""
    from prefdisco.dialogue.user import USERS
    from prefdisco.prices import prices as price_book

    book = price_book(prices)
    total = 0
    lines = ["simulator  calls  input tokens  output tokens bound  USD bound"]
    for s in simulators:
        per_reply = 2 if s.user_type == "targeted" else 1  # the targeted user maps each question with a grader call
        user = USERS[s.user_type]
        chars = 0
        for row in rows:
            scenario = reference_scenario(row, layout)
            try:  # a prompted user's system prompt (the trained user has its own format: its question only)
                system = str(getattr(user(None, scenario, False), "system", ""))  # type: ignore[arg-type]
            except Exception:
                system = ""
            chars += len(system) + len(row.question)
        calls, tokens_in = per_reply * len(rows), chars // 4 + len(rows)
        tokens_out = len(rows) * (s.max_tokens or USER_MAX_TOKENS)
        price = book.get(s.user_model)
        usd = "—" if price is None else f"{(tokens_in * price['input'] + tokens_out * price['output']) / 1e6:.4f}"
        lines.append(f"{s.label}  {calls}  {tokens_in}  {tokens_out}  {usd}")
        total += calls
    console.print(f"{total} model calls", markup=False, highlight=False)
    for line in lines:
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def answers_table(rows: list[ReferenceRow], records: list[dict[str, Any]], simulators: list[Simulator]) -> pd.DataFrame:
    """``answers.csv``: one row per reference row and simulator, the person's and the simulator's measures."""
    by_row = {r.row: r for r in rows}
    people = measured([r.answer for r in rows], [r.need for r in rows], [r.question for r in rows])
    people.index = [r.row for r in rows]
    frames = []
    for s in simulators:
        mine = [rec for rec in records if rec["simulator"] == s.label]
        ids = [rec["reference_row"] for rec in mine]
        simulated = measured(
            [rec["simulated_answer"] for rec in mine], [by_row[i].need for i in ids], [by_row[i].question for i in ids]
        )
        frame = pd.DataFrame(
            {
                "reference_row": ids,
                "topic": [by_row[i].topic for i in ids],
                "facet_type": [by_row[i].facet_type for i in ids],
                "need": [by_row[i].need for i in ids],
                "question": [by_row[i].question for i in ids],
                "human_answer": [by_row[i].answer for i in ids],
                "simulator": s.label,
                "simulated_answer": [rec["simulated_answer"] for rec in mine],
                "simulated_flags": [";".join(rec["flags"]) for rec in mine],
            }
        )
        for m in MEASURES:
            frame[f"human_{m}"] = people.loc[ids, m].to_numpy()
            frame[f"simulated_{m}"] = simulated[m].to_numpy()
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def _party(answers: pd.DataFrame, side: str) -> pd.DataFrame:
    return answers[[f"{side}_{m}" for m in MEASURES]].set_axis(list(MEASURES), axis=1).reset_index(drop=True)


def parties(answers: pd.DataFrame, simulators: list[Simulator]) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """The people's measures and each simulator's, on the same rows in the same order."""
    person = _party(answers[answers["simulator"] == simulators[0].label], "human")
    return person, {s.label: _party(answers[answers["simulator"] == s.label], "simulated") for s in simulators}


def tables(answers: pd.DataFrame, simulators: list[Simulator], *, seed: int, n_boot: int) -> pd.DataFrame:
    """The reference table of ``answers`` (every simulator on the same rows)."""
    person, sims = parties(answers, simulators)
    return reference_table(person, sims, seed=seed, n_boot=n_boot)


def report_console(table: pd.DataFrame, pairs: pd.DataFrame, simulators: list[Simulator]) -> None:
    """Each simulator's reference fidelity with each statistic's distance and the empty replies beside it, then per
    pair which is closer to the people on each statistic."""
    for row in table.iloc[1:].sort_values("rank").to_dict("records"):
        defined = row["reference_fidelity"] is not None and not pd.isna(row["reference_fidelity"])
        rank = f"{int(row['rank'])}." if defined else "-"
        score = f"{row['reference_fidelity']:.3f}" if defined else "— (no statistic defined)"
        if defined and row["reference_fidelity_low"] is not None and not pd.isna(row["reference_fidelity_low"]):
            score += f" [{row['reference_fidelity_low']:.3f}, {row['reference_fidelity_high']:.3f}]"
        console.print(
            f"{rank} {row['simulator']}: reference fidelity {score}, {int(row['empty'])} empty replies; distance "
            f"from the people per statistic: {distances_text(row)}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    for i, a in enumerate(simulators):
        for b in simulators[i + 1 :]:
            text = pair_text(pairs, a.label, b.label)
            console.print(f"{a.label} vs {b.label}: {text}", markup=False, highlight=False, soft_wrap=True)


def reference_fidelity(
    layout: str,
    path: Path,
    out: Path,
    user_types: list[str],
    user_models: list[str],
    *,
    seed: int,
    temperatures: list[float] | None,
    max_tokens: int | None,
    reasoning_effort: str | None,
    user_retry: int,
    limit: int | None,
    judge_model: str | None,
    bootstrap: int,
    overwrite: bool,
    dry_run: bool,
    prices: Path | None,
    topics: str = "all",
) -> None:
    read = read_reference(layout, path)
    rows = draw_rows(in_split(read.rows, topics), limit, seed)
    simulators = simulators_of(user_types, user_models, temperatures, max_tokens, reasoning_effort, user_retry)
    if any(s.user_type == "targeted" for s in simulators) and not judge_model:
        raise UserError("--user-type targeted maps each question with a grader call: give --judge-model")
    if dry_run:
        print_dry_run(rows, simulators, layout, prices)
        return
    split = {"topics": topics} if topics != "all" else {}  # an earlier run (all topics) resumes as it was
    settings = run_settings(layout, path, rows, simulators, seed=seed, judge_model=judge_model, **split)
    done = check_out(out, settings, overwrite)
    before = len(done)
    records = replay_reference(rows, simulators, judge_model, out, done, benchmark=layout, seed=seed)
    answers = answers_table(rows, records, simulators)
    person, sims = parties(answers, simulators)
    table = reference_table(person, sims, seed=seed, n_boot=bootstrap)
    pairs = pairs_table(person, sims, seed=seed, n_boot=bootstrap)
    by_facet = [
        tables(group, simulators, seed=seed, n_boot=0).assign(facet_type=facet)
        for facet, group in answers.groupby("facet_type", sort=True)
        if facet
    ]
    atomic_write(out / "answers.csv", answers.to_csv(index=False))
    atomic_write(out / "reference.csv", table.to_csv(index=False))
    atomic_write(out / "reference_pairs.csv", pairs.to_csv(index=False))
    if by_facet:
        atomic_write(out / "reference_by_facet.csv", pd.concat(by_facet, ignore_index=True).to_csv(index=False))
    summary = {
        "reference": layout,
        "path": str(path),
        "rows": len(rows),
        "file_rows": read.total,
        "facet_records_left_out": read.facet_records,
        "seed": seed,
        "bootstrap": bootstrap,
        "simulators": [dict(vars(s)) | {"protocol": user_protocol_of(s)} for s in simulators],
        "answered_now": len(records) - before,
        "answered_before": before,
        "table": json.loads(table.to_json(orient="records")),
        "pairs": json.loads(pairs.to_json(orient="records")),
    }
    atomic_write(out / "summary.json", json.dumps(summary, indent=2, allow_nan=False))
    page = render_reference_page(table, pairs, answers, simulators, summary)
    atomic_write(out / "reference.html", page.encode("utf-8"))
    report_console(table, pairs, simulators)
    console.print(
        f"{len(rows)} reference rows x {len(simulators)} simulator(s): {len(records) - before} answered now, "
        f"{before} from {out / ANSWERS_FILE}; wrote answers.csv, reference.csv, reference_pairs.csv, summary.json, "
        f"reference.html to {out}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
