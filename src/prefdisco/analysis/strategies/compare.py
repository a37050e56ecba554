"""Elicitation strategies compared: NormAlign and elicited weight against the question budget K, per strategy.

Input: the results of several runs (run folders, read from ``results.csv`` / ``.parquet`` or their eval logs, or
results tables), read whole and pooled. **How a row's strategy is identified** (its ``strategy`` label and ``k``):

* a row whose ``strategy`` column is set (a ``prefdisco/checklist`` or ``prefdisco/infogain`` run; the column comes
  from the sample's record, ``results/strategy_columns.py``) is that strategy at K = ``strategy_k``;
* a fixed-K row without a strategy is ``naive`` at K = ``fixed_k`` (the model's own questions, exactly K);
* a discovery row without a strategy is ``discovery`` with no K (the model's own questions, as many as it chose
  up to the run's budget): a reference line, not a point on the K axis;
* baseline and oracle rows are the two ends of NormAlign; wrong_persona rows are not read.

Trials, and repeated runs of one (model, task, scenario, strategy, K), are averaged per scenario first: PrefAlign
over the scored rows, elicited weight, questions asked and P@K / R@K over the rows that did not fail (a
not-measured value left out). A table of the same run given twice is refused.

Per (model, task, strategy, K), ``strategy_table`` gives ``n`` (scenarios scored) and ``mean_pref_align``;
``normalign`` = ``norm_align`` of the baseline, strategy and oracle means over the ``n_both`` scenarios scored in
all three (``analysis/stats/normalign.py``; ``reason`` says why it is undefined); ``mean_elicited_weight`` over the
``n_elicited`` scenarios where it was measured; ``mean_precision_at_k`` / ``mean_recall_at_k`` of the inferred
attribute set (strategy rows only) and ``mean_questions``. ``strategy_figure`` draws NormAlign and elicited
weight against K, one line per strategy (and per model and task when there are several), free discovery dashed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from prefdisco.analysis.section.figures import new_figure, png
from prefdisco.analysis.stats.normalign import norm_align
from prefdisco.atomic import atomic_path, atomic_write
from prefdisco.errors import UserError
from prefdisco.results.columns import Columns
from prefdisco.results.logs import results_from_logs
from prefdisco.results.table import SUFFIXES, read_table, validate_results

NAIVE = "naive"
FREE = "discovery"
ENDS = ("baseline", "oracle")
ORDER = (NAIVE, "checklist", "infogain", FREE)
"""Known labels in table order; other strategy names follow, by name."""
COLUMNS = [
    "model",
    "task",
    "strategy",
    "k",
    "n",
    "mean_pref_align",
    "n_both",
    "normalign",
    "reason",
    "mean_elicited_weight",
    "n_elicited",
    "mean_precision_at_k",
    "mean_recall_at_k",
    "mean_questions",
]
TABLE_FILE = "strategies.csv"
FIGURE_FILE = "fig_strategies.png"
COLORS = {NAIVE: "#8c8c8c", "checklist": "#ff7f0e", "infogain": "#9467bd", FREE: "#1f77b4"}
_KEY = ["model", "task", "scenario_id", "strategy", "k"]


def _arrow(frame: pd.DataFrame) -> pa.Table:
    try:
        return pa.Table.from_pandas(frame, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed Python objects: validate them as text
        text = frame.astype(object).where(frame.notna(), None).map(lambda v: v if v is None else str(v))
        return pa.Table.from_pandas(text, preserve_index=False)


def _source(path: Path) -> tuple[pa.Table, str]:
    """The raw results table of a run folder (its table, else its logs) or of a results file."""
    if not path.exists():
        raise UserError(f"{path}: no such run folder or results table")
    if not path.is_dir():
        return read_table(path), str(path)
    found = next((path / f"results{s}" for s in SUFFIXES if (path / f"results{s}").is_file()), None)
    if found is not None:
        return read_table(found), str(found)
    results = results_from_logs(path).results
    if results.empty:
        raise UserError(f"{path}: no results table and no PrefDisco eval logs in it; run `prefdisco eval` first")
    return _arrow(results), f"{path} (results from logs)"


def read_run(path: Path) -> pd.DataFrame:
    """One run's validated results (``results.table.validate_results``) with its rows' ``strategy`` label and
    ``k`` (module docstring) and the P@K / R@K columns; every malformed strategy cell is a one-line error."""
    table, where = _source(Path(path))
    frame = validate_results(table, where)
    cols = Columns(table, where, row_word="data row" if where.lower().endswith(".csv") else "row")
    names, n = table.column_names, table.num_rows
    given = cols.text("strategy", required=False) if "strategy" in names else pd.Categorical([None] * n)
    given_k = cols.number("strategy_k", lo=0, integer=True) if "strategy_k" in names else np.full(n, np.nan)
    for name in ("inferred_precision", "inferred_recall"):
        frame[name] = cols.number(name, lo=0, hi=1) if name in names else np.full(n, np.nan)
    has = np.asarray(given.codes >= 0)
    mode = np.asarray(frame["mode"].astype(str))
    bad = has & (mode != "discovery")
    if bad.any():
        i = int(np.argmax(bad))
        raise cols.fail(i, "strategy", f"is {given[i]!r} but mode is {mode[i]} (a strategy row is a discovery row)")
    missing = has & np.isnan(given_k)
    if missing.any():
        raise cols.fail(int(np.argmax(missing)), "strategy_k", "is empty (a strategy row needs its budget K)")
    fixed = mode == "fixed_k"
    frame["strategy"] = np.where(has, np.asarray(given.astype(object)), np.where(fixed, NAIVE, mode))
    frame["k"] = np.where(has, given_k, np.where(fixed, frame["fixed_k"].to_numpy(), np.nan))
    frame["model"], frame["task"] = frame["model"].astype(str), frame["task"].astype(str)
    frame["scenario_id"] = frame["scenario_id"].astype(str)
    return frame


def read_runs(paths: Sequence[Path]) -> pd.DataFrame:
    """The runs' rows pooled (``read_run`` each); the same run given twice is refused."""
    if not paths:
        raise UserError("compare-strategies: give at least one run folder or results table")
    seen: dict[Path, Path] = {}
    for path in paths:
        resolved = Path(path).resolve()
        if resolved in seen:
            raise UserError(f"{path}: given twice (as {seen[resolved]}); give each run once")
        seen[resolved] = Path(path)
    return pd.concat([read_run(Path(p)) for p in paths], ignore_index=True)


def per_scenario(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, task, scenario_id, strategy, k): trials and repeated runs averaged (module docstring)."""
    ok = ~rows["failed"].to_numpy()
    frame = rows.assign(
        _pref=rows["pref_align"].where(rows["scored"]),
        _weight=rows["elicited_weight"].where(ok) if "elicited_weight" in rows.columns else np.nan,
        _precision=rows["inferred_precision"].where(ok),
        _recall=rows["inferred_recall"].where(ok),
        _questions=rows["n_questions"].where(ok),
    )
    out = frame.groupby(_KEY, dropna=False, sort=True).agg(
        pref_align=("_pref", "mean"),
        scored=("scored", "any"),
        elicited_weight=("_weight", "mean"),
        precision=("_precision", "mean"),
        recall=("_recall", "mean"),
        n_questions=("_questions", "mean"),
    )
    return out.reset_index()


def _ends(scenarios: pd.DataFrame) -> pd.DataFrame:
    """Baseline and oracle PrefAlign per (model, task, scenario_id), NaN where not scored."""
    ends = scenarios.loc[scenarios["strategy"].isin(ENDS) & scenarios["scored"]]
    wide = ends.pivot(index=["model", "task", "scenario_id"], columns="strategy", values="pref_align")
    for end in ENDS:
        if end not in wide.columns:
            wide[end] = np.nan
    return wide[list(ENDS)]


def _order(label: str) -> tuple[int, str]:
    return (ORDER.index(label), "") if label in ORDER else (len(ORDER), label)


def _mean(values: pd.Series) -> float | None:
    values = values.dropna()
    return float(values.mean()) if len(values) else None


def strategy_table(rows: pd.DataFrame) -> pd.DataFrame:
    """The comparison table (module docstring) of pooled rows (``read_runs``)."""
    scenarios = per_scenario(rows)
    ends = _ends(scenarios)
    dialogue = scenarios.loc[~scenarios["strategy"].isin((*ENDS, "wrong_persona"))]
    out = []
    for (model, task, label, k), cell in dialogue.groupby(["model", "task", "strategy", "k"], dropna=False):
        scored = cell.loc[cell["scored"]]
        joined = scored.join(ends, on=["model", "task", "scenario_id"]).dropna(subset=[*ENDS, "pref_align"])
        if len(joined):
            value, reason = norm_align(*(float(joined[c].mean()) for c in ("baseline", "pref_align", "oracle")))
        else:
            value, reason = None, "no scenario is scored in baseline, oracle and this strategy"
        out.append(
            {
                "model": model,
                "task": task,
                "strategy": label,
                "k": None if pd.isna(k) else int(k),
                "n": len(scored),
                "mean_pref_align": _mean(scored["pref_align"]),
                "n_both": len(joined),
                "normalign": value,
                "reason": reason,
                "mean_elicited_weight": _mean(cell["elicited_weight"]),
                "n_elicited": int(cell["elicited_weight"].notna().sum()),
                "mean_precision_at_k": _mean(cell["precision"]),
                "mean_recall_at_k": _mean(cell["recall"]),
                "mean_questions": _mean(cell["n_questions"]),
            }
        )
    table = pd.DataFrame(out, columns=COLUMNS)
    if table.empty:
        return table
    table["k"] = table["k"].astype("Int64")
    sort = table.assign(_o=[_order(s) for s in table["strategy"]], _k=table["k"].fillna(-1).astype(int)).sort_values(
        ["model", "task", "_o", "_k"], kind="stable"
    )
    return sort[COLUMNS].reset_index(drop=True)


def strategy_figure(table: pd.DataFrame) -> bytes:
    """NormAlign (left) and mean elicited weight (right) against K as PNG bytes (module docstring)."""
    fig, grid = new_figure(10, 4, ncols=2)
    axes = grid[0]
    cells = table[["model", "task"]].drop_duplicates()
    several = len(cells) > 1
    for ax, column, title in (
        (axes[0], "normalign", "NormAlign (%)"),
        (axes[1], "mean_elicited_weight", "mean elicited weight"),
    ):
        for (model, task, label), group in table.groupby(["model", "task", "strategy"], sort=False):
            name = f"{model} · {task} · {label}" if several else label
            values = pd.to_numeric(group[column], errors="coerce")
            color = COLORS.get(label)
            if group["k"].isna().all():
                if values.notna().any():
                    ax.axhline(float(values.dropna().iloc[0]), color=color, linestyle="--", label=f"{name} (free)")
                continue
            points = group.assign(_v=values).dropna(subset=["k"]).sort_values("k")
            ax.plot(points["k"].astype(int), points["_v"], marker="o", color=color, label=name)
        ax.set_xlabel("question budget K")
        ax.set_title(title)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize="small")
    return png(fig)


def compare_strategies(runs: Sequence[Path], out: Path) -> tuple[pd.DataFrame, list[Path]]:
    """Read the runs, write ``strategies.csv`` and ``fig_strategies.png`` into ``out``; (table, files written)."""
    table = strategy_table(read_runs(runs))
    if table.empty:
        raise UserError("compare-strategies: no discovery, fixed-K or strategy rows in the runs given")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(out / TABLE_FILE) as tmp:
        table.to_csv(tmp, index=False)
    atomic_write(out / FIGURE_FILE, strategy_figure(table))
    return table, [out / TABLE_FILE, out / FIGURE_FILE]
