"""Figure 5: alignment against a fixed number of questions K.

Per (model, task, K): mean PrefAlign over the scored fixed-K rows, accuracy over judged ones, and NormAlign at
K — ``norm_align`` of the baseline, fixed-K and oracle means over the scenarios scored in all three. K is the
``fixed_k`` column, as in the results table; ``summary.json`` names the condition ``fixed_k=K``
(``results.contract.condition_label``).
"""

from __future__ import annotations

import pandas as pd

from prefdisco.analysis.stats.normalign import norm_align

COLUMNS = ["model", "task", "fixed_k", "n", "mean_pref_align", "accuracy", "n_both", "normalign_k", "reason"]


def fixed_k_table(results: pd.DataFrame) -> pd.DataFrame:
    rows = results.loc[(results["mode"] == "fixed_k").to_numpy() & ~results["failed"].to_numpy()]
    if rows.empty:
        return pd.DataFrame(columns=COLUMNS)
    rows = rows.astype({"model": str, "task": str, "scenario_id": str})
    scored = rows.loc[rows["scored"].to_numpy()]
    by = ["model", "task", "fixed_k"]
    table = (
        rows.groupby(by)
        .agg(mean_pref_align=("pref_align", "mean"), accuracy=("correct", "mean"))
        .join(scored.groupby(by).size().rename("n"))
        .reset_index()
    )
    table["n"] = table["n"].fillna(0).astype(int)
    ends = results.loc[results["scored"].to_numpy() & results["mode"].isin(["baseline", "oracle"]).to_numpy()]
    ends = (
        ends.astype({"model": str, "task": str, "scenario_id": str, "mode": str})
        .pivot(index=["model", "task", "scenario_id"], columns="mode", values="pref_align")
        .reindex(columns=["baseline", "oracle"])  # a condition with no scored row: NaN
    )
    joined = scored[["model", "task", "scenario_id", "fixed_k", "pref_align"]].join(
        ends, on=["model", "task", "scenario_id"]
    )
    joined = joined.dropna(subset=["baseline", "oracle", "pref_align"])
    means = joined.groupby(by)[["baseline", "pref_align", "oracle"]].mean()
    counts = joined.groupby(by).size()
    values, reasons, n_both = [], [], []
    for key in zip(table["model"], table["task"], table["fixed_k"], strict=True):
        if key in means.index:
            b, k, o = means.loc[key]
            value, reason = norm_align(float(b), float(k), float(o))
            n_both.append(int(counts.loc[key]))
        else:
            value, reason = None, "no scenario is scored in baseline, oracle and this fixed-K mode"
            n_both.append(0)
        values.append(value)
        reasons.append(reason)
    table["n_both"], table["normalign_k"], table["reason"] = n_both, values, reasons
    table["fixed_k"] = table["fixed_k"].astype(int)
    return table[COLUMNS].sort_values(["task", "model", "fixed_k"], ignore_index=True)
