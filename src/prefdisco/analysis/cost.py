"""What a run cost, per model, task and condition, by role: the report's Cost table and ``summary.json``'s ``cost``.

Every results row carries its tokens per role — fresh input, output, cached input read and written, reasoning — and
its USD at the run's prices (``results/logs.py``: cached input at its own rate, ``prices.py``), in all
(``cost_usd``) and for the simulated user and the judges apart. Over the scenarios of a cell (each scenario's trials
averaged, as every report number is):

* ``usd_per_scenario`` — the mean ``cost_usd``; ``model_usd`` / ``user_usd`` / ``judges_usd`` — its parts (the
  model under test's is the rest); ``usd`` — the cell's total (per scenario × scenarios); all None when a model of
  the cell has no price (``--prices FILE`` gives one);
* ``tokens_per_scenario`` — every role's input (fresh and cached) and output tokens;
* ``cached_share`` — the share of all input tokens read from the provider's cache (None without input);
* ``reasoning_per_scenario`` — the reasoning tokens (part of the output).

``summary.json``'s ``cost`` is model → task → condition → those figures, and ``cost_total`` model → USD (None: not
priced); ``table_cost.csv`` is the table.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from prefdisco.results.contract import condition_label

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


def cost_table(results: pd.DataFrame) -> pd.DataFrame | None:
    """The module docstring's table from the trial-averaged rows; None when the rows carry no cost (an older run,
    a results file without the column)."""
    if "cost_usd" not in results.columns or results.empty:
        return None
    rows = results.loc[~results["failed"].astype(bool).to_numpy()]
    fixed_k = rows["fixed_k"] if "fixed_k" in rows.columns else pd.Series(np.nan, rows.index)
    frame = rows.assign(
        condition=[condition_label(m, k) for m, k in zip(rows["mode"].astype(str), fixed_k, strict=True)],
        _fresh=_sum(rows, "input_tokens"),
        _read=_sum(rows, "cache_read_tokens"),
        _written=_sum(rows, "cache_write_tokens"),
        _out=_sum(rows, "output_tokens"),
        _reasoning=_sum(rows, "reasoning_tokens"),
    )
    out = []
    for (model, task, condition), cell in frame.groupby(["model", "task", "condition"], sort=False, observed=True):
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
                "usd": None if total is None else total * len(cell),
                "tokens_per_scenario": float((cell["_fresh"] + cell["_read"] + cell["_written"] + cell["_out"]).mean()),
                "cached_share": float(cell["_read"].sum()) / inputs if inputs else None,
                "reasoning_per_scenario": float(cell["_reasoning"].mean()),
            }
        )
    return pd.DataFrame(out, columns=list(COLUMNS))


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
