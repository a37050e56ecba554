"""``summary.json``: the report's numbers as plain JSON (null, never NaN)."""

from __future__ import annotations

import pandas as pd

from prefdisco.analysis.paper.accuracy import ALL, POOLED
from prefdisco.analysis.paper.questions import QuestionStats
from prefdisco.analysis.section.registry import Context
from prefdisco.analysis.section.shown import nested, plain
from prefdisco.analysis.stats.normalign import pct_negative
from prefdisco.analysis.stats.trials import trial_counts
from prefdisco.results.contract import FIXED_K_MODE, condition_label


def build_summary(ctx: Context, accuracy: pd.DataFrame, questions: QuestionStats, fixed_k: pd.DataFrame) -> dict:
    """The summary of a report; ``ctx.results`` has its trials averaged (``analysis/stats/trials.py``), so ``rows``
    counts results rows (one per scenario and condition), and ``trials`` says how many trials they average."""
    results, cells, pct = ctx.results, ctx.cells, pct_negative(ctx.cells)
    models = sorted(results["model"].astype(str).unique())
    null_cells = cells.loc[cells["normalign"].isna()]
    per_cell = accuracy.loc[(accuracy["model"] != POOLED) & (accuracy["task"] != ALL)]
    overall = accuracy.loc[(accuracy["model"] != POOLED) & (accuracy["task"] == ALL)]
    slopes = questions.slopes
    summary = {
        "source": ctx.data.source,
        "seed": ctx.seed,
        "bootstrap_resamples": ctx.n_boot,
        "models": models,
        "tasks": sorted(results["task"].astype(str).unique()),
        "rows": {
            "total": len(results),
            "failed": int(results["failed"].sum()),
            "scored": int(results["scored"].sum()),
        },
        "trials": trial_counts(ctx.data.results, results),
        "normalign": nested(cells, ["model", "task"], lambda r: r["normalign"]),
        "normalign_ci": nested(cells, ["model", "task"], lambda r: [r["ci_low"], r["ci_high"]]),
        "normalign_reason": nested(null_cells, ["model", "task"], lambda r: r["reason"]),
        "normalign_ci_reason": nested(
            cells.loc[cells.get("ci_reason", pd.Series("", cells.index)).fillna("").astype(bool)],
            ["model", "task"],
            lambda r: r["ci_reason"],
        ),
        "n_scenarios": nested(cells, ["model", "task"], lambda r: int(r["n_scenarios"])),
        "normalign_scenarios": nested(
            cells,
            ["model", "task"],
            lambda r: {
                "median": r["scenario_median"],
                "share_negative": r["scenario_share_negative"],
                "n_defined": int(r["scenario_n_defined"]),
                "n_excluded": int(r["scenario_n_excluded"]),
            },
        ),
        "pct_negative": pct[0],
        "n_cells_negative": pct[1],
        "n_cells_defined": pct[2],
        "n_cells": len(cells),
        "accuracy": nested(per_cell, ["model", "task", "mode"], lambda r: r["accuracy"]),
        "accuracy_ci": nested(per_cell, ["model", "task", "mode"], lambda r: [r["ci_low"], r["ci_high"]]),
        "accuracy_n": nested(per_cell, ["model", "task", "mode"], lambda r: int(r["n"])),
        "accuracy_overall": nested(overall, ["model", "mode"], lambda r: r["accuracy"]),
        "accuracy_overall_ci": nested(overall, ["model", "mode"], lambda r: [r["ci_low"], r["ci_high"]]),
        "pearson_r": questions.pearson_r,
        "pearson_p": questions.pearson_p,
        "pearson_n": questions.pearson_n,
        "pearson_reason": questions.pearson_reason or None,
        "family_slopes": {str(r["family"]): r["slope"] for r in slopes.to_dict("records")},
        "family_slopes_reason": {str(r["family"]): r["reason"] for r in slopes.to_dict("records") if r["reason"]},
        "mean_questions": questions.mean_questions,
        "fixed_k": nested(
            fixed_k.assign(condition=[condition_label(FIXED_K_MODE, k) for k in fixed_k["fixed_k"]]),
            ["model", "task", "condition"],
            lambda r: {
                "n": int(r["n"]),
                "mean_pref_align": r["mean_pref_align"],
                "normalign": r["normalign_k"],
            },
        ),
    }
    return plain(summary)
