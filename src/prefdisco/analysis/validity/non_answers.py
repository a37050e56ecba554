"""Refused, empty and truncated responses, counted per model, task and condition (the report's Validity section).

A refused or empty response is scored by rule, never judged (``scoring/non_answer.py``): PrefAlign 1 and incorrect,
or left out of both with ``--refusals exclude``. A reader must see how many there were before reading a mean, so
the report counts, per cell, over its scenarios (failed trials left out; each scenario's trials averaged, as every
report number is, so N identical trials count as one: a count is a whole number whenever a scenario's trials agree):

* ``n_scenarios`` — the scenarios with a response;
* ``refused`` / ``empty`` — scored by rule; ``excluded`` — of those, left out (``pref_align_reason`` ``refused`` or
  ``empty``);
* ``truncated`` — cut at the token or context limit (judged as an answer, but possibly incomplete).

``summary.json``'s ``non_answers`` is model → task → condition → those counts; the table is
``table_non_answers.csv``; a run with any refused or empty response gets a caveat at the report's top. A run made
before the columns existed has none of them: "not measured".
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from prefdisco.analysis.section.registry import Reading
from prefdisco.analysis.section.shown import nested
from prefdisco.results.contract import END_COLUMNS, UNSCORED_REASON, condition_label

NAME = "Refused and empty responses"
COLUMNS: tuple[str, ...] = ("model", "task", "condition", "n_scenarios", "refused", "empty", "excluded", "truncated")
COUNTS = COLUMNS[4:]
EXCLUDED_REASONS = ("refused", "empty")
"""The ``pref_align_reason`` of a non-answer left out by ``--refusals exclude``."""


def _flag(rows: pd.DataFrame, name: str) -> np.ndarray:
    if name not in rows.columns:
        return np.zeros(len(rows), dtype=int)
    return np.nan_to_num(rows[name].to_numpy(dtype=float), nan=0.0).astype(int)


def non_answer_table(results: pd.DataFrame) -> pd.DataFrame | None:
    """The module docstring's table from the trial rows; None when the run has none of the columns (an older run)."""
    if not any(name in results.columns for name in END_COLUMNS[1:]):
        return None
    rows = results.loc[~results["failed"].astype(bool).to_numpy()]
    rows = rows.assign(fixed_k=rows["fixed_k"] if "fixed_k" in rows.columns else np.nan)
    if rows.empty:
        return None
    reasons = rows[UNSCORED_REASON].astype(object) if UNSCORED_REASON in rows.columns else pd.Series(None, rows.index)
    frame = pd.DataFrame(
        {
            "model": rows["model"].astype(str).to_numpy(),
            "task": rows["task"].astype(str).to_numpy(),
            "condition": [
                condition_label(m, k) for m, k in zip(rows["mode"].astype(str), rows["fixed_k"], strict=True)
            ],
            "scenario_id": rows["scenario_id"].astype(str).to_numpy(),
            "refused": _flag(rows, "refused"),
            "empty": _flag(rows, "empty"),
            "truncated": _flag(rows, "truncated"),
            "excluded": reasons.isin(EXCLUDED_REASONS).to_numpy().astype(int),
        }
    )
    cell = ["model", "task", "condition"]
    per_scenario = frame.groupby([*cell, "scenario_id"], sort=False)[list(COUNTS)].mean().reset_index()
    out = per_scenario.groupby(cell, sort=False).agg(
        n_scenarios=("scenario_id", "size"), **{k: (k, "sum") for k in COUNTS}
    )
    return out.reset_index()[list(COLUMNS)]


def _count(value: Any) -> int | float:
    """A count as a whole number when it is one (a scenario's trials agreed), else to 3 decimals."""
    value = float(value)
    return int(value) if value.is_integer() else round(value, 3)


def non_answers_summary(table: pd.DataFrame | None) -> dict[str, Any]:
    """``summary.json``'s ``non_answers``: model → task → condition → counts ({} when not measured)."""
    if table is None:
        return {}
    return nested(table, ["model", "task", "condition"], lambda r: {k: _count(r[k]) for k in COLUMNS[3:]})


def non_answers_reading(table: pd.DataFrame | None) -> Reading:
    """The Validity line: each cell with a refused, empty or truncated response, and what was done with them."""
    if table is None or table.empty:
        return Reading(NAME, "not measured", "the run records no stop reasons (a run made before they were kept)")
    marked = table.loc[(table["refused"] + table["empty"] + table["truncated"]) > 0]
    if marked.empty:
        n = int(table["n_scenarios"].sum())
        return Reading(NAME, f"none of {n} responses", "every response was an answer, none cut at the token limit")
    cells = "; ".join(
        f"{r['model']}/{r['task']}/{r['condition']}: "
        + ", ".join(f"{_count(r[k])} {k}" for k in ("refused", "empty", "truncated") if r[k])
        + f" of {int(r['n_scenarios'])}"
        for r in marked.to_dict("records")
    )
    ruled, excluded = _count(table["refused"].sum() + table["empty"].sum()), _count(table["excluded"].sum())
    if not ruled:
        reading = "no response was refused or empty; a truncated one was judged as given (it may be incomplete)"
    elif excluded:
        reading = (
            f"{excluded} refused or empty responses were left out of PrefAlign and accuracy (--refusals exclude): "
            "the means are over the answered responses, so compare the counts across models before the means"
        )
    else:
        reading = (
            f"{ruled} refused or empty responses were scored by rule (PrefAlign 1 on every criterion, incorrect), "
            "not judged; --refusals exclude leaves them out instead"
        )
    return Reading(NAME, cells, reading)


def non_answers_caveat(table: pd.DataFrame | None) -> str | None:
    """The report's caveat when any response was refused or empty (None otherwise)."""
    if table is None or table.empty:
        return None
    ruled = _count(table["refused"].sum() + table["empty"].sum())
    if not ruled:
        return None
    excluded = _count(table["excluded"].sum())
    done = (
        "left out of PrefAlign and accuracy"
        if excluded == ruled
        else "scored by rule (PrefAlign 1, incorrect)"
        if not excluded
        else "scored by rule or, in a run with --refusals exclude, left out"
    )
    return (
        f"{ruled} of {int(table['n_scenarios'].sum())} responses were refused or empty and {done}, never judged: "
        "see the Validity section for the counts per model and condition"
    )
