"""Human 1–5 ratings of judged criteria, and the judge's score of every criterion of a run.

An *item* is one judged criterion of one response: (model, task, scenario_id, mode, fixed_k, epoch, attribute),
``ITEM_KEY``. Its judge score is the panel score of the judgements PrefAlign is made of (``analysis/stats/panel.py``:
the run's judges, each judge's repeat-mean then the mean over judges; a further judge's rows, ``in_pref_align`` 0,
are not part of it) and its weight the criterion's profile weight. Only responses whose results row is scored
(PrefAlign present, not failed) have items.

The ratings table (``prefdisco annotate export-ratings``) has one row per (annotator, item): the required columns
``RATING_COLUMNS`` (``annotator, scenario_id, mode, attribute, score``, score an integer 1–5) and the optional
``OPTIONAL_KEY_COLUMNS`` (``model, task, fixed_k, epoch``), which the export writes when the run has several of
them, so that every rating names exactly one item. A ratings row is joined to the run's items on the key columns
it has; one that could name several items is refused (naming the column to add).

``fixed_k`` is held as an integer with ``NO_K`` (-1) for the conditions without K, so it can be a join key; a
condition as one name is ``results.contract.condition_label`` (``fixed_k=K``).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd

from prefdisco.analysis.stats.panel import panel_scores, ruled
from prefdisco.errors import UserError
from prefdisco.results.contract import NO_K, RESULT_KEY, condition_label
from prefdisco.results.table import ResultsData
from prefdisco.schema import MODES, Mode

ITEM_KEY: tuple[str, ...] = (*RESULT_KEY, "attribute")
RATING_COLUMNS: tuple[str, ...] = ("annotator", "scenario_id", "mode", "attribute", "score")
OPTIONAL_KEY_COLUMNS: tuple[str, ...] = ("model", "task", "fixed_k", "epoch")
EXPORT_ORDER: tuple[str, ...] = (
    "annotator",
    "model",
    "task",
    "scenario_id",
    "mode",
    "fixed_k",
    "epoch",
    "attribute",
    "score",
)
"""The column order of an exported ratings table (the optional columns only when present)."""
_TEXT = ("model", "task", "scenario_id", "mode", "attribute")


def mode_label(mode: str, fixed_k: int) -> str:
    """``baseline`` / ``discovery`` / ``oracle``, or ``fixed_k=K`` for a fixed-K condition (``condition_label``)."""
    return condition_label(mode, fixed_k)


def criterion_scores(data: ResultsData, where: str) -> pd.DataFrame:
    """One row per item of the run's scored responses: ``ITEM_KEY`` columns, ``weight``, ``score`` (the panel
    score of the judgements PrefAlign is made of, ``analysis.panel.panel_scores``: each judge's repeat-mean, then
    the mean over judges, invalid judgements left out; NaN when every judgement of the criterion was invalid) and
    ``by_rule``: True when the response was refused or empty and the score is the rule's 1, no judge's
    (``panel.ruled``) — never put before a rater, nor in calibration's agreement and fit."""
    if data.attributes is None:
        raise UserError(f"{where}: no per-attribute table (attributes.csv): the judge's criterion scores are needed")
    scored = data.results["scored"].to_numpy()
    keys = _typed(data.results.loc[scored, list(RESULT_KEY)].assign(by_rule=ruled(data.results)[scored]))
    rows = _typed(panel_scores(data.attributes)[[*ITEM_KEY, "weight", "score"]])  # the panel rule per criterion
    rows = rows.merge(keys.drop_duplicates(list(RESULT_KEY)), on=list(RESULT_KEY), how="inner")
    by = rows.groupby(list(ITEM_KEY), sort=True)
    return by.agg(weight=("weight", "first"), score=("score", "mean"), by_rule=("by_rule", "first")).reset_index()


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Key columns as plain ``str`` / ``int`` (fixed_k ``NO_K`` when empty), so they merge and group exactly."""
    out = frame.copy()
    for column in _TEXT:
        if column in out.columns:
            out[column] = out[column].astype(str)
    if "fixed_k" in out.columns:
        out["fixed_k"] = pd.to_numeric(out["fixed_k"]).fillna(NO_K).astype(np.int64)
    if "epoch" in out.columns:
        out["epoch"] = out["epoch"].astype(np.int64)
    return out


def needed_key_columns(items: pd.DataFrame) -> list[str]:
    """The optional key columns a ratings table of this run must carry: those with several values in the run
    (``fixed_k``: several K values)."""
    needed = []
    for column in OPTIONAL_KEY_COLUMNS:
        values = items[column]
        if column == "fixed_k":
            values = values[values != NO_K]
        if values.nunique() > 1:
            needed.append(column)
    return needed


def read_ratings(path: Path) -> pd.DataFrame:
    """Read and check a ratings CSV (see the module docstring); one-line ``UserError`` naming file, row, column."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: file not found (expected a CSV with columns {', '.join(RATING_COLUMNS)})")
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            header = [name.strip() for name in reader.fieldnames or ()]
            records = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise UserError(f"{path}: cannot read this CSV file ({e})") from None
    missing = [c for c in RATING_COLUMNS if c not in header]
    if missing:
        raise UserError(f"{path}: missing column(s) {', '.join(missing)} (expected {', '.join(RATING_COLUMNS)})")
    present = [c for c in OPTIONAL_KEY_COLUMNS if c in header]
    if not records:
        raise UserError(f"{path}: no ratings (the CSV has a header but no data rows)")
    rows = []
    for number, record in enumerate(records, start=2):
        cells = {(k or "").strip(): (v or "").strip() for k, v in record.items() if isinstance(v, str)}
        rows.append(_rating_row(cells, present, f"{path} row {number}") | {"row": number})
    frame = pd.DataFrame(rows, columns=["annotator", *rating_key(present), "score", "row"])
    key = ["annotator", *rating_key(present)]
    repeated = frame.duplicated(key, keep="first")
    if repeated.any():
        row = frame.loc[repeated].iloc[0]
        first = frame.loc[(frame[key] == row[key]).all(axis=1), "row"].iloc[0]
        raise UserError(f"{path} row {row['row']}: a second rating by {row['annotator']!r} of the item in row {first}")
    return frame


def rating_key(present: list[str]) -> list[str]:
    """``ITEM_KEY`` restricted to the required columns and the optional ones ``present``."""
    return [c for c in ITEM_KEY if c in RATING_COLUMNS or c in present]


def _rating_row(cells: dict[str, str], present: list[str], where: str) -> dict[str, object]:
    for column in ("annotator", "scenario_id", "mode", "attribute", *[c for c in present if c != "fixed_k"]):
        if not cells.get(column):
            raise UserError(f"{where}: column {column} is empty (expected a value)")
    if cells["mode"] not in MODES:
        raise UserError(f"{where}: column mode: unknown value {cells['mode']!r} (expected one of {', '.join(MODES)})")
    row: dict[str, object] = {c: cells[c] for c in ("annotator", "scenario_id", "mode", "attribute")}
    row["score"] = _integer(cells["score"], where, "score", lo=1, hi=5)
    if "model" in present:
        row["model"] = cells["model"]
    if "task" in present:
        row["task"] = cells["task"]
    if "epoch" in present:
        row["epoch"] = _integer(cells["epoch"], where, "epoch", lo=1)
    if "fixed_k" in present:
        is_k = cells["mode"] == Mode.FIXED_K.value
        if is_k != bool(cells["fixed_k"]):
            expected = "K, an integer >= 0, for mode fixed_k" if is_k else f"empty for mode {cells['mode']}"
            raise UserError(f"{where}: column fixed_k: {cells['fixed_k']!r} (expected {expected})")
        row["fixed_k"] = _integer(cells["fixed_k"], where, "fixed_k", lo=0) if is_k else NO_K
    return row


def _integer(text: str, where: str, column: str, lo: int, hi: int | None = None) -> int:
    expected = f"an integer in {lo}–{hi}" if hi is not None else f"an integer >= {lo}"
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"{where}: column {column}: {text!r} is not {expected}") from None
    if not value.is_integer() or value < lo or (hi is not None and value > hi):
        raise UserError(f"{where}: column {column}: {text!r} is not {expected}")
    return int(value)


def join_ratings(ratings: pd.DataFrame, items: pd.DataFrame, ratings_where: str, run_where: str) -> pd.DataFrame:
    """Every rating with its item's full key, ``judge`` (the judge score) and ``human`` (the rating), for the
    ratings whose item the run holds with a valid judge score; ``UserError`` when a rating could name several
    items or none matches at all."""
    on = [c for c in ITEM_KEY if c in ratings.columns]
    counts = items.groupby(on, sort=False).size().rename("_n").reset_index()
    marked = ratings.merge(counts, on=on, how="left")
    ambiguous = marked["_n"].fillna(0).to_numpy() > 1
    if ambiguous.any():
        first = marked.loc[ambiguous].iloc[0]
        same = items.loc[(items[on] == first[on]).all(axis=1)]
        differ = [c for c in OPTIONAL_KEY_COLUMNS if c not in on and same[c].nunique() > 1]
        raise UserError(
            f"{ratings_where} row {first['row']}: names {int(first['_n'])} judged criteria of {run_where} "
            f"(they differ in {', '.join(differ)}); add column(s) {', '.join(differ)} to the ratings"
        )
    joined = ratings.rename(columns={"score": "human"}).merge(
        items.rename(columns={"score": "judge"}), on=on, how="inner"
    )
    joined = joined.loc[joined["judge"].notna().to_numpy()].reset_index(drop=True)
    if joined.empty:
        raise UserError(
            f"{ratings_where}: no rating matches a validly judged criterion of {run_where} "
            f"(joined on columns {', '.join(on)})"
        )
    return joined
