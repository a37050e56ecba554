"""Harms of personalization, from the conditions a run already has and its harm probes (issue 23): per model × task,
what personalization cost. No call is made; every number is read from the results.

The rows are the results with their trials averaged (``trials.py``), one per scenario and condition (a condition
is ``results.contract.condition_label``: the mode, or ``fixed_k=K``). The **personalized conditions** are every
condition of the run except baseline and the validity control wrong_persona: discovery, oracle, each fixed-K, the
probes oracle_distractor and stated_belief, and a sessions run's carry arms. ``c(s)`` is a scenario's correctness:
with one trial 1 or 0, with several the share of its judged trials that were correct.

* **breakage** of a condition = the mean over the scenarios judged in both baseline and it (correctness present,
  not failed) of ``c_baseline(s) · (1 − c_condition(s))``: with one trial, the share of those scenarios correct in
  baseline and wrong in the condition. A partly-correct trial average counts as its share: the chance that a trial
  drawn from each condition is right in baseline and wrong in the condition (so N identical trials give the numbers
  of one). **repair** = the mean of ``(1 − c_baseline(s)) · c_condition(s)``, the reverse. Over the same scenarios,
  repair − breakage is exactly the condition's accuracy minus baseline's.
* **distractor drop** (oracle_distractor): ``pref_align`` = mean of oracle − oracle_distractor PrefAlign over the
  scenarios scored in both; ``accuracy`` = mean of c_oracle − c_oracle_distractor over those judged in both.
  Positive: the irrelevant preferences made the response worse.
* **stated belief** (stated_belief against discovery): ``agreement`` = the mean ``belief_agreement`` (1 when the
  final answer is the wrong answer the person stated) over the stated_belief rows that measured it; discovery's
  agreement with the same seeded wrong answer (never stated there: the rate of that mistake anyway) and the paired
  ``agreement_gain`` = stated_belief − discovery over the scenarios checked in both; ``accuracy``
  of stated_belief and of discovery over the scenarios judged in both, and ``accuracy_drop`` = discovery −
  stated_belief over them.
* **quality drop** of a condition (when the results carry ``quality``, the 1-5 general quality of a response) =
  the mean of baseline − condition quality over the scenarios with a quality in both. Positive: the condition's
  responses are worse in general quality than baseline's.
* **flip rate** (``--pushback N``; ``harms/flip.py``): per condition, baseline included.

Every interval is a seeded percentile bootstrap 95 % interval of the mean: the scenarios (in scenario-id order)
resampled with replacement ``n_boot`` times by ``numpy.random.default_rng([seed, crc32(model), crc32(task),
crc32(measure), crc32(condition)])``, the 2.5th and 97.5th percentiles; none for fewer than
``normalign.MIN_INTERVAL_SCENARIOS`` scenarios or ``--bootstrap 0``, and the row's reason then says why.

The result is one long table (``COLUMNS``): a row per (model, task, measure, condition) that the run could
measure — a measure whose condition was not run has no row, one that was run but had no scenario to compare has
its row with ``value`` empty and the reason.
"""

from __future__ import annotations

import zlib

import numpy as np
import pandas as pd

from prefdisco.analysis.stats.normalign import interval_reason
from prefdisco.analysis.validity.control import mean_interval
from prefdisco.results.contract import condition_label
from prefdisco.schema import MODES, Mode

BASELINE, DISCOVERY, ORACLE = Mode.BASELINE.value, Mode.DISCOVERY.value, Mode.ORACLE.value
DISTRACTOR, BELIEF = Mode.ORACLE_DISTRACTOR.value, Mode.STATED_BELIEF.value
NOT_PERSONALIZED: tuple[str, ...] = (BASELINE, Mode.WRONG_PERSONA.value)
"""The conditions no harm is measured of: the reference, and the validity control (its own section)."""
QUALITY = "quality"
"""The results column of a response's general quality (1-5; empty when not measured)."""
COLUMNS: tuple[str, ...] = (
    "model",
    "task",
    "measure",
    "condition",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "n_scenarios",
    "reason",
)
MEASURES: dict[str, str] = {
    "breakage": "breakage (correct in baseline, wrong here)",
    "repair": "repair (wrong in baseline, correct here)",
    "distractor_pref_align_drop": "PrefAlign drop, oracle − oracle_distractor",
    "distractor_accuracy_drop": "accuracy drop, oracle − oracle_distractor",
    "flip_rate": "flip rate under pushback",
    "flip_rate_vs_baseline": "flip rate − baseline flip rate",
    "flip_held": "held under pushback without restating the answer",
    "belief_agreement": "agreement with the stated wrong belief",
    "belief_agreement_gain": "agreement gain, stated_belief − discovery",
    "belief_accuracy": "accuracy (scenarios judged in both)",
    "belief_accuracy_drop": "accuracy drop, discovery − stated_belief",
    "quality_drop": "quality drop, baseline − condition",
}
"""Every measure of the table, in the order the report shows them, with the words the report shows."""


def harms_rng(seed: int, model: str, task: str, measure: str, condition: str) -> np.random.Generator:
    """The bootstrap stream of one measure of one condition of one (model, task) cell (module docstring)."""
    parts = (model, task, measure, condition)
    return np.random.default_rng([seed, *(zlib.crc32(p.encode()) for p in parts)])


def condition_key(condition: str) -> tuple[int, int]:
    """Sort key of a condition label: the modes' order (``schema.Mode``), fixed-K by K."""
    mode, _, k = condition.partition("=")
    return (MODES.index(mode) if mode in MODES else len(MODES), int(k) if k else 0)


def labelled(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (results rows) with text keys as str and its ``condition`` label."""
    fixed_k = frame["fixed_k"] if "fixed_k" in frame.columns else pd.Series(np.nan, frame.index)
    conditions = [condition_label(m, k) for m, k in zip(frame["mode"].astype(str), fixed_k, strict=True)]
    return frame.assign(
        model=frame["model"].astype(str).to_numpy(),
        task=frame["task"].astype(str).to_numpy(),
        scenario_id=frame["scenario_id"].astype(str).to_numpy(),
        condition=conditions,
    )


def personalized(conditions: object) -> list[str]:
    """The personalized conditions among ``conditions`` (module docstring), in the report's order."""
    names = {str(c) for c in conditions}  # type: ignore[attr-defined]
    kept = [c for c in names if c.partition("=")[0] not in NOT_PERSONALIZED]
    return sorted(kept, key=condition_key)


def wide(cell: pd.DataFrame, value: str, keep: np.ndarray) -> pd.DataFrame:
    """Per scenario (rows, in scenario-id order) ``value`` per condition (columns), NaN where the row is missing or
    not kept."""
    rows = cell.loc[keep & cell[value].notna().to_numpy()]
    table = rows.pivot_table(index="scenario_id", columns="condition", values=value, aggfunc="first")
    return table.sort_index()


def row(
    model: str, task: str, measure: str, condition: str, values: np.ndarray, seed: int, n_boot: int, empty: str
) -> dict[str, object]:
    """The table row of the mean of ``values`` (one per scenario) and its interval; ``empty``: the reason when
    there is no value."""
    n = len(values)
    out: dict[str, object] = {"model": model, "task": task, "measure": measure, "condition": condition}
    out |= {"n": n, "n_scenarios": n, "value": None, "ci_low": None, "ci_high": None}
    if not n:
        return out | {"reason": empty}
    out["value"] = float(values.mean())
    why = interval_reason(n, n_boot)
    if not why:
        out["ci_low"], out["ci_high"] = mean_interval(values, harms_rng(seed, model, task, measure, condition), n_boot)
    return out | {"reason": why}


def _paired(table: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """The scenarios of ``table`` (a ``wide`` frame) with a value in both ``a`` and ``b``."""
    if a not in table.columns or b not in table.columns:
        return pd.DataFrame({a: [], b: []}, dtype=float)
    return table[[a, b]].dropna()


def _breakage(cell: pd.DataFrame, keys: tuple[str, str], conditions: list[str], seed: int, n_boot: int) -> list[dict]:
    judged = ~cell["failed"].to_numpy(dtype=bool)
    correct = wide(cell, "correct", judged)
    out = []
    for condition in conditions:
        both = _paired(correct, BASELINE, condition)
        base, here = both[BASELINE].to_numpy(dtype=float), both[condition].to_numpy(dtype=float)
        empty = f"no scenario judged in both baseline and {condition}"
        out.append(row(*keys, "breakage", condition, base * (1.0 - here), seed, n_boot, empty))
        out.append(row(*keys, "repair", condition, (1.0 - base) * here, seed, n_boot, empty))
    return out


def _distractor(cell: pd.DataFrame, keys: tuple[str, str], seed: int, n_boot: int) -> list[dict]:
    ok = ~cell["failed"].to_numpy(dtype=bool)
    prefs = _paired(wide(cell, "pref_align", cell["scored"].to_numpy(dtype=bool)), ORACLE, DISTRACTOR)
    correct = _paired(wide(cell, "correct", ok), ORACLE, DISTRACTOR)
    return [
        row(
            *keys,
            "distractor_pref_align_drop",
            DISTRACTOR,
            (prefs[ORACLE] - prefs[DISTRACTOR]).to_numpy(dtype=float),
            seed,
            n_boot,
            f"no scenario scored in both {ORACLE} and {DISTRACTOR}",
        ),
        row(
            *keys,
            "distractor_accuracy_drop",
            DISTRACTOR,
            (correct[ORACLE] - correct[DISTRACTOR]).to_numpy(dtype=float),
            seed,
            n_boot,
            f"no scenario judged in both {ORACLE} and {DISTRACTOR}",
        ),
    ]


def _belief(cell: pd.DataFrame, keys: tuple[str, str], seed: int, n_boot: int) -> list[dict]:
    ok = ~cell["failed"].to_numpy(dtype=bool)
    out = []
    if "belief_agreement" in cell.columns:
        agreement = wide(cell, "belief_agreement", ok)
        values = agreement[BELIEF].dropna() if BELIEF in agreement.columns else pd.Series(dtype=float)
        empty = "no stated_belief row checked its answer against the stated belief"
        out.append(row(*keys, "belief_agreement", BELIEF, values.to_numpy(dtype=float), seed, n_boot, empty))
        # discovery checked against the same wrong answer: that mistake's rate without the belief stated, and the
        # gain of agreement the stated belief brought, paired by scenario
        paired = _paired(agreement, DISCOVERY, BELIEF)
        empty = f"no scenario checked against the wrong answer in both {DISCOVERY} and {BELIEF}"
        base = paired[DISCOVERY].to_numpy(dtype=float)
        out.append(row(*keys, "belief_agreement", DISCOVERY, base, seed, n_boot, empty))
        gain = (paired[BELIEF] - paired[DISCOVERY]).to_numpy(dtype=float)
        out.append(row(*keys, "belief_agreement_gain", BELIEF, gain, seed, n_boot, empty))
    both = _paired(wide(cell, "correct", ok), DISCOVERY, BELIEF)
    empty = f"no scenario judged in both {DISCOVERY} and {BELIEF}"
    for condition in (BELIEF, DISCOVERY):
        out.append(row(*keys, "belief_accuracy", condition, both[condition].to_numpy(dtype=float), seed, n_boot, empty))
    drop = (both[DISCOVERY] - both[BELIEF]).to_numpy(dtype=float)
    out.append(row(*keys, "belief_accuracy_drop", BELIEF, drop, seed, n_boot, empty))
    return out


def _quality(cell: pd.DataFrame, keys: tuple[str, str], conditions: list[str], seed: int, n_boot: int) -> list[dict]:
    quality = wide(cell, QUALITY, ~cell["failed"].to_numpy(dtype=bool))
    out = []
    for condition in conditions:
        both = _paired(quality, BASELINE, condition)
        drop = (both[BASELINE] - both[condition]).to_numpy(dtype=float)
        empty = f"no scenario with a quality in both baseline and {condition}"
        out.append(row(*keys, "quality_drop", condition, drop, seed, n_boot, empty))
    return out


def paired_table(results: pd.DataFrame, *, seed: int, n_boot: int) -> pd.DataFrame:
    """Every measure of the module docstring but the flip rate, one row per (model, task, measure, condition)."""
    frame = labelled(results)
    quality = QUALITY in frame.columns and bool(frame[QUALITY].notna().any())  # any response's quality judged
    out: list[dict] = []
    for (model, task), cell in frame.groupby(["model", "task"], sort=True):
        keys = (str(model), str(task))
        conditions = personalized(cell["condition"].unique())
        out += _breakage(cell, keys, conditions, seed, n_boot)
        if DISTRACTOR in conditions:
            out += _distractor(cell, keys, seed, n_boot)
        if BELIEF in conditions:
            out += _belief(cell, keys, seed, n_boot)
        if quality and cell[QUALITY].notna().any():
            out += _quality(cell, keys, conditions, seed, n_boot)
    return pd.DataFrame(out, columns=list(COLUMNS))


def ordered(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` in the report's order: model, task, measure (``MEASURES``), condition (``condition_key``)."""
    measure = {m: i for i, m in enumerate(MEASURES)}
    key = table.assign(
        _m=table["measure"].map(measure),
        _c=[condition_key(c) for c in table["condition"]],
    )
    out = key.sort_values(["model", "task", "_m", "_c"], kind="stable", ignore_index=True)[list(COLUMNS)]
    return out.astype({"value": float, "ci_low": float, "ci_high": float, "n": int, "n_scenarios": int})
