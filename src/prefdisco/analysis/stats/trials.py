"""Trials averaged: one row per (model, task, scenario_id, mode, fixed_k) before any statistic.

A run with ``--epochs N`` holds N trials (``epoch`` 1..N) of every sample. Every report number is computed from
one row per scenario and condition, its trials averaged:

* ``pref_align`` — the mean over the *scored* trials (PrefAlign present, not failed); the row is scored when at
  least one trial is;
* ``correct`` — the share of the *judged* trials (correctness present, not failed) that were correct;
* ``n_questions``, ``judge_invalid``, ``pref_align_coverage``, ``quality``, the simulator columns present
  (``SIMULATOR_COLUMNS``) and the harm probes (``correct_after_pushback``, ``pushback_held``,
  ``belief_agreement``) — the mean over the trials that did not fail (a not-measured trial left out);
  ``flip_turn`` — the earliest flip of those trials;
* ``pref_align_reason`` — the reason when no trial is scored (``judge coverage``), else empty;
* ``input_tokens``, ``output_tokens`` and the optional token and cost columns (``OPTIONAL_COUNTS``: per role, cached
  and reasoning tokens, ``cost_usd``) — the mean over all trials;
* ``failed`` — every trial failed (a failed trial is left out of the means, never counted as a zero);
* ``n_trials``, ``n_scored_trials`` — how many trials the row holds, and how many of them are scored;
* ``user_flag_reasons`` (a JSON object per dialogue) is left out: the clean-turns figures are read from the trial
  rows, each trial one dialogue (``simulator_flags.py``); so are how each response ended (``END_COLUMNS``: the
  refused, empty and truncated counts are read from the trial rows, ``non_answers.py``).

So a run of N identical trials gives exactly the numbers of one trial, and a table of one trial per row (every
table without an ``epoch`` column) passes through unchanged. The attribute table is averaged the same way: per
criterion, the mean of the valid judge scores over the trials that did not fail — each trial's score being the
criterion's panel score when several judges or repeats scored it (``panel.py``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from prefdisco.analysis.stats.panel import criterion_constants, left_out, panel_scores
from prefdisco.results.contract import (
    BATCHED,
    COVERAGE,
    END_COLUMNS,
    OPTIONAL_COUNTS,
    PROTOCOL_ID,
    QUALITY,
    RESULT_KEY,
    SESSION_COLUMNS,
    SIMULATOR_COLUMNS,
    TRIAL_GROUP,
    UNSCORED_REASON,
    USER_FLAG_REASONS,
)

_KEY = list(TRIAL_GROUP)
_HARM_MEANS = ("correct_after_pushback", "pushback_held", "belief_agreement")
"""The harm probes averaged over the trials that did not fail (``flip_turn``: the earliest)."""


def _one_trial_each(frame: pd.DataFrame) -> bool:
    return frame.empty or frame["epoch"].nunique() <= 1  # (key, epoch) is unique, so each key appears once


def average_trials(results: pd.DataFrame) -> pd.DataFrame:
    """The validated results frame (``results.table``) with its trials averaged (see the module docstring)."""
    per_dialogue = [c for c in (USER_FLAG_REASONS, PROTOCOL_ID, *END_COLUMNS) if c in results.columns]
    if _one_trial_each(results):
        one = results.assign(n_trials=1, n_scored_trials=results["scored"].astype(int))
        return one.drop(columns=["epoch", *per_dialogue])
    ok = ~results["failed"].to_numpy()
    extra = [c for c in (*SIMULATOR_COLUMNS, COVERAGE, QUALITY) if c in results.columns]
    harms = [c for c in (*_HARM_MEANS, "flip_turn") if c in results.columns]
    frame = results.assign(
        **{f"_{c}": results[c].where(ok) for c in (*extra, *harms)},
        _pref=results["pref_align"].where(results["scored"]),
        _correct=results["correct"].where(ok),
        _questions=results["n_questions"].where(ok),
        _invalid=results["judge_invalid"].where(ok),
        _ok=ok,
    )
    out = (
        frame.groupby(_KEY, observed=True, dropna=False, sort=False)
        .agg(
            row=("row", "min"),
            family=("family", "first"),
            pref_align=("_pref", "mean"),
            correct=("_correct", "mean"),
            n_questions=("_questions", "mean"),
            judge_invalid=("_invalid", "mean"),
            input_tokens=("input_tokens", "mean"),
            output_tokens=("output_tokens", "mean"),
            **{c: (c, "mean") for c in OPTIONAL_COUNTS if c in results.columns},  # tokens and USD, as the totals
            error=("error", "first"),
            n_trials=("epoch", "size"),
            n_scored_trials=("scored", "sum"),
            n_ok=("_ok", "sum"),
            **{c: (f"_{c}", "mean") for c in extra},
            **({"judged": ("judged", "min")} if "judged" in results.columns else {}),  # judged once every trial is
            **{c: (c, "first") for c in SESSION_COLUMNS if c in results.columns},  # the same in every trial
            **{c: (c, "first") for c in ("pushback_target", BATCHED) if c in results.columns},  # the same each trial
            **{c: (f"_{c}", "mean") for c in _HARM_MEANS if c in results.columns},
            **({"flip_turn": ("_flip_turn", "min")} if "flip_turn" in results.columns else {}),  # the earliest flip
            **({UNSCORED_REASON: (UNSCORED_REASON, "first")} if UNSCORED_REASON in results.columns else {}),
        )
        .reset_index()
    )
    if UNSCORED_REASON in out.columns:  # a reason only for a row none of whose trials is scored
        out[UNSCORED_REASON] = out[UNSCORED_REASON].where(out["n_scored_trials"].to_numpy() == 0)
    out["failed"] = out.pop("n_ok").to_numpy() == 0
    out["scored"] = out["n_scored_trials"].to_numpy() > 0
    out["n_scored_trials"] = out["n_scored_trials"].astype(int)
    columns = [c for c in results.columns if c not in ("epoch", *per_dialogue)] + ["n_trials", "n_scored_trials"]
    return out.sort_values("row", kind="stable", ignore_index=True)[columns]


def average_attribute_trials(attributes: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """The validated attribute frame with its trials averaged: per (results key, attribute) the mean valid score
    over the trials whose results row counts (not failed, nor a non-answer left out: ``panel.left_out``; ``weight``
    is the criterion's, the same in every trial); a trial's score of a criterion is its panel score
    (``panel.panel_scores``: judges and repeats combined first)."""
    attributes = panel_scores(attributes)
    if _one_trial_each(attributes) and _one_trial_each(results):
        return attributes.drop(columns="epoch")
    failed = results.loc[left_out(results), list(RESULT_KEY)]  # a trial left out of PrefAlign is left out here too
    att = attributes
    if not failed.empty:
        att = att.loc[~_rows_in(att, failed)]
    out = (
        att.groupby([*_KEY, "attribute"], observed=True, dropna=False, sort=False)
        .agg(row=("row", "min"), weight=("weight", "first"), score=("score", "mean"), **criterion_constants(att))
        .reset_index()
    )
    columns = [c for c in attributes.columns if c != "epoch"]
    return out.sort_values("row", kind="stable", ignore_index=True)[columns]


def _rows_in(frame: pd.DataFrame, keys: pd.DataFrame) -> np.ndarray:
    """Which rows of ``frame`` have a results key (with epoch) listed in ``keys``."""
    cols = list(RESULT_KEY)
    text = {c: str for c in cols if c not in ("fixed_k", "epoch")}
    hits = keys[cols].astype(text).drop_duplicates().assign(_hit=True)
    marked = frame[cols].astype(text).merge(hits, on=cols, how="left")
    return marked["_hit"].eq(True).to_numpy()


def trial_counts(results: pd.DataFrame, averaged: pd.DataFrame) -> dict[str, int]:
    """How many trials the report averaged: per results row at least and at most, and the trial rows in all
    (``total``, ``failed``, ``scored``), and ``not_judged``: the trial rows of a ``--judge later`` run that
    ``prefdisco judge`` has not scored yet (``judged = 0``; PrefAlign empty, so left out of every number)."""
    n = averaged["n_trials"]
    pending = 0
    if "judged" in results.columns:
        pending = int(((results["judged"] == 0) & ~results["failed"]).sum())
    return {
        "per_result_min": int(n.min()) if len(n) else 0,
        "per_result_max": int(n.max()) if len(n) else 0,
        "total": len(results),
        "failed": int(results["failed"].sum()),
        "scored": int(results["scored"].sum()),
        "not_judged": pending,
    }
