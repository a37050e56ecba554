"""``prefdisco leaderboard RUN [RUN …]``: models ranked by NormAlign, overall and per task, with seeded bootstrap
intervals, pairwise differences (``pairwise.py``) and the groups of models not distinguishable; written as one
self-contained HTML page, ``leaderboard.csv`` and ``pairwise.csv``.

Every number is the report's, computed by the report's own functions from the same table (trials averaged first,
``trials.py``): NormAlign and its interval per (model, task) and the oracle PrefAlign are ``normalign_cells``'s
(``mean_oracle``: over the scenarios scored in all three conditions), accuracy per condition with its Wilson interval
``accuracy_table``'s, the mean questions asked ``question_stats``'s, the harms ``build_harms``'s and the transfer gain
``build_transfer``'s (a sessions run only). The report has no number over all tasks but accuracy's and the questions',
so the overall ranking's NormAlign is ``normalign_cells`` over the model's scenarios of every task pooled (the ratio of
the three conditions' means over every (task, scenario) it scored in all three; the interval resamples each task's
scenarios within that task, as the ranking's pairwise tests do, with the seed of the task ``overall``); the oracle
PrefAlign's interval is ``control.mean_interval`` over the same scenarios with the stream ``default_rng([seed,
crc32(model), crc32(task), crc32("oracle_pref_align")])``. Every stream of the overall ranking whose scenarios are all
of one task is that task's (``normalign.stream_task``), so a one-task leaderboard's overall row and task row are the
same numbers. Harms and transfer are per task only (their overall row is empty), as in the report.

A ranking orders the models by NormAlign, highest first (ties by name); a model with no NormAlign in it is listed
last with no rank and no group. Pairs, Holm and groups: ``pairwise.py``.

The page and the folder written: ``leaderboard/page.py``.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from prefdisco.analysis.cost.measures import cost_table
from prefdisco.analysis.harms.section import build_harms
from prefdisco.analysis.paper.accuracy import ALL, accuracy_table
from prefdisco.analysis.paper.questions import question_stats
from prefdisco.analysis.report.caveats import caveats, embedded_build
from prefdisco.analysis.stats.bootstrap import check_resamples
from prefdisco.analysis.stats.normalign import interval_reason, normalign_cells, scenario_table, stream_task
from prefdisco.analysis.stats.pairwise import ALPHA, PAIR_COLUMNS, grouping, pairwise_table
from prefdisco.analysis.stats.trials import average_attribute_trials, average_trials
from prefdisco.analysis.transfer.section import build_transfer
from prefdisco.analysis.validity.control import mean_interval
from prefdisco.errors import UserError
from prefdisco.results.merge import RunProtocol
from prefdisco.results.table import ResultsData
from prefdisco.schema import CONDITIONS

OVERALL = "overall"
"""The ``task`` of the overall ranking's rows."""
BASE_COLUMNS: tuple[str, ...] = (
    "task",
    "rank",
    "group",
    "model",
    "group_reason",
    "normalign",
    "normalign_low",
    "normalign_high",
    "normalign_reason",
    "oracle_pref_align",
    "oracle_pref_align_low",
    "oracle_pref_align_high",
    "mean_baseline",
    "mean_discovery",
    *(f"accuracy_{m}{s}" for m in CONDITIONS for s in ("", "_low", "_high", "_n")),
    "mean_questions",
    "n_scenarios",
)
"""The columns of ``leaderboard.csv`` every leaderboard has; harms and transfer columns follow when present."""


@dataclass
class Leaderboard:
    table: pd.DataFrame
    """One row per (ranking, model): ``BASE_COLUMNS``, then ``harm:…`` and ``transfer_…`` columns."""
    pairwise: pd.DataFrame
    """One row per pair of each ranking (``pairwise.PAIR_COLUMNS``)."""
    protocols: list[RunProtocol]
    notes: list[str] = field(default_factory=list)
    """What merging the runs needs said: protocols mixed under ``--allow-mixed``, models renamed ``MODEL @ RUN``."""
    source: str = ""
    seed: int = 0
    n_boot: int = 1000
    reference: Any = None
    """A ``simfidelity --reference`` run's table (``reference_reading.ReferenceTable``, ``--reference-table``): the
    protocol box names each simulator's reference fidelity against the people."""
    caveats: list[str] = field(default_factory=list)
    """What a reader must know before any number (``caveats.py``: the embedded model, a discovery that asked
    nothing, NormAlign over a tiny gap, a one-family judge panel), as the report says them: the page's top and the
    console."""
    scenarios: pd.DataFrame | None = None
    """``normalign.scenario_table``: each model's scenarios scored in all three conditions, their PrefAligns (what
    the pairwise tests resample; a submission carries its model's)."""
    cells: pd.DataFrame | None = None
    """``normalign.normalign_cells`` per (model, task) and pooled per model (task ``OVERALL``): the per-scenario
    summary (median, share negative) beside the table's figures."""
    fidelity: dict[str, str] = field(default_factory=dict)
    """Each run's simulator's reference fidelity as said where it was measured (a board of submissions: each
    submission's, by file), shown in the protocol box when no ``reference`` table is given."""

    def rankings(self) -> list[str]:
        return list(dict.fromkeys(self.table["task"]))

    def mixed(self) -> bool:
        return any("--allow-mixed" in n for n in self.notes)


def _oracle_interval(sub: pd.DataFrame, model: str, task: str, seed: int, n_boot: int) -> tuple[Any, Any]:
    if interval_reason(len(sub), n_boot):
        return None, None
    stream = stream_task(task, sub["task"].astype(str))  # one task's scenarios draw alike in every ranking
    rng = np.random.default_rng(
        [seed, zlib.crc32(model.encode()), zlib.crc32(stream.encode()), zlib.crc32(b"oracle_pref_align")]
    )
    return mean_interval(sub["oracle"].to_numpy(), rng, n_boot)


def _accuracy(acc: pd.DataFrame, model: str, task: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    rows = acc.loc[(acc["model"] == model) & (acc["task"] == task)]
    by_mode = {str(r["mode"]): r for r in rows.to_dict("records")}
    for m in CONDITIONS:
        r = by_mode.get(m, {})
        out |= {
            f"accuracy_{m}": r.get("accuracy"),
            f"accuracy_{m}_low": r.get("ci_low"),
            f"accuracy_{m}_high": r.get("ci_high"),
            f"accuracy_{m}_n": r.get("n"),
        }
    return out


def _extra_columns(results: pd.DataFrame, data: ResultsData, seed: int, n_boot: int) -> pd.DataFrame:
    """Per (model, task): each harms measure and condition (``harm:MEASURE[CONDITION]`` with ``_low``/``_high``)
    and, for a sessions run, each carry arm's mean transfer gain and its slope with its interval."""
    parts: list[pd.DataFrame] = []
    harms = build_harms(results, data.results, seed=seed, n_boot=n_boot).table
    if len(harms):
        h = harms.assign(key="harm:" + harms["measure"].astype(str) + "[" + harms["condition"].astype(str) + "]")
        for suffix, col in (("", "value"), ("_low", "ci_low"), ("_high", "ci_high")):
            wide = h.pivot_table(index=["model", "task"], columns="key", values=col, aggfunc="first", dropna=False)
            parts.append(wide.rename(columns=lambda c, s=suffix: f"{c}{s}"))
    attributes = None if data.attributes is None else average_attribute_trials(data.attributes, data.results)
    transfer = build_transfer(  # as the report calls it
        results, attributes, data.results, data.transcripts, data.transcript_rows, seed=seed, n_boot=n_boot
    )
    if transfer is not None and len(transfer.slopes):
        s = transfer.slopes.assign(arm=transfer.slopes["arm"].astype(str))
        for name, col in (
            ("transfer_gain", "mean_gain"),
            ("transfer_gain_slope", "slope"),
            ("transfer_gain_slope_low", "ci_low"),
            ("transfer_gain_slope_high", "ci_high"),
        ):
            wide = s.pivot_table(index=["model", "task"], columns="arm", values=col, aggfunc="first", dropna=False)
            parts.append(wide.rename(columns=lambda a, n=name: _arm_column(n, a)))
    if "cost_usd" in results.columns:
        parts.append(_usd_per_scenario(results))
    if not parts:
        return pd.DataFrame(columns=["model", "task"])
    wide = pd.concat(parts, axis=1)
    ordered = sorted(wide.columns, key=column_order)
    out = wide[ordered].reset_index()
    out.columns.name = None
    return out.astype({"model": str, "task": str})


USD_PER_SCENARIO = "usd_per_scenario"
"""What one scenario cost in all its conditions, at the run's prices: per condition the mean ``cost_usd`` over the
scenarios (trials averaged, failed rows left out), summed over the conditions; empty when a row has no price."""


def _usd_per_scenario(results: pd.DataFrame) -> pd.DataFrame:
    """``USD_PER_SCENARIO`` per (model, task), and per model over every task (task ``OVERALL``): the report's Cost
    table (``cost.cost_table``) summed over the conditions."""
    tables = [t for t in (cost_table(results), cost_table(results.assign(task=OVERALL))) if t is not None]
    if not tables:
        return pd.DataFrame(columns=[USD_PER_SCENARIO])
    cells = pd.concat(tables).astype({"usd_per_scenario": float}).groupby(["model", "task"])["usd_per_scenario"]
    usd = cells.sum(min_count=1).where(cells.count() == cells.size())  # a condition without a price: none
    return usd.rename(USD_PER_SCENARIO).to_frame()


def _arm_column(name: str, arm: str) -> str:
    """``transfer_gain[ARM]``, ``transfer_gain_slope[ARM]`` and its ``_low`` / ``_high``."""
    for suffix in ("_low", "_high"):
        if name.endswith(suffix):
            return f"{name.removesuffix(suffix)}[{arm}]{suffix}"
    return f"{name}[{arm}]"


def column_order(column: str) -> tuple[str, int]:
    """A figure, then its ``_low`` and ``_high``."""
    for i, suffix in enumerate(("_low", "_high"), start=1):
        if column.endswith(suffix):
            return column.removesuffix(suffix), i
    return column, 0


def _ranking(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` of one ranking ordered by NormAlign (highest first, ties by model), with ``rank``; undefined last."""
    defined = sorted((r for r in rows if r["normalign"] is not None), key=lambda r: (-r["normalign"], r["model"]))
    rest = sorted((r for r in rows if r["normalign"] is None), key=lambda r: r["model"])
    for i, r in enumerate(defined, start=1):
        r["rank"] = i
    return defined + rest


def _none(value: Any) -> Any:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if isinstance(value, np.generic) else value


def build_leaderboard(
    data: ResultsData,
    *,
    seed: int = 0,
    n_boot: int = 1000,
    protocols: list[RunProtocol] | None = None,
    notes: list[str] | None = None,
) -> Leaderboard:
    """Every number of the leaderboard of ``data`` (module docstring)."""
    check_resamples(n_boot)
    results = average_trials(data.results)
    tasks = sorted(results["task"].astype(str).unique())
    if OVERALL in tasks:
        raise UserError(f"the results hold a task named {OVERALL!r}, the overall ranking's name: rename that task")
    scenarios = scenario_table(results)
    cells = normalign_cells(results, scenarios, seed=seed, n_boot=n_boot)
    pooled = normalign_cells(  # its interval resamples each task within itself, as its pairwise tests do
        results.assign(task=OVERALL),
        scenarios.assign(stratum=scenarios["task"].astype(str), task=OVERALL),
        seed=seed,
        n_boot=n_boot,
        strata="stratum",
    ).assign(task=OVERALL)
    accuracy = accuracy_table(results)
    questions = question_stats(results, cells)
    per_cell_q = {(r["model"], r["task"]): r["mean_questions"] for r in questions.per_cell.to_dict("records")}
    extra = _extra_columns(results, data, seed, n_boot)
    extra_by = {(r["model"], r["task"]): r for r in extra.to_dict("records")}
    extra_cols = [c for c in extra.columns if c not in ("model", "task")]

    subs = scenarios.assign(task=scenarios["task"].astype(str))
    rows = []
    for name in (OVERALL, *tasks):
        frame = pooled if name == OVERALL else cells.loc[cells["task"] == name]
        in_ranking = subs if name == OVERALL else subs.loc[subs["task"] == name]
        for cell in frame.to_dict("records"):
            model = str(cell["model"])
            mine = in_ranking.loc[in_ranking["model"] == model]
            defined = _none(cell["normalign"]) is not None
            lo, hi = _oracle_interval(mine, model, name, seed, n_boot) if defined else (None, None)
            row: dict[str, Any] = {"task": name, "rank": None, "group": None, "model": model}
            row |= {
                "normalign": _none(cell["normalign"]),
                "normalign_low": _none(cell["ci_low"]),
                "normalign_high": _none(cell["ci_high"]),
                "normalign_reason": _none(cell["reason"]) or _none(cell["ci_reason"]) or "",
                "oracle_pref_align": _none(cell.get("mean_oracle")),
                "oracle_pref_align_low": lo,
                "oracle_pref_align_high": hi,
                "mean_baseline": _none(cell.get("mean_baseline")),
                "mean_discovery": _none(cell.get("mean_discovery")),
            }
            row |= _accuracy(accuracy, model, ALL if name == OVERALL else name)
            row["mean_questions"] = _none(
                questions.mean_questions.get(model) if name == OVERALL else per_cell_q.get((model, name))
            )
            row["n_scenarios"] = int(cell["n_scenarios"])
            found = extra_by.get((model, name), {})
            row |= {c: _none(found.get(c)) for c in extra_cols}
            rows.append(row)
    table, pairwise = rank_rows(rows, subs, extra_cols, seed=seed, n_boot=n_boot)
    return Leaderboard(
        table=table,
        pairwise=pairwise,
        protocols=protocols or [],
        notes=notes or [],
        source=data.source,
        seed=seed,
        n_boot=n_boot,
        caveats=[*caveats(results, cells, data.attributes), *filter(None, [embedded_build(protocols or [])])],
        scenarios=subs,
        cells=pd.concat([cells, pooled], ignore_index=True),
    )


def rank_rows(
    rows: list[dict[str, Any]], scenarios: pd.DataFrame, extra_cols: list[str], *, seed: int, n_boot: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rankings of ``rows`` (one per (ranking, model): its ``task`` the ranking's name, ``OVERALL`` first, each
    with ``BASE_COLUMNS``' figures and ``extra_cols``): each ranking ordered by NormAlign, its pairs tested over
    ``scenarios`` (``scenario_table`` rows, ``task`` as text; the overall ranking every task's) and its groups; the
    leaderboard's table and its pairwise table. A board of runs and a board of submissions are ranked here alike."""
    table_rows: list[dict[str, Any]] = []
    pair_frames = []
    for name in dict.fromkeys(r["task"] for r in rows):
        in_ranking = scenarios if name == OVERALL else scenarios.loc[scenarios["task"] == name]
        ranked = _ranking([r for r in rows if r["task"] == name])
        order = [r["model"] for r in ranked if r["rank"] is not None]
        pairs = pairwise_table(in_ranking, order, name, seed=seed, n_boot=n_boot)
        group_of, why = grouping(order, pairs)
        for r in ranked:
            r["group"] = group_of.get(r["model"])
            r["group_reason"] = why.get(r["model"], "")
        table_rows += ranked
        pair_frames.append(pairs)
    table = pd.DataFrame(table_rows, columns=[*BASE_COLUMNS, *extra_cols]).astype(object)
    table = table.astype({"rank": "Int64", "group": "Int64", "n_scenarios": int})
    pairwise = pd.concat(pair_frames, ignore_index=True) if pair_frames else pd.DataFrame(columns=list(PAIR_COLUMNS))
    return table, pairwise


__all__ = ["ALPHA", "OVERALL", "Leaderboard", "build_leaderboard", "rank_rows"]
