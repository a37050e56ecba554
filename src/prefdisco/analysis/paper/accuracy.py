"""Figure 4: accuracy by condition, per (model, task), per model over all tasks, and pooled over models.

A row counts when its correctness was judged (``correct`` not empty) and it did not fail. Intervals are
Wilson 95 % intervals from ``statsmodels.stats.proportion.proportion_confint``.

With several trials a row's ``correct`` is the share of its judged trials that were correct (``trials.py``), so
``n`` counts scenarios and ``n_correct`` sums those shares (an integer when every trial agreed); the interval
treats that sum as the count of successes among the ``n`` scenarios.
"""

from __future__ import annotations

import pandas as pd

from prefdisco.schema import CONDITIONS

ALL = "(all tasks)"
"""The task label of the per-model rows pooled over tasks."""
POOLED = "(all models)"
"""The model label of the rows pooled over models."""


def _rate(judged: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    from statsmodels.stats.proportion import proportion_confint

    g = judged.groupby(by, observed=True)["correct"].agg(n_correct="sum", n="count").reset_index()
    g = g[g["n"] > 0]
    g["accuracy"] = g["n_correct"] / g["n"]
    lo, hi = proportion_confint(g["n_correct"].to_numpy(), g["n"].to_numpy(), alpha=0.05, method="wilson")
    g["ci_low"], g["ci_high"] = lo, hi
    return g


def accuracy_table(results: pd.DataFrame) -> pd.DataFrame:
    """Long table: model, task, mode, n, n_correct, accuracy, ci_low, ci_high.

    Holds per (model, task) rows, per-model rows with task ``ALL``, and pooled rows with model ``POOLED`` (per
    task and over all tasks).
    """
    mask = (~results["failed"] & results["correct"].notna() & results["mode"].isin(CONDITIONS)).to_numpy()
    judged = results.loc[mask, ["model", "task", "mode", "correct"]].astype({"model": str, "task": str, "mode": str})
    columns = ["model", "task", "mode", "n", "n_correct", "accuracy", "ci_low", "ci_high"]
    if judged.empty:
        return pd.DataFrame(columns=columns)
    parts = [
        _rate(judged, ["model", "task", "mode"]),
        _rate(judged, ["model", "mode"]).assign(task=ALL),
        _rate(judged, ["task", "mode"]).assign(model=POOLED),
        _rate(judged, ["mode"]).assign(model=POOLED, task=ALL),
    ]
    table = pd.concat(parts, ignore_index=True)[columns]
    table["n"] = table["n"].astype(int)
    correct = table["n_correct"].astype(float)
    table["n_correct"] = correct.astype(int) if (correct == correct.round()).all() else correct
    return table
