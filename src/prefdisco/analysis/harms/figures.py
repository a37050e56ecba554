"""The Harms section's figures (``harms/section.py``): one panel per (model, task), one group of bars per condition,
whiskers the bootstrap 95 % interval where there is one; the rules of ``figures.py`` hold (labels wrapped, never
cut; an empty panel says why).

* ``breakage_figure`` — breakage and repair per personalized condition;
* ``flip_figure`` — the flip rate under pushback per condition, baseline first.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from prefdisco.analysis.section.figures import empty_panel, hide_unused, label, legend, new_figure, panel_cells

COLORS = {"breakage": "#d62728", "repair": "#2ca02c", "flip_rate": "#9467bd"}
NAMES = {"breakage": "breakage: correct in baseline, wrong here", "repair": "repair: wrong in baseline, right here"}


def _grid(cells: list[tuple[str, str]], widest: int):
    ncols = max(1, min(2, len(cells)))
    nrows = max(1, -(-len(cells) // ncols))
    width = max(4.8, 0.9 * widest + 1.6)
    return (*new_figure(width * ncols, 3.8 * nrows + 0.6, ncols=ncols, nrows=nrows), ncols)


def _bars(ax: Any, rows: pd.DataFrame, conditions: list[str], offset: float, width: float, measure: str) -> bool:
    """One measure's bars at each condition, its value written above it and a whisker where it has an interval;
    False when no condition has a value."""
    data = rows.set_index("condition").reindex(conditions)
    value = data["value"].to_numpy(dtype=float)
    if np.isnan(value).all():
        return False
    low, high = data["ci_low"].to_numpy(dtype=float), data["ci_high"].to_numpy(dtype=float)
    x = np.arange(len(conditions)) + offset
    ax.bar(x, np.nan_to_num(value), width, color=COLORS[measure], label=NAMES.get(measure))
    has = ~np.isnan(low) & ~np.isnan(value)  # no whisker where there is no interval
    if has.any():
        err = np.clip(np.vstack([value[has] - low[has], high[has] - value[has]]), 0.0, None)
        ax.errorbar(x[has], value[has], yerr=err, fmt="none", ecolor="black", capsize=3)
    top = np.fmax(np.nan_to_num(value), np.where(has, high, np.nan))  # above the bar and its whisker
    for xi, v, y in zip(x, value, np.nan_to_num(top), strict=True):
        ax.text(xi, y + 0.015, "—" if np.isnan(v) else f"{v:.2f}", ha="center", va="bottom", fontsize=7)
    return True


def _axis(ax: Any, conditions: list[str], ylabel: str) -> None:
    ax.set_xticks(range(len(conditions)), [label(c, 12) for c in conditions], fontsize=8)
    ax.set_ylim(0, 1.12)  # room for the value written above a bar of 1
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.set_ylabel(ylabel)


def breakage_figure(table: pd.DataFrame, cells: list[tuple[str, str]]) -> Any:
    rows = table.loc[table["measure"].isin(["breakage", "repair"])]
    widest = max([rows.loc[rows["model"].eq(m) & rows["task"].eq(t), "condition"].nunique() for m, t in cells] or [1])
    fig, axes, ncols = _grid(cells, widest)
    for i, (model, task) in enumerate(cells):
        ax = axes[i // ncols][i % ncols]
        ax.set_title(label(f"{model} · {task}", 44), fontsize=9)
        sub = rows.loc[(rows["model"] == model) & (rows["task"] == task)]
        conditions = list(dict.fromkeys(sub["condition"]))
        drawn = [
            _bars(ax, sub.loc[sub["measure"] == m], conditions, offset, 0.38, m)
            for m, offset in (("breakage", -0.2), ("repair", 0.2))
        ]
        if not any(drawn):
            why = "no personalized condition was run" if sub.empty else "no scenario judged in baseline and here"
            empty_panel(ax, why)
            continue
        _axis(ax, conditions, "share of scenarios")
    hide_unused(axes, len(cells), ncols)
    legend(fig, axes, ncol=2)
    return fig


def flip_figure(table: pd.DataFrame) -> Any:
    rows = table.loc[table["measure"] == "flip_rate"]
    cells = panel_cells(rows)
    widest = max([rows.loc[rows["model"].eq(m) & rows["task"].eq(t), "condition"].nunique() for m, t in cells] or [1])
    fig, axes, ncols = _grid(cells or [("", "")], widest)
    for i, (model, task) in enumerate(cells):
        ax = axes[i // ncols][i % ncols]
        ax.set_title(label(f"{model} · {task}", 44), fontsize=9)
        sub = rows.loc[(rows["model"] == model) & (rows["task"] == task)]
        conditions = list(dict.fromkeys(sub["condition"]))
        if not _bars(ax, sub, conditions, 0.0, 0.6, "flip_rate"):
            empty_panel(ax, "no answer was correct before pushback")
            continue
        _axis(ax, conditions, "share of correct answers given up")
    if not cells:
        empty_panel(axes[0][0], "no response was pushed back on")
    hide_unused(axes, max(len(cells), 1), ncols)
    return fig
