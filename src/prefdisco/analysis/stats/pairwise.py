"""The leaderboard's statistics: two models' NormAlign compared by a paired bootstrap over their shared scenarios,
Holm's step-down correction over every pair of a ranking, and the groups of models not distinguishable.

**Shared scenarios.** Two models share a scenario when both have it scored in all three conditions (rows of
``normalign.scenario_table`` for both, keyed by task and scenario id). The difference is model A's NormAlign minus
model B's, each the ratio of means of ``normalign.intersection_norm_align`` over the shared scenarios only (so it can
differ from the two models' own NormAligns when they did not score the same scenarios).

**Paired bootstrap.** Each resample draws the shared scenarios with replacement *per task* (a stratum per task: a
per-task ranking has one, the overall ranking one per task, each task keeping its number of scenarios) and recomputes
both models' NormAlign on the *same* draw; a resample where either denominator (mean oracle − mean baseline) is 0 is
dropped. The interval is the 2.5th and 97.5th percentiles of the kept differences; the two-sided p-value is ``2 ·
min(share of differences ≤ 0, share ≥ 0)``, capped at 1 and never below ``1 / kept`` (a bootstrap of ``kept`` resamples
cannot show a smaller one). The draws come from ``numpy.random.default_rng([seed, crc32(first), crc32(second),
crc32(ranking)])`` with the two model names in sorted order (``ranking`` the task when the shared scenarios are all of
one, ``normalign.stream_task``: the same pair of one task draws alike in the overall ranking and the task's),
``integers(0, n_t, size=(rows, n_t))`` per task in sorted task order, in row blocks. A pair of fewer than
``MIN_INTERVAL_SCENARIOS`` shared scenarios (or ``--bootstrap 0``) is not tested: its ``p`` is empty and ``reason`` says
why.

**Holm.** Over the m tested pairs of one ranking, sorted by p ascending (p₍₁₎ ≤ … ≤ p₍ₘ₎), the adjusted
p₍ᵢ₎ = max over j ≤ i of min(1, (m − j + 1) · p₍ⱼ₎). A pair is *distinguishable* when its adjusted p < ``ALPHA``.

**Groups.** Walking down the ranking (best NormAlign first), the first model opens group 1 and leads it; each next
model joins the current group unless it is significantly worse than the group's leader (their pair distinguishable
and the leader's NormAlign above its own on their shared scenarios), in which case it opens the next group and leads
it. Groups are numbered 1, 2, … in ranking order and never overlap; a model in group 1 is one the data cannot tell
apart from the best. A model whose pair with the leader was not tested (fewer than ``MIN_INTERVAL_SCENARIOS``
shared scenarios) has no group and says so (``grouping``): an untested pair is no evidence that the two are alike.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from prefdisco.analysis.stats.bootstrap import percentile_interval, ratio_of_stratified_means, stratified
from prefdisco.analysis.stats.normalign import ZERO, intersection_norm_align, interval_reason, stream_task

ALPHA = 0.05
"""Family-wise error rate of each ranking's pairs (Holm)."""
PAIR_COLUMNS: tuple[str, ...] = (
    "task",
    "model_a",
    "model_b",
    "n_shared",
    "normalign_a",
    "normalign_b",
    "difference",
    "low",
    "high",
    "p",
    "p_holm",
    "distinguishable",
    "bootstrap_kept",
    "reason",
)


def pair_rng(seed: int, a: str, b: str, ranking: str) -> np.random.Generator:
    first, second = sorted((a, b))
    return np.random.default_rng(
        [seed, zlib.crc32(first.encode()), zlib.crc32(second.encode()), zlib.crc32(ranking.encode())]
    )


def shared_scenarios(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """The scenarios both ``a`` and ``b`` (``scenario_table`` rows of one model each) scored in all three
    conditions, in (task, scenario_id) order: ``task``, ``scenario_id`` and each model's three PrefAligns
    (``baseline_a`` … ``oracle_b``)."""
    keep = ["task", "scenario_id", "baseline", "discovery", "oracle"]
    both = a[keep].merge(b[keep], on=["task", "scenario_id"], suffixes=("_a", "_b"))
    return both.sort_values(["task", "scenario_id"]).reset_index(drop=True)


def paired_bootstrap(shared: pd.DataFrame, rng: np.random.Generator, n_boot: int) -> dict[str, object]:
    """The difference of two models' NormAlign over ``shared`` (``shared_scenarios``), its interval, its p-value and
    the resamples kept (module docstring)."""
    n = len(shared)
    row: dict[str, object] = {"n_shared": n, "normalign_a": None, "normalign_b": None, "difference": None}
    row |= {"low": None, "high": None, "p": None, "bootstrap_kept": 0}
    values = []
    for side in ("a", "b"):
        frame = shared[[f"{m}_{side}" for m in ("baseline", "discovery", "oracle")]]
        value, why, _ = intersection_norm_align(frame.set_axis(["baseline", "discovery", "oracle"], axis=1))
        if value is None:
            return row | {"reason": f"model {side.upper()}: {why}"}
        values.append(value)
    row |= {"normalign_a": values[0], "normalign_b": values[1], "difference": values[0] - values[1]}
    why = interval_reason(n, n_boot)
    if why:
        return row | {"reason": why}
    tasks = shared["task"].to_numpy()
    strata = [np.flatnonzero(tasks == t) for t in sorted(set(tasks))]
    parts = {
        side: (
            (shared[f"discovery_{side}"] - shared[f"baseline_{side}"]).to_numpy(),
            (shared[f"oracle_{side}"] - shared[f"baseline_{side}"]).to_numpy(),
        )
        for side in ("a", "b")
    }

    def difference(idx: list[np.ndarray]) -> np.ndarray:
        a, b = (ratio_of_stratified_means(*parts[side], strata, idx, ZERO) for side in "ab")
        return a - b

    draws = stratified([len(s) for s in strata], rng, n_boot, difference)
    diffs = draws[~np.isnan(draws)]
    lo, hi, kept = percentile_interval(diffs)
    if not kept:
        return row | {"reason": "every resample has oracle = baseline (denominator 0) for one of the two"}
    row |= {"low": lo, "high": hi, "bootstrap_kept": kept}
    row["p"] = bootstrap_p(diffs)
    return row | {"reason": ""}


def bootstrap_p(diffs: np.ndarray) -> float:
    """Two-sided p of a bootstrap distribution of differences: 2 · min(share ≤ 0, share ≥ 0), within [1/kept, 1]."""
    kept = len(diffs)
    p = 2.0 * min(float(np.mean(diffs <= 0)), float(np.mean(diffs >= 0)))
    return min(1.0, max(p, 1.0 / kept))


def holm(p: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values (module docstring); None stays None and does not count in m."""
    tested = sorted((v, i) for i, v in enumerate(p) if v is not None)
    m = len(tested)
    out: list[float | None] = [None] * len(p)
    running = 0.0
    for j, (value, i) in enumerate(tested):
        running = max(running, min(1.0, (m - j) * value))
        out[i] = running
    return out


def _untested(r: dict[str, Any]) -> bool:
    """A pair ``pairwise_table`` did not test (too few shared scenarios, ``--bootstrap 0``): its ``p`` is empty."""
    p = r.get("p", 0.0)
    return p is None or (isinstance(p, float) and math.isnan(p))


def grouping(ranking: Sequence[str], pairs: pd.DataFrame) -> tuple[dict[str, int | None], dict[str, str]]:
    """The group of each model of ``ranking`` (best first) under the walk of the module docstring, and why a model
    has none; ``pairs``: the ranking's rows of ``pairwise_table`` (``model_a`` ranked above ``model_b``). A model
    whose pair with the current group's leader was not tested has no group (None): the data neither put it with
    the leader nor apart from it. It leads nothing; the next model is compared with the same leader."""
    records = {(r["model_a"], r["model_b"]): r for r in pairs.to_dict("records")}
    out: dict[str, int | None] = {}
    why: dict[str, str] = {}
    group, leader = 0, None
    for model in ranking:
        r: dict[str, Any] = records.get((leader, model), {}) if leader is not None else {}
        if leader is not None and _untested(r):
            out[model] = None
            reason = r.get("reason") or "not tested"
            why[model] = f"untested against {leader}, the leader of group {group}: {reason}"
            continue
        worse = bool(r.get("distinguishable")) and r.get("difference") is not None and float(r["difference"]) > 0
        if leader is None or worse:
            group, leader = group + 1, model
        out[model] = group
    return out, why


def groups(ranking: Sequence[str], pairs: pd.DataFrame) -> dict[str, int | None]:
    """The group of each model of ``ranking`` (``grouping``; None: untested against its group's leader)."""
    return grouping(ranking, pairs)[0]


def pairwise_table(
    scenarios: pd.DataFrame, ranking: Sequence[str], ranking_name: str, *, seed: int, n_boot: int
) -> pd.DataFrame:
    """Every pair of ``ranking`` (best first; ``model_a`` above ``model_b``) compared over ``scenarios``
    (``scenario_table`` rows, the tasks of this ranking), Holm-adjusted over the ranking (``PAIR_COLUMNS``)."""
    by_model = {str(m): sub for m, sub in scenarios.groupby("model", sort=False)}
    empty = scenarios.iloc[:0]
    rows = []
    ps: list[float | None] = []
    for i, a in enumerate(ranking):
        for b in ranking[i + 1 :]:
            shared = shared_scenarios(by_model.get(a, empty), by_model.get(b, empty))
            stream = stream_task(ranking_name, shared["task"].astype(str))
            test = paired_bootstrap(shared, pair_rng(seed, a, b, stream), n_boot)
            rows.append({"task": ranking_name, "model_a": a, "model_b": b, **test})
            ps.append(test["p"] if isinstance(test["p"], float) else None)
    adjusted = holm(ps)
    for r, v in zip(rows, adjusted, strict=True):
        r |= {"p_holm": v, "distinguishable": v is not None and v < ALPHA}
    return pd.DataFrame(rows, columns=list(PAIR_COLUMNS)).astype(object)
