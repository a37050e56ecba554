"""The simulated user's side of the dialogues: what they elicited, and how often the simulator erred.

Computed per model × task × condition from the *dialogues*: the trial rows as run of every condition that asks the
simulated user (``dialogue/plan.dialogue_conditions``: discovery, stated_belief, the carry arms, fixed-K), failed rows
left out. Each fixed-K condition is its own (mixing budgets would blur what a budget elicits): columns ``mode`` and
``fixed_k`` in the table, ``condition_label`` (``fixed_k=K``) in ``summary.json``, as everywhere
(``results/contract.py``). As every report number, a scenario's trials are averaged first (the measured ones; a critical
error is first a 0/1 per dialogue), so N identical trials give the numbers of one; then, over the scenarios:

* ``elicited_weight`` — the mean over the scenarios whose elicited weight was measured; ``n`` is their number
  (``scoring/elicitation.py`` says when it is measured);
* ``question_hit_rate`` — the mean over those of them that asked at least one question (``n_hit_rate``; the rate
  of a dialogue without questions is undefined, not 0);
* ``critical_share`` — the share of dialogues with at least one critical simulator error
  (``user_critical_errors`` ≥ 1, ``scoring/audit.py``), over the scenarios with a valid audit (``n_audited``);
* ``n_asked`` — the scenarios whose dialogue asked at least one question (so an unaudited cell tells "nothing to
  audit" from "the audit was off or invalid").

``simulator_table`` gives None when the results carry none of these columns (a run before they existed, a
hand-made table) or no dialogue measured any. ``elicitation_figure`` draws PrefAlign against elicited weight, one
point per scored dialogue (each trial its own point), coloured by model, and returns the matplotlib figure.
"""

from __future__ import annotations

from typing import Any, TypeGuard

import numpy as np
import pandas as pd

from prefdisco.analysis.section.figures import MAX_SCATTER, empty_panel, label, new_figure
from prefdisco.dialogue.plan import dialogue_conditions
from prefdisco.results.contract import NO_K, SIMULATOR_COLUMNS, condition_label
from prefdisco.schema import Mode

TABLE_COLUMNS: tuple[str, ...] = (
    "model",
    "task",
    "mode",
    "fixed_k",
    "n",
    "elicited_weight",
    "n_hit_rate",
    "question_hit_rate",
    "n_audited",
    "critical_share",
    "n_asked",
)


def dialogues(results: pd.DataFrame) -> pd.DataFrame | None:
    """One row per dialogue (model, task, scenario_id, mode, fixed_k, PrefAlign and the simulator columns); None
    when the results carry no simulator column."""
    if not any(c in results.columns for c in SIMULATOR_COLUMNS):
        return None
    asking = results["mode"].astype(str).isin(dialogue_conditions()).to_numpy()  # the plan's, read when called
    rows = results.loc[asking & ~results["failed"].to_numpy()]
    modes = rows["mode"].astype(str).to_numpy()
    ks = np.where(modes == Mode.FIXED_K.value, rows["fixed_k"].to_numpy(dtype=float), np.nan)
    frame = pd.DataFrame(
        {
            "model": rows["model"].astype(str).to_numpy(),
            "task": rows["task"].astype(str).to_numpy(),
            "scenario_id": rows["scenario_id"].astype(str).to_numpy(),
            "mode": modes,
            "fixed_k": ks,
            "_k": np.nan_to_num(ks, nan=NO_K),
            "pref_align": rows["pref_align"].to_numpy(dtype=float),
            "n_questions": rows["n_questions"].to_numpy(dtype=float),
        }
    )
    for c in SIMULATOR_COLUMNS:
        frame[c] = rows[c].to_numpy(dtype=float) if c in rows.columns else np.nan
    return frame


def measured(frame: pd.DataFrame | None) -> TypeGuard[pd.DataFrame]:
    """Whether any of the ``dialogues`` measured the elicited weight or the simulator's errors (else
    ``simulator_table`` is None)."""
    return frame is not None and bool(frame[["elicited_weight", "user_critical_errors"]].notna().to_numpy().any())


def simulator_table(results: pd.DataFrame) -> pd.DataFrame | None:
    """Per (model, task, condition): the numbers of the module docstring; None when nothing was measured."""
    frame = dialogues(results)
    if not measured(frame):
        return None
    errors = frame["user_critical_errors"].to_numpy(dtype=float)
    hit = frame["question_hit_rate"].where(frame["elicited_weight"].notna())
    asked = (np.nan_to_num(frame["n_questions"].to_numpy(dtype=float)) > 0).astype(float)
    frame = frame.assign(
        _hit=hit, _critical=np.where(np.isnan(errors), np.nan, (errors >= 1).astype(float)), _asked=asked
    )
    cell = ["model", "task", "mode", "_k"]
    columns = ["elicited_weight", "_hit", "_critical", "_asked"]
    scenarios = frame.groupby([*cell, "scenario_id"], sort=False)[columns].mean().reset_index()  # trials averaged
    out = (
        scenarios.groupby(cell, sort=False)
        .agg(
            n=("elicited_weight", "count"),
            elicited_weight=("elicited_weight", "mean"),
            n_hit_rate=("_hit", "count"),
            question_hit_rate=("_hit", "mean"),
            n_audited=("_critical", "count"),
            critical_share=("_critical", "mean"),
            n_asked=("_asked", lambda v: int((v > 0).sum())),
        )
        .reset_index()
        .sort_values(["model", "task", "_k"], kind="stable", ignore_index=True)
    )
    out["fixed_k"] = pd.array([None if k == NO_K else int(k) for k in out["_k"]], dtype="Int64")
    return out[list(TABLE_COLUMNS)]


def summary_parts(table: pd.DataFrame | None) -> dict[str, dict[str, Any]]:
    """``summary.json``'s ``elicitation`` and ``simulator_errors``: model → task → condition → numbers
    ({} each when nothing was measured)."""
    elicitation: dict[str, Any] = {}
    errors: dict[str, Any] = {}
    for row in [] if table is None else table.to_dict("records"):
        cell = (str(row["model"]), str(row["task"]))
        condition = condition_label(row["mode"], None if pd.isna(row["fixed_k"]) else row["fixed_k"])
        if row["n"]:
            node = elicitation.setdefault(cell[0], {}).setdefault(cell[1], {})
            node[condition] = {
                "elicited_weight": row["elicited_weight"],
                "question_hit_rate": row["question_hit_rate"],
                "n": int(row["n"]),
            }
        if row["n_audited"]:
            node = errors.setdefault(cell[0], {}).setdefault(cell[1], {})
            node[condition] = {"critical_share": row["critical_share"], "n": int(row["n_audited"])}
    return {"elicitation": elicitation, "simulator_errors": errors}


def elicitation_figure(results: pd.DataFrame, seed: int = 0) -> Any:
    """PrefAlign against elicited weight, one point per scored dialogue (at most ``MAX_SCATTER`` drawn, a seeded
    sample), coloured by model; returns the matplotlib ``Figure`` (Agg canvas, no pyplot state)."""
    frame = dialogues(results)
    points = (
        frame.dropna(subset=["pref_align", "elicited_weight"]) if frame is not None else pd.DataFrame(columns=["model"])
    )
    if len(points) > MAX_SCATTER:
        points = points.sample(n=MAX_SCATTER, random_state=seed)
    fig, axes = new_figure(6.5, 4.2)
    ax = axes[0][0]
    models = sorted(points["model"].unique())
    for i, model in enumerate(models):
        mine = points.loc[points["model"] == model]
        ax.scatter(
            mine["elicited_weight"], mine["pref_align"], s=10, alpha=0.45, color=f"C{i % 10}", label=label(model, 24)
        )
    if models:
        ax.legend(fontsize=8)
        ax.set_xlim(-0.03, 1.03)
        ax.set_xlabel("elicited weight (share of the profile's weight the user revealed)")
        ax.set_ylabel("PrefAlign (1-5)")
    else:
        empty_panel(ax, "no scored dialogue has a measured elicited weight")
    ax.set_title("PrefAlign against elicited weight (dialogues with the simulated user)")
    return fig
