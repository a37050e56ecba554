"""Per-attribute alignment: the judge's mean 1-5 score per (model, mode, attribute) from the long table.

Invalid judgements (empty score) are excluded, never zeroed; rows of a failed results row are dropped, and so are
those of a non-answer left out of PrefAlign (``--refusals exclude``; ``panel.left_out``): the rule's 1 under every
criterion is no judge's score of it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from prefdisco.analysis.stats.panel import left_out
from prefdisco.schema import CONDITIONS

COLUMNS = ["model", "mode", "attribute", "n", "n_valid", "mean_score", "mean_weight"]


def attribute_table(attributes: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    failed = results.loc[left_out(results), ["model", "task", "scenario_id", "mode", "fixed_k"]]
    att = attributes.loc[attributes["mode"].isin(CONDITIONS).to_numpy()]
    if not failed.empty:
        att = att.loc[~_in_failed(att, failed)]
    g = att.groupby(["model", "mode", "attribute"], observed=True).agg(
        n=("score", "size"),
        n_valid=("score", "count"),
        mean_score=("score", "mean"),
        mean_weight=("weight", "mean"),
    )
    g = g.reset_index().astype({"model": str, "mode": str, "attribute": str})
    return g[COLUMNS].sort_values(["model", "mode", "mean_score", "attribute"], ignore_index=True)


def _in_failed(att: pd.DataFrame, failed: pd.DataFrame) -> np.ndarray:
    """Which attribute rows belong to a failed results row: one integer key per row, built from category codes."""
    att_key = np.zeros(len(att), dtype=np.int64)
    failed_key = np.zeros(len(failed), dtype=np.int64)
    for k in ("model", "task", "scenario_id", "mode"):
        categories = att[k].cat.categories
        codes = pd.Index(categories).get_indexer(failed[k].astype(str)).astype(np.int64)
        size = len(categories) + 1
        att_key = att_key * size + att[k].cat.codes.to_numpy().astype(np.int64) + 1
        failed_key = failed_key * size + codes + 1  # a value the attribute table lacks (code -1) matches nothing
    return np.isin(att_key, failed_key)


def heatmap_mode(table: pd.DataFrame) -> str | None:
    """The mode the heatmap shows: discovery when present, else the first main mode with scores."""
    present = set(table.loc[table["n_valid"] > 0, "mode"])
    return next((m for m in ("discovery", "baseline", "oracle") if m in present), None)


def worst_attributes(table: pd.DataFrame, mode: str, per_model: int = 5) -> pd.DataFrame:
    """Each model's ``per_model`` lowest-scored attributes in ``mode``, with the oracle mean beside them."""
    sub = table.loc[(table["mode"] == mode) & (table["n_valid"] > 0)]
    oracle = table.loc[table["mode"] == "oracle", ["model", "attribute", "mean_score"]].rename(
        columns={"mean_score": "oracle_mean_score"}
    )
    worst = sub.sort_values(["model", "mean_score", "n_valid", "attribute"], ascending=[True, True, False, True])
    worst = worst.groupby("model", sort=True).head(per_model)
    return worst.merge(oracle, on=["model", "attribute"], how="left").reset_index(drop=True)


def heatmap_matrix(table: pd.DataFrame, mode: str, max_attributes: int = 40) -> pd.DataFrame:
    """Model × attribute mean scores in ``mode`` for the ``max_attributes`` most often judged attributes."""
    sub = table.loc[(table["mode"] == mode) & (table["n_valid"] > 0)]
    common = sub.groupby("attribute")["n_valid"].sum().sort_values(ascending=False, kind="stable")
    keep = sorted(common.index[:max_attributes])
    return sub.loc[sub["attribute"].isin(keep)].pivot(index="model", columns="attribute", values="mean_score")
