"""Where a cell's PrefAlign varies: the assistant, the simulated user or the judge; and the smallest NormAlign
difference a run can detect.

A trial's PrefAlign (one row of ``results.csv``) varies from trial to trial for three reasons: the assistant samples
another response, the simulated user another reply (in a condition that asks it: ``dialogue/plan.asks_user``), and the
judge another score. Two run settings make the parts measurable, per (model, task, condition) cell:

* ``--judge-repeats R`` (R ≥ 2) re-judges each response R times. Per trial, PrefAlign is computed once per repeat (``Σ
  w·g_r / Σ w`` over the criteria valid in that repeat, ``g_r`` the mean over the panel's judges of their repeat-``r``
  score; the judgements PrefAlign is made of only — a further judge's are not — and PrefAlign's coverage rule,
  ``scoring/alignment.py``); ``judge_var`` is the mean over the trials a judge judged of the sample variance (ddof 1) of
  these R values (a refused or empty response, scored 1 by rule in every repeat, shows no judge noise and is left out,
  ``panel.judged_rows``). The trial's PrefAlign averages its R repeats, so the judge adds ``judge = judge_var / R`` to
  its variance.
* ``--epochs N`` (N ≥ 2) runs each scenario N times. ``between`` is the mean over scenarios of the sample variance
  (ddof 1) of the scored trials' PrefAlign — an estimate of ``assistant + simulator + judge``.

Then ``assistant + simulator = max(between − judge, 0)``. Without a simulated user (a single-turn condition of the
plan: baseline, oracle, wrong_persona, oracle_distractor) it is all ``assistant``. In a dialogue the assistant's own
part is taken from the same model's ``oracle`` cell of the task (the one condition where the same assistant answers
the same scenario with nothing else varying) and the rest is the simulator's: ``simulator = max(assistant +
simulator − assistant_oracle, 0)``. This split assumes the assistant's sampling noise does not depend on the
condition; ``split`` says which rule gave it. Each part is null with a ``reason`` when its setting is missing (R =
1: judge unknown and counted in the others; N = 1: only the judge part; a dialogue cell without an oracle cell of
the same model and task: simulator unknown). Measuring the dialogue split directly — trials that hold the
assistant's seed and vary only the user's — is not built yet.

The table has one row per cell, the condition in ``mode`` and ``fixed_k`` (empty for the conditions without K), as
every table (``results/contract.py``).

``detectable_difference`` states, per (model, task), the smallest difference between two NormAlign values of this
size the run would detect: ``(z_{0.975} + z_{0.80}) · √2 · SE`` (5 % two-sided test, 80 % power, two independent
cells of the same standard error), with SE from the cell's bootstrap interval, ``(high − low) / (2 · 1.96)``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from prefdisco.analysis.stats.panel import judged_rows, pref_align_judgements, weighted_pref_align
from prefdisco.dialogue.plan import dialogue_conditions
from prefdisco.results.contract import JUDGE, NO_K, REPEAT
from prefdisco.schema import Mode

Z_TEST, Z_POWER = 1.959964, 0.841621
"""Standard normal quantiles: 97.5 % (a 5 % two-sided test) and 80 % (power)."""
_CELL = ["model", "task", "mode", "fixed_k"]
_TRIAL = [*_CELL, "scenario_id", "epoch"]
NO_USER = "no simulated user"
"""The split of a single-turn condition's cell (``dialogue/plan.asks_user``): its variance is all the assistant's."""
PARTS = ("assistant", "simulator", "judge")
"""The three sources of a trial's PrefAlign variance."""
NO_JUDGE = "judge part unknown: run with --judge-repeats 2 or more"
NO_EPOCHS = "assistant / simulator parts unknown: run with --epochs 2 or more"
NO_ORACLE = "simulator part unknown: add oracle to --modes to split the assistant's part from the simulator's"


def _text(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for c in ("model", "task", "mode", "scenario_id"):
        out[c] = out[c].astype(str)
    out["fixed_k"] = pd.to_numeric(out["fixed_k"]).fillna(NO_K).astype(np.int64)
    out["epoch"] = out["epoch"].astype(np.int64) if "epoch" in out.columns else 1
    return out


def repeat_pref_aligns(attributes: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """One row per (trial, repeat) of the scored trials a judge judged: the trial's PrefAlign from that repeat's
    scores alone — of the judgements PrefAlign is made of (``in_pref_align``; a refused or empty response's scores by
    rule are none, ``panel.judged_rows``), each criterion's score the mean over the judges of their valid
    repeat-``r`` scores, by PrefAlign's own rule (empty when they cover less than half the weight)."""
    ok = _text(results.loc[results["scored"].to_numpy() & ~results["failed"].to_numpy()])[_TRIAL]
    a = _text(pref_align_judgements(judged_rows(attributes, results)))
    if JUDGE not in a.columns:
        a = a.assign(**{JUDGE: "grader", REPEAT: 1})
    a = a.merge(ok.drop_duplicates(), on=_TRIAL, how="inner")
    per = a.groupby([*_TRIAL, REPEAT, "attribute"], observed=True).agg(
        weight=("weight", "first"), score=("score", "mean")
    )
    found = weighted_pref_align(per.reset_index(), [*_TRIAL, REPEAT]).dropna(subset=["pref_align"])
    return found[[*_TRIAL, REPEAT, "pref_align"]]


def _mean_var(groups: pd.core.groupby.SeriesGroupBy) -> tuple[float | None, int]:
    """The mean of the per-group sample variances (ddof 1) over groups of ≥ 2 values, and how many such groups."""
    sizes, variances = groups.size(), groups.var(ddof=1)
    usable = variances[sizes >= 2]
    return (float(usable.mean()) if len(usable) else None), len(usable)


def variance_parts(results: pd.DataFrame, attributes: pd.DataFrame | None) -> pd.DataFrame:
    """One row per (model, task, condition) cell: ``epochs``, ``repeats``, ``between``, ``judge``, ``assistant``,
    ``simulator`` (variances of a trial's PrefAlign; see the module docstring), ``split`` and ``reason``."""
    r = _text(results)
    asking = set(dialogue_conditions())  # the plan's: every condition that asks the simulated user
    scored = r.loc[r["scored"].to_numpy() & ~r["failed"].to_numpy()]
    repeats = None if attributes is None or attributes.empty else repeat_pref_aligns(attributes, results)
    rows: list[dict[str, object]] = []
    for cell, sub in scored.groupby(_CELL, sort=True):
        model, task, mode, k = cell
        epochs = int(sub.groupby("scenario_id")["epoch"].nunique().max())
        between, n_between = _mean_var(sub.groupby("scenario_id")["pref_align"])
        judge_var, n_repeats = None, 1
        if repeats is not None:
            rep = repeats.loc[
                (repeats["model"] == model)
                & (repeats["task"] == task)
                & (repeats["mode"] == mode)
                & (repeats["fixed_k"] == k)
            ]
            n_repeats = int(rep[REPEAT].max()) if len(rep) else 1
            if n_repeats >= 2:
                judge_var, _ = _mean_var(rep.groupby(["scenario_id", "epoch"])["pref_align"])
        judge = None if judge_var is None else judge_var / n_repeats
        reasons = []
        if judge is None:
            reasons.append(NO_JUDGE)
        if between is None:
            reasons.append(NO_EPOCHS)
        rest = None if between is None else max(between - (judge or 0.0), 0.0)
        rows.append(
            {
                "model": model,
                "task": task,
                "mode": mode,
                "fixed_k": None if k == NO_K else int(k),
                "n_scenarios": n_between,
                "epochs": epochs,
                "repeats": n_repeats,
                "between": between,
                "judge": judge,
                "assistant": rest,
                "simulator": 0.0 if rest is not None and mode not in asking else None,
                "split": NO_USER if mode not in asking else None,
                "reason": "; ".join(reasons),
                "_dialogue": mode in asking,
            }
        )
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    out = out.astype({"fixed_k": "Int64"})
    oracle = out.loc[out["mode"] == Mode.ORACLE.value].set_index(["model", "task"])["assistant"]
    for i in out.index[out["_dialogue"]]:
        both = out.at[i, "assistant"]
        if both is None or (isinstance(both, float) and math.isnan(both)):
            continue
        own = oracle.get((out.at[i, "model"], out.at[i, "task"]))
        if own is None or (isinstance(own, float) and math.isnan(own)):
            out.at[i, "assistant"], out.at[i, "simulator"] = both, None
            out.at[i, "split"] = "assistant and simulator together: no oracle trials to take the assistant's part from"
            out.at[i, "reason"] = "; ".join(filter(None, [out.at[i, "reason"], NO_ORACLE]))
        else:
            out.at[i, "assistant"], out.at[i, "simulator"] = min(own, both), max(both - own, 0.0)
            out.at[i, "split"] = "assistant part from the oracle cell"
    return out.drop(columns="_dialogue")


ZERO_WIDTH = "the interval has no width: every resample gives the same NormAlign"


def _mde_reason(cell: dict[str, object], se: float) -> str:
    """Why a cell has no detectable difference: its interval's reason, NormAlign's, or a zero-width interval."""
    if math.isfinite(se):
        return "" if se > 0 else ZERO_WIDTH
    return str(cell.get("ci_reason") or "") or f"NormAlign null: {cell.get('reason') or 'no interval'}"


def detectable_difference(cells: pd.DataFrame) -> pd.DataFrame:
    """Per (model, task) NormAlign cell: ``se`` from its bootstrap interval and ``mde``, the smallest NormAlign
    difference between two cells of this size detected with 80 % power at 5 % (module docstring); ``n`` the
    cell's scenarios; ``mde`` null, with ``reason``, for a cell without an interval (``ci_reason``: too few
    scenarios, no bootstrap) or with one of no width (a zero SE detects nothing: the scenarios do not vary)."""
    lo, hi = pd.to_numeric(cells["ci_low"]), pd.to_numeric(cells["ci_high"])
    se = ((hi - lo) / (2 * Z_TEST)).astype(float)
    reasons = [_mde_reason(cell, s) for cell, s in zip(cells.to_dict("records"), se, strict=True)]
    mde = ((Z_TEST + Z_POWER) * math.sqrt(2) * se).where([not why for why in reasons])
    return pd.DataFrame(
        {
            "model": cells["model"].astype(str),
            "task": cells["task"].astype(str),
            "n": cells["n_scenarios"].astype(int) if "n_scenarios" in cells.columns else None,
            "se": se,
            "mde": mde,
            "reason": reasons,
        }
    ).reset_index(drop=True)
