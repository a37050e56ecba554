"""Clean simulated turns per cell: the share of dialogues whose simulated user kept a reply with a hygiene fault.

Read from the trial rows (each trial of a scenario in a condition is one dialogue; ``dialogue/hygiene.py`` for the
faults). A dialogue counts when a reply of its simulated user was screened (``user_flags`` not empty: a condition
with questions that asked at least one); it is *flagged* when ``user_flags`` >= 1. Per (model, task, condition):

* ``n_dialogues`` and ``n_flagged``; ``share`` = n_flagged / n_dialogues;
* ``redrawn``: the flagged draws replaced by a redraw (``--user-retry``), summed;
* ``reasons``: each fault with the number of kept replies that have it, summed over the cell's dialogues
  (``user_flag_reasons``).

``summary.json``'s ``simulator_flags`` is model → task → condition → share; the report's Validity section has one
line ("Clean simulated turns") and ``table_simulator_flags.csv`` the whole table.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd

from prefdisco.analysis.section.registry import Reading
from prefdisco.analysis.section.shown import nested
from prefdisco.dialogue.hygiene import FAULTS
from prefdisco.results.contract import USER_FLAG_REASONS, condition_label

NAME = "Clean simulated turns"
COLUMNS = ("model", "task", "condition", "n_dialogues", "n_flagged", "share", "redrawn", "reasons")


def _reasons(texts: pd.Series) -> str:
    found: Counter[str] = Counter()
    for text in texts.dropna().astype(str):
        found.update({k: int(v) for k, v in json.loads(text).items()})
    return ", ".join(f"{f} {found[f]}" for f in FAULTS if found[f])


def flag_table(results: pd.DataFrame) -> pd.DataFrame | None:
    """The module docstring's table from the trial rows; None when no dialogue had a screened reply (a run before
    the checks, no question asked anywhere)."""
    if "user_flags" not in results.columns:
        return None
    rows = results.loc[~results["failed"].astype(bool).to_numpy() & results["user_flags"].notna().to_numpy()]
    if rows.empty:
        return None
    fixed_k = rows["fixed_k"] if "fixed_k" in rows.columns else pd.Series(np.nan, rows.index)
    conditions = [condition_label(m, k) for m, k in zip(rows["mode"].astype(str), fixed_k, strict=True)]
    frame = pd.DataFrame(
        {
            "model": rows["model"].astype(str).to_numpy(),
            "task": rows["task"].astype(str).to_numpy(),
            "condition": conditions,
            "flagged": (rows["user_flags"].to_numpy(dtype=float) >= 1).astype(int),
            "redrawn": rows["user_redraws"].fillna(0).to_numpy(dtype=float) if "user_redraws" in rows else 0.0,
            "reasons": rows[USER_FLAG_REASONS].astype(object).to_numpy() if USER_FLAG_REASONS in rows else None,
        }
    )
    out = []
    for (model, task, condition), cell in frame.groupby(["model", "task", "condition"], sort=False):
        n, flagged = len(cell), int(cell["flagged"].sum())
        out.append(
            {
                "model": model,
                "task": task,
                "condition": condition,
                "n_dialogues": n,
                "n_flagged": flagged,
                "share": flagged / n,
                "redrawn": int(cell["redrawn"].sum()),
                "reasons": _reasons(cell["reasons"]),
            }
        )
    return pd.DataFrame(out, columns=list(COLUMNS))


def flags_summary(table: pd.DataFrame | None) -> dict[str, Any]:
    """``summary.json``'s ``simulator_flags``: model → task → condition → share ({} when nothing was screened)."""
    return {} if table is None else nested(table, ["model", "task", "condition"], lambda r: float(r["share"]))


def flags_reading(table: pd.DataFrame | None) -> Reading:
    """The Validity line: every cell's share of flagged dialogues, the worst named, and what the faults were."""
    if table is None or table.empty:
        return Reading(NAME, "not measured", "no simulated reply was screened (no question asked, or an older run)")
    cells = "; ".join(
        f"{r['model']}/{r['task']}/{r['condition']}: {100 * r['share']:.1f} % of {r['n_dialogues']}"
        + (f" ({r['reasons']})" if r["reasons"] else "")
        for r in table.to_dict("records")
    )
    finding = f"dialogues with a flagged simulated reply: {cells}"
    redrawn = int(table["redrawn"].sum())
    if redrawn:
        finding += f"; {redrawn} flagged replies drawn again (--user-retry)"
    worst = float(table["share"].max())
    if worst == 0:
        reading = "every simulated reply passed the hygiene checks"
    else:
        reading = (
            f"up to {100 * worst:.1f} % of a cell's dialogues kept a reply that breaks character (role inversion, "
            "restart, reasoning leak, empty or cut, profile echo): read those transcripts before trusting the cell"
            + ("" if redrawn else "; --user-retry 1 draws such a reply again")
        )
    return Reading(NAME, finding, reading)
