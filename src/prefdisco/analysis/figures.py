"""The report's figures as PNG bytes: one matplotlib figure per chart (Agg canvas, no pyplot state)."""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
import pandas as pd

from prefdisco.analysis.accuracy import ALL, POOLED
from prefdisco.schema import CONDITIONS

MODE_COLORS = {"baseline": "#8c8c8c", "discovery": "#1f77b4", "oracle": "#2ca02c"}
MAX_SCATTER = 20_000
CLIP = 300.0


@dataclass
class FigureFile:
    name: str  # file name, e.g. "fig_normalign.png"
    title: str
    caption: str
    png: bytes


def _new(width: float, height: float, ncols: int = 1, nrows: int = 1):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110, layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def _short(label: str, n: int = 28) -> str:
    return label if len(label) <= n else label[: n - 1] + "…"


def normalign_heatmap(cells: pd.DataFrame) -> bytes:
    models = sorted(cells["model"].unique())
    tasks = sorted(cells["task"].unique())
    grid = cells.pivot(index="model", columns="task", values="normalign").reindex(index=models, columns=tasks)
    values = grid.to_numpy(dtype=float)
    fig, axes = _new(max(5.0, 1.0 + 0.8 * len(tasks)), max(2.5, 1.2 + 0.45 * len(models)))
    ax = axes[0][0]
    finite = np.abs(values[np.isfinite(values)])
    limit = float(min(100.0, finite.max())) if finite.size and finite.max() > 0 else 100.0
    masked = np.ma.masked_invalid(values)
    image = ax.imshow(masked, cmap="RdBu", vmin=-limit, vmax=limit, aspect="auto")
    ax.set_facecolor("#dddddd")
    ax.set_xticks(range(len(tasks)), [_short(t, 16) for t in tasks], rotation=45, ha="right")
    ax.set_yticks(range(len(models)), [_short(m) for m in models])
    if values.size <= 400:
        for (i, j), v in np.ndenumerate(values):
            ax.text(j, i, "null" if np.isnan(v) else f"{v:.0f}", ha="center", va="center", fontsize=9)
    fig.colorbar(image, ax=ax, label="NormAlign (%)", shrink=0.8)
    ax.set_title("NormAlign per model and task (grey: null)")
    return _png(fig)


def normalign_distribution(scenarios: pd.DataFrame) -> bytes:
    per = scenarios.dropna(subset=["normalign"])
    models = sorted(per["model"].unique())
    fig, axes = _new(max(5.0, 1.5 + 0.6 * len(models)), 3.8)
    ax = axes[0][0]
    if models:
        data = [np.clip(per.loc[per["model"] == m, "normalign"].to_numpy(), -CLIP, CLIP) for m in models]
        ax.boxplot(data, showfliers=False)
        ax.set_xticks(range(1, len(models) + 1), [_short(m, 20) for m in models], rotation=45, ha="right")
    else:
        ax.text(0.5, 0.5, "no scenario has a defined NormAlign", ha="center", va="center", transform=ax.transAxes)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_ylabel(f"per-scenario NormAlign (%), clipped to ±{CLIP:.0f}")
    ax.set_title("Per-scenario NormAlign by model (all tasks)")
    return _png(fig)


def _bars(ax, table: pd.DataFrame, group: str, title: str) -> None:
    groups = list(dict.fromkeys(table[group]))
    width = 0.8 / len(CONDITIONS)
    for j, mode in enumerate(CONDITIONS):
        sub = table.loc[table["mode"] == mode].set_index(group).reindex(groups)
        acc = sub["accuracy"].to_numpy(dtype=float)
        err = np.vstack([acc - sub["ci_low"].to_numpy(dtype=float), sub["ci_high"].to_numpy(dtype=float) - acc])
        x = np.arange(len(groups)) + (j - 1) * width
        ax.bar(x, acc, width, yerr=np.nan_to_num(err), capsize=2, label=mode, color=MODE_COLORS[mode])
    ax.set_xticks(range(len(groups)), [_short(str(g), 20) for g in groups], rotation=45, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("accuracy")
    ax.set_title(title)


def accuracy_figure(acc: pd.DataFrame) -> bytes:
    per_task = acc.loc[acc["model"] == POOLED]
    per_task = per_task.assign(_o=per_task["task"] == ALL).sort_values(["_o", "task"])
    per_model = acc.loc[(acc["task"] == ALL) & (acc["model"] != POOLED)].sort_values("model")
    n = max(per_task["task"].nunique(), per_model["model"].nunique(), 1)
    fig, axes = _new(max(7.0, 1.2 * n), 7.5, nrows=2)
    if acc.empty:
        axes[0][0].text(0.5, 0.5, "no judged correctness", ha="center", va="center")
    else:
        _bars(axes[0][0], per_task, "task", "Accuracy by condition per task (all models pooled), 95% Wilson")
        _bars(axes[1][0], per_model, "model", "Accuracy by condition per model (all tasks pooled), 95% Wilson")
        fig.legend(*axes[0][0].get_legend_handles_labels(), loc="outside upper center", ncol=3, fontsize=9)
    return _png(fig)


def questions_figure(points: pd.DataFrame, slopes: pd.DataFrame, per_cell: pd.DataFrame, seed: int) -> bytes:
    from matplotlib.lines import Line2D

    fig, axes = _new(11.0, 4.5, ncols=2)
    ax = axes[0][0]
    shown = points.sample(n=MAX_SCATTER, random_state=seed) if len(points) > MAX_SCATTER else points
    families = sorted(points["family"].unique())
    colors = {f: f"C{i % 10}" for i, f in enumerate(families)}
    jitter = np.random.default_rng(seed).uniform(-0.15, 0.15, len(shown))
    ax.scatter(
        shown["n_questions"].to_numpy() + jitter,
        shown["pref_align"].to_numpy(),
        s=6,
        alpha=0.35,
        c=[colors[f] for f in shown["family"]],
        rasterized=True,
    )
    handles = [Line2D([], [], marker="o", linestyle="", color=colors[f], label=f) for f in families]
    xmax = float(points["n_questions"].max()) if len(points) else 5.0
    xs = np.array([0.0, xmax])
    for row in slopes.itertuples(index=False):
        if row.slope is not None and not pd.isna(row.slope):
            ax.plot(xs, row.intercept + row.slope * xs, color=colors.get(row.family, "black"), linewidth=2)
    ax.set_xlabel("questions asked (discovery; jittered)")
    ax.set_ylabel("discovery PrefAlign (1-5)")
    ax.set_title("Questions vs alignment, OLS line per family")
    if families:
        ax.legend(handles=handles, fontsize=8)
    ax2 = axes[0][1]
    cells = per_cell.dropna(subset=["normalign", "mean_questions"])
    ax2.scatter(cells["mean_questions"].to_numpy(dtype=float), cells["normalign"].to_numpy(dtype=float), s=18)
    ax2.axhline(0, color="black", linewidth=0.8)
    ax2.set_xlabel("mean questions asked per (model, task)")
    ax2.set_ylabel("NormAlign (%)")
    ax2.set_title("Per (model, task) cell")
    return _png(fig)


def fixed_k_figure(table: pd.DataFrame) -> bytes:
    tasks = sorted(table["task"].unique())
    ncols = min(3, len(tasks))
    nrows = -(-len(tasks) // ncols)
    fig, axes = _new(4.2 * ncols, 3.2 * nrows, ncols=ncols, nrows=nrows)
    models = sorted(table["model"].unique())
    colors = {m: f"C{i % 10}" for i, m in enumerate(models)}
    for i, task in enumerate(tasks):
        ax = axes[i // ncols][i % ncols]
        sub = table.loc[table["task"] == task]
        for model, g in sub.groupby("model"):
            g = g.sort_values("fixed_k")
            ax.plot(g["fixed_k"], g["mean_pref_align"], marker="o", color=colors[model], label=_short(model, 20))
        ax.set_title(_short(task, 30))
        ax.set_xlabel("K (questions)")
        ax.set_ylabel("mean PrefAlign")
    for j in range(len(tasks), nrows * ncols):
        axes[j // ncols][j % ncols].set_visible(False)
    axes[0][0].legend(fontsize=7)
    return _png(fig)


def attributes_heatmap(matrix: pd.DataFrame, mode: str) -> bytes:
    values = matrix.to_numpy(dtype=float)
    fig, axes = _new(max(6.0, 1.5 + 0.3 * matrix.shape[1]), max(2.5, 1.8 + 0.4 * matrix.shape[0]))
    ax = axes[0][0]
    image = ax.imshow(np.ma.masked_invalid(values), cmap="viridis", vmin=1, vmax=5, aspect="auto")
    ax.set_facecolor("#dddddd")
    ax.set_xticks(
        range(matrix.shape[1]),
        [_short(str(a), 24) for a in matrix.columns],
        rotation=60,
        ha="right",
        fontsize=7,
    )
    ax.set_yticks(range(matrix.shape[0]), [_short(str(m)) for m in matrix.index])
    fig.colorbar(image, ax=ax, label="mean judge score (1-5)", shrink=0.8)
    ax.set_title(f"Per-attribute mean score, {mode} mode")
    return _png(fig)
