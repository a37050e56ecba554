"""What a run cost, per model, task and condition, by role: the report's Cost table and ``summary.json``'s ``cost``.

Every results row carries its tokens per role — fresh input, output, cached input read and written, reasoning — and
its USD at the run's prices (``results/logs.py``: cached input at its own rate, ``prices.py``), in all
(``cost_usd``) and for the simulated user and the judges apart. Over the scenarios of a cell (each scenario's trials
averaged, as every report number is):

* ``usd_per_scenario`` — the mean ``cost_usd`` of a trial (each scenario's trials averaged, its failed ones too, over
  the scenarios not every trial of which failed); ``model_usd`` / ``user_usd`` / ``judges_usd`` — its parts (the model
  under test's is the rest); all None when a model of the cell has no price (``--prices FILE`` gives one);
* ``usd`` — the cell's whole bill: ``cost_usd`` summed over every trial row of the cell (every ``--epochs`` trial,
  and the failed samples, which spent tokens too), counted as the estimate table counts (``bill``);
* ``tokens_per_scenario`` — every role's input (fresh and cached) and output tokens;
* ``cached_share`` — the share of all input tokens read from the provider's cache (None without input);
* ``reasoning_per_scenario`` — the reasoning tokens (part of the output).

``summary.json``'s ``cost`` is model → task → condition → those figures, and ``cost_total`` model → USD, the sum of
its cells' ``usd``: what the run was billed, every trial and failed sample in it (None: not priced); with ``--epochs
3`` three times one trial's. ``table_cost.csv`` is the table.

**Estimated and measured.** Every run writes the dry run's estimate before its first call (``estimate.json``,
``evaluation/estimate/plan.py``). ``estimate_table`` sets it beside what the rows measured, per role (the model under
test, the simulated user, the judges), per trial (a run of N trials: its totals over N, so N identical trials read as
one): calls (estimated only: the rows do not count calls), input tokens (fresh and cached), output tokens and USD
(``summary.json``'s ``cost_estimate``, ``table_cost_estimate.csv``).

**Batched calls.** A ``--batch`` run's rows say which of their roles went through the provider's batch API (``batched``:
every judge call, and the answer of a single-turn condition without pushback; ``evaluation/settings/batch.py``), and
``cost_usd`` prices those at the provider's batch share and nothing else (the targeted user's mapping, counted with the
judges' tokens, at the real-time price). ``summary.json``'s ``cost_batch`` gives, per condition, the roles sent by batch
and the shares used (None: nothing was); the report's Cost section says it under the table.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from prefdisco.analysis.section.registry import Context, Part, section
from prefdisco.analysis.section.shown import records
from prefdisco.prices import packaged
from prefdisco.results.contract import BATCHED, condition_label

COLUMNS: tuple[str, ...] = (
    "model", "task", "condition", "n_scenarios", "usd_per_scenario", "model_usd", "user_usd", "judges_usd", "usd",
    "tokens_per_scenario", "cached_share", "reasoning_per_scenario",
)  # fmt: skip
ROLES = ("", "user_", "grader_")


def _sum(frame: pd.DataFrame, kind: str) -> np.ndarray:
    """``kind`` tokens (``input_tokens``, ``cache_read_tokens``, …) over every role, 0 where a column is missing."""
    out = np.zeros(len(frame))
    for role in ROLES:
        if f"{role}{kind}" in frame.columns:
            out += np.nan_to_num(frame[f"{role}{kind}"].to_numpy(dtype=float))
    return out


def _priced(values: pd.Series) -> float | None:
    """The mean of a USD column over a cell, or None when any scenario has no price."""
    if values.isna().any() or values.empty:
        return None
    return float(values.mean())


def _labelled(rows: pd.DataFrame) -> pd.DataFrame:
    fixed_k = rows["fixed_k"] if "fixed_k" in rows.columns else pd.Series(np.nan, rows.index)
    labels = [condition_label(m, k) for m, k in zip(rows["mode"].astype(str), fixed_k, strict=True)]
    return rows.assign(condition=labels)


def bill(trial_rows: pd.DataFrame, column: str = "cost_usd") -> float | None:
    """What ``trial_rows`` were billed: ``column`` summed over every row as run (every trial, a failed sample's
    too: it spent tokens before it failed); None when a row has no price. The one count the Cost table's ``usd``,
    ``cost_total`` and the estimate table's measured USD share."""
    values = trial_rows[column]
    return None if values.isna().any() else float(values.sum())


def cost_table(results: pd.DataFrame, trial_rows: pd.DataFrame | None = None) -> pd.DataFrame | None:
    """The module docstring's table: the per-scenario figures from the trial-averaged ``results``, ``usd`` the bill
    of ``trial_rows`` (the rows as run; None: ``results`` are the rows as run); None when the rows carry no cost (an
    older run, a results file without the column)."""
    trial_rows = results if trial_rows is None else trial_rows
    if "cost_usd" not in results.columns or "cost_usd" not in trial_rows.columns or trial_rows.empty:
        return None
    rows = _labelled(results.loc[~results["failed"].astype(bool).to_numpy()])
    frame = rows.assign(
        _fresh=_sum(rows, "input_tokens"),
        _read=_sum(rows, "cache_read_tokens"),
        _written=_sum(rows, "cache_write_tokens"),
        _out=_sum(rows, "output_tokens"),
        _reasoning=_sum(rows, "reasoning_tokens"),
    )
    cells = dict(list(frame.groupby(["model", "task", "condition"], sort=False, observed=True)))
    out = []
    for (model, task, condition), run in _labelled(trial_rows).groupby(
        ["model", "task", "condition"], sort=False, observed=True
    ):
        cell = cells.get((model, task, condition), frame.iloc[:0])
        total = _priced(cell["cost_usd"])
        user = _priced(cell["user_cost_usd"]) if "user_cost_usd" in cell.columns else None
        judges = _priced(cell["grader_cost_usd"]) if "grader_cost_usd" in cell.columns else None
        inputs = float((cell["_fresh"] + cell["_read"] + cell["_written"]).sum())
        out.append(
            {
                "model": str(model),
                "task": str(task),
                "condition": condition,
                "n_scenarios": len(cell),
                "usd_per_scenario": total,
                "model_usd": None if None in (total, user, judges) else total - user - judges,  # type: ignore[operator]
                "user_usd": user,
                "judges_usd": judges,
                "usd": bill(run),
                "tokens_per_scenario": _mean(cell["_fresh"] + cell["_read"] + cell["_written"] + cell["_out"]),
                "cached_share": float(cell["_read"].sum()) / inputs if inputs else None,
                "reasoning_per_scenario": _mean(cell["_reasoning"]),
            }
        )
    return pd.DataFrame(out, columns=list(COLUMNS))


def _mean(values: pd.Series) -> float | None:
    return float(values.mean()) if len(values) else None


def _plain(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def cost_summary(table: pd.DataFrame | None) -> tuple[dict[str, Any], dict[str, float | None]]:
    """``summary.json``'s ``cost`` (model → task → condition → figures) and ``cost_total`` (model → USD)."""
    cost: dict[str, Any] = {}
    totals: dict[str, float | None] = {}
    for r in [] if table is None else table.to_dict("records"):
        figures = {k: _plain(r[k]) for k in COLUMNS[3:]}
        cost.setdefault(r["model"], {}).setdefault(r["task"], {})[r["condition"]] = figures
        known = totals.get(r["model"], 0.0)
        totals[r["model"]] = None if known is None or r["usd"] is None else known + float(r["usd"])
    return cost, totals


ESTIMATE_FILE = "estimate.json"
"""The file a run writes its estimate to (``evaluation/estimate.ESTIMATE_FILE``)."""
ROLE_NAMES = {"assistant": "", "user": "user_", "grader": "grader_"}
ESTIMATE_COLUMNS: tuple[str, ...] = (
    "role", "estimated_calls", "estimated_input_tokens", "measured_input_tokens", "estimated_output_tokens",
    "measured_output_tokens", "estimated_usd", "measured_usd",
)  # fmt: skip


def estimate_files(run_dir: Path | Sequence[Path] | None) -> list[Path]:
    """The ``estimate.json`` of each run folder given (its own, else every one below it)."""
    roots = [] if run_dir is None else [run_dir] if isinstance(run_dir, (str, Path)) else list(run_dir)
    out: list[Path] = []
    for root in map(Path, roots):
        folder = root if root.is_dir() else root.parent
        own = folder / ESTIMATE_FILE
        out += [own] if own.is_file() else sorted(folder.rglob(ESTIMATE_FILE))
    return out


def _usd_sum(values: Any) -> float | None:
    values = list(values)
    return None if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in values) else float(sum(values))


def estimate_table(trial_rows: pd.DataFrame, run_dir: Path | Sequence[Path] | None) -> pd.DataFrame | None:
    """The runs' estimates beside what their trial rows measured, per role (module docstring); None without an
    estimate or without the token columns."""
    lines: list[dict[str, Any]] = []
    for file in estimate_files(run_dir):
        try:
            lines += json.loads(file.read_text(encoding="utf-8")).get("lines", [])
        except (OSError, ValueError, AttributeError):
            continue
    if not lines or "cost_usd" not in trial_rows.columns:
        return None
    trials = int(trial_rows["epoch"].nunique()) if "epoch" in trial_rows.columns and len(trial_rows) else 1
    out = []
    for role, prefix in ROLE_NAMES.items():
        mine = [line for line in lines if line.get("role") == role]
        column = "cost_usd" if not prefix else f"{prefix}cost_usd"
        measured_usd = bill(trial_rows, column) if column in trial_rows.columns else None
        if role == "assistant" and measured_usd is not None:  # the model under test's part: the rest of the total
            parts = [bill(trial_rows, c) for c in ("user_cost_usd", "grader_cost_usd") if c in trial_rows]
            measured_usd = None if None in parts else measured_usd - sum(p for p in parts if p is not None)
        fresh = [f"{prefix}{k}" for k in ("input_tokens", "cache_read_tokens", "cache_write_tokens")]
        out.append(
            {
                "role": {"assistant": "model", "user": "simulated user", "grader": "judges"}[role],
                "estimated_calls": sum(int(line.get("calls", 0)) for line in mine),
                "estimated_input_tokens": sum(int(line.get("input_tokens", 0)) for line in mine),
                "measured_input_tokens": float(sum(trial_rows[c].fillna(0).sum() for c in fresh if c in trial_rows)),
                "estimated_output_tokens": sum(int(line.get("output_tokens", 0)) for line in mine),
                "measured_output_tokens": float(trial_rows.get(f"{prefix}output_tokens", pd.Series(dtype=float)).sum()),
                "estimated_usd": _usd_sum(line.get("usd") for line in mine) if mine else 0.0,
                "measured_usd": measured_usd,
            }
        )
    table = pd.DataFrame(out, columns=list(ESTIMATE_COLUMNS))
    numbers = list(ESTIMATE_COLUMNS[1:])
    table[numbers] = table[numbers].astype(float) / trials  # per trial (None stays None: NaN)
    return table


def batch_of(trial_rows: pd.DataFrame) -> dict[str, Any] | None:
    """Per condition, the roles whose calls went by batch (``assistant``: the model under test's answer, ``grader``:
    every judge call), and the batch shares they were priced at; None when no call did."""
    if BATCHED not in trial_rows.columns or trial_rows[BATCHED].isna().all():
        return None
    roles: dict[str, list[str]] = {}
    for r in trial_rows[["mode", "fixed_k", BATCHED]].drop_duplicates().to_dict("records"):
        found = roles.setdefault(condition_label(r["mode"], r["fixed_k"]), [])
        found += [x for x in str(r[BATCHED] if isinstance(r[BATCHED], str) else "").split() if x not in found]
    shares = {prefix: rate["share"] for prefix, rate in packaged().get("batch_rates", {}).items()}
    return {"roles": {c: sorted(v) for c, v in sorted(roles.items()) if v}, "shares": shares}


@section("cost", order=80, place="data")
def cost_section(ctx: Context) -> Part:
    """The report's Cost section: per cell (``cost_table``: ``ctx.results`` trial-averaged, the trial rows as run)
    and estimated against measured (``estimate_table``, from ``ctx.run_dir``: the RESULTS)."""
    rows = ctx.data.results
    table, estimate = cost_table(ctx.results, rows), estimate_table(rows, ctx.run_dir)
    cost, total = cost_summary(table)
    summary = {"cost": cost, "cost_total": total, "cost_batch": batch_of(rows), "cost_estimate": None}
    if estimate is not None:
        by_role = {r["role"]: {k: _plain(r[k]) for k in ESTIMATE_COLUMNS[1:]} for r in estimate.to_dict("records")}
        summary["cost_estimate"] = by_role
    tables = {"table_cost.csv": table, "table_cost_estimate.csv": estimate}
    return Part(summary, tables, view={"rows": records(table), "estimate": records(estimate)}, value=table)
