"""The tables of a reference run (``prefdisco simfidelity --reference``): ``reference.csv`` and
``reference_pairs.csv``, from the measures of ``answer_behaviour.py``.

A composite alone hides what moved it (on Qulac's held-out topics the whole gain of one simulated user over another
was its word cap, on the other seven statistics it was further from the people), so each simulator's reference
fidelity stands beside its parts:

* **Distance** of each statistic from the people (``distance_<statistic>``): 1 − its closeness (1 − min/max of the
  mean words, the |difference| of each share and of the mean disclosure, 1 − the polarity agreement), 0 when equal.
  The reference fidelity is 1 − the mean of the distances defined: the composite is exactly the mean of the parts
  shown beside it.
* **Intervals**: one seeded percentile bootstrap per simulator through the one kernel (``bootstrap.resampled``; the
  rows resampled, a row's person and simulator answers together; ``numpy.random.default_rng([seed,
  crc32(label)])``): each distance and the reference fidelity read off the same resamples. None under
  ``MIN_ROWS`` rows or without resamples.
* **Empty replies** (``empty``): replies that are no answer, in no statistic, counted beside them.
* **Closer to people, per statistic** (``reference_pairs.csv``): for each pair of simulators (a before b in the
  order given), per statistic and for the composite (``reference_fidelity``: its distance, 1 − the fidelity), the
  difference distance(a) − distance(b) over the same resamples of the rows for both (``default_rng([seed,
  crc32(a + "\\x1f" + b)])``) and its interval: ``closer`` names a when the interval lies below 0, b when above,
  ``not told apart`` when it holds 0, and ``no interval`` when there is none (the point difference is shown, no
  verdict stated). A verdict is never read off the composite alone.
"""

from __future__ import annotations

import functools
import itertools
import zlib

import numpy as np
import pandas as pd

from prefdisco.analysis.stats.bootstrap import percentile_interval, resampled
from prefdisco.analysis.validity.reference import CLOSENESS, FIDELITY_COLUMNS, NO_INTERVAL, NOT_APART, SHARES
from prefdisco.simfidelity.answer_behaviour import party_statistics, resampled_closeness, row_means

MIN_ROWS = 4
"""The fewest rows an interval is drawn from."""
STATISTICS = ("n", "empty", "mean_words", "median_words", *SHARES, "disclosure", "discloses_any", "polarity_agreement")
"""Each party's statistics in ``reference.csv`` (one row for the people, one per simulator)."""
PARTS = (*CLOSENESS, "reference_fidelity")
"""What a distance is given of: each statistic, and the composite (1 − the reference fidelity)."""
DISTANCE_COLUMNS = tuple(f"distance_{s}{end}" for s in CLOSENESS for end in ("", "_low", "_high"))


def resampled_parts(person: pd.DataFrame, simulator: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """Per resample of the rows (``rows``: resamples × rows): the distance of each statistic (``CLOSENESS``), the
    composite's (1 − the reference fidelity) and the reference fidelity itself: resamples × 10, NaN where undefined."""
    closeness = resampled_closeness(person, simulator, rows)
    fidelity = row_means(closeness)
    return np.column_stack([1.0 - closeness, 1.0 - fidelity, fidelity])


def _point(person: pd.DataFrame, simulator: pd.DataFrame) -> np.ndarray:
    return resampled_parts(person, simulator, np.arange(len(person))[None, :])[0]


def _draws(statistic: functools.partial[np.ndarray], n: int, seed: int, key: str, n_boot: int) -> np.ndarray | None:
    """The statistic's value on each of ``n_boot`` resamples of the ``n`` rows (``bootstrap.resampled``, the stream
    ``default_rng([seed, crc32(key)])``); None when no interval is drawn."""
    if n < MIN_ROWS or n_boot <= 0:
        return None
    rng = np.random.default_rng([seed, zlib.crc32(key.encode())])
    return resampled([np.arange(n)], rng, n_boot, statistic)


def _interval(draws: np.ndarray | None, column: int) -> tuple[float | None, float | None]:
    if draws is None:
        return None, None
    lo, hi, _ = percentile_interval(draws[:, column])
    return lo, hi


def _value(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def simulator_row(label: str, person: pd.DataFrame, simulator: pd.DataFrame, *, seed: int, n_boot: int) -> dict:
    """One simulator's row of ``reference.csv``: its statistics, reference fidelity and interval, and each
    statistic's distance from the people with its interval."""
    person, simulator = person.reset_index(drop=True), simulator.reset_index(drop=True)
    point = _point(person, simulator)
    draws = _draws(functools.partial(resampled_parts, person, simulator), len(person), seed, label, n_boot)
    row = {"simulator": label, **party_statistics(simulator, person)}
    row |= dict(zip(FIDELITY_COLUMNS, (_value(point[-1]), *_interval(draws, len(PARTS))), strict=True))
    for k, name in enumerate(CLOSENESS):
        lo, hi = _interval(draws, k)
        row |= {f"distance_{name}": _value(point[k]), f"distance_{name}_low": lo, f"distance_{name}_high": hi}
    return row


def reference_table(
    person: pd.DataFrame, simulators: dict[str, pd.DataFrame], *, seed: int, n_boot: int
) -> pd.DataFrame:
    """``reference.csv``: the people's statistics, then each simulator's with its reference fidelity, its interval
    and rank (1 = the highest composite), and each statistic's distance from the people with its interval."""
    rows = [{"simulator": "people", **party_statistics(person)}]
    rows += [simulator_row(label, person, m, seed=seed, n_boot=n_boot) for label, m in simulators.items()]
    table = pd.DataFrame(rows, columns=["simulator", *STATISTICS, *FIDELITY_COLUMNS, *DISTANCE_COLUMNS])
    ranked = table["reference_fidelity"].iloc[1:].rank(ascending=False, method="min")
    table["rank"] = pd.concat([pd.Series([None]), ranked]).to_numpy()
    return table


def closer(a: str, b: str, low: float | None, high: float | None) -> str:
    """Which of ``a`` and ``b`` is closer to the people on a statistic, from the interval of distance(a) −
    distance(b): a below 0, b above, neither told apart when it holds 0; ``no interval`` without one."""
    if low is None or high is None:
        return NO_INTERVAL
    return a if high < 0 else b if low > 0 else NOT_APART


def _pair_parts(person: pd.DataFrame, a: pd.DataFrame, b: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """distance(a) − distance(b) of each part (``PARTS``) on each resample of the rows, the same rows for both."""
    n = len(PARTS)
    return resampled_parts(person, a, rows)[:, :n] - resampled_parts(person, b, rows)[:, :n]


def pairs_table(person: pd.DataFrame, simulators: dict[str, pd.DataFrame], *, seed: int, n_boot: int) -> pd.DataFrame:
    """``reference_pairs.csv``: for each pair of simulators and each part, both distances, their difference with
    its interval and which is closer to the people (module docstring)."""
    person = person.reset_index(drop=True)
    out = []
    for (a, ma), (b, mb) in itertools.combinations(simulators.items(), 2):
        ma, mb = ma.reset_index(drop=True), mb.reset_index(drop=True)
        da, db = _point(person, ma), _point(person, mb)
        statistic = functools.partial(_pair_parts, person, ma, mb)
        draws = _draws(statistic, len(person), seed, f"{a}\x1f{b}", n_boot)
        for k, part in enumerate(PARTS):
            lo, hi = _interval(draws, k)
            out.append(
                {
                    "simulator": a,
                    "other": b,
                    "statistic": part,
                    "distance": _value(da[k]),
                    "other_distance": _value(db[k]),
                    "difference": _value(da[k] - db[k]),
                    "difference_low": lo,
                    "difference_high": hi,
                    "closer": closer(a, b, lo, hi),
                }
            )
    columns = ["simulator", "other", "statistic", "distance", "other_distance", "difference"]
    return pd.DataFrame(out, columns=[*columns, "difference_low", "difference_high", "closer"])
