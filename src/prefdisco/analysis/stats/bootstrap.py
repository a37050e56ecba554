"""The one bootstrap of every instrument: resamples drawn with replacement, a statistic per resample, and the
percentile 95 % interval of what it gives.

Every interval of the report, the leaderboard, transfer, harms, the control, judge position, simulator fidelity and
calibration is drawn here, so each is drawn the same way: from the caller's seeded ``numpy.random.Generator`` (each
instrument names its own stream), as ``rng.integers(0, n, size=(n_boot, n))`` read row by row, in blocks of at most
``BLOCK`` resampled values held at once (the block size never changes the numbers: the rows come off the stream in
the same order). A stratified bootstrap (``stratified``) draws each stratum within each block, in stratum order.

* ``resampled(columns, rng, n_boot, statistic)`` — the statistic of each resample of the rows the ``columns``
  share: a vectorised ``statistic`` gets each column's block (``column[idx]``: resamples × rows × …) and returns one
  value (or row) per resample; ``per_resample(f)`` wraps a function of one resample's columns.
* ``stratified(sizes, rng, n_boot, statistic)`` — the same with the rows in strata (one index block per stratum).
* ``percentile_interval(draws)`` — the 2.5th and 97.5th percentiles of the finite draws, and how many there were:
  a resample whose statistic is undefined (NaN: a denominator 0, nothing eligible) is dropped, never a number.

Whether a cell has an interval at all (too few scenarios, ``--bootstrap 0``) is ``normalign.interval_reason``'s.

**How many resamples.** ``--bootstrap B`` is 0 (no interval) or at least ``MIN_RESAMPLES`` (``check_resamples``, the
report's, the leaderboard's and calibrate's one refusal). The 2.5th percentile of B draws lies 0.025 · B draws into
the tail: at B = 3 it is the smallest draw (interpolated), at B = 40 the first or second, so the interval's ends are
single resamples' values and a rerun with another seed moves them anywhere. At 200 each tail holds 5 draws, the
fewest a share is read from (the rule of at least 5 expected counts); the default, 1000, holds 25.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from prefdisco.errors import UserError

BLOCK = 2_000_000
"""At most this many resampled values are held at once."""
MIN_RESAMPLES = 200
"""The fewest resamples a percentile 95 % interval is drawn from (module docstring); 0 draws none."""


def check_resamples(n_boot: int) -> None:
    """Refuse, in one line, a ``--bootstrap`` below 0 or between 1 and ``MIN_RESAMPLES`` − 1."""
    if n_boot < 0:
        raise UserError(f"--bootstrap: expected a number of resamples >= 0, got {n_boot}")
    if 0 < n_boot < MIN_RESAMPLES:
        raise UserError(
            f"--bootstrap {n_boot}: too few resamples for a 95 % percentile interval (each 2.5 % tail would hold "
            f"{0.025 * n_boot:g} of them, its end a single resample's value); give at least {MIN_RESAMPLES}, "
            "or 0 for no interval"
        )


def index_blocks(rng: np.random.Generator, n: int, n_boot: int, width: int = 1) -> Iterator[np.ndarray]:
    """``n_boot`` resamples of ``range(n)`` with replacement, in blocks of rows (each row one resample)."""
    rows = max(1, BLOCK // max(1, n * width))
    for start in range(0, n_boot, rows):
        yield rng.integers(0, n, size=(min(rows, n_boot - start), n))


def resampled(
    columns: Sequence[np.ndarray], rng: np.random.Generator, n_boot: int, statistic: Callable[..., np.ndarray]
) -> np.ndarray:
    """``statistic`` of each of ``n_boot`` resamples of the rows shared by ``columns`` (arrays of one length, the
    same rows drawn from each): ``statistic(*blocks)`` gets each column's block (resamples × rows × …) and returns
    one value (or row of values) per resample. An empty array when there is nothing to resample."""
    columns = [np.asarray(c) for c in columns]
    n = len(columns[0]) if columns else 0
    if n == 0 or n_boot <= 0:
        return np.empty(0)
    width = sum(int(np.prod(c.shape[1:])) if c.ndim > 1 else 1 for c in columns)
    blocks = [np.asarray(statistic(*(c[idx] for c in columns))) for idx in index_blocks(rng, n, n_boot, width)]
    return np.concatenate(blocks)


def per_resample(function: Callable[..., Any]) -> Callable[..., np.ndarray]:
    """A statistic of one resample (``function(column_1, column_2, …)``, each the resampled rows of one column;
    None or NaN when undefined; a number or a vector) as a block statistic for ``resampled``."""

    def statistic(*blocks: np.ndarray) -> np.ndarray:
        out = [function(*(b[i] for b in blocks)) for i in range(len(blocks[0]))]
        return np.asarray([np.nan if v is None else v for v in out], dtype=float)

    return statistic


def stratified(
    sizes: Sequence[int],
    rng: np.random.Generator,
    n_boot: int,
    statistic: Callable[[list[np.ndarray]], np.ndarray],
) -> np.ndarray:
    """``statistic`` of each of ``n_boot`` stratified resamples: each stratum of ``sizes[i]`` rows resampled within
    itself; ``statistic`` gets one index block per stratum (resamples × that stratum's size)."""
    n = int(sum(sizes))
    if n == 0 or n_boot <= 0:
        return np.empty(0)
    rows = max(1, BLOCK // n)
    out = []
    for start in range(0, n_boot, rows):
        size = min(rows, n_boot - start)
        out.append(np.asarray(statistic([rng.integers(0, s, size=(size, s)) for s in sizes])))
    return np.concatenate(out)


def percentile_interval(draws: np.ndarray) -> tuple[float | None, float | None, int]:
    """The 2.5th and 97.5th percentiles of the finite ``draws`` (one value per resample), and how many were kept;
    (None, None, 0) when none is."""
    draws = np.asarray(draws, dtype=float).ravel()
    kept = draws[np.isfinite(draws)]
    if not len(kept):
        return None, None, 0
    lo, hi = np.percentile(kept, [2.5, 97.5])
    return float(lo), float(hi), len(kept)


def ratio_of_stratified_means(
    num: np.ndarray, den: np.ndarray, strata: Sequence[np.ndarray], idx: Sequence[np.ndarray], zero: float
) -> np.ndarray:
    """100 · mean(num*) / mean(den*) of each stratified resample (``stratified``'s index blocks, one per stratum of
    ``strata``: the rows of each); NaN where |mean(den*)| ≤ ``zero``."""
    total = sum(len(s) for s in strata)
    nums = sum(num[s][i].sum(axis=1) for s, i in zip(strata, idx, strict=True)) / total
    dens = sum(den[s][i].sum(axis=1) for s, i in zip(strata, idx, strict=True)) / total
    out = np.full(len(nums), np.nan)
    ok = np.abs(dens) > zero
    out[ok] = 100.0 * nums[ok] / dens[ok]
    return out


def ratio_of_means(num: np.ndarray, den: np.ndarray, zero: float) -> np.ndarray:
    """100 · mean(num) / mean(den) of each resample (blocks of ``resampled``); NaN where |mean(den)| ≤ ``zero``."""
    nums, dens = num.mean(axis=1), den.mean(axis=1)
    ok = np.abs(dens) > zero
    out = np.full(len(dens), np.nan)
    np.divide(100.0 * nums, dens, out=out, where=ok)
    return out
