"""Transfer by attribute label: PrefAlign on the recurring, new and changed attributes of a session's positions, and
stale application under drift.

A sessions run labels each criterion of a position (``attributes.csv`` ``session_label``, ``sessions/model.py``):
**recurring** (an earlier position of the session had the attribute with this value), **changed** (with another
value: a drifted scenario), **new**. The criteria are the panel scores of the judgements PrefAlign is made of,
trials averaged (``panel.py``, ``trials.py``).

* ``label_table`` — per (model, task, arm, position, label): each scenario's PrefAlign over its criteria of that
  label (``panel.weighted_pref_align``: Σ w·g / Σ w over the valid ones, null under half the label's weight), then
  the mean over the scenarios that have one (``n``). A memory should lift recurring attributes above the cold arm
  and leave new ones where cold has them.
* ``stale_table`` — on the **changed** criteria, per scenario the weighted mean of (carry arm score − cold score)
  over the changed criteria validly scored in both (paired by scenario and attribute; weights the criteria's),
  then per (model, task, carry arm) the mean over the scenarios (``n``), with a seeded bootstrap interval of the
  mean (``transfer.transfer_rng``, statistic ``stale``, position 0; per position its position); one row per
  position and one over all positions (``position`` empty). Negative: the carry arm applied the old value where
  the cold arm, asking afresh, had the new one.

Both are None when the attribute table is missing or has no ``session_label``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from prefdisco.analysis.stats.normalign import interval_reason
from prefdisco.analysis.stats.panel import weighted_pref_align
from prefdisco.analysis.transfer.measures import ARMS, CARRY_ARMS, COLD, mean_ci, transfer_rng
from prefdisco.results.contract import SESSION_LABEL

LABELS: tuple[str, ...] = ("recurring", "new", "changed")
LABEL_COLUMNS: tuple[str, ...] = ("model", "task", "arm", "position", "label", "n", "pref_align")
STALE_COLUMNS: tuple[str, ...] = (
    "model",
    "task",
    "arm",
    "position",
    "n",
    "n_criteria",
    "stale",
    "ci_low",
    "ci_high",
    "reason",
)


def labelled_criteria(attributes: pd.DataFrame | None, results: pd.DataFrame) -> pd.DataFrame | None:
    """The arms' labelled criteria with their scenario's session and position: model, task, scenario_id, arm,
    position, attribute, label, weight, score; None without labels."""
    if attributes is None or SESSION_LABEL not in attributes.columns or "session_id" not in results.columns:
        return None
    att = attributes.loc[attributes["mode"].isin(ARMS).to_numpy() & attributes[SESSION_LABEL].notna().to_numpy()]
    if att.empty:
        return None
    where = results.loc[results["session_id"].notna().to_numpy() & ~results["failed"].to_numpy()]
    where = pd.DataFrame(
        {
            "model": where["model"].astype(str).to_numpy(),
            "task": where["task"].astype(str).to_numpy(),
            "scenario_id": where["scenario_id"].astype(str).to_numpy(),
            "arm": where["mode"].astype(str).to_numpy(),
            "position": where["position"].to_numpy(dtype=float).astype(int),
        }
    )
    criteria = pd.DataFrame(
        {
            "model": att["model"].astype(str).to_numpy(),
            "task": att["task"].astype(str).to_numpy(),
            "scenario_id": att["scenario_id"].astype(str).to_numpy(),
            "arm": att["mode"].astype(str).to_numpy(),
            "attribute": att["attribute"].astype(str).to_numpy(),
            "label": att[SESSION_LABEL].astype(str).to_numpy(),
            "weight": att["weight"].to_numpy(dtype=float),
            "score": att["score"].to_numpy(dtype=float),
        }
    )
    return criteria.merge(where, on=["model", "task", "scenario_id", "arm"], how="inner")


def label_table(criteria: pd.DataFrame | None) -> pd.DataFrame | None:
    """PrefAlign per (model, task, arm, position, label) (module docstring)."""
    if criteria is None:
        return None
    by = ["model", "task", "arm", "position", "label", "scenario_id"]
    per = weighted_pref_align(criteria, by).dropna(subset=["pref_align"])
    out = (
        per.groupby(by[:-1], sort=False)["pref_align"].agg(n="size", pref_align="mean").reset_index()
        if len(per)
        else pd.DataFrame(columns=list(LABEL_COLUMNS))
    )
    order = {a: i for i, a in enumerate(ARMS)} | {lab: i for i, lab in enumerate(LABELS)}
    out = out.sort_values(
        ["model", "task", "arm", "position", "label"],
        key=lambda c: c.map(order) if c.name in ("arm", "label") else c,
        ignore_index=True,
    )
    return out[list(LABEL_COLUMNS)]


def paired_changes(criteria: pd.DataFrame) -> pd.DataFrame:
    """Per (model, task, carry arm, scenario): the weighted mean carry − cold score over its changed criteria
    scored in both (``delta``), their number and the position."""
    changed = criteria.loc[(criteria["label"] == "changed").to_numpy() & criteria["score"].notna().to_numpy()]
    cold = changed.loc[changed["arm"] == COLD, ["model", "task", "scenario_id", "attribute", "score"]]
    carry = changed.loc[changed["arm"].isin(CARRY_ARMS)]
    pairs = carry.merge(cold, on=["model", "task", "scenario_id", "attribute"], suffixes=("", "_cold"))
    if pairs.empty:
        return pd.DataFrame(columns=["model", "task", "arm", "scenario_id", "position", "delta", "n_criteria"])
    pairs = pairs.assign(_wd=pairs["weight"] * (pairs["score"] - pairs["score_cold"]))
    grouped = pairs.groupby(["model", "task", "arm", "scenario_id", "position"], sort=True)
    out = grouped.agg(_wd=("_wd", "sum"), _w=("weight", "sum"), n_criteria=("attribute", "size")).reset_index()
    with np.errstate(invalid="ignore", divide="ignore"):
        delta = np.where(out["_w"] > 0, out["_wd"] / out["_w"], np.nan)
    return out.assign(delta=delta).drop(columns=["_wd", "_w"]).dropna(subset=["delta"])


def stale_table(criteria: pd.DataFrame | None, *, seed: int, n_boot: int) -> pd.DataFrame | None:
    """Stale application per (model, task, carry arm), by position and over all (module docstring); None without
    labels, empty when no changed criterion is paired."""
    if criteria is None:
        return None
    pairs = paired_changes(criteria)
    rows = []
    for (model, task, arm), cell in pairs.groupby(["model", "task", "arm"], sort=True):
        parts = [(int(p), sub) for p, sub in cell.groupby("position", sort=True)] + [(0, cell)]
        for position, sub in parts:
            values = sub["delta"].to_numpy(dtype=float)
            lo, hi = mean_ci(values, transfer_rng(seed, model, task, "stale", arm, position), n_boot)
            rows.append(
                {
                    "model": model,
                    "task": task,
                    "arm": arm,
                    "position": position or None,
                    "n": len(values),
                    "n_criteria": int(sub["n_criteria"].sum()),
                    "stale": float(values.mean()),
                    "ci_low": lo,
                    "ci_high": hi,
                    "reason": interval_reason(len(values), n_boot),
                }
            )
    order = {a: i for i, a in enumerate(ARMS)}
    table = pd.DataFrame(rows, columns=list(STALE_COLUMNS))
    by_arm = table.assign(_arm=table["arm"].map(order))
    return by_arm.sort_values(["model", "task", "_arm"], kind="stable", ignore_index=True).drop(columns="_arm")
