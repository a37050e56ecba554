"""The Transfer section's figures (``transfer/section.py``): one panel per (model, task), positions on the x axis,
one line per arm, each arm's points drawn a little beside their position (``DODGE``) so that equal values
stay visible; the rules of ``figures.py`` hold (labels wrapped, never cut; an empty panel says why).

* ``normalign_figure`` — NormAlign by position, with its bootstrap interval where there is one;
* ``questions_figure`` — questions asked by position (top row) and the re-ask rate (bottom row);
* ``labels_figure`` — PrefAlign on recurring (solid) and new (dashed) attributes by position.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from prefdisco.analysis.section.figures import empty_panel, hide_unused, label, legend, new_figure, panel_cells
from prefdisco.analysis.transfer.measures import ARMS

ARM_COLORS = {"discovery": "#1f77b4", "carry_transcript": "#d62728", "carry_notes": "#2ca02c"}
DODGE = {"discovery": -0.05, "carry_transcript": 0.0, "carry_notes": 0.05}
"""Each arm's points are drawn this far beside their position, so arms with equal values stay visible."""
ARM_NAMES = {"discovery": "cold (discovery)", "carry_transcript": "carry_transcript", "carry_notes": "carry_notes"}


def _grid(cells: list[tuple[str, str]], rows_per_cell: int = 1, height: float = 3.4):
    ncols = max(1, min(3, len(cells)))
    nrows = max(1, -(-len(cells) // ncols))
    fig, axes = new_figure(4.4 * ncols, height * nrows * rows_per_cell + 0.6, ncols=ncols, nrows=nrows * rows_per_cell)
    return fig, axes, ncols


def _title(model: str, task: str) -> str:
    return label(f"{model} · {task}", 36)


def _positions(ax: Any, positions: np.ndarray) -> None:
    ax.set_xticks(sorted({int(p) for p in positions}))
    ax.set_xlabel("position in the session")


def _line(ax: Any, sub: pd.DataFrame, value: str, arm: str, low: str | None = None, high: str | None = None) -> bool:
    """One arm's line; False when it has no value to draw."""
    data = sub.loc[(sub["arm"] == arm) & sub[value].notna()].sort_values("position")
    if data.empty:
        return False
    x = data["position"].to_numpy(dtype=float) + DODGE[arm]
    y = data[value].to_numpy(dtype=float)
    yerr = None
    if low is not None and high is not None:
        lo = data[low].to_numpy(dtype=float)
        hi = data[high].to_numpy(dtype=float)
        yerr = np.clip(np.nan_to_num(np.vstack([y - lo, hi - y])), 0.0, None)
    ax.errorbar(x, y, yerr=yerr, marker="o", capsize=3, color=ARM_COLORS[arm], label=ARM_NAMES[arm])
    return True


def normalign_figure(positions: pd.DataFrame) -> Any:
    cells = panel_cells(positions)
    fig, axes, ncols = _grid(cells)
    for i, (model, task) in enumerate(cells):
        ax = axes[i // ncols][i % ncols]
        sub = positions.loc[(positions["model"] == model) & (positions["task"] == task)]
        ax.set_title(_title(model, task), fontsize=9)
        drawn = [_line(ax, sub, "normalign", arm, "normalign_ci_low", "normalign_ci_high") for arm in ARMS]
        if not any(drawn):
            empty_panel(ax, "no position has a NormAlign (the table gives each position's reason)")
            continue
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_ylabel("NormAlign (%)")
        _positions(ax, sub["position"].to_numpy())
    hide_unused(axes, len(cells), ncols)
    legend(fig, axes, ncol=3)
    return fig


def questions_figure(positions: pd.DataFrame) -> Any:
    cells = panel_cells(positions)
    fig, axes, ncols = _grid(cells, rows_per_cell=2, height=2.9)
    for i, (model, task) in enumerate(cells):
        top = axes[2 * (i // ncols)][i % ncols]
        bottom = axes[2 * (i // ncols) + 1][i % ncols]
        sub = positions.loc[(positions["model"] == model) & (positions["task"] == task)]
        top.set_title(_title(model, task), fontsize=9)
        if any([_line(top, sub, "n_questions", arm) for arm in ARMS]):
            top.set_ylabel("questions asked")
            top.set_ylim(bottom=0)
            _positions(top, sub["position"].to_numpy())
        else:
            empty_panel(top, "no row that did not fail records its number of questions")
        if any([_line(bottom, sub, "reask_rate", arm) for arm in ARMS]):
            bottom.set_ylabel("re-ask rate")
            bottom.set_ylim(-0.05, 1.05)
            _positions(bottom, sub["position"].to_numpy())
        else:
            empty_panel(
                bottom,
                "no re-ask rate: it needs a simulated user that records what it revealed (--user-type targeted), "
                "transcripts, and a question at position 2 or later",
            )
    for j in range(len(cells), len(axes[0]) * (len(axes) // 2)):
        axes[2 * (j // ncols)][j % ncols].set_visible(False)
        axes[2 * (j // ncols) + 1][j % ncols].set_visible(False)
    legend(fig, axes, ncol=3)
    return fig


def labels_figure(labels: pd.DataFrame | None, cells: list[tuple[str, str]]) -> Any:
    from matplotlib.lines import Line2D

    fig, axes, ncols = _grid(cells)
    for i, (model, task) in enumerate(cells):
        ax = axes[i // ncols][i % ncols]
        ax.set_title(_title(model, task), fontsize=9)
        sub = None if labels is None else labels.loc[(labels["model"] == model) & (labels["task"] == task)]
        if sub is None or sub.empty:
            why = "no per-attribute table with session labels" if labels is None else "no labelled criterion scored"
            empty_panel(ax, why)
            continue
        for arm in ARMS:
            for kind, style in (("recurring", "-"), ("new", "--")):
                data = sub.loc[(sub["arm"] == arm) & (sub["label"] == kind)].sort_values("position")
                if len(data):
                    x = data["position"].to_numpy(dtype=float) + DODGE[arm]
                    ax.plot(x, data["pref_align"].to_numpy(dtype=float), style, marker="o", color=ARM_COLORS[arm])
        ax.set_ylabel("PrefAlign on those attributes")
        _positions(ax, sub["position"].to_numpy())
    hide_unused(axes, len(cells), ncols)
    handles = [Line2D([], [], color=ARM_COLORS[a], label=ARM_NAMES[a]) for a in ARMS]
    handles += [Line2D([], [], color="black", linestyle="-", label="recurring")]
    handles += [Line2D([], [], color="black", linestyle="--", label="new")]
    fig.legend(handles=handles, loc="outside upper center", ncol=3, fontsize=8)
    return fig
