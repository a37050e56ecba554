"""The results tables of a run folder: the rows streamed as samples finished, checked against the eval logs.

``results_from_logs(folder)`` returns the three tables of the column contract (``contract.py``): results (one row
per model, task, scenario, mode, K and epoch, ``epoch`` being inspect's 1-based ``sample.epoch``), attributes (one
row per judged criterion, trial, judge and repeat; a log an older version wrote has one judge, the ``grader``
role's model, and repeat 1) and transcripts (one row per sample and trial).

Which logs count: for every (model, task name, task arguments) only the newest log is read, preferring a
successful one; logs a crash left behind (status ``started``) never shadow a newer or finished log.
A sample that errored is kept as a row with ``failed=1`` and its error, never as a zero.

Where the rows come from: each chosen log's sample summaries (cheap: no messages or events) say which samples it
holds; a sample whose rows were streamed when it finished (``stream.py``) with the same uuid and score values
takes them, every other sample is read from its log and made into rows the same way (``sample_rows.py``). So a
finished run reads no sample back, and a run a crash, a rescoring or a hand-copied log changed reads what the
logs say.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from prefdisco.atomic import atomic_path
from prefdisco.errors import UserError
from prefdisco.prices import batch_share, cost_usd
from prefdisco.results.contract import (
    ATTRIBUTE_COLUMNS,
    BATCHED,
    PROTOCOL_ID,
    RESULT_COLUMNS,
    RESULT_KEY,
    SENT_BY_BATCH,
)
from prefdisco.results.protocol_record import read_record
from prefdisco.results.sample_rows import SampleRows, interrupted, role_model, sample_rows, scores_digest
from prefdisco.results.stream import streamed_rows


@dataclass(frozen=True)
class Tables:
    results: pd.DataFrame
    attributes: pd.DataFrame
    transcripts: pd.DataFrame
    interrupted: int = 0
    """Samples an interrupt (Ctrl-C) cancelled while they ran: in no table (not finished, not failed: a rerun runs
    them)."""


def _costs(
    row: dict[str, Any], prices: dict[str, dict[str, float]], graders: list[tuple[Any, ...]] | None = None
) -> dict[str, float | None]:
    """USD for one sample: ``cost_usd`` over its roles and ``user_cost_usd`` / ``grader_cost_usd`` apart (``graders``:
    each judge's (model, input, output[, cache read, cache write]) tokens; None: the ``grader_*`` columns at the
    ``grader_model``'s price); a role whose model has no price is None, and so is the total. The roles the row's
    ``batched`` names are priced at their provider's batch share (``prices.batch_share``; full price without one);
    a ``graders`` entry that says how it was sent (``SENT_BY_BATCH``, ``SENT_REAL_TIME``: the targeted user's
    mapping, a further judging) is priced so, whatever the row's ``batched``."""
    batched = set(str(row.get(BATCHED) or "").split())

    def tokens(prefix: str) -> tuple[int, int, int, int]:
        return tuple(int(row.get(f"{prefix}{k}") or 0) for k in TOKEN_KINDS)  # type: ignore[return-value]

    def priced(parts: list[tuple[Any, ...]], role: str) -> float | None:
        total = 0.0
        for model, *counts in parts:
            how = counts.pop() if counts and isinstance(counts[-1], str) else None  # a graders entry's, if said
            if not any(counts):
                continue
            price = prices.get(model or "")
            if price is None:
                return None
            by_batch = how == SENT_BY_BATCH if how is not None else role in batched
            share = batch_share(str(model)) if by_batch else None
            total += cost_usd(price, *counts) * (1.0 if share is None else share)
        return total

    judges = [(row["grader_model"], *tokens("grader_"))] if graders is None else list(graders)
    out = {
        "assistant": priced([(row["model"], *tokens(""))], "assistant"),
        "user_cost_usd": priced([(row["user_model"], *tokens("user_"))], "user"),
        "grader_cost_usd": priced(judges, "grader"),
    }
    parts = list(out.values())
    total = None if any(v is None for v in parts) else sum(v for v in parts if v is not None)
    return {"cost_usd": total, "user_cost_usd": out["user_cost_usd"], "grader_cost_usd": out["grader_cost_usd"]}


TOKEN_KINDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
"""The token counts a role is billed for, in ``prices.cost_usd``'s order."""


def with_cost(part: SampleRows, prices: dict[str, dict[str, float]]) -> dict[str, Any]:
    """``part``'s results row with its ``cost_usd`` (and per role) at ``prices`` (None where a model has no price)."""
    return {**part.result, **_costs(part.result, prices, part.judge_usage)}


def read_header(info: Any) -> Any:
    """An eval log's header; a truncated or corrupt log file is a UserError naming it."""
    from inspect_ai.log import read_eval_log

    try:
        return read_eval_log(info, header_only=True)
    except Exception as e:  # inspect raises ValueError/KeyError/zip errors for damaged files
        name = getattr(info, "name", info)
        raise UserError(
            f"{name}: unreadable inspect log ({type(e).__name__}: {e}); move it out of the log folder"
        ) from e


def select_logs(folder: Path) -> list[tuple[Any, Any]]:
    """The newest log (a successful one first) per run folder, model, condition, task arguments and roles.

    Folders count separately, so a large eval split over several processes with their own log folders is read
    whole from their common parent.
    """
    from inspect_ai.log import list_eval_logs

    chosen: dict[tuple[str, ...], tuple[tuple[int, str], tuple[Any, Any]]] = {}
    for info in list_eval_logs(str(folder), recursive=True):
        header = read_header(info)
        if header.eval.metadata is None or "prefdisco_mode" not in header.eval.metadata:
            continue
        roles = {r: role_model(header.eval, r) for r in ("user", "grader", *sorted(header.eval.model_roles or {}))}
        key = (
            str(info.name).rsplit("/", 1)[0],
            header.eval.model,
            header.eval.task,
            json.dumps([header.eval.task_args, roles], sort_keys=True, default=str),
        )
        rank = (1 if header.status == "success" else 0, header.eval.created)
        if key not in chosen or rank > chosen[key][0]:
            chosen[key] = (rank, (info, header))
    return [chosen_log for _, chosen_log in chosen.values()]


def _samples(info: Any) -> list[Any]:
    """A log's samples without their events. Reading the whole log at once costs about half the CPU per sample
    of streaming them one by one (6 vs 11-13 ms here); a log whose sample index is incomplete (a crashed run) is
    streamed, taking whatever samples it holds."""
    from inspect_ai.log import read_eval_log, read_eval_log_samples

    try:
        return list(read_eval_log(info, exclude_fields={"events"}).samples or [])
    except Exception:  # inspect raises several types for a partly written log
        return list(read_eval_log_samples(info, all_samples_required=False, exclude_fields={"events"}))


def results_from_logs(folder: str | Path, prices: dict[str, dict[str, float]] | None = None) -> Tables:
    """The tables of every chosen log below ``folder``: each sample's rows as streamed when it finished
    (``stream.py``), or read from its log when no streamed line matches it."""
    transcripts: list[dict[str, Any]] = []
    results, attributes, cancelled = _read(folder, prices, transcripts.extend)
    tables = _finish(folder, results, attributes, pd.DataFrame(transcripts))
    return replace(tables, interrupted=cancelled)


def write_results(
    folder: str | Path, prices: dict[str, dict[str, float]] | None = None, out: str | Path | None = None
) -> Tables:
    """``write_tables(results_from_logs(folder, prices), out)`` (``out``: ``folder`` when None), without holding
    every sample: each log's transcripts are written to ``transcripts.jsonl`` as the log is read and only the results
    and attribute rows are kept, as plain tuples until their frames are built (a run of 10,000 scenarios × 3
    conditions: 30,000 transcripts never held at once). The tables it returns have no transcripts (an empty frame);
    the files are those ``write_tables`` writes, read back equal (a key a log's transcripts lack is absent from
    its lines rather than ``null``), and nothing is written when reading fails."""
    target = Path(folder if out is None else out)
    with atomic_path(target / "transcripts.jsonl") as tmp, tmp.open("w", encoding="utf-8") as lines:
        results, attributes, cancelled = _read(folder, prices, lambda chunk: _write_transcripts(chunk, lines))
        tables = replace(_finish(folder, results, attributes, pd.DataFrame()), interrupted=cancelled)
        _write_frames(tables, target)
    return tables


def _read(
    folder: str | Path,
    prices: dict[str, dict[str, float]] | None,
    transcripts: Callable[[list[dict[str, Any]]], Any],
) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """The results and attributes frames of every chosen log below ``folder`` and the samples an interrupt
    cancelled; each log's transcripts handed to ``transcripts`` as the log is read."""
    streamed = streamed_rows(folder)
    results: list[tuple[Any, ...]] = []
    attributes: list[tuple[Any, ...]] = []
    cancelled = 0
    for info, header in select_logs(Path(folder)):
        parts = _log_rows(info, header, streamed)
        kept = [part for part in parts if not interrupted(part.result.get("error"))]
        cancelled += len(parts) - len(kept)
        results += [_cells(with_cost(part, prices) if prices else part.result, RESULT_COLUMNS) for part in kept]
        attributes += [_cells(row, ATTRIBUTE_COLUMNS) for part in kept for row in part.attributes]
        transcripts([part.transcript for part in kept])
    return (
        pd.DataFrame(results, columns=list(RESULT_COLUMNS)),
        pd.DataFrame(attributes, columns=list(ATTRIBUTE_COLUMNS)),
        cancelled,
    )


def _cells(row: dict[str, Any], columns: tuple[str, ...]) -> tuple[Any, ...]:
    """``row``'s cells in ``columns``' order, NaN where it has no such key: what a frame built from the dicts
    themselves holds, so the frame built from these tuples infers the same dtypes."""
    return tuple(_shared(row.get(column, math.nan)) for column in columns)


def _shared(cell: Any) -> Any:
    """A short string cell as one shared object (``sys.intern``): a run's model, task, mode, scenario id, attribute
    and judge names repeat on every row of their sample, criterion and run, and each row parsed from its own line
    would otherwise hold copies of its own."""
    return sys.intern(cell) if type(cell) is str and len(cell) <= _SHARED_LENGTH else cell


_SHARED_LENGTH = 200
"""The longest string cell ``_shared`` interns (names and ids; not free text such as an error or a response)."""


def _write_transcripts(chunk: list[dict[str, Any]], lines: TextIO) -> None:
    if chunk:
        lines.write(_transcripts_frame(pd.DataFrame(chunk)).to_json(orient="records", lines=True, force_ascii=False))


def _log_rows(info: Any, header: Any, streamed: Mapping[str, SampleRows]) -> list[SampleRows]:
    """The rows of one log's samples: streamed ones where the log's sample summary matches (same uuid, same
    score values), the rest read from the log."""
    from inspect_ai.log import read_eval_log_sample_summaries

    try:
        summaries = read_eval_log_sample_summaries(info)
    except Exception:  # a crashed run's log without a summary index: read what samples it holds
        return [sample_rows(header.eval, s) for s in _samples(info)]
    rows: dict[str | None, SampleRows] = {}
    for summary in summaries:
        found = streamed.get(summary.uuid) if summary.uuid else None
        if found is not None and _matches(found, summary):
            rows[summary.uuid] = found
    if len(rows) < len(summaries):
        rows |= {s.uuid: sample_rows(header.eval, s) for s in _samples(info) if s.uuid not in rows}
    return [rows[s.uuid] for s in summaries if s.uuid in rows]


def _matches(rows: SampleRows, summary: Any) -> bool:
    return rows.scores == scores_digest(summary.scores)


_SEED_TYPES = {"assistant_seed": "Int64", "user_seed": "Int64", "grader_seed": "Int64"}
"""Seeds stay integers when a row has none (a sample an older version logged)."""
_K_TYPE = {"fixed_k": "Int64"}
"""K stays an integer beside the conditions without one (empty): written ``2``, never ``2.0``."""


def _finish(
    folder: str | Path, results_df: pd.DataFrame, attributes: pd.DataFrame, transcripts: pd.DataFrame
) -> Tables:
    repeated = results_df[results_df.duplicated(list(RESULT_KEY), keep=False)]
    if len(repeated):
        first = repeated.iloc[0]
        raise UserError(
            f"{folder}: scenario {first['scenario_id']} ({first['model']}, {first['mode']}, trial {first['epoch']}) "
            "appears in more than one run folder below it; read the runs separately or remove the duplicate run"
        )
    order = ["model", "task", "mode", "fixed_k", "scenario_id", "epoch"]
    results_df = results_df.astype(_SEED_TYPES | _K_TYPE).sort_values(order, kind="stable")
    attributes = attributes.astype(_K_TYPE)
    record = read_record(Path(folder)) if Path(folder).is_dir() else None
    if record is not None and len(results_df):  # the run's protocol as its last calls settled it: one owner of the
        # id (a log's metadata has the flags' id of the command that wrote it: an eval's before its judge judged it)
        results_df[PROTOCOL_ID] = record.id
    return Tables(
        results=results_df.reset_index(drop=True), attributes=attributes, transcripts=_transcripts_frame(transcripts)
    )


def _transcripts_frame(transcripts: pd.DataFrame) -> pd.DataFrame:
    """Seeds and K written as integers (``null`` where a row has none)."""
    if len(transcripts) and "assistant_seed" in transcripts.columns:
        transcripts = transcripts.astype(_SEED_TYPES)
    if len(transcripts) and "fixed_k" in transcripts.columns:
        transcripts = transcripts.astype(_K_TYPE)
    return transcripts


def write_tables(tables: Tables, folder: str | Path) -> dict[str, Path]:
    """Write results.csv/.parquet, attributes.csv/.parquet and transcripts.jsonl atomically into ``folder``."""
    out = Path(folder)
    written = _write_frames(tables, out)
    with atomic_path(out / "transcripts.jsonl") as tmp:
        tables.transcripts.to_json(tmp, orient="records", lines=True, force_ascii=False)
    written["transcripts.jsonl"] = out / "transcripts.jsonl"
    return written


def _write_frames(tables: Tables, out: Path) -> dict[str, Path]:
    """results.csv/.parquet and attributes.csv/.parquet, each atomically."""
    written: dict[str, Path] = {}
    for name, frame in (("results", tables.results), ("attributes", tables.attributes)):
        for suffix, write in ((".csv", frame.to_csv), (".parquet", frame.to_parquet)):
            with atomic_path(out / f"{name}{suffix}") as tmp:
                write(tmp, index=False)
            written[f"{name}{suffix}"] = out / f"{name}{suffix}"
    return written
