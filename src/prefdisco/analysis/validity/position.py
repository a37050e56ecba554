"""The judge's position effect: the mean score a structured judge gives by the criterion's place in its list.

The structured judge lists each call's criteria in a shuffled order (``scoring/criterion_order.py``) and records
each judgement's call and position (``judge_call``, ``judge_position`` in the attribute table). Since the order is
drawn at random per call, the position a criterion lands on is unrelated to which criterion it is and to the
response: any change of the mean score with the position is the judge's own order bias (the field reports the
last-listed criterion scoring lower), not a difference between criteria.

Read over the rows a judge actually judged (every trial, judge and repeat, in every condition; a failed results
row's and a refused or empty response's left out, ``panel.judged_rows``) that have a position and a valid score, per
judge (its model name), **within calls**: a *call* is one structured call (its trial, repeat and ``judge_call``), and
each score and place is taken as its difference from its call's mean score and mean place. A call's own level — the
response, how many criteria it lists, which — is thus never read as a place: a judge that scores 4-criterion
rubrics lower than 2-criterion ones has no order bias, yet one slope over the pooled judgements would read the long
calls' places 3 and 4 as low-scoring places (calls of 2 all scoring 4 and of 4 all scoring 2 give −0.39 per place,
1.17 levels over 4 places, where the within-call slope is 0).

* **mean by position**: for each position p (1st, 2nd, …) the mean of all the judgements plus the mean, over the
  judgements at p, of their score's difference from their call's mean, and n (where every call lists the same
  number of criteria this is the plain mean of the scores judged at p);
* **slope**: the within-call least-squares slope of score on position, Σ(x − x̄_call)(y − ȳ_call) / Σ(x −
  x̄_call)² over those judgements (score points per place further down a list); undefined when no call has two
  judgements at different places;
* **intervals**: a seeded percentile bootstrap (95 %) that resamples the scenarios — (model, task, scenario_id),
  in that order, with every judgement of theirs (a call lies within one scenario, so its means stay fixed) — with
  replacement ``n_boot`` times, with the generator ``numpy.random.default_rng([seed, crc32(judge),
  crc32("judge_position")])``; each resample's mean at p is the figure above over the judgements of the drawn
  scenarios (a resample without one at p is dropped for that p), its slope the within-call slope of the drawn
  judgements. As every bootstrap of the report (``normalign.py``), fewer than ``MIN_INTERVAL_SCENARIOS`` scenarios
  give no interval and the reason says so. When every scenario shows the same pattern (a judge whose score depends
  on the position alone) every resample gives the same figures and the interval is that point.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from prefdisco.analysis.section.shown import finite
from prefdisco.analysis.stats.bootstrap import percentile_interval, resampled
from prefdisco.analysis.stats.normalign import interval_reason
from prefdisco.results.contract import JUDGE, JUDGE_CALL, JUDGE_POSITION, REPEAT, RESULT_KEY

UNIT: tuple[str, ...] = ("model", "task", "scenario_id")
"""What the bootstrap resamples: a scenario of a model and task, with all its judgements."""
POSITION_COLUMNS = ["judge", "position", "n", "mean", "ci_low", "ci_high", "reason"]
SLOPE_COLUMNS = ["judge", "n_calls", "n_judgements", "n_scenarios", "slope", "ci_low", "ci_high", "reason"]
ONE_POSITION = "no structured call has two valid judgements at different places: no order to compare"
TINY = 1e-12
"""A sum of squared within-call places at most this is 0 (every call a single place)."""


@dataclass(frozen=True)
class PositionEffect:
    """Per judge: the mean score by list position (``positions``) and the slope by position (``slopes``)."""

    positions: pd.DataFrame
    slopes: pd.DataFrame

    def summary(self) -> dict[str, Any]:
        """``summary.json``'s ``judge_position_effect``: judge → {``positions``: position → {mean, ci, n}, slope,
        slope_ci, n_calls, n_judgements, n_scenarios, reason}."""
        out: dict[str, Any] = {}
        for r in self.slopes.to_dict("records"):
            own = self.positions.loc[self.positions["judge"] == r["judge"]]
            out[str(r["judge"])] = {
                "positions": {
                    str(int(p["position"])): {
                        "mean": finite(p["mean"]),
                        "ci": [finite(p["ci_low"]), finite(p["ci_high"])],
                        "n": int(p["n"]),
                    }
                    for p in own.to_dict("records")
                },
                "slope": finite(r["slope"]),
                "slope_ci": [finite(r["ci_low"]), finite(r["ci_high"])],
                "n_calls": int(r["n_calls"]),
                "n_judgements": int(r["n_judgements"]),
                "n_scenarios": int(r["n_scenarios"]),
                "reason": r["reason"] or None,
            }
        return out


def placed_judgements(att: pd.DataFrame) -> pd.DataFrame:
    """The valid judgements that record a list position (the structured judge's), with an integer ``position``."""
    if JUDGE_POSITION not in att.columns:
        return att.iloc[0:0].assign(position=pd.Series(dtype=np.int64))
    keep = att[JUDGE_POSITION].notna().to_numpy() & att["score"].notna().to_numpy()
    placed = att.loc[keep]
    return placed.assign(position=placed[JUDGE_POSITION].astype(np.int64))


def position_effect(att: pd.DataFrame, *, seed: int, n_boot: int) -> PositionEffect | None:
    """The position effect of every judge with placed judgements in ``att`` (``panel.judged_rows``); None when no
    judgement records a position (no structured judging)."""
    placed = placed_judgements(att)
    if placed.empty:
        return None
    positions: list[list[Any]] = []
    slopes: list[list[Any]] = []
    for judge, own in placed.groupby(JUDGE, sort=True, observed=True):
        own = own.sort_values([*UNIT, "position"], kind="stable")
        units = own.groupby(list(UNIT), sort=True, observed=True).ngroup().to_numpy()
        n_units = int(units.max()) + 1
        calls = own.groupby([*RESULT_KEY, REPEAT, JUDGE_CALL], sort=False, observed=True, dropna=False)
        x = own["position"].to_numpy(dtype=np.float64)
        y = own["score"].to_numpy(dtype=np.float64)
        dx = x - calls["position"].transform("mean").to_numpy(dtype=np.float64)  # centred within the call
        dy = y - calls["score"].transform("mean").to_numpy(dtype=np.float64)
        levels = np.unique(x).astype(np.int64)
        reason = interval_reason(n_units, n_boot)
        # per unit: Σ(y − ȳ_call) and n at each position, then n, Σy, Σ dx·dy, Σ dx²
        columns = [dy * (x == p) for p in levels] + [(x == p).astype(np.float64) for p in levels]
        columns += [np.ones_like(x), y, dx * dy, dx * dx]
        per_unit = np.stack([np.bincount(units, weights=c, minlength=n_units) for c in columns], axis=1)
        sums = None if reason else _resampled_sums(per_unit, seed, str(judge), n_boot)
        k = len(levels)
        for i, p in enumerate(levels):
            at = x == p
            low = high = None
            if sums is not None:
                kept = sums[:, k + i] > 0
                low, high = _percentiles(_level(sums[kept], k) + sums[kept, i] / sums[kept, k + i])
            mean = float(y.mean() + dy[at].mean())
            positions.append([judge, int(p), int(at.sum()), mean, low, high, reason or None])
        head = [judge, calls.ngroups, len(own), n_units]
        sxx = float((dx * dx).sum())
        if sxx <= TINY:
            slopes.append([*head, None, None, None, ONE_POSITION])
            continue
        low = high = None
        if sums is not None:
            sxy_b, sxx_b = sums[:, 2 * k + 2], sums[:, 2 * k + 3]
            kept = sxx_b > TINY
            low, high = _percentiles(sxy_b[kept] / sxx_b[kept])
        slopes.append([*head, float((dx * dy).sum()) / sxx, low, high, reason or None])
    return PositionEffect(
        pd.DataFrame(positions, columns=POSITION_COLUMNS), pd.DataFrame(slopes, columns=SLOPE_COLUMNS)
    )


def _level(sums: np.ndarray, k: int) -> np.ndarray:
    """The mean of all the judgements of each resample (its n and Σy columns after the 2k per-position ones)."""
    return sums[:, 2 * k + 1] / sums[:, 2 * k]


def _resampled_sums(per_unit: np.ndarray, seed: int, judge: str, n_boot: int) -> np.ndarray:
    """The column sums of ``n_boot`` resamples (with replacement) of the rows of ``per_unit`` (units × sums), drawn
    as ``integers(0, units, size=(n_boot, units))`` in row blocks of the judge's one stream."""
    rng = np.random.default_rng([seed, zlib.crc32(judge.encode()), zlib.crc32(b"judge_position")])
    return resampled([per_unit], rng, n_boot, lambda v: v.sum(axis=1))


def _percentiles(values: np.ndarray) -> tuple[float | None, float | None]:
    low, high, _ = percentile_interval(values)
    return low, high


VOID_SPAN = 1.0
"""A judge whose fitted score moves by this many rubric levels or more from the first listed place to the last (its
slope's interval excluding 0) scores the order as much as the response: its PrefAlign is called void at the top."""


def position_void(effect: Any) -> str | None:
    """The caveat of a structured judge whose scores follow the criterion's place in its list: the slope's interval
    excludes 0 and slope × (places − 1) is ``VOID_SPAN`` level or more; None otherwise."""
    if effect is None:
        return None
    lines = []
    for r in effect.slopes.to_dict("records"):
        slope, low, high = (r.get(k) for k in ("slope", "ci_low", "ci_high"))
        if any(v is None or v != v for v in (slope, low, high)) or (low <= 0 <= high):
            continue
        places = int(effect.positions.loc[effect.positions["judge"] == r["judge"], "position"].max())
        if abs(slope) * (places - 1) >= VOID_SPAN:
            lines.append(f"{r['judge']} ({slope:+.2f} per place over {places} places)")
    if not lines:
        return None
    return (
        "PrefAlign is void for " + "; ".join(lines) + ": the judge's score follows where a criterion is listed by a "
        "whole rubric level or more (the lists are shuffled, so this is its order bias, not the responses); judge "
        "again with another judge (prefdisco judge --judge-model) before reading its PrefAlign or NormAlign"
    )
