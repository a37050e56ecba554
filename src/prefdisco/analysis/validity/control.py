"""The control gap: does the judge reward *this person's* profile, or any tailored-looking answer?

The negative control ``wrong_persona`` (``dialogue/decoys.py``) gives the assistant the oracle prompt filled
with another scenario's profile and persona and scores the response against the scenario's own rubric. Per
(model, task) the control gap is the paired per-scenario difference

    gap(s) = oracle PrefAlign(s) − wrong_persona PrefAlign(s)

over the scenarios scored in both (PrefAlign present, not failed; trials already averaged by ``trials.py``), its
mean, and a seeded percentile bootstrap 95 % interval of that mean: the scenarios (in scenario-id order) are
resampled with replacement ``n_boot`` times by ``numpy.random.default_rng([seed, crc32(model), crc32(task),
crc32("control_gap")])`` drawing ``integers(0, n, size=(n_boot, n))`` (in row blocks of that one stream), and the
2.5th and 97.5th percentiles of the resampled means are taken. A cell of fewer than
``normalign.MIN_INTERVAL_SCENARIOS`` scenarios gets no interval: its reading says "too few scenarios (n = 2)".

A cell is ``flagged`` when the interval's lower bound is not above 0 (or there is no interval): there the judge
cannot tell personalization to the true profile from generic quality, and NormAlign's oracle ceiling is not
evidence of preference alignment. Only the cells that hold wrong_persona rows are reported; a run without any
gives no table (``None``).
"""

from __future__ import annotations

import zlib

import numpy as np
import pandas as pd

from prefdisco.analysis.stats.bootstrap import percentile_interval, resampled
from prefdisco.analysis.stats.normalign import MIN_INTERVAL_SCENARIOS, too_few
from prefdisco.schema import Mode

ORACLE = Mode.ORACLE.value
CONTROL = Mode.WRONG_PERSONA.value
COLUMNS = [
    "model",
    "task",
    "n",
    "mean_oracle",
    "mean_wrong_persona",
    "gap",
    "ci_low",
    "ci_high",
    "flagged",
    "reading",
]


def control_rng(seed: int, model: str, task: str) -> np.random.Generator:
    """The bootstrap stream of one (model, task) cell, its own (not NormAlign's)."""
    return np.random.default_rng(
        [seed, zlib.crc32(model.encode()), zlib.crc32(task.encode()), zlib.crc32(b"control_gap")]
    )


def mean_interval(values: np.ndarray, rng: np.random.Generator, n_boot: int) -> tuple[float | None, float | None]:
    """Percentile 95 % interval of the mean of ``values`` over ``n_boot`` resamples with replacement."""
    lo, hi, _ = percentile_interval(resampled([values], rng, n_boot, lambda v: v.mean(axis=1)))
    return lo, hi


def paired_gaps(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, task, scenario_id) scored in both oracle and wrong_persona: the two PrefAligns and
    ``gap`` = oracle − wrong_persona, in (model, task, scenario_id) order."""
    keep = results["scored"].to_numpy() & results["mode"].isin([ORACLE, CONTROL]).to_numpy()
    rows = results.loc[keep, ["model", "task", "scenario_id", "mode", "pref_align"]].astype(
        {"model": str, "task": str, "scenario_id": str, "mode": str}
    )
    wide = rows.pivot(index=["model", "task", "scenario_id"], columns="mode", values="pref_align")
    for m in (ORACLE, CONTROL):
        if m not in wide.columns:
            wide[m] = np.nan
    wide = wide[[ORACLE, CONTROL]].dropna().reset_index().sort_values(["model", "task", "scenario_id"])
    wide.columns.name = None
    wide["gap"] = wide[ORACLE] - wide[CONTROL]
    return wide.reset_index(drop=True)


def reading(gap: float | None, low: float | None, high: float | None, n: int) -> str:
    """One line saying what a cell's gap means."""
    if n == 0 or gap is None:
        return "no scenario is scored in both oracle and wrong_persona: the judge is not checked here"
    if low is None or high is None:
        why = too_few(n) if n < MIN_INTERVAL_SCENARIOS else f"n={n}, no interval"
        return f"oracle − wrong_persona = {gap:+.2f} ({why}): the judge is not checked here"
    span = f"{gap:+.2f} (95% CI {low:+.2f} to {high:+.2f}, n={n})"
    if low > 0:
        return f"oracle − wrong_persona = {span}: the judge rewards the true profile over another one"
    return f"oracle − wrong_persona = {span}: the judge cannot tell personalization from generic quality here"


def control_table(results: pd.DataFrame, *, seed: int, n_boot: int) -> pd.DataFrame | None:
    """The control gap per (model, task) holding wrong_persona rows (see the module docstring); None when the
    results (trials averaged) hold no wrong_persona row."""
    has_control = results["mode"].astype(str) == CONTROL
    if not has_control.any():
        return None
    cells = results.loc[has_control.to_numpy(), ["model", "task"]].astype(str).drop_duplicates()
    gaps = paired_gaps(results)
    groups = dict(iter(gaps.groupby(["model", "task"], sort=False)))
    out = []
    for model, task in cells.sort_values(["model", "task"]).itertuples(index=False):
        sub = groups.get((model, task), gaps.iloc[:0])
        n = len(sub)
        gap = float(sub["gap"].mean()) if n else None
        low = high = None
        if n >= MIN_INTERVAL_SCENARIOS:
            low, high = mean_interval(sub["gap"].to_numpy(dtype=float), control_rng(seed, model, task), n_boot)
        out.append(
            {
                "model": model,
                "task": task,
                "n": n,
                "mean_oracle": float(sub[ORACLE].mean()) if n else None,
                "mean_wrong_persona": float(sub[CONTROL].mean()) if n else None,
                "gap": gap,
                "ci_low": low,
                "ci_high": high,
                "flagged": not (low is not None and low > 0),
                "reading": reading(gap, low, high, n),
            }
        )
    return pd.DataFrame(out, columns=COLUMNS)
