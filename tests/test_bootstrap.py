"""The one bootstrap kernel (``analysis/bootstrap.py``, issue 31, defect 5): every instrument's intervals are drawn
there, the same way, and the block size that bounds memory never changes a number."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from prefdisco.analysis import bootstrap
from prefdisco.analysis.bootstrap import per_resample, percentile_interval, ratio_of_means, resampled, stratified

SRC = Path(__file__).resolve().parents[1] / "src" / "prefdisco"


def by_hand(values: np.ndarray, seed: int, n_boot: int, statistic) -> np.ndarray:
    """One resample at a time: ``integers(0, n, size=n)`` from the stream, the statistic of those rows."""
    rng = np.random.default_rng(seed)
    return np.array([statistic(values[rng.integers(0, len(values), size=len(values))]) for _ in range(n_boot)])


@pytest.mark.parametrize("block", [7, 50, bootstrap.BLOCK])
def test_resamples_are_the_streams_rows_whatever_the_block(monkeypatch, block):
    values = np.array([1.0, 4.0, 2.0, 8.0, 5.0])
    monkeypatch.setattr(bootstrap, "BLOCK", block)  # 7: one resample a block; 50: ten
    got = resampled([values], np.random.default_rng(3), 101, lambda v: v.mean(axis=1))
    np.testing.assert_array_equal(got, by_hand(values, 3, 101, np.mean))


def test_a_ratio_drops_the_resamples_whose_denominator_is_zero():
    num, den = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.0, 0.0, 0.0, 2.0])
    draws = resampled([num, den], np.random.default_rng(1), 400, lambda a, b: ratio_of_means(a, b, 1e-12))
    rng = np.random.default_rng(1)
    expected = []
    for _ in range(400):
        idx = rng.integers(0, 4, size=4)
        expected.append(100 * num[idx].mean() / den[idx].mean() if den[idx].mean() else np.nan)
    np.testing.assert_allclose(draws, expected, equal_nan=True)
    lo, hi, kept = percentile_interval(draws)
    finite = np.array([e for e in expected if np.isfinite(e)])
    assert kept == len(finite) < 400  # (0.0 0.0 0.0 0.0) resamples dropped, never a number
    assert (lo, hi) == pytest.approx(tuple(np.percentile(finite, [2.5, 97.5])))


def test_a_per_resample_statistic_may_be_undefined_and_a_stratum_stays_within_itself():
    x = np.array([1.0, 2.0, 3.0, 10.0, 20.0])
    draws = resampled([x], np.random.default_rng(0), 500, per_resample(lambda v: None if v.max() < 10 else v.sum()))
    assert np.isnan(draws).any() and percentile_interval(draws)[2] == int(np.isfinite(draws).sum())
    sizes = [3, 2]  # rows 0-2 and 3-4
    seen: list[np.ndarray] = []
    stratified(sizes, np.random.default_rng(0), 20, lambda idx: seen.extend(idx) or np.zeros(len(idx[0])))
    assert [b.shape for b in seen] == [(20, 3), (20, 2)] and seen[0].max() == 2 and seen[1].max() == 1
    assert percentile_interval(np.array([np.nan, np.inf])) == (None, None, 0)


def test_the_draws_live_in_the_kernel_only():
    """No instrument draws its own resamples: every ``rng.integers`` and percentile of an interval is the kernel's."""
    drawn = [
        p.relative_to(SRC).as_posix()
        for p in sorted((SRC / "analysis").glob("*.py"))
        if p.name != "bootstrap.py" and re.search(r"\.integers\(|np\.percentile\(", p.read_text())
    ]
    assert drawn == []


def test_normalign_is_one_formula_and_a_resamples_ratio_of_means_is_it():
    """``normalign.norm_align_of`` is NormAlign everywhere: the scalar of three means, a scenario's, and each
    bootstrap resample's ``ratio_of_means`` of (arm − baseline, oracle − baseline), which equals it of the resample's
    three means (a denominator of 0 undefined in both)."""
    from prefdisco.analysis.normalign import norm_align, norm_align_of

    assert norm_align(2.5, 2.875, 3.75) == (pytest.approx(30.0), "")  # 100 · 0.375 / 1.25
    assert norm_align(3.0, 4.0, 3.0)[0] is None and np.isnan(norm_align_of(3.0, 4.0, 3.0))
    assert np.isnan(norm_align_of(np.nan, 4.0, 5.0)) and norm_align_of([1.0, 2.0], [2.0, 2.0], [3.0, 4.0]).tolist() == [
        50.0,
        0.0,
    ]
    rng = np.random.default_rng(3)
    base, arm, oracle = (rng.uniform(1, 5, size=(200, 6)) for _ in range(3))
    oracle[7] = base[7]  # one resample whose every oracle − baseline is 0
    ratio = ratio_of_means(arm - base, oracle - base, 1e-12)
    direct = norm_align_of(base.mean(axis=1), arm.mean(axis=1), oracle.mean(axis=1))
    assert np.isnan(ratio[7]) and np.isnan(direct[7])
    np.testing.assert_allclose(ratio, direct, rtol=1e-12, equal_nan=True)
