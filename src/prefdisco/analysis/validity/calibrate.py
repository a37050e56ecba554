"""``prefdisco calibrate``: the judge against human 1–5 ratings, and PrefAlign / NormAlign on the human scale.

Inputs: a ratings CSV (``analysis/validity/human_ratings.py``; written by ``prefdisco annotate export-ratings``) and the
run folder it rates. An *item* is one judged criterion of one response; its judge score is the mean valid score
of its attribute rows (over judges × repeats when the table has them), its *human mean* the mean of its ratings.
Ratings are joined to items on (scenario_id, mode, attribute, and model / task / fixed_k / epoch where the ratings
have them); ratings of items the run lacks, or judged invalid, or scored by rule (a refused or empty response's
criteria, ``human_ratings.criterion_scores``' ``by_rule``: no judge scored them), are left out (``notes`` counts
them).

Definitions:

* ``n_pairs`` — rated items (distinct item keys with at least one rating); ``n_ratings`` — (item, annotator)
  ratings; ``n_annotators``;
* ``spearman`` — Spearman ρ (``scipy.stats.spearmanr``) between the judge score and the human mean per item;
* ``weighted_kappa`` — quadratic-weighted Cohen κ (``sklearn.metrics.cohen_kappa_score``, ``weights="quadratic"``,
  ``labels=[1, 2, 3, 4, 5]``) between the judge score rounded half up (⌊x + 0.5⌋) and each annotator's score,
  pooled over all (item, annotator) ratings;
* ``mae`` = mean over items of |judge − human mean|; ``judge_bias`` = mean over items of (judge − human mean);
* ``human_alpha`` — Krippendorff's α, ordinal, value domain 1–5 (``krippendorff.alpha``), annotators × items with
  missing ratings empty; None with fewer than 2 annotators or no item rated twice.

A statistic that is undefined (a constant series, 0/0) is None with the reason in ``notes``.

Calibration (``method = "isotonic"``): an increasing isotonic regression (``sklearn.isotonic.IsotonicRegression``,
``y_min=1, y_max=5, out_of_bounds="clip"``) fitted on (judge score → human mean) over the rated items, one point
per item, is applied to every judge's criterion score of the run (a criterion scored by rule keeps the rule's 1).
Each scored response's PrefAlign is recomputed from the calibrated scores: Σ w·f(g) / Σ w over its validly judged
criteria (``scoring/alignment.py``'s rule, weights from the attributes table); a response's trials are averaged
(mean over its scored trials), then

* ``calibrated[model][task][mode]`` = {``mean``: the mean over scenarios of the calibrated PrefAlign, ``ci_low``,
  ``ci_high``, ``raw``: the same mean from the judge's own scores, ``n_scenarios``}, mode ``fixed_k=K`` for
  fixed-K conditions;
* ``calibrated_normalign[model][task]`` = {``mean``, ``ci_low``, ``ci_high``, ``raw``, ``reason``}: NormAlign
  (``analysis/stats/normalign.py``'s ``norm_align``) of the calibrated baseline, discovery and oracle means over the
  scenarios scored in all three.

The interval is a seeded bootstrap over the rated items: ``numpy.random.default_rng(seed)`` draws
``integers(0, n_pairs, size=n_pairs)`` once per resample (``n_boot`` resamples, in order; the indices count the
rated items in ``ITEM_KEY`` order: model, task, scenario_id, mode, fixed_k, epoch, attribute), the isotonic map is
refitted on the resampled items, every mean above is recomputed, and the 2.5th / 97.5th percentiles are taken
(NormAlign resamples with a zero denominator are dropped). It covers the calibration's uncertainty only: the
run's scenarios are held fixed.

Why isotonic and not the ``cje-eval`` package: ``cje-eval`` (0.9.3; numpy, scipy, scikit-learn, pydantic) is light,
but it estimates one mean per policy from one judge score per response, with labels drawn at random; here a
response has several weighted criterion scores, PrefAlign is their weighted mean and NormAlign a ratio of three
condition means, and the rated items are stratified by mode and judge score. Its estimates would not be PrefAlign
or NormAlign, so the calibration map is fitted here and the run's own formulas are applied to it.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from prefdisco.analysis.stats.bootstrap import check_resamples, per_resample, percentile_interval, resampled
from prefdisco.analysis.stats.normalign import norm_align, norm_align_of
from prefdisco.analysis.validity.human_ratings import ITEM_KEY, criterion_scores, join_ratings, mode_label, read_ratings
from prefdisco.results.contract import RESULT_KEY, TRIAL_GROUP
from prefdisco.results.table import load_results
from prefdisco.schema import CONDITIONS
from prefdisco.scoring.non_answer import RULE_SCORE

if TYPE_CHECKING:
    from sklearn.isotonic import IsotonicRegression

# scipy, scikit-learn and krippendorff (about 1.2 s of imports) are imported where a calibration is computed, so
# every command that imports the report (which calibrates only when given human ratings) does not pay for them.

LEVELS = [1, 2, 3, 4, 5]
DEFAULT_BOOTSTRAP = 1000


@dataclass
class Calibration:
    human: str
    run: str
    n_pairs: int
    n_ratings: int
    n_annotators: int
    spearman: float | None
    weighted_kappa: float | None
    mae: float
    judge_bias: float
    human_alpha: float | None
    calibrated: dict[str, dict[str, dict[str, dict[str, Any]]]]
    calibrated_normalign: dict[str, dict[str, dict[str, Any]]]
    method: str = "isotonic"
    seed: int = 0
    bootstrap: int = DEFAULT_BOOTSTRAP
    calibration_map: dict[str, float] = field(default_factory=dict)
    """The fitted map at every judge score the run holds (``"3"`` → 3.4)."""
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def round_half_up(x: np.ndarray) -> np.ndarray:
    return np.floor(np.asarray(x, dtype=float) + 0.5).astype(int)


def fit_map(judge: np.ndarray, human: np.ndarray) -> IsotonicRegression:
    """The calibration map: increasing isotonic regression of the human mean on the judge score, within 1–5."""
    from sklearn.isotonic import IsotonicRegression

    return IsotonicRegression(increasing=True, y_min=1.0, y_max=5.0, out_of_bounds="clip").fit(judge, human)


def _defined(value: float, name: str, reason: str, notes: list[str]) -> float | None:
    if value is None or not math.isfinite(value):
        notes.append(f"{name} is undefined: {reason}")
        return None
    return float(value)


def agreement(pairs: pd.DataFrame, notes: list[str]) -> dict[str, Any]:
    """The agreement statistics of the module docstring from joined ratings (one row per rating)."""
    from scipy.stats import spearmanr
    from sklearn.metrics import cohen_kappa_score

    items = pairs.groupby(list(ITEM_KEY), sort=True).agg(judge=("judge", "first"), human=("human", "mean"))
    judge, human = items["judge"].to_numpy(), items["human"].to_numpy()
    out: dict[str, Any] = {"n_pairs": len(items), "n_ratings": len(pairs)}
    out["n_annotators"] = int(pairs["annotator"].nunique())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rho = spearmanr(judge, human).statistic if len(items) >= 2 else float("nan")
        kappa = cohen_kappa_score(
            round_half_up(pairs["judge"].to_numpy()), pairs["human"].to_numpy(), labels=LEVELS, weights="quadratic"
        )
    out["spearman"] = _defined(rho, "spearman", "fewer than 2 items, or a constant judge or human score", notes)
    out["weighted_kappa"] = _defined(kappa, "weighted_kappa", "every rating and judge score is one level", notes)
    out["mae"] = float(np.mean(np.abs(judge - human)))
    out["judge_bias"] = float(np.mean(judge - human))
    out["human_alpha"] = _alpha(pairs, notes)
    return out


def _alpha(pairs: pd.DataFrame, notes: list[str]) -> float | None:
    import krippendorff

    keyed = pairs.assign(_item=pd.factorize(pd.MultiIndex.from_frame(pairs[list(ITEM_KEY)]))[0])
    matrix = keyed.pivot(index="annotator", columns="_item", values="human").to_numpy(dtype=float)
    if matrix.shape[0] < 2 or not ((~np.isnan(matrix)).sum(axis=0) >= 2).any():
        notes.append("human_alpha is undefined: it needs 2 annotators and an item rated by both")
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alpha = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal", value_domain=LEVELS)
    return _defined(float(alpha), "human_alpha", "every rating has the same value", notes)


@dataclass
class Aggregation:
    """Every reported mean as a linear function of the calibrated value at each distinct judge score ``u``:
    cell means are ``cells @ f(u)``, the three condition means of a NormAlign cell ``normalign[i] @ f(u)``."""

    u: np.ndarray
    """The judge scores of the run; a last column beyond them holds the criteria scored by rule (``by_rule``)."""
    cell_keys: list[tuple[str, str, str]]
    cells: np.ndarray  # (cells, len(u) + 1)
    cell_sizes: list[int]
    normalign_keys: list[tuple[str, str]]
    normalign: np.ndarray  # (cells, 3 conditions, len(u) + 1); empty rows where no scenario has all three


def with_rule(values: np.ndarray) -> np.ndarray:
    """Values at each judge score of ``Aggregation.u`` (a vector, or one row per resample) followed by the rule's
    score, ``RULE_SCORE``: a refused or empty response's criteria keep it, calibrated or not (no judge scored them,
    so the judge-to-human map does not apply)."""
    values = np.asarray(values, dtype=float)
    rule = np.full((*values.shape[:-1], 1), RULE_SCORE)
    return np.concatenate([values, rule], axis=-1)


def aggregation(items: pd.DataFrame) -> Aggregation:
    valid = items.loc[items["score"].notna().to_numpy() & (items["weight"].to_numpy() > 0)]
    by_rule = valid["by_rule"].to_numpy(dtype=bool) if "by_rule" in valid.columns else np.zeros(len(valid), bool)
    u, inverse = np.unique(valid.loc[~by_rule, "score"].to_numpy(dtype=float), return_inverse=True)
    column = np.full(len(valid), len(u))  # the rule's column for the criteria scored by rule
    column[~by_rule] = inverse
    sample, samples = _codes(valid, list(RESULT_KEY))
    weights = np.zeros((len(samples), len(u) + 1))
    np.add.at(weights, (sample, column), valid["weight"].to_numpy(dtype=float))
    weights /= weights.sum(axis=1, keepdims=True)
    trial, scenarios = _codes(samples, list(TRIAL_GROUP))
    per = np.zeros((len(scenarios), len(u) + 1))
    np.add.at(per, trial, weights)
    per /= np.bincount(trial)[:, None]  # the mean over a response's scored trials
    scenarios["mode"] = [mode_label(m, int(k)) for m, k in zip(scenarios["mode"], scenarios["fixed_k"], strict=True)]
    cell, cell_index = _codes(scenarios, ["model", "task", "mode"])
    sizes = np.bincount(cell, minlength=len(cell_index))
    cells = np.zeros((len(cell_index), len(u) + 1))
    np.add.at(cells, cell, per)
    cells /= sizes[:, None]
    keys, blocks = [], []
    for (model, task), group in scenarios.groupby(["model", "task"], sort=True):
        by_mode = [group.loc[group["mode"] == m, "scenario_id"] for m in CONDITIONS]
        common = set.intersection(*(set(ids) for ids in by_mode))
        block = np.full((len(CONDITIONS), len(u) + 1), np.nan)
        if common:  # the scenarios scored in all three conditions, as analysis/stats/normalign.py takes them
            for i, ids in enumerate(by_mode):
                block[i] = per[ids.index[ids.isin(common)]].mean(axis=0)
        keys.append((str(model), str(task)))
        blocks.append(block)
    return Aggregation(
        u=u,
        cell_keys=list(cell_index.itertuples(index=False, name=None)),
        cells=cells,
        cell_sizes=[int(s) for s in sizes],
        normalign_keys=keys,
        normalign=np.array(blocks).reshape(len(keys), len(CONDITIONS), len(u) + 1),
    )


def _codes(frame: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Group codes of ``frame`` by ``columns`` (groups in sorted order) and the groups' keys as a frame."""
    codes, uniques = pd.factorize(pd.MultiIndex.from_frame(frame[columns]), sort=True)
    return codes, pd.DataFrame(list(uniques), columns=columns)


def _interval(values: np.ndarray) -> tuple[float | None, float | None]:
    lo, hi, _ = percentile_interval(values)
    return lo, hi


def calibrate(human: Path, run: Path, *, seed: int = 0, n_boot: int = DEFAULT_BOOTSTRAP) -> Calibration:
    """The ``prefdisco calibrate`` result (see the module docstring)."""
    check_resamples(n_boot)
    items = criterion_scores(load_results(run), str(run))
    ratings = read_ratings(human)
    judged = items.loc[~items["by_rule"].to_numpy(dtype=bool)]  # a rule's score is no judge's: not compared
    pairs = join_ratings(ratings, judged, str(human), str(run))
    notes: list[str] = []
    if len(pairs) < len(ratings):
        left = len(ratings) - len(pairs)
        notes.append(f"{left} of {len(ratings)} ratings match no validly judged criterion of the run: left out")
    stats = agreement(pairs, notes)
    rated = pairs.groupby(list(ITEM_KEY), sort=True).agg(judge=("judge", "first"), human=("human", "mean"))
    judge, human_mean = rated["judge"].to_numpy(), rated["human"].to_numpy()
    agg = aggregation(items)
    f = with_rule(fit_map(judge, human_mean).predict(agg.u))
    raw = with_rule(agg.u)
    rng = np.random.default_rng(seed)
    boot = with_rule(
        resampled([judge, human_mean], rng, n_boot, per_resample(lambda j, h: fit_map(j, h).predict(agg.u)))
    )
    calibrated: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    for i, (model, task, mode) in enumerate(agg.cell_keys):
        lo, hi = _interval(boot @ agg.cells[i]) if n_boot else (None, None)
        calibrated.setdefault(model, {}).setdefault(task, {})[mode] = {
            "mean": float(agg.cells[i] @ f),
            "ci_low": lo,
            "ci_high": hi,
            "raw": float(agg.cells[i] @ raw),
            "n_scenarios": agg.cell_sizes[i],
        }
    normalign: dict[str, dict[str, dict[str, Any]]] = {}
    for i, (model, task) in enumerate(agg.normalign_keys):
        block = agg.normalign[i]
        cell: dict[str, Any] = {"mean": None, "ci_low": None, "ci_high": None, "raw": None}
        if not np.isfinite(block).all():
            cell["reason"] = "no scenario is scored in all three modes (baseline, discovery, oracle)"
        else:
            cell["mean"], cell["reason"] = norm_align(*(float(v) for v in block @ f))
            cell["raw"] = norm_align(*(float(v) for v in block @ raw))[0]
            if n_boot and cell["mean"] is not None:
                cell["ci_low"], cell["ci_high"] = _interval(norm_align_of(*(boot @ block.T).transpose(1, 0)))
        normalign.setdefault(model, {})[task] = cell
    return Calibration(
        human=str(human),
        run=str(run),
        calibrated=calibrated,
        calibrated_normalign=normalign,
        seed=seed,
        bootstrap=n_boot,
        calibration_map={f"{x:g}": float(y) for x, y in zip(agg.u, f[: len(agg.u)], strict=True)},
        notes=notes,
        **stats,
    )
