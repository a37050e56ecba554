"""How far the judges can be trusted: agreement between judges, noise across repeats, and a length-bias probe.

All three read the attribute table as run (one row per criterion, trial, judge and repeat; ``panel.py``), only the
rows a judge actually judged (``panel.judged_rows``): a failed results row's, and a refused or empty response's
(scored 1 by rule under every judge and repeat, shown to none), are left out. A *unit* is one criterion of one
response: (scenario_id, mode, fixed_k, epoch, attribute) within a model × task.

* **Inter-judge agreement** (``judge_agreement``), per model × task: Krippendorff's α, ordinal, computed by the
  ``krippendorff`` package with units as above, raters = the judges and a judge's value = its repeat-mean score
  (the mean of its valid repeats). A unit enters when at least two judges scored it. Null with the reason for a
  single judge, fewer than ``MIN_UNITS`` units, or no variation at all (α is 0/0).
* **Judge noise** (``judge_noise``), per judge over every model and task: α (ordinal) among its repeats (raters =
  repeat 1..R, units as above) and the mean within-unit standard deviation of its valid repeat scores (sample SD,
  ``ddof=1``, over the units with at least two valid repeats). Null with the reason when the judge has one repeat.
* **Length bias** (``length_bias``), per judge and condition (models and tasks pooled within the condition; the
  conditions are never pooled, since they differ in both length and score by design): Spearman's ρ over the
  responses, one point per response — the mean of the judge's criterion scores of that response (each its
  repeat-mean, invalid ones left out) against the length in characters of the response (``final_response`` of the
  transcript of that trial, joined on the results key) — with its two-sided p-value and n (responses with both).

Agreement, noise and length bias read every judge of the table, a further judge's (``in_pref_align`` 0) included.

Values for α are rounded to ``ROUND_DECIMALS`` (2) decimals, which only removes float noise from repeat-means of
1-5 integer scores. Ordinal α depends on the order of the values only, so when more than ``MAX_LEVELS`` distinct
values remain (probability-weighted scores), they are binned to the nearest ``BIN`` (0.25), which bounds the
coincidence matrix the package builds (units × levels²).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from prefdisco.analysis.section.shown import finite, nested
from prefdisco.analysis.stats.panel import judge_means, judged_rows, plain_keys, weighted_pref_align
from prefdisco.benchio import json_lines
from prefdisco.errors import UserError
from prefdisco.results.contract import JUDGE, NO_K, REPEAT, RESULT_KEY, condition_label
from prefdisco.results.table import ResultsData

MIN_UNITS = 5
"""Fewer units than this (judged by at least two raters) give no α."""
ROUND_DECIMALS = 2
MAX_LEVELS = 17
BIN = 0.25
UNIT: tuple[str, ...] = ("scenario_id", "mode", "fixed_k", "epoch", "attribute")
"""A unit within a model × task."""
AGREEMENT_COLUMNS = ["model", "task", "n_judges", "n_units", "alpha", "reason"]
NOISE_COLUMNS = ["judge", "n_repeats", "n_units", "alpha", "mean_sd", "reason"]
LENGTH_COLUMNS = ["judge", "mode", "fixed_k", "n", "spearman", "p", "reason"]
MIN_LENGTH_POINTS = 3
"""The fewest responses (scored, with a length) of a judge and condition that give a length-bias ρ."""
NO_LENGTHS = "no transcripts to measure response lengths"


@dataclass(frozen=True)
class Alpha:
    value: float | None
    n_units: int
    reason: str | None


def ordinal_alpha(ratings: np.ndarray) -> Alpha:
    """Krippendorff's ordinal α of a raters × units matrix (NaN = not rated), over the units at least two raters
    rated; null with the reason when it is not defined (see the module docstring)."""
    ratings = np.asarray(ratings, dtype=np.float64)
    if ratings.ndim != 2 or ratings.shape[0] < 2:
        return Alpha(None, 0, "a single rater: agreement needs at least two")
    pairable = (~np.isnan(ratings)).sum(axis=0) >= 2
    n_units = int(pairable.sum())
    if n_units < MIN_UNITS:
        return Alpha(None, n_units, f"{n_units} unit(s) rated by at least two raters; need at least {MIN_UNITS}")
    values = _levels(ratings[:, pairable])
    domain = np.unique(values[~np.isnan(values)])
    if len(domain) < 2:
        return Alpha(None, n_units, "no variation: every rating is the same score, so alpha is undefined")
    import krippendorff

    counts = np.stack([(values == v).sum(axis=0) for v in domain], axis=1)  # units × levels
    value = krippendorff.alpha(value_counts=counts, value_domain=domain, level_of_measurement="ordinal")
    return Alpha(float(value), n_units, None)


def _levels(values: np.ndarray) -> np.ndarray:
    """Ratings rounded to ``ROUND_DECIMALS``; binned to the nearest ``BIN`` when more than ``MAX_LEVELS`` remain."""
    rounded = np.round(values, ROUND_DECIMALS)
    if len(np.unique(rounded[~np.isnan(rounded)])) > MAX_LEVELS:
        rounded = np.round(values / BIN) * BIN
    return rounded


def judge_agreement(att: pd.DataFrame) -> pd.DataFrame:
    """Per model × task: ordinal α between judges over the units (``panel.judged_rows``; module docstring)."""
    rows: list[list[Any]] = []
    if att.empty:
        return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)
    for (model, task), cell in judge_means(att).groupby(["model", "task"], sort=True):
        judges = sorted(cell[JUDGE].unique())
        wide = cell.set_index([*UNIT, JUDGE])["score"].unstack(JUDGE).reindex(columns=judges)
        result = ordinal_alpha(wide.to_numpy().T) if len(judges) > 1 else Alpha(None, 0, _ONE_JUDGE)
        rows.append([model, task, len(judges), result.n_units, result.value, result.reason])
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)


_ONE_JUDGE = "a single judge: agreement needs --judge-model given at least twice"


def judge_noise(att: pd.DataFrame) -> pd.DataFrame:
    """Per judge: ordinal α among its repeats and the mean within-unit SD of its repeat scores."""
    rows: list[list[Any]] = []
    for judge, own in att.groupby(JUDGE, sort=True):
        repeats = sorted(int(r) for r in own[REPEAT].unique())
        if len(repeats) < 2:
            rows.append([judge, len(repeats), 0, None, None, "one repeat: noise needs --judge-repeats 2 or more"])
            continue
        wide = own.set_index(["model", "task", *UNIT, REPEAT])["score"].unstack(REPEAT).reindex(columns=repeats)
        result = ordinal_alpha(wide.to_numpy().T)
        sd = wide.std(axis=1, ddof=1, skipna=True)
        sd = sd[wide.notna().sum(axis=1) >= 2]
        mean_sd = float(sd.mean()) if len(sd) else None
        rows.append([judge, len(repeats), result.n_units, result.value, mean_sd, result.reason])
    return pd.DataFrame(rows, columns=NOISE_COLUMNS)


def response_lengths(transcripts: Path | None, rows: pd.DataFrame | None) -> pd.DataFrame:
    """The length in characters of every trial's final response: ``RESULT_KEY`` columns and ``length``, from
    transcript rows in memory or a transcripts.jsonl file (streamed; only the key fields and the length are kept).
    Empty when there are no transcripts."""
    records: list[dict[str, Any]] = []
    if rows is not None and not rows.empty and "final_response" in rows.columns:
        for obj in rows.to_dict("records"):
            records.append(_length_record(obj))
    elif transcripts is not None:
        for lineno, obj in json_lines(Path(transcripts)):
            if isinstance(obj, json.JSONDecodeError):
                raise UserError(f"{transcripts}: line {lineno}: not a JSON object ({obj.msg})")
            if isinstance(obj, dict):
                records.append(_length_record(obj))
    frame = pd.DataFrame(records, columns=[*RESULT_KEY, "length"])
    frame = frame.loc[frame["length"].notna()]
    if frame.empty:
        return frame
    frame = plain_keys(frame.assign(epoch=frame["epoch"].fillna(1)))
    return frame.drop_duplicates(list(RESULT_KEY), keep="first").reset_index(drop=True)


def _length_record(obj: dict[str, Any]) -> dict[str, Any]:
    response = obj.get("final_response")
    length = len(response) if isinstance(response, str) else None
    return {**{k: obj.get(k) for k in RESULT_KEY}, "length": length}


def response_scores(att: pd.DataFrame) -> pd.DataFrame:
    """One row per (response, judge): ``RESULT_KEY`` columns, ``judge`` and ``score``, the mean of the judge's
    criterion scores of that response (each its repeat-mean; invalid ones left out, NaN when none is valid)."""
    means = judge_means(att)
    return means.groupby([*RESULT_KEY, JUDGE], observed=True, dropna=False, sort=False)["score"].mean().reset_index()


def length_bias(att: pd.DataFrame, lengths: pd.DataFrame) -> pd.DataFrame:
    """Per judge and condition: Spearman's ρ between the judge's mean criterion score of each response and that
    response's length (see the module docstring); ``fixed_k`` empty for the conditions without K."""
    from scipy.stats import spearmanr

    rows: list[list[Any]] = []
    if att.empty:
        return pd.DataFrame(rows, columns=LENGTH_COLUMNS)
    scores = response_scores(att)
    no_lengths = lengths.empty
    joined = scores.assign(length=np.nan) if no_lengths else scores.merge(lengths, on=list(RESULT_KEY), how="left")
    for (judge, mode, k), own in joined.groupby([JUDGE, "mode", "fixed_k"], sort=True):
        head = [judge, mode, None if k == NO_K else int(k)]
        if no_lengths:
            rows.append([*head, 0, None, None, NO_LENGTHS])
            continue
        pairs = own[["score", "length"]].dropna()
        n = len(pairs)
        if n < MIN_LENGTH_POINTS:
            why = f"{n} scored response(s) with a length; need at least {MIN_LENGTH_POINTS}"
            rows.append([*head, n, None, None, why])
            continue
        if pairs["score"].nunique() < 2 or pairs["length"].nunique() < 2:
            rows.append([*head, n, None, None, "no variation in scores or in response lengths"])
            continue
        rho, p = spearmanr(pairs["score"].to_numpy(), pairs["length"].to_numpy())
        rows.append([*head, n, float(rho), float(p), None])
    return pd.DataFrame(rows, columns=LENGTH_COLUMNS).astype({"fixed_k": "Int64"})


def judge_pref_align(att: pd.DataFrame) -> pd.DataFrame:
    """Per results row and judge: PrefAlign of that judge alone (its repeat-means, weighted, invalid left out;
    NaN when they cover less than half of the weight, ``scoring/alignment.py``'s rule) — ``RESULT_KEY`` columns,
    ``judge`` and ``pref_align``."""
    found = weighted_pref_align(judge_means(att), [*RESULT_KEY, JUDGE])
    return found[[*RESULT_KEY, JUDGE, "pref_align"]]


@dataclass(frozen=True)
class JudgeReliability:
    """The three reliability tables of a run (see the module docstring)."""

    agreement: pd.DataFrame
    noise: pd.DataFrame
    length: pd.DataFrame

    def summary(self) -> dict[str, Any]:
        """``summary.json``'s ``judge_agreement`` (model → task → {alpha, n_units, reason}), ``judge_noise``
        (judge → {alpha, mean_sd, reason}) and ``length_bias`` (judge → condition → {spearman, p, n, reason})."""
        agreement = nested(
            self.agreement,
            ["model", "task"],
            lambda r: {"alpha": finite(r["alpha"]), "n_units": int(r["n_units"]), "reason": r["reason"]},
        )
        noise = {
            str(r["judge"]): {"alpha": finite(r["alpha"]), "mean_sd": finite(r["mean_sd"]), "reason": r["reason"]}
            for r in self.noise.to_dict("records")
        }
        length: dict[str, dict[str, Any]] = {}
        for r in self.length.to_dict("records"):
            condition = condition_label(r["mode"], None if pd.isna(r["fixed_k"]) else r["fixed_k"])
            length.setdefault(str(r["judge"]), {})[condition] = {
                "spearman": finite(r["spearman"]),
                "p": finite(r["p"]),
                "n": int(r["n"]),
                "reason": r["reason"],
            }
        return {"judge_agreement": agreement, "judge_noise": noise, "length_bias": length}


EMPTY_SUMMARY: dict[str, Any] = {"judge_agreement": {}, "judge_noise": {}, "length_bias": {}}
"""The reliability keys of a report without an attribute table."""


def judge_reliability(data: ResultsData) -> JudgeReliability | None:
    """The reliability tables of ``data`` (None without an attribute table)."""
    if data.attributes is None:
        return None
    att = judged_rows(data.attributes, data.results)
    lengths = response_lengths(data.transcripts, data.transcript_rows)
    return JudgeReliability(judge_agreement(att), judge_noise(att), length_bias(att, lengths))
