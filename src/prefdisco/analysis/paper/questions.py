"""Figure 3: questions asked against discovery PrefAlign.

The points are the discovery rows that are scored (PrefAlign present, not failed) and record ``n_questions``.
Pearson r and its two-sided p-value come from ``scipy.stats.pearsonr`` over all those points; each model
family's slope is the OLS fit ``pref_align ~ 1 + n_questions`` (statsmodels) over that family's points. Mean
questions asked per model is over all non-failed discovery rows with ``n_questions``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

MIN_POINTS = 3


@dataclass
class QuestionStats:
    points: pd.DataFrame
    pearson_r: float | None = None
    pearson_p: float | None = None
    pearson_n: int = 0
    pearson_reason: str = ""
    slopes: pd.DataFrame = field(default_factory=pd.DataFrame)
    mean_questions: dict[str, float | None] = field(default_factory=dict)
    per_cell: pd.DataFrame = field(default_factory=pd.DataFrame)


def _undefined(x: np.ndarray, y: np.ndarray, what: str) -> str:
    if len(x) < MIN_POINTS:
        return f"fewer than {MIN_POINTS} scored discovery scenarios{what} ({len(x)})"
    if np.ptp(x) == 0:
        return f"every scored discovery scenario{what} asked the same number of questions ({x[0]:g})"
    if np.ptp(y) == 0:
        return f"every scored discovery scenario{what} has the same PrefAlign ({y[0]:g})"
    return ""


def _family_slopes(points: pd.DataFrame) -> pd.DataFrame:
    import statsmodels.api as sm

    rows = []
    for family, sub in points.groupby("family", sort=True):
        x, y = sub["n_questions"].to_numpy(), sub["pref_align"].to_numpy()
        reason = ""  # a flat PrefAlign still has a slope (0); a single number of questions has none
        if len(x) < MIN_POINTS:
            reason = f"fewer than {MIN_POINTS} scored discovery scenarios of family {family} ({len(x)})"
        elif np.ptp(x) == 0:
            reason = f"every scored discovery scenario of family {family} asked {x[0]:g} questions"
        row: dict[str, object] = {"family": family, "n": len(x), "slope": None, "intercept": None}
        row |= {"slope_ci_low": None, "slope_ci_high": None, "p_value": None, "reason": reason}
        if not reason:
            fit = sm.OLS(y, sm.add_constant(x, has_constant="add")).fit()
            lo, hi = fit.conf_int(alpha=0.05)[1]
            p = float(fit.pvalues[1])
            row |= {"slope": float(fit.params[1]), "intercept": float(fit.params[0])}
            row |= {"slope_ci_low": float(lo), "slope_ci_high": float(hi), "p_value": p}
        rows.append(row)
    return pd.DataFrame(
        rows,
        columns=["family", "n", "slope", "intercept", "slope_ci_low", "slope_ci_high", "p_value", "reason"],
    )


def question_stats(results: pd.DataFrame, cells: pd.DataFrame) -> QuestionStats:
    from scipy.stats import pearsonr

    disc = results.loc[
        (results["mode"] == "discovery").to_numpy() & ~results["failed"].to_numpy() & results["n_questions"].notna()
    ]
    disc = disc.astype({"model": str, "task": str, "family": str})[
        ["model", "family", "task", "scenario_id", "n_questions", "pref_align", "scored"]
    ]
    points = disc.loc[disc["scored"].to_numpy()].drop(columns="scored")
    stats = QuestionStats(points=points)
    x, y = points["n_questions"].to_numpy(), points["pref_align"].to_numpy()
    stats.pearson_n = len(x)
    stats.pearson_reason = _undefined(x, y, "")
    if not stats.pearson_reason:
        res = pearsonr(x, y)
        stats.pearson_r, stats.pearson_p = float(res.statistic), float(res.pvalue)
    stats.slopes = _family_slopes(points)
    means = disc.groupby("model")["n_questions"].mean()
    stats.mean_questions = {m: None for m in sorted(results["model"].astype(str).unique())}
    stats.mean_questions |= {str(m): float(v) for m, v in means.items()}
    per_cell = disc.groupby(["model", "task"])["n_questions"].mean().rename("mean_questions").reset_index()
    stats.per_cell = cells[["model", "task", "normalign"]].merge(per_cell, on=["model", "task"], how="left")
    return stats
