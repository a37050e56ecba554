"""The judge's position effect: the mean score a structured judge gives by the criterion's place in its list.

The structured judge lists each call's criteria in a shuffled order (``scoring/criterion_order.py``) and records
each judgement's call and position (``judge_call``, ``judge_position`` in the attribute table). Since the order is
drawn at random per call, the position a criterion lands on is unrelated to which criterion it is and to the
response: any change of the mean score with the position is the judge's own order bias (the field reports the
last-listed criterion scoring lower), not a difference between criteria.

Read over the attribute rows as run (every trial, judge and repeat, in every condition; the rows of failed results
rows dropped, ``judges.usable``) that have a position and a valid score, per judge (its model name):

* **mean by position**: for each position p (1st, 2nd, …) the mean of the scores judged at p, and n;
* **slope**: the ordinary least-squares slope of score on position over those judgements (score points per place
  further down the list); undefined when every call listed a single criterion;
* **intervals**: a seeded percentile bootstrap (95 %) that resamples the scenarios — (model, task, scenario_id),
  in that order, with every judgement of theirs — with replacement ``n_boot`` times, with the generator
  ``numpy.random.default_rng([seed, crc32(judge), crc32("judge_position")])``; each resample's mean at p is the
  pooled mean of the judgements at p of the drawn scenarios (a resample without one is dropped for that p), its
  slope the OLS slope of the drawn judgements. As every bootstrap of the report (``normalign.py``), fewer than
  ``MIN_INTERVAL_SCENARIOS`` scenarios give no interval and the reason says so. When every scenario shows the same
  pattern (a judge whose score depends on the position alone) every resample gives the same figures and the
  interval is that point.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from prefdisco.analysis.bootstrap import percentile_interval, resampled
from prefdisco.analysis.normalign import interval_reason
from prefdisco.results.contract import JUDGE, JUDGE_CALL, JUDGE_POSITION, REPEAT, RESULT_KEY

UNIT: tuple[str, ...] = ("model", "task", "scenario_id")
"""What the bootstrap resamples: a scenario of a model and task, with all its judgements."""
POSITION_COLUMNS = ["judge", "position", "n", "mean", "ci_low", "ci_high", "reason"]
SLOPE_COLUMNS = ["judge", "n_calls", "n_judgements", "n_scenarios", "slope", "ci_low", "ci_high", "reason"]
ONE_POSITION = "every structured call listed one criterion: no order to compare"


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
                        "mean": _number(p["mean"]),
                        "ci": [_number(p["ci_low"]), _number(p["ci_high"])],
                        "n": int(p["n"]),
                    }
                    for p in own.to_dict("records")
                },
                "slope": _number(r["slope"]),
                "slope_ci": [_number(r["ci_low"]), _number(r["ci_high"])],
                "n_calls": int(r["n_calls"]),
                "n_judgements": int(r["n_judgements"]),
                "n_scenarios": int(r["n_scenarios"]),
                "reason": r["reason"] or None,
            }
        return out


def _number(value: Any) -> float | None:
    if value is None or value is pd.NA:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def placed_judgements(att: pd.DataFrame) -> pd.DataFrame:
    """The valid judgements that record a list position (the structured judge's), with an integer ``position``."""
    if JUDGE_POSITION not in att.columns:
        return att.iloc[0:0].assign(position=pd.Series(dtype=np.int64))
    keep = att[JUDGE_POSITION].notna().to_numpy() & att["score"].notna().to_numpy()
    placed = att.loc[keep]
    return placed.assign(position=placed[JUDGE_POSITION].astype(np.int64))


def position_effect(att: pd.DataFrame, *, seed: int, n_boot: int) -> PositionEffect | None:
    """The position effect of every judge with placed judgements in ``att`` (``judges.usable`` rows); None when no
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
        x = own["position"].to_numpy(dtype=np.float64)
        y = own["score"].to_numpy(dtype=np.float64)
        levels = np.unique(x).astype(np.int64)
        reason = interval_reason(n_units, n_boot)
        # per unit: Σy and n at each position, then n, Σx, Σy, Σxy, Σx² over all positions
        columns = [y * (x == p) for p in levels] + [(x == p).astype(np.float64) for p in levels]
        columns += [np.ones_like(x), x, y, x * y, x * x]
        per_unit = np.stack([np.bincount(units, weights=c, minlength=n_units) for c in columns], axis=1)
        sums = None if reason else _resampled_sums(per_unit, seed, str(judge), n_boot)
        k = len(levels)
        for i, p in enumerate(levels):
            at = x == p
            low = high = None
            if sums is not None:
                kept = sums[:, k + i] > 0
                low, high = _percentiles(sums[kept, i] / sums[kept, k + i])
            positions.append([judge, int(p), int(at.sum()), float(y[at].mean()), low, high, reason or None])
        calls = own[[*RESULT_KEY, REPEAT, JUDGE_CALL]].drop_duplicates()
        head = [judge, len(calls), len(own), n_units]
        if k < 2:
            slopes.append([*head, None, None, None, ONE_POSITION])
            continue
        low = high = None
        if sums is not None:
            n, sx, sy, sxy, sxx = (sums[:, 2 * k + j] for j in range(5))
            den = n * sxx - sx * sx
            kept = den > 1e-9 * n * sxx
            low, high = _percentiles((n[kept] * sxy[kept] - sx[kept] * sy[kept]) / den[kept])
        slopes.append([*head, _slope(x, y), low, high, reason or None])
    return PositionEffect(
        pd.DataFrame(positions, columns=POSITION_COLUMNS), pd.DataFrame(slopes, columns=SLOPE_COLUMNS)
    )


def _resampled_sums(per_unit: np.ndarray, seed: int, judge: str, n_boot: int) -> np.ndarray:
    """The column sums of ``n_boot`` resamples (with replacement) of the rows of ``per_unit`` (units × sums), drawn
    as ``integers(0, units, size=(n_boot, units))`` in row blocks of the judge's one stream."""
    rng = np.random.default_rng([seed, zlib.crc32(judge.encode()), zlib.crc32(b"judge_position")])
    return resampled([per_unit], rng, n_boot, lambda v: v.sum(axis=1))


def _percentiles(values: np.ndarray) -> tuple[float | None, float | None]:
    low, high, _ = percentile_interval(values)
    return low, high


def _slope(x: np.ndarray, y: np.ndarray) -> float | None:
    dx = x - x.mean()
    den = float((dx * dx).sum())
    return None if den == 0 else float((dx * (y - y.mean())).sum()) / den
