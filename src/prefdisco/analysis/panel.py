"""The panel score of each criterion, from the attribute table's judge and repeat rows.

The attribute table holds one row per (criterion, trial, judge, repeat) (``results/contract.py``). Every report
number about criteria uses one score per criterion and trial, the rule the scorer applies for PrefAlign
(``scoring/panel.py``): the mean of each judge's repeat-mean, then the mean over the judges, invalid judgements
(empty score) left out; a criterion no judgement of which is valid has no panel score (empty). A table of one
judge and one repeat passes through unchanged, without the two columns, so its numbers are exactly those of a
single-judge run.
"""

from __future__ import annotations

import pandas as pd

from prefdisco.results.contract import CRITERION_KEY, JUDGE, REPEAT


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
        .agg(row=("row", "min"), weight=("weight", "first"), score=("score", "mean"))
        .reset_index()
    )


def panel_scores(attributes: pd.DataFrame) -> pd.DataFrame:
    """The validated attribute frame with one row per (criterion, trial): its panel score (see the module
    docstring); the ``judge`` and ``repeat`` columns are dropped."""
    columns = [c for c in attributes.columns if c not in (JUDGE, REPEAT)]
    if is_single_judging(attributes):
        return attributes[columns]
    out = (
        judge_means(attributes)
        .groupby(list(CRITERION_KEY), observed=True, dropna=False, sort=False)
        .agg(row=("row", "min"), weight=("weight", "first"), score=("score", "mean"))
        .reset_index()
    )
    return out.sort_values("row", kind="stable", ignore_index=True)[columns]
