"""The report's figures: one matplotlib figure per chart (Agg canvas, no pyplot state), written as PNG.

Two rules hold for every chart. No label is shortened: a long model, task or attribute name is wrapped onto
several lines (``label``), never cut, so two names that differ only at their end stay apart; the figure's
constrained layout keeps every text inside the image. A panel with nothing to draw says why, in the panel
(``empty_panel``) and in the figure's caption (``Chart.file`` collects the reasons).
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from prefdisco.analysis.paper.accuracy import ALL, POOLED
from prefdisco.schema import CONDITIONS

MODE_COLORS = {"baseline": "#8c8c8c", "discovery": "#1f77b4", "oracle": "#2ca02c"}
MAX_SCATTER = 20_000
CLIP = 300.0
EMPTY = "prefdisco-empty-panel"
"""The gid of the text that says why a panel is empty."""


@dataclass
class FigureFile:
    name: str  # file name, e.g. "fig_normalign.png"
    title: str
    caption: str
    png: bytes
    empty: list[str] = field(default_factory=list)
    """Why each empty panel of the figure is empty (also written in the panel)."""


@dataclass
class Chart:
    """A drawn figure before it is written: the report's figures are made of these."""

    name: str
    title: str
    caption: str
    figure: Any  # matplotlib.figure.Figure

    def file(self) -> FigureFile:
        return FigureFile(self.name, self.title, self.caption, png(self.figure), empty_notes(self.figure))


def new_figure(width: float, height: float, ncols: int = 1, nrows: int = 1):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110, layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def png(fig: Any) -> bytes:
    """A figure's PNG bytes (no software tag, so reruns give the same bytes)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def label(text: str, width: int = 20) -> str:
    """``text`` on lines of at most ``width`` characters, broken after a space, ``/``, ``-`` or ``_`` where it can
    be and inside a word where it cannot; every character is kept."""
    text = str(text)
    if len(text) <= width:
        return text
    lines: list[str] = []
    line = ""
    for piece in (p for p in re.findall(r"[^ /_-]*[ /_-]?", text) if p):
        if line and len(line) + len(piece.rstrip()) > width:
            lines.append(line)
            line = ""
        while len(piece.rstrip()) > width:  # a word longer than a line is broken inside
            lines.append(piece[:width])
            piece = piece[width:]
        line += piece
    lines.append(line)
    return "\n".join(part.rstrip(" ") for part in lines if part.strip())


def empty_panel(ax: Any, why: str) -> None:
    """Say in ``ax`` why it has nothing to draw (the caption repeats it: ``empty_notes``)."""
    ax.set_xticks([])
    ax.set_yticks([])
    gid = f"{EMPTY}:{why}"  # the reason unwrapped, for the caption
    ax.text(0.5, 0.5, label(why, 44), ha="center", va="center", transform=ax.transAxes, fontsize=9, gid=gid)


def panel_cells(table: pd.DataFrame) -> list[tuple[str, str]]:
    """The (model, task) pairs of ``table``, sorted: one panel each."""
    return sorted({(str(m), str(t)) for m, t in zip(table["model"], table["task"], strict=True)})


def hide_unused(axes: Any, n: int, ncols: int) -> None:
    """Hide the panels after the first ``n`` (row by row, ``ncols`` to a row)."""
    for j in range(n, len(axes) * len(axes[0])):
        axes[j // ncols][j % ncols].set_visible(False)


def legend(fig: Any, axes: Any, ncol: int) -> None:
    """One legend above the panels: each label once, with its first handle over every panel."""
    handles: dict[str, Any] = {}
    for ax in np.ravel(axes):
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(lab, h)
    if handles:
        fig.legend(list(handles.values()), list(handles), loc="outside upper center", ncol=ncol, fontsize=8)


def empty_notes(fig: Any) -> list[str]:
    """Why each empty panel of ``fig`` is empty, in panel order."""
    gids = [str(t.get_gid() or "") for ax in fig.axes for t in ax.texts]
    return [gid.removeprefix(f"{EMPTY}:") for gid in gids if gid.startswith(f"{EMPTY}:")]


def normalign_heatmap(cells: pd.DataFrame) -> Any:
    models = sorted(cells["model"].unique())
    tasks = sorted(cells["task"].unique())
    grid = cells.pivot(index="model", columns="task", values="normalign").reindex(index=models, columns=tasks)
    values = grid.to_numpy(dtype=float)
    fig, axes = new_figure(max(5.0, 1.0 + 0.8 * len(tasks)), max(2.5, 1.2 + 0.45 * len(models)))
    ax = axes[0][0]
    finite = np.abs(values[np.isfinite(values)])
    limit = float(min(100.0, finite.max())) if finite.size and finite.max() > 0 else 100.0
    masked = np.ma.masked_invalid(values)
    image = ax.imshow(masked, cmap="RdBu", vmin=-limit, vmax=limit, aspect="auto")
    ax.set_facecolor("#dddddd")
    ax.set_xticks(range(len(tasks)), [label(t, 16) for t in tasks], rotation=45, ha="right")
    ax.set_yticks(range(len(models)), [label(m, 28) for m in models])
    if values.size <= 400:
        for (i, j), v in np.ndenumerate(values):
            ax.text(j, i, "null" if np.isnan(v) else f"{v:.0f}", ha="center", va="center", fontsize=9)
    fig.colorbar(image, ax=ax, label="NormAlign (%)", shrink=0.8)
    ax.set_title("NormAlign per model and task (grey: null)")
    return fig


def normalign_distribution(scenarios: pd.DataFrame) -> Any:
    per = scenarios.dropna(subset=["normalign"])
    models = sorted(per["model"].unique())
    fig, axes = new_figure(max(5.0, 1.5 + 0.6 * len(models)), 3.8)
    ax = axes[0][0]
    if models:
        data = [np.clip(per.loc[per["model"] == m, "normalign"].to_numpy(), -CLIP, CLIP) for m in models]
        ax.boxplot(data, showfliers=False)
        ax.set_xticks(range(1, len(models) + 1), [label(m, 20) for m in models], rotation=45, ha="right")
        ax.axhline(0, color="black", linewidth=0.8)
    elif scenarios.empty:
        empty_panel(ax, "no scenario is scored in all three of baseline, discovery and oracle")
    else:
        empty_panel(ax, "every scenario's oracle and baseline PrefAlign are equal: no per-scenario NormAlign")
    ax.set_ylabel(f"per-scenario NormAlign (%),\nclipped to ±{CLIP:.0f}")
    ax.set_title("Per-scenario NormAlign by model (all tasks)")
    return fig


def _bars(ax, table: pd.DataFrame, group: str, title: str) -> None:
    groups = list(dict.fromkeys(table[group]))
    width = 0.8 / len(CONDITIONS)
    for j, mode in enumerate(CONDITIONS):
        sub = table.loc[table["mode"] == mode].set_index(group).reindex(groups)
        acc = sub["accuracy"].to_numpy(dtype=float)
        err = np.vstack([acc - sub["ci_low"].to_numpy(dtype=float), sub["ci_high"].to_numpy(dtype=float) - acc])
        x = np.arange(len(groups)) + (j - 1) * width
        # a Wilson bound a rounding error inside the accuracy (1 − 1e-16 at 12 of 12) is a whisker of length 0
        whiskers = np.clip(np.nan_to_num(err), 0.0, None)
        ax.bar(x, acc, width, yerr=whiskers, capsize=2, label=mode, color=MODE_COLORS[mode])
    ax.set_xticks(range(len(groups)), [label(str(g), 20) for g in groups], rotation=45, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("accuracy")
    ax.set_title(title)


def accuracy_figure(acc: pd.DataFrame) -> Any:
    per_task = acc.loc[acc["model"] == POOLED]
    per_task = per_task.assign(_o=per_task["task"] == ALL).sort_values(["_o", "task"])
    per_model = acc.loc[(acc["task"] == ALL) & (acc["model"] != POOLED)].sort_values("model")
    n = max(per_task["task"].nunique(), per_model["model"].nunique(), 1)
    fig, axes = new_figure(max(7.0, 1.2 * n), 7.5, nrows=2)
    if acc.empty:
        why = "no row of baseline, discovery or oracle has its correctness judged (correct is empty)"
        empty_panel(axes[0][0], why)
        empty_panel(axes[1][0], why)
    else:
        _bars(axes[0][0], per_task, "task", "Accuracy by condition per task (all models pooled), 95% Wilson")
        _bars(axes[1][0], per_model, "model", "Accuracy by condition per model (all tasks pooled), 95% Wilson")
        fig.legend(*axes[0][0].get_legend_handles_labels(), loc="outside upper center", ncol=3, fontsize=9)
    return fig


def questions_figure(points: pd.DataFrame, slopes: pd.DataFrame, per_cell: pd.DataFrame, seed: int) -> Any:
    from matplotlib.lines import Line2D

    fig, axes = new_figure(11.0, 4.5, ncols=2)
    ax = axes[0][0]
    shown = points.sample(n=MAX_SCATTER, random_state=seed) if len(points) > MAX_SCATTER else points
    families = sorted(points["family"].unique())
    colors = {f: f"C{i % 10}" for i, f in enumerate(families)}
    ax.set_title("Questions vs alignment, OLS line per family")
    if len(points):
        jitter = np.random.default_rng(seed).uniform(-0.15, 0.15, len(shown))
        ax.scatter(
            shown["n_questions"].to_numpy() + jitter,
            shown["pref_align"].to_numpy(),
            s=6,
            alpha=0.35,
            c=[colors[f] for f in shown["family"]],
            rasterized=True,
        )
        handles = [Line2D([], [], marker="o", linestyle="", color=colors[f], label=label(f, 24)) for f in families]
        xs = np.array([0.0, float(points["n_questions"].max())])
        for row in slopes.itertuples(index=False):
            if row.slope is not None and not pd.isna(row.slope):
                ax.plot(xs, row.intercept + row.slope * xs, color=colors.get(row.family, "black"), linewidth=2)
        ax.set_xlabel("questions asked (discovery; jittered)")
        ax.set_ylabel("discovery PrefAlign (1-5)")
        ax.legend(handles=handles, fontsize=8)
    else:
        empty_panel(ax, "no scored discovery row records its number of questions")
    ax2 = axes[0][1]
    ax2.set_title("Per (model, task) cell")
    cells = per_cell.dropna(subset=["normalign", "mean_questions"])
    if len(cells):
        ax2.scatter(cells["mean_questions"].to_numpy(dtype=float), cells["normalign"].to_numpy(dtype=float), s=18)
        ax2.axhline(0, color="black", linewidth=0.8)
        ax2.set_xlabel("mean questions asked per (model, task)")
        ax2.set_ylabel("NormAlign (%)")
    elif per_cell["mean_questions"].notna().any():
        empty_panel(ax2, "no (model, task) cell with discovery questions has a NormAlign (Table 1 says why)")
    else:
        empty_panel(ax2, "no (model, task) cell has a discovery row that records its number of questions")
    return fig


def fixed_k_figure(table: pd.DataFrame) -> Any:
    tasks = sorted(table["task"].unique())
    ncols = min(3, len(tasks))
    nrows = -(-len(tasks) // ncols)
    fig, axes = new_figure(4.2 * ncols, 3.2 * nrows, ncols=ncols, nrows=nrows)
    models = sorted(table["model"].unique())
    colors = {m: f"C{i % 10}" for i, m in enumerate(models)}
    for i, task in enumerate(tasks):
        ax = axes[i // ncols][i % ncols]
        sub = table.loc[(table["task"] == task) & pd.to_numeric(table["mean_pref_align"]).notna()]
        ax.set_title(label(task, 30))
        if sub.empty:
            empty_panel(ax, "no fixed-K row of this task is scored (no PrefAlign)")
            continue
        for model, g in sub.groupby("model"):
            g = g.sort_values("fixed_k")
            ax.plot(g["fixed_k"], g["mean_pref_align"], marker="o", color=colors[model], label=label(model, 24))
        ax.set_xlabel("K (questions)")
        ax.set_ylabel("mean PrefAlign")
        ax.legend(fontsize=7)
    for j in range(len(tasks), nrows * ncols):
        axes[j // ncols][j % ncols].set_visible(False)
    return fig


def attributes_heatmap(matrix: pd.DataFrame, mode: str) -> Any:
    values = matrix.to_numpy(dtype=float)
    fig, axes = new_figure(max(6.0, 1.5 + 0.3 * matrix.shape[1]), max(2.5, 1.8 + 0.4 * matrix.shape[0]))
    ax = axes[0][0]
    image = ax.imshow(np.ma.masked_invalid(values), cmap="viridis", vmin=1, vmax=5, aspect="auto")
    ax.set_facecolor("#dddddd")
    ax.set_xticks(
        range(matrix.shape[1]),
        [label(str(a), 24) for a in matrix.columns],
        rotation=60,
        ha="right",
        fontsize=7,
    )
    ax.set_yticks(range(matrix.shape[0]), [label(str(m), 28) for m in matrix.index])
    fig.colorbar(image, ax=ax, label="mean judge\nscore (1-5)", shrink=0.8)
    ax.set_title(f"Per-attribute mean score, {mode} mode")
    return fig
