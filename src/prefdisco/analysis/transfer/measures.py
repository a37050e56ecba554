"""Transfer across a session: per model × task × arm × position, does the assistant carry what it learned about a
person to the next problem? (issue 22; the session set and the arms: ``docs/sessions.md``).

The rows are those of a sessions run (``session_id`` and ``position`` set), trials averaged first
(``trials.py``). The arms are ``ARMS``: discovery — the **cold** arm, every problem a fresh dialogue — and the
carry arms carry_transcript and carry_notes. Baseline and oracle are per scenario. Per (model, task, arm,
position), over the scenarios at that position:

* ``pref_align`` — mean PrefAlign of the arm's scored rows (``n``), with a bootstrap interval of the mean;
* ``normalign`` — ``normalign.norm_align`` of the mean PrefAlign of baseline, the arm and oracle over the position's
  **compared scenarios** (``normalign_n``): those scored in baseline, oracle and every arm the run has (``compared``),
  each against its own baseline and oracle, the one NormAlign; its interval is ``normalign.bootstrap_interval``'s.
  Every arm's NormAlign at a position is over the same scenarios, so the gains below are their differences;
* ``n_questions`` — mean questions asked over the arm's rows that did not fail;
* ``questions_saved`` (carry arms) — mean over the scenarios where both did not fail of cold − carry questions,
  paired by scenario (``questions_saved_n``), with a bootstrap interval of the mean;
* ``elicited_weight`` — mean over the rows that measured it (the results' column);
* ``reask_rate`` — ``transfer/reask.py``: the share of the questions asked about attributes the person had
  revealed at an earlier position of the same session and arm; null when no row measured it.

**Transfer gain** of a carry arm at a position: carry NormAlign − cold NormAlign, the two ``normalign`` of the
positions table, over the same compared scenarios (``gain_n`` = ``normalign_n``), = 100 · (mean carry − mean cold) /
(mean oracle − mean baseline), paired by scenario (``docs/sessions.md``: a scenario missing in one arm is left out
of every arm's NormAlign at its position, not only out of the gain); its interval resamples those scenarios
(``bootstrap_interval`` of carry − cold over oracle − baseline). ``mean_gain`` is the mean of the gains after the
first position (at position 1 nothing is carried yet). Its **slope** is the least-squares slope of the gains over
the positions that have one (at least 2); its interval resamples whole sessions (a session's positions together),
recomputing every position's gain and the slope per resample, resamples with fewer than 2 positions of a gain
dropped.

Every interval is a seeded percentile bootstrap of ``n_boot`` resamples (2.5th and 97.5th percentiles), drawn from
``numpy.random.default_rng([seed, crc32(model), crc32(task), crc32(statistic), crc32(arm), position])`` (position 0
for the slope); none for fewer than ``normalign.MIN_INTERVAL_SCENARIOS`` scenarios (sessions, for the slope),
and its reason then says so.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

from prefdisco.analysis.stats.bootstrap import percentile_interval, ratio_of_means, resampled
from prefdisco.analysis.stats.normalign import ZERO, bootstrap_interval, interval_reason, norm_align, norm_align_of
from prefdisco.analysis.validity.control import mean_interval
from prefdisco.schema import Mode

COLD = Mode.DISCOVERY.value
CARRY_ARMS: tuple[str, ...] = (Mode.CARRY_TRANSCRIPT.value, Mode.CARRY_NOTES.value)
ARMS: tuple[str, ...] = (COLD, *CARRY_ARMS)
BASELINE, ORACLE = Mode.BASELINE.value, Mode.ORACLE.value
POSITION_COLUMNS: tuple[str, ...] = (
    "model",
    "task",
    "arm",
    "position",
    "n",
    "pref_align",
    "pref_align_ci_low",
    "pref_align_ci_high",
    "normalign_n",
    "normalign",
    "normalign_ci_low",
    "normalign_ci_high",
    "normalign_reason",
    "n_questions",
    "questions_saved_n",
    "questions_saved",
    "questions_saved_ci_low",
    "questions_saved_ci_high",
    "elicited_weight",
    "reask_n",
    "reask_rate",
)
GAIN_COLUMNS: tuple[str, ...] = ("model", "task", "arm", "position", "gain_n", "gain", "ci_low", "ci_high", "reason")
SLOPE_COLUMNS: tuple[str, ...] = (
    "model",
    "task",
    "arm",
    "n_positions",
    "n_sessions",
    "mean_gain",
    "slope",
    "ci_low",
    "ci_high",
    "reason",
)


def has_sessions(results: pd.DataFrame) -> bool:
    """Whether ``results`` are a sessions run's: a ``session_id`` column with a value."""
    return "session_id" in results.columns and bool(results["session_id"].notna().any())


def transfer_rng(seed: int, model: str, task: str, statistic: str, arm: str, position: int) -> np.random.Generator:
    """The bootstrap stream of one statistic of one (model, task, arm, position) (module docstring)."""
    parts = (model, task, statistic, arm)
    return np.random.default_rng([seed, *(zlib.crc32(p.encode()) for p in parts), position])


def session_rows(results: pd.DataFrame) -> pd.DataFrame:
    """The rows of a sessions run (trials averaged) in the arms, baseline and oracle: model, task, scenario_id,
    session_id, position, mode, scored, failed, pref_align, n_questions, elicited_weight (text keys as str)."""
    keep = results["session_id"].notna().to_numpy() & results["mode"].isin([*ARMS, BASELINE, ORACLE]).to_numpy()
    rows = results.loc[keep]
    out = pd.DataFrame(
        {
            "model": rows["model"].astype(str).to_numpy(),
            "task": rows["task"].astype(str).to_numpy(),
            "scenario_id": rows["scenario_id"].astype(str).to_numpy(),
            "session_id": rows["session_id"].astype(str).to_numpy(),
            "position": rows["position"].to_numpy(dtype=float).astype(int),
            "mode": rows["mode"].astype(str).to_numpy(),
            "scored": rows["scored"].to_numpy(dtype=bool),
            "failed": rows["failed"].to_numpy(dtype=bool),
            "pref_align": rows["pref_align"].to_numpy(dtype=float),
            "n_questions": rows["n_questions"].to_numpy(dtype=float),
        }
    )
    weight = rows["elicited_weight"] if "elicited_weight" in rows.columns else pd.Series(np.nan, rows.index)
    out["elicited_weight"] = weight.to_numpy(dtype=float)
    return out


def wide(rows: pd.DataFrame, value: str, *, scored: bool) -> pd.DataFrame:
    """One row per (model, task, scenario_id) with its session, position and ``value`` per mode (NaN where the mode's
    row is missing, failed, or — ``scored`` — not scored)."""
    ok = rows["scored"] if scored else ~rows["failed"]
    index = ["model", "task", "scenario_id", "session_id", "position"]
    kept = rows.loc[ok.to_numpy()]
    if kept.empty:
        return pd.DataFrame(columns=[*index, *ARMS, BASELINE, ORACLE]).astype({"position": int})
    table = kept.groupby([*index, "mode"], sort=False)[value].first().unstack("mode")
    for m in (*ARMS, BASELINE, ORACLE):
        if m not in table.columns:
            table[m] = np.nan
    table = table.reset_index().sort_values(["model", "task", "position", "scenario_id"], ignore_index=True)
    table.columns.name = None
    return table


def _mean(values: np.ndarray) -> float | None:
    values = values[~np.isnan(values)]
    return float(values.mean()) if len(values) else None


def mean_ci(values: np.ndarray, rng: np.random.Generator, n_boot: int) -> tuple[float | None, float | None]:
    if interval_reason(len(values), n_boot):
        return None, None
    return mean_interval(values, rng, n_boot)


def compared(sub: pd.DataFrame, arms: Sequence[str]) -> pd.DataFrame:
    """The scenarios of ``sub`` (a ``wide`` PrefAlign frame) scored in baseline, oracle and every one of ``arms`` (the
    arms the run has): the one set every arm's NormAlign and every transfer gain at a position is computed over."""
    return sub.dropna(subset=[BASELINE, ORACLE, *arms])


def _no_scenario(sub: pd.DataFrame, arms: Sequence[str]) -> str:
    missing = [m for m in (BASELINE, *arms, ORACLE) if not sub[m].notna().any()]
    if missing:
        return f"no scored {'/'.join(missing)} row"
    return f"no scenario scored in baseline, oracle and every arm ({', '.join(arms)})"


def _normalign(
    sub: pd.DataFrame, arm: str, arms: Sequence[str], rng: np.random.Generator, n_boot: int
) -> dict[str, object]:
    """NormAlign of ``arm`` over the compared scenarios of ``sub`` (a ``wide`` PrefAlign frame; ``compared``)."""
    both = compared(sub, arms)
    n = len(both)
    row: dict[str, object] = {"normalign_n": n, "normalign_ci_low": None, "normalign_ci_high": None}
    if not n:
        return row | {"normalign": None, "normalign_reason": _no_scenario(sub, arms)}
    value, reason = norm_align(*(float(both[m].mean()) for m in (BASELINE, arm, ORACLE)))
    why = reason or interval_reason(n, n_boot)
    if value is not None and not why:
        num = (both[arm] - both[BASELINE]).to_numpy(dtype=float)
        den = (both[ORACLE] - both[BASELINE]).to_numpy(dtype=float)
        lo, hi, kept = bootstrap_interval(num, den, rng, n_boot)
        row |= {"normalign_ci_low": lo, "normalign_ci_high": hi}
        why = "" if kept else "every resample has oracle = baseline (denominator 0)"
    return row | {"normalign": value, "normalign_reason": why}


def position_table(results: pd.DataFrame, reask: pd.DataFrame | None, *, seed: int, n_boot: int) -> pd.DataFrame:
    """One row per (model, task, arm, position) of a sessions run (module docstring); ``reask``: the per-row
    re-ask rates (``transfer_reask.reask_rates``), None when not measured."""
    rows = session_rows(results)
    prefs = wide(rows, "pref_align", scored=True)
    questions = wide(rows, "n_questions", scored=False)
    weights = wide(rows, "elicited_weight", scored=False)
    rates = None
    if reask is not None and len(reask):
        rates = reask.pivot_table(
            index=["model", "task", "scenario_id"], columns="mode", values="reask_rate", aggfunc="first"
        )
    out = []
    arms_run = [a for a in ARMS if (rows["mode"] == a).any()]
    cell = ["model", "task", "position"]
    pref_at, q_at, w_at = (dict(iter(f.groupby(cell, sort=False))) for f in (prefs, questions, weights))
    for model, task, position in rows[cell].drop_duplicates().sort_values(cell).itertuples(index=False):
        key = (model, task, position)
        sub = pref_at.get(key, prefs.iloc[:0])
        q, w = q_at.get(key, questions.iloc[:0]), w_at.get(key, weights.iloc[:0])
        for arm in arms_run:
            scored = sub[arm].dropna().to_numpy(dtype=float)
            rng = transfer_rng(seed, model, task, "pref_align", arm, int(position))
            lo, hi = mean_ci(scored, rng, n_boot)
            row: dict[str, object] = {"model": model, "task": task, "arm": arm, "position": int(position)}
            row |= {"n": len(scored), "pref_align": _mean(scored), "pref_align_ci_low": lo, "pref_align_ci_high": hi}
            rng = transfer_rng(seed, model, task, "normalign", arm, int(position))
            row |= _normalign(sub, arm, arms_run, rng, n_boot)
            row["n_questions"] = _mean(q[arm].to_numpy(dtype=float))
            saved = (q[COLD] - q[arm]).dropna().to_numpy(dtype=float) if arm != COLD else np.array([])
            rng = transfer_rng(seed, model, task, "questions_saved", arm, int(position))
            lo, hi = mean_ci(saved, rng, n_boot)
            row |= {"questions_saved_n": len(saved), "questions_saved": _mean(saved)}
            row |= {"questions_saved_ci_low": lo, "questions_saved_ci_high": hi}
            row["elicited_weight"] = _mean(w[arm].to_numpy(dtype=float))
            measured = np.array([])
            if rates is not None and arm in rates.columns:
                ids = [(model, task, s) for s in q["scenario_id"]]
                measured = rates[arm].reindex(ids).dropna().to_numpy(dtype=float)
            row |= {"reask_n": len(measured), "reask_rate": _mean(measured)}
            out.append(row)
    frame = pd.DataFrame(out, columns=list(POSITION_COLUMNS))
    return frame.sort_values(["model", "task", "arm", "position"], key=_arm_order, ignore_index=True)


def _arm_order(column: pd.Series) -> pd.Series:
    return column.map({a: i for i, a in enumerate(ARMS)}) if column.name == "arm" else column


def _gain_frame(prefs: pd.DataFrame, arm: str, arms: Sequence[str]) -> pd.DataFrame:
    """The compared scenarios (``compared``: scored in baseline, oracle and every arm of the run, cold included),
    with num = ``arm`` − cold and den = oracle − baseline."""
    both = compared(prefs, [COLD, *arms])
    return both.assign(gain_num=both[arm] - both[COLD], gain_den=both[ORACLE] - both[BASELINE])


def gain_tables(results: pd.DataFrame, *, seed: int, n_boot: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The transfer gain per (model, task, carry arm, position) and its slope per (model, task, carry arm) (module
    docstring); both empty when the run has no carry arm."""
    rows = session_rows(results)
    prefs = wide(rows, "pref_align", scored=True)
    gains, slopes = [], []
    arms = [a for a in CARRY_ARMS if (rows["mode"] == a).any()]
    for (model, task), cell in prefs.groupby(["model", "task"], sort=True):
        for arm in arms:
            frame = _gain_frame(cell, arm, arms)
            positions = sorted(cell["position"].unique())
            per = []
            for position in positions:
                sub = frame.loc[frame["position"] == position]
                per.append(_gain_row(model, task, arm, int(position), sub, seed, n_boot))
            gains += per
            slopes.append(_slope_row(model, task, arm, frame, per, seed, n_boot))
    return pd.DataFrame(gains, columns=list(GAIN_COLUMNS)), pd.DataFrame(slopes, columns=list(SLOPE_COLUMNS))


def _gain_row(
    model: str, task: str, arm: str, position: int, sub: pd.DataFrame, seed: int, n_boot: int
) -> dict[str, object]:
    n = len(sub)
    row: dict[str, object] = {"model": model, "task": task, "arm": arm, "position": position, "gain_n": n}
    row |= {"gain": None, "ci_low": None, "ci_high": None}
    if not n:
        return row | {"reason": "no scenario scored in baseline, oracle and every arm of the run"}
    den = float(sub["gain_den"].mean())
    if abs(den) <= ZERO:
        return row | {"reason": "oracle and baseline PrefAlign are equal (denominator 0)"}
    means = {c: float(sub[c].mean()) for c in (BASELINE, COLD, arm, ORACLE)}
    row["gain"] = float(
        norm_align_of(means[BASELINE], means[arm], means[ORACLE])
        - norm_align_of(means[BASELINE], means[COLD], means[ORACLE])
    )  # carry NormAlign − cold NormAlign on the one scenario set (= 100 · mean(num) / mean(den))
    why = interval_reason(n, n_boot)
    if not why:
        rng = transfer_rng(seed, model, task, "gain", arm, position)
        lo, hi, kept = bootstrap_interval(sub["gain_num"].to_numpy(float), sub["gain_den"].to_numpy(float), rng, n_boot)
        row |= {"ci_low": lo, "ci_high": hi}
        why = "" if kept else "every resample has oracle = baseline (denominator 0)"
    return row | {"reason": why}


def least_squares_slope(x: np.ndarray, y: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per row of ``y`` (and ``mask``: which of its points count), the least-squares slope of y on ``x`` over the
    counted points; NaN where fewer than 2 distinct x count."""
    w = mask.astype(float)
    n = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = (w * x).sum(axis=1) / n
        dx = (x[None, :] - mx[:, None]) * w
        my = (w * np.where(mask, y, 0.0)).sum(axis=1) / n
        sxy = (dx * (np.where(mask, y, 0.0) - my[:, None])).sum(axis=1)
        sxx = (dx * dx).sum(axis=1)
        return np.where((n >= 2) & (sxx > ZERO), sxy / sxx, np.nan)


def _slope_row(
    model: str, task: str, arm: str, frame: pd.DataFrame, per: list[dict[str, object]], seed: int, n_boot: int
) -> dict[str, object]:
    defined = [(int(str(r["position"])), float(str(r["gain"]))) for r in per if r["gain"] is not None]
    sessions = sorted(frame["session_id"].unique())
    row: dict[str, object] = {"model": model, "task": task, "arm": arm, "n_positions": len(defined)}
    row |= {"n_sessions": len(sessions), "mean_gain": None, "slope": None, "ci_low": None, "ci_high": None}
    later = [g for p, g in defined if p > 1]
    if later:
        row["mean_gain"] = float(np.mean(later))
    if len(defined) < 2:
        return row | {"reason": f"a slope needs a gain at 2 positions or more (it has {len(defined)})"}
    x = np.array([p for p, _ in defined], dtype=float)
    y = np.array([g for _, g in defined])
    row["slope"] = float(least_squares_slope(x, y[None, :], np.ones((1, len(x)), dtype=bool))[0])
    why = interval_reason(len(sessions), n_boot).replace("scenarios", "sessions")
    if not why:
        row["ci_low"], row["ci_high"], why = _slope_interval(frame, sessions, x, seed, model, task, arm, n_boot)
    return row | {"reason": why}


def _slope_interval(
    frame: pd.DataFrame, sessions: list[str], x: np.ndarray, seed: int, model: str, task: str, arm: str, n_boot: int
) -> tuple[float | None, float | None, str]:
    """Resample whole sessions (module docstring); (low, high, reason)."""
    index = {s: i for i, s in enumerate(sessions)}
    num = np.zeros((len(sessions), len(x)))
    den = np.zeros((len(sessions), len(x)))
    has = np.zeros((len(sessions), len(x)))
    column = {int(p): j for j, p in enumerate(x)}
    for r in frame.itertuples(index=False):
        j = column.get(int(r.position))
        if j is not None:
            i = index[r.session_id]
            num[i, j] += r.gain_num
            den[i, j] += r.gain_den
            has[i, j] += 1

    def slopes(num_b: np.ndarray, den_b: np.ndarray, has_b: np.ndarray) -> np.ndarray:
        # each position's gain of the resample: the kernel's ratio of means (a session without the position adds
        # 0 to both); NaN where no resampled session has it or its oracle − baseline is 0
        gains = np.stack([ratio_of_means(num_b[:, :, j], den_b[:, :, j], ZERO) for j in range(len(x))], axis=1)
        gains[has_b.sum(axis=1) == 0] = np.nan
        return least_squares_slope(x, gains, np.isfinite(gains))

    rng = transfer_rng(seed, model, task, "gain_slope", arm, 0)
    lo, hi, kept = percentile_interval(resampled([num, den, has], rng, n_boot, slopes))
    return lo, hi, "" if kept else "no resample has a gain at 2 positions"
