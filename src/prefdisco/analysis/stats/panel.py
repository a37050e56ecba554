"""The panel score of each criterion, from the attribute table's judge and repeat rows, and PrefAlign recomputed
from criterion scores.

The attribute table holds one row per (criterion, trial, judge, repeat) (``results/contract.py``). Its
``in_pref_align`` column says which judgements the results row's PrefAlign is made of: the run's judges (inline,
or the first ``prefdisco judge``), never a further judge added with ``prefdisco judge --judge-model OTHER``. Every
report number that must agree with PrefAlign (the attribute table's means, worst attributes, the heatmap, the
examples' criterion scores, calibration, the judge part of the variance split) reads exactly those judgements
(``pref_align_judgements``), combined per criterion and trial by the rule the scorer applies (``scoring/panel.py``):
the mean of each judge's repeat-mean, then the mean over the judges, invalid judgements (empty score) left out; a
criterion no judgement of which is valid has no panel score (empty).

**The rows a judge actually judged** (``judged_rows``) are what every judge statistic reads — agreement, noise and
length bias (``judges.py``), the judge part of the variance split (``variance.py``), the position effect
(``validity/position.py``), the effective number of judges (``effective_judges.py``), calibration's fit against people
(``calibrate.py``): the attribute rows of results rows that did not fail and whose response was an answer. A refused
or empty response (``results.contract.RULED_FLAGS``) is scored 1 by rule under every judge and repeat and shown to
none (``scoring/non_answer.py``): its rows would count as perfect agreement and no noise. They stay in PrefAlign's
rows above (PrefAlign 1 under ``--refusals score``). A further judge's PrefAlign follows the run's rule
(``further_judges.py``: ``rows_except`` the trials PrefAlign left out).

A table of one judge and one repeat passes through unchanged, without the judge columns, so its numbers are
exactly those of a single-judge run.

``weighted_pref_align`` is PrefAlign of criterion scores in a frame, by ``scoring/alignment.py``'s rule: Σ w·g / Σ w
over the valid criteria, empty when they cover less than half of the weight.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from prefdisco.results.contract import (
    CRITERION_KEY,
    IN_PREF_ALIGN,
    JUDGE,
    JUDGE_CALL,
    JUDGE_POSITION,
    NO_K,
    REPEAT,
    RESULT_KEY,
    RULED_FLAGS,
    SESSION_LABEL,
)
from prefdisco.scoring.alignment import COVERAGE_TOLERANCE, MIN_COVERAGE

_TEXT = ("model", "task", "scenario_id", "mode", "attribute", JUDGE)


def pref_align_judgements(attributes: pd.DataFrame) -> pd.DataFrame:
    """The rows PrefAlign is made of (``in_pref_align``; every row of a table without the column)."""
    if IN_PREF_ALIGN not in attributes.columns:
        return attributes
    keep = attributes[IN_PREF_ALIGN].to_numpy(dtype=bool)
    return attributes if keep.all() else attributes.loc[keep]


def ruled(results: pd.DataFrame) -> np.ndarray:
    """Which results rows hold a response scored by rule, not judged: refused or empty (``RULED_FLAGS``; none in a
    table without the two columns)."""
    out = np.zeros(len(results), dtype=bool)
    for name in RULED_FLAGS:
        if name in results.columns:
            out |= np.nan_to_num(pd.to_numeric(results[name]).to_numpy(dtype=np.float64), nan=0.0) > 0
    return out


def plain_keys(frame: pd.DataFrame) -> pd.DataFrame:
    """Key columns as plain ``str`` (text), float (``fixed_k``, ``NO_K`` when empty, so it can be an index and a
    join key) and int (``epoch``)."""
    out = frame.copy()
    for column in _TEXT:
        if column in out.columns:
            out[column] = out[column].astype(str)
    if "fixed_k" in out.columns:
        out["fixed_k"] = pd.to_numeric(out["fixed_k"], errors="coerce").astype(np.float64).fillna(NO_K)
    if "epoch" in out.columns:
        out["epoch"] = pd.to_numeric(out["epoch"]).astype(np.int64)
    return out


def rows_except(attributes: pd.DataFrame, results: pd.DataFrame, drop: np.ndarray) -> pd.DataFrame:
    """The attribute rows, with plain key columns, except those of the results rows ``drop`` marks (a bool per
    results row); rows the results table lacks are kept."""
    att = plain_keys(attributes)
    gone = plain_keys(results.loc[drop, list(RESULT_KEY)]).drop_duplicates()
    if gone.empty:
        return att
    marked = att.merge(gone.assign(_drop=True), on=list(RESULT_KEY), how="left")
    return marked.loc[~marked["_drop"].eq(True).to_numpy()].drop(columns="_drop").reset_index(drop=True)


def left_out(results: pd.DataFrame) -> np.ndarray:
    """Which results rows count in no score: failed, or a non-answer left out of PrefAlign (``--refusals exclude``:
    scored by rule, ``ruled``, with no PrefAlign); under ``--refusals score`` a non-answer counts, at 1."""
    failed = results["failed"].to_numpy(dtype=bool)
    if "pref_align" not in results.columns:
        return failed
    return failed | (ruled(results) & pd.to_numeric(results["pref_align"]).isna().to_numpy())


def judged_rows(attributes: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """The rows a judge actually judged (module docstring): the attribute rows of results rows neither failed (a
    failed trial's judgements count nowhere) nor scored by rule (``ruled``), with plain key columns."""
    return rows_except(attributes, results, results["failed"].to_numpy(dtype=bool) | ruled(results))


def is_single_judging(attributes: pd.DataFrame) -> bool:
    """One judge and one repeat throughout (every single-judge run, every table without the two columns)."""
    if attributes.empty:
        return True
    return attributes[JUDGE].nunique(dropna=False) <= 1 and bool((attributes[REPEAT] <= 1).all())


def judge_means(attributes: pd.DataFrame) -> pd.DataFrame:
    """One row per (criterion, trial, judge): the judge's mean over its valid repeats (``row``: the first data row,
    ``weight``: the criterion's)."""
    return (
        attributes.groupby([*CRITERION_KEY, JUDGE], observed=True, dropna=False, sort=False)
        .agg(row=("row", "min"), weight=("weight", "first"), score=("score", "mean"), **criterion_constants(attributes))
        .reset_index()
    )


def criterion_constants(attributes: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """Aggregations of the columns that are the same in every row of a criterion (a sessions run's label)."""
    return {SESSION_LABEL: (SESSION_LABEL, "first")} if SESSION_LABEL in attributes.columns else {}


def panel_scores(attributes: pd.DataFrame) -> pd.DataFrame:
    """The validated attribute frame with one row per (criterion, trial): the panel score of the judgements
    PrefAlign is made of (see the module docstring); the ``judge``, ``repeat`` and ``in_pref_align`` columns (and a
    structured judgement's ``judge_call`` / ``judge_position``) are dropped."""
    judging = (JUDGE, REPEAT, IN_PREF_ALIGN, JUDGE_CALL, JUDGE_POSITION)
    columns = [c for c in attributes.columns if c not in judging]
    attributes = pref_align_judgements(attributes)
    if is_single_judging(attributes):
        return attributes[columns].reset_index(drop=True)
    out = (
        judge_means(attributes)
        .groupby(list(CRITERION_KEY), observed=True, dropna=False, sort=False)
        .agg(row=("row", "min"), weight=("weight", "first"), score=("score", "mean"), **criterion_constants(attributes))
        .reset_index()
    )
    return out.sort_values("row", kind="stable", ignore_index=True)[columns]


def weighted_pref_align(criteria: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """PrefAlign per group ``by`` of a frame with one row per criterion (``weight``, ``score``; NaN = invalid):
    ``by`` columns, ``pref_align`` (NaN when the valid criteria cover less than half of the group's weight) and
    ``coverage`` (the valid criteria's share of the weight)."""
    valid = criteria["score"].notna().to_numpy()
    weight = criteria["weight"].to_numpy(dtype=float)
    frame = criteria[by].assign(
        _w=weight,
        _wv=np.where(valid, weight, 0.0),
        _ws=np.where(valid, weight * criteria["score"].to_numpy(dtype=float), 0.0),
    )
    sums = frame.groupby(by, observed=True, dropna=False, sort=False)[["_w", "_wv", "_ws"]].sum().reset_index()
    total, judged = sums["_w"].to_numpy(), sums["_wv"].to_numpy()
    share = np.divide(judged, total, out=np.full(len(sums), np.nan), where=total > 0)
    enough = share + COVERAGE_TOLERANCE >= MIN_COVERAGE
    mean = np.divide(sums["_ws"].to_numpy(), judged, out=np.full(len(sums), np.nan), where=judged > 0)
    return sums[by].assign(pref_align=np.where(enough, mean, np.nan), coverage=share)
