"""Table 1: NormAlign per (model, task), its per-scenario distribution and a seeded bootstrap interval.

A scenario is *scored* in a mode when its row has a PrefAlign and is not failed. A (model, task) cell's NormAlign is
``norm_align`` applied to the mean PrefAlign of baseline, discovery and oracle, each mean taken over the same scenarios:
those scored in all three modes (the intersection of scenario ids).

Per-scenario NormAlign is the same formula on one scenario's three scores; it is undefined (and excluded from
the median and the share of negatives) when that scenario's oracle and baseline scores are equal.

The bootstrap resamples a cell's scenarios (in scenario-id order) with replacement, ``n_boot`` times, with the generator
``numpy.random.default_rng([seed, crc32(model), crc32(task)])`` (a pooled cell's ``task`` is its pool's name, or the one
task its scenarios hold: ``stream_task``) drawing ``integers(0, n, size=(n_boot, n))`` (in row blocks of that one
stream), recomputes the ratio of means per resample, drops resamples whose denominator is 0, and takes the 2.5th and
97.5th percentiles. A cell of fewer than ``MIN_INTERVAL_SCENARIOS`` scenarios gets no interval, and ``ci_reason`` says
so ("too few scenarios (n = 2)"): with n scenarios a resample of one scenario repeated has probability n^-n, above 2.5 %
for n ≤ 3, so the percentiles would be single scenarios' values, not an interval.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from prefdisco.analysis.stats.bootstrap import (
    percentile_interval,
    ratio_of_means,
    ratio_of_stratified_means,
    resampled,
    stratified,
)
from prefdisco.schema import CONDITIONS

ZERO = 1e-12
"""A denominator this close to 0 counts as 0 (here and in ``norm_align``)."""
MIN_INTERVAL_SCENARIOS = 4
"""The fewest scenarios a bootstrap interval is computed from (module docstring); also the control gap's."""


def too_few(n: int) -> str:
    """The one wording of a statistic left out for its sample size."""
    return f"too few scenarios (n = {n})"


def interval_reason(n: int, n_boot: int) -> str:
    """Why a cell of ``n`` scenarios has no bootstrap interval under ``n_boot`` resamples; empty when it has one."""
    if n < MIN_INTERVAL_SCENARIOS:
        return too_few(n)
    if n_boot <= 0:
        return "no bootstrap (--bootstrap 0)"
    return ""


def norm_align_of(baseline: Any, arm: Any, oracle: Any) -> np.ndarray:
    """NormAlign = 100 · (arm − baseline) / (oracle − baseline) of PrefAlign means, element by element (numbers or
    arrays of one shape: a scenario's, a cell's, a resample's): the one formula every instrument computes NormAlign
    with; NaN where a mean is missing or |oracle − baseline| ≤ ``ZERO``. The bootstrap's ``ratio_of_means`` of
    (arm − baseline, oracle − baseline) is the same number of a resample's means (``tests/test_bootstrap.py``)."""
    b, a, o = (np.asarray(x, dtype=float) for x in (baseline, arm, oracle))
    den = o - b
    out = np.full(np.broadcast(b, a, o).shape, np.nan)
    np.divide(100.0 * (a - b), den, out=out, where=np.isfinite(a) & np.isfinite(den) & (np.abs(den) > ZERO))
    return out


def norm_align(baseline: float | None, discovery: float | None, oracle: float | None) -> tuple[float | None, str]:
    """``norm_align_of`` three PrefAlign means; returns (value, reason), the reason empty when the value is defined,
    the value None when a term is missing or the denominator is 0."""
    if baseline is None or discovery is None or oracle is None:
        missing = [n for n, v in (("baseline", baseline), ("discovery", discovery), ("oracle", oracle)) if v is None]
        return None, f"no scored {'/'.join(missing)} results"
    if math.isclose(oracle - baseline, 0.0, abs_tol=ZERO):
        return None, "oracle and baseline PrefAlign are equal (denominator 0)"
    return float(norm_align_of(baseline, discovery, oracle)), ""


def scenario_table(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, task, scenario_id) scored in all three modes, with their three PrefAligns."""
    scored = results.loc[results["scored"].to_numpy() & results["mode"].isin(CONDITIONS).to_numpy()]
    wide = (
        scored.assign(mode=scored["mode"].astype(str), model=scored["model"].astype(str))
        .assign(task=scored["task"].astype(str), scenario_id=scored["scenario_id"].astype(str))
        .pivot(index=["model", "task", "scenario_id"], columns="mode", values="pref_align")
    )
    for m in CONDITIONS:
        if m not in wide.columns:
            wide[m] = np.nan
    wide = wide[list(CONDITIONS)].dropna().reset_index().sort_values(["model", "task", "scenario_id"])
    wide = wide.reset_index(drop=True)
    wide.columns.name = None
    wide["normalign"] = norm_align_of(*(wide[m].to_numpy() for m in CONDITIONS))
    return wide


def intersection_norm_align(scenarios: pd.DataFrame) -> tuple[float | None, str, dict[str, float]]:
    """``norm_align`` of the three conditions' mean PrefAlign over ``scenarios`` (rows of ``scenario_table``:
    scored in all three); (value, reason, the three means)."""
    if not len(scenarios):
        return None, "no scenario is scored in all three modes (baseline, discovery, oracle)", {}
    means = {m: float(scenarios[m].mean()) for m in CONDITIONS}
    value, reason = norm_align(*(means[m] for m in CONDITIONS))
    return value, reason, means


def cell_seed(seed: int, model: str, task: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(model.encode()), zlib.crc32(task.encode())])


def stream_task(name: str, tasks: Iterable[str]) -> str:
    """The task a bootstrap stream is named by: the one task the resampled scenarios hold, else ``name`` (a pooled
    cell's, the leaderboard's ``overall``). The same scenarios then draw the same resamples, whichever ranking
    holds them: a one-task leaderboard's overall row and its task's row give one interval."""
    found = set(tasks)
    return str(next(iter(found))) if len(found) == 1 else name


def bootstrap_interval(
    num: np.ndarray,
    den: np.ndarray,
    rng: np.random.Generator,
    n_boot: int,
    strata: Sequence[np.ndarray] | None = None,
) -> tuple[float | None, float | None, int]:
    """Percentile 95 % interval of 100·mean(num*)/mean(den*) over resamples (``bootstrap.py``); (lo, hi, resamples
    kept: those whose oracle − baseline is not 0). With ``strata`` (the rows of each, two or more) each stratum is
    resampled within itself, as the leaderboard's pairwise tests resample an overall ranking's tasks."""
    if strata is not None and len(strata) > 1:
        sizes = [len(s) for s in strata]
        draws = stratified(sizes, rng, n_boot, lambda idx: ratio_of_stratified_means(num, den, strata, idx, ZERO))
    else:
        draws = resampled([num, den], rng, n_boot, lambda a, b: ratio_of_means(a, b, ZERO))
    return percentile_interval(draws)


def normalign_cells(
    results: pd.DataFrame, scenarios: pd.DataFrame, *, seed: int, n_boot: int, strata: str | None = None
) -> pd.DataFrame:
    """One row per (model, task) in the results: NormAlign, reason, interval and per-scenario summary. ``strata``:
    a column of ``scenarios`` whose values the interval resamples within (the leaderboard's overall ranking: each
    scenario's own task), else every scenario of a cell together."""
    cells = results[["model", "task"]].astype(str).drop_duplicates().sort_values(["model", "task"])
    scored = results.loc[results["scored"].to_numpy()]
    modes_scored = (
        scored.assign(model=scored["model"].astype(str), task=scored["task"].astype(str))
        .groupby(["model", "task"])["mode"]
        .agg(lambda s: set(s.astype(str)))
    )
    groups = dict(iter(scenarios.groupby(["model", "task"], sort=False)))
    out = []
    for model, task in cells.itertuples(index=False):
        present = modes_scored.get((model, task), set())
        sub = groups.get((model, task), scenarios.iloc[:0])
        n = len(sub)
        row: dict[str, object] = {"model": model, "task": task, "n_scenarios": n}
        if n or all(m in present for m in CONDITIONS):
            value, reason, means = intersection_norm_align(sub)
            row |= {f"mean_{m}": v for m, v in means.items()}
        else:  # norm_align words the reason for a mode without any scored row
            value, reason = norm_align(*(0.0 if m in present else None for m in CONDITIONS))
        row |= {"normalign": value, "reason": reason}
        per = sub["normalign"].to_numpy()
        defined = per[~np.isnan(per)]
        row |= {
            "scenario_median": float(np.median(defined)) if len(defined) else None,
            "scenario_share_negative": float(np.mean(defined < 0)) if len(defined) else None,
            "scenario_n_defined": len(defined),
            "scenario_n_excluded": len(per) - len(defined),
        }
        lo = hi = None
        kept = 0
        why = "" if value is None else interval_reason(n, n_boot)  # a null cell's reason is its own
        if value is not None and not why:
            num = (sub["discovery"] - sub["baseline"]).to_numpy()
            den = (sub["oracle"] - sub["baseline"]).to_numpy()
            labels = sub[strata].astype(str).to_numpy() if strata is not None else None
            within = None if labels is None else [np.flatnonzero(labels == t) for t in sorted(set(labels))]
            stream = task if labels is None else stream_task(task, labels)
            lo, hi, kept = bootstrap_interval(num, den, cell_seed(seed, model, stream), n_boot, within)
            why = "" if kept else "every resample has oracle = baseline (denominator 0)"
        row |= {"ci_low": lo, "ci_high": hi, "bootstrap_kept": kept, "ci_reason": why}
        out.append(row)
    frame = pd.DataFrame(out)
    for col in ("mean_baseline", "mean_discovery", "mean_oracle"):
        if col not in frame.columns:
            frame[col] = np.nan
    return frame


def pct_negative(cells: pd.DataFrame) -> tuple[float | None, int, int]:
    """Percentage of cells with a defined NormAlign that are negative; (pct, n_negative, n_defined)."""
    values = pd.to_numeric(cells["normalign"], errors="coerce").dropna().to_numpy()
    if not len(values):
        return None, 0, 0
    n_neg = int((values < 0).sum())
    return 100.0 * n_neg / len(values), n_neg, len(values)
