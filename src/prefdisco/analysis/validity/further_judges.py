"""A judge added after the run (``prefdisco judge RUN_DIR --judge-model OTHER``): its PrefAlign beside the run's.

PrefAlign in the results table is made of the run's judges only (the attribute rows with ``in_pref_align`` 1), and
so is every table that must agree with it (``panel.py``). A further judge's criterion scores (``in_pref_align`` 0)
enter none of those; they count in judge agreement, noise and length bias like any judge's (the rows it judged,
``panel.judged_rows``), and here they give the judge a PrefAlign column of its own, beside the run's, never mixed
into it.

``further_judge_table`` has one row per (model, task, mode, fixed_k) condition: ``n`` and ``pref_align`` — the
run's PrefAlign, the mean over the scenarios scored (trials averaged first, ``trials.py``) — and per further judge
J, ``n[J]`` and ``pref_align[J]``: J's own PrefAlign of each trial (``judges.judge_pref_align``: its repeat-means,
PrefAlign's rule), averaged over the trials J scored, then over the scenarios. A refused or empty response is
scored by the run's ``--refusals`` rule for J as for the run (``scoring/deferred.py``): at the rule's 1 under
``score``, left out under ``exclude`` (its results row has no PrefAlign), so both columns are over the same
responses. None when no row is a further judge's. ``summary.json``'s ``pref_align_by_judge``: model → task →
condition → {``run``: the run's mean, J: J's}.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from prefdisco.analysis.stats.panel import plain_keys, rows_except, ruled
from prefdisco.analysis.validity.judges import judge_pref_align
from prefdisco.results.contract import IN_PREF_ALIGN, JUDGE, NO_K, condition_label

_CELL = ["model", "task", "mode", "fixed_k"]
RUN = "run"
"""The run's own judges in ``summary.json``'s ``pref_align_by_judge``."""


def further_judge_table(averaged: pd.DataFrame, attributes: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame | None:
    """The table of the module docstring from the trial-averaged results, the attribute rows as run and the
    trial rows (whose failed rows' judgements count nowhere)."""
    if IN_PREF_ALIGN not in attributes.columns or attributes[IN_PREF_ALIGN].to_numpy(dtype=bool).all():
        return None
    # the trials the run's PrefAlign leaves out leave the further judge's out too: failed, or a non-answer that
    # --refusals exclude left out (ruled, no PrefAlign); under --refusals score both count it at the rule's 1
    left_out = results["failed"].to_numpy(dtype=bool) | (ruled(results) & results["pref_align"].isna().to_numpy())
    further = rows_except(attributes.loc[~attributes[IN_PREF_ALIGN].to_numpy(dtype=bool)], results, left_out)
    per_trial = judge_pref_align(further).dropna(subset=["pref_align"])
    per_scenario = per_trial.groupby([*_CELL, "scenario_id", JUDGE], sort=False)["pref_align"].mean().reset_index()
    by_judge = per_scenario.groupby([*_CELL, JUDGE], sort=True)["pref_align"].agg(["size", "mean"]).reset_index()
    scored = plain_keys(averaged.loc[averaged["scored"].to_numpy(), [*_CELL, "scenario_id", "pref_align"]])
    table = scored.groupby(_CELL, sort=True)["pref_align"].agg(n="size", pref_align="mean").reset_index()
    for judge in sorted(by_judge[JUDGE].unique()):
        own = by_judge.loc[by_judge[JUDGE] == judge, [*_CELL, "size", "mean"]]
        own = own.rename(columns={"size": f"n[{judge}]", "mean": f"pref_align[{judge}]"})
        table = table.merge(own, on=_CELL, how="outer")
    table["n"] = table["n"].fillna(0).astype(int)
    for column in [c for c in table.columns if c.startswith("n[")]:
        table[column] = table[column].fillna(0).astype(int)
    table["fixed_k"] = pd.array([None if k == NO_K else int(k) for k in table["fixed_k"]], dtype="Int64")
    return table.sort_values(_CELL, ignore_index=True)


def summary_part(table: pd.DataFrame | None) -> dict[str, Any]:
    """``summary.json``'s ``pref_align_by_judge`` ({} without a further judge)."""
    out: dict[str, Any] = {}
    for row in [] if table is None else table.to_dict("records"):
        condition = condition_label(row["mode"], None if pd.isna(row["fixed_k"]) else row["fixed_k"])
        node = out.setdefault(str(row["model"]), {}).setdefault(str(row["task"]), {})
        means = {RUN: row["pref_align"]}
        means |= {key[len("pref_align[") : -1]: value for key, value in row.items() if key.startswith("pref_align[")}
        node[condition] = {k: None if pd.isna(v) else float(v) for k, v in means.items()}
    return out
