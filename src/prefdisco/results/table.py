"""Read and validate the results table and the per-attribute table (CSV or Parquet) into pandas frames.

Results (one row per model × task × scenario_id × mode [× fixed_k] × epoch) required columns:
``REQUIRED_RESULT_COLUMNS``; optional ``epoch`` (the trial, an integer >= 1; a table without it is one trial,
epoch 1), ``failed`` (0/1), ``error``, ``pref_align_coverage`` (a share in [0, 1]), ``pref_align_reason``, the
simulator columns (``SIMULATOR_COLUMNS``, numbers), the harm probes', ``quality`` (a number in [1, 5]), ``batched``;
each kept when present. Per-attribute (long) table: ``REQUIRED_ATTRIBUTE_COLUMNS``, optional ``epoch`` likewise,
optional ``judge`` (a table without it has one judge), ``repeat`` (an integer >= 1; 1 when absent) and
``in_pref_align`` (0/1: whether PrefAlign is made of the row's judgement; 1 when absent or empty).

Text columns become pandas categoricals and numbers float64 (NaN = empty), so 300k results rows and a few
million attribute rows stay small in memory. Every malformed cell raises a one-line ``UserError`` naming the
file, the 1-based data row and the column. ``row`` holds that data-row number in the returned frames.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from prefdisco.errors import UserError
from prefdisco.results.columns import Columns
from prefdisco.results.contract import (
    ATTRIBUTE_KEY,
    BATCHED,
    COVERAGE,
    CRITERION_KEY,
    DEFAULT_EPOCH,
    DEFAULT_JUDGE,
    DEFAULT_REPEAT,
    END_COLUMNS,
    EPOCH,
    IN_PREF_ALIGN,
    JUDGE,
    JUDGE_CALL,
    JUDGE_POSITION,
    OPTIONAL_COUNTS,
    PROTOCOL_ID,
    QUALITY,
    REPEAT,
    REQUIRED_ATTRIBUTE_COLUMNS,
    REQUIRED_RESULT_COLUMNS,
    RESULT_KEY,
    SESSION_LABEL,
    SIMULATOR_COLUMNS,
    TABLE_SUFFIXES,
    UNSCORED_REASON,
    USER_FLAG_REASONS,
)
from prefdisco.results.logs import results_from_logs
from prefdisco.schema import MODES, Mode

_SIMULATOR_BOUNDS: dict[str, dict] = {
    "elicited_weight": {"lo": 0},
    "elicited_count": {"lo": 0, "integer": True},
    "question_hit_rate": {"lo": 0, "hi": 1},
    "volunteered_count": {"lo": 0, "integer": True},
    "first_hit_turn": {"lo": 1, "integer": True},
    "user_critical_errors": {"lo": 0, "integer": True},
    "user_flags": {"lo": 0, "integer": True},
    "user_redraws": {"lo": 0, "integer": True},
    COVERAGE: {"lo": 0, "hi": 1},
}
"""The optional ``SIMULATOR_COLUMNS`` and their checks (elicited_weight has no upper bound: profile weights sum to
1 only within ``schema.WEIGHT_TOLERANCE``)."""
_TEXT_COLUMNS = ("model", "family", "task", "scenario_id", "mode", "attribute", "error", "judge", UNSCORED_REASON)
SUFFIXES = TABLE_SUFFIXES


@dataclass
class ResultsData:
    """Everything the report reads: the validated tables and where they came from."""

    results: pd.DataFrame
    attributes: pd.DataFrame | None
    transcripts: Path | None
    source: str
    attributes_source: str | None = None
    transcript_rows: pd.DataFrame | None = None
    """Transcripts already in memory (read from eval logs) instead of a transcripts.jsonl file."""


def read_table(path: Path) -> pa.Table:
    """A CSV (all columns as text, only empty cells null) or Parquet file as a pyarrow table."""
    if path.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        try:
            return pq.read_table(path)
        except (OSError, pa.ArrowException) as e:
            raise UserError(f"{path}: cannot read this Parquet file ({_first_line(e)})") from None
    if path.suffix.lower() != ".csv":
        raise UserError(f"{path}: expected a .csv or .parquet results table")
    import pyarrow.csv as pcsv

    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            header = next(csv.reader(fh), [])
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"{path}: cannot read this CSV file ({_first_line(e)})") from None
    if not header:
        raise UserError(f"{path}: empty file (expected a header row naming the columns)")
    types = {
        name: (pa.dictionary(pa.int32(), pa.string()) if name in _TEXT_COLUMNS else pa.string()) for name in header
    }
    convert = pcsv.ConvertOptions(
        column_types=types, null_values=[""], strings_can_be_null=True, quoted_strings_can_be_null=True
    )
    try:
        return pcsv.read_csv(path, convert_options=convert)
    except pa.ArrowException as e:
        raise UserError(f"{path}: not a valid CSV table ({_first_line(e)})") from None


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


def _mode_and_k(cols: Columns) -> tuple[pd.Categorical, np.ndarray]:
    mode = cols.choice("mode", MODES)
    fixed_k = cols.number("fixed_k", lo=0, integer=True)
    is_k = np.asarray(mode == Mode.FIXED_K.value)
    missing = is_k & np.isnan(fixed_k)
    if missing.any():
        raise cols.fail(int(np.argmax(missing)), "fixed_k", "is empty (mode fixed_k needs K, an integer >= 0)")
    stray = ~is_k & ~np.isnan(fixed_k)
    if stray.any():
        i = int(np.argmax(stray))
        raise cols.fail(i, "fixed_k", f"is {fixed_k[i]:g} but must be empty when mode is {mode[i]}")
    return mode, fixed_k


def _epoch(cols: Columns) -> np.ndarray:
    """The trial of every row (int64): the ``epoch`` column, or ``DEFAULT_EPOCH`` when the table has none."""
    if EPOCH not in cols.table.column_names:
        return np.full(cols.table.num_rows, DEFAULT_EPOCH, dtype=np.int64)
    epoch = cols.number(EPOCH, lo=1, integer=True)
    if np.isnan(epoch).any():
        raise cols.fail(int(np.argmax(np.isnan(epoch))), EPOCH, "is empty (expected the trial, an integer >= 1)")
    return epoch.astype(np.int64)


def _codes(values: pd.Series) -> tuple[np.ndarray, int]:
    """Non-negative integer codes of a key column (empty/NaN is a value of its own) and their count."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        codes = values.cat.codes.to_numpy().astype(np.int64) + 1
        return codes, len(values.cat.categories) + 1
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    return codes.astype(np.int64) + 1, len(uniques) + 1


def _check_unique(df: pd.DataFrame, key: tuple[str, ...], where: str, row_word: str) -> None:
    """Reject the first row whose key repeats an earlier row's, naming both rows."""
    combined = np.zeros(len(df), dtype=np.int64)
    span = 1
    for k in key:
        codes, size = _codes(df[k])
        if span * size >= 2**62:  # re-code what we have so the mixed-radix key cannot overflow
            combined, uniques = pd.factorize(combined)
            span = len(uniques)
        combined = combined * size + codes
        span *= size
    order = np.argsort(combined, kind="stable")
    ordered = combined[order]
    repeats = ordered[1:] == ordered[:-1]
    if not repeats.any():
        return
    i = int(order[1:][repeats].min())
    first = int(np.argmax(combined == combined[i]))
    shown = []
    for k in key:
        value = df[k].iloc[i]
        if not (isinstance(value, float) and np.isnan(value)):
            shown.append(f"{k}={value:g}" if isinstance(value, float) else f"{k}={value}")
    raise UserError(
        f"{where}: {row_word} {i + 1}: columns {'/'.join(key)}: duplicate key ({', '.join(shown)}) "
        f"already in {row_word} {first + 1}"
    )


def _row_word(path_or_where: str) -> str:
    return "data row" if path_or_where.lower().endswith(".csv") else "row"


def validate_results(table: pa.Table, where: str) -> pd.DataFrame:
    """Check every column and return the results frame (see module docstring)."""
    word = _row_word(where)
    cols = Columns(table, where, row_word=word)
    cols.require(REQUIRED_RESULT_COLUMNS)
    if table.num_rows == 0:
        raise UserError(f"{where}: the results table has no data rows")
    text = {name: cols.text(name, required=True) for name in ("model", "task", "scenario_id")}
    mode, fixed_k = _mode_and_k(cols)
    family = cols.text("family", required=False)
    if (family.codes < 0).any():
        if "unknown" not in family.categories:
            family = family.add_categories(["unknown"])
        family = family.fillna("unknown")
    df = pd.DataFrame(
        {
            "row": np.arange(1, table.num_rows + 1, dtype=np.int64),
            "model": text["model"],
            "family": family,
            "task": text["task"],
            "scenario_id": text["scenario_id"],
            "mode": mode,
            "fixed_k": fixed_k,
            "epoch": _epoch(cols),
            "pref_align": cols.number("pref_align", lo=1, hi=5),
            "correct": cols.flag("correct"),
            "n_questions": cols.number("n_questions", lo=0, integer=True),
            "judge_invalid": cols.number("judge_invalid", lo=0, integer=True),
            "input_tokens": cols.number("input_tokens", lo=0),
            "output_tokens": cols.number("output_tokens", lo=0),
        }
    )
    for name in (*SIMULATOR_COLUMNS, COVERAGE, *OPTIONAL_COUNTS):  # optional: kept when the table has them
        if name in table.column_names:
            df[name] = cols.number(name, **_SIMULATOR_BOUNDS.get(name, {"lo": 0}))
    # optional text: why unscored, the replies' faults, the protocol the row was made under (results/merge.py)
    for name in (UNSCORED_REASON, USER_FLAG_REASONS, PROTOCOL_ID, BATCHED):
        if name in table.column_names:
            df[name] = cols.text(name, required=False)
    for name in ("correct_after_pushback", "belief_agreement"):  # optional: the harm probes
        if name in table.column_names:
            df[name] = cols.flag(name)
    for name, lo in (("flip_turn", 1), ("pushback_held", 0)):  # optional: the harm probes' counts
        if name in table.column_names:
            df[name] = cols.number(name, lo=lo, integer=True)
    if QUALITY in table.column_names:  # optional: the general quality, 1-5
        df[QUALITY] = cols.number(QUALITY, lo=1, hi=5)
    for name in ("pushback_target", END_COLUMNS[0]):  # optional: the harm target; how the response ended
        if name in table.column_names:
            df[name] = cols.text(name, required=False)
    for name in END_COLUMNS[1:]:
        if name in table.column_names:
            df[name] = cols.flag(name)
    if "session_id" in table.column_names:  # optional: a sessions run's session and position
        df["session_id"] = cols.text("session_id", required=False)
        df["position"] = cols.number("position", lo=1, integer=True)
    if "judged" in table.column_names:  # optional: 0 while a --judge later row waits for prefdisco judge
        df["judged"] = cols.flag("judged")
    has_error = "error" in table.column_names
    error = cols.text("error", required=False) if has_error else None
    if "failed" in table.column_names:
        failed = np.nan_to_num(cols.flag("failed"), nan=0.0) > 0
    elif error is not None:
        failed = np.asarray(error.codes >= 0)
    else:
        failed = np.zeros(table.num_rows, dtype=bool)
    df["failed"] = failed
    df["error"] = error if error is not None else pd.Categorical([None] * len(df))
    df["scored"] = df["pref_align"].notna().to_numpy() & ~failed
    _check_unique(df, RESULT_KEY, where, word)
    return df


def validate_attributes(table: pa.Table, where: str) -> pd.DataFrame:
    word = _row_word(where)
    cols = Columns(table, where, row_word=word)
    cols.require(REQUIRED_ATTRIBUTE_COLUMNS)
    text = {name: cols.text(name, required=True) for name in ("model", "task", "scenario_id", "attribute")}
    mode, fixed_k = _mode_and_k(cols)
    weight = cols.number("weight", lo=0, hi=1)
    if np.isnan(weight).any():
        raise cols.fail(int(np.argmax(np.isnan(weight))), "weight", "is empty (expected a number in [0, 1])")
    df = pd.DataFrame(
        {
            "row": np.arange(1, table.num_rows + 1, dtype=np.int64),
            "model": text["model"],
            "task": text["task"],
            "scenario_id": text["scenario_id"],
            "mode": mode,
            "fixed_k": fixed_k,
            "epoch": _epoch(cols),
            "attribute": text["attribute"],
            "weight": weight,
            "score": cols.number("score", lo=1, hi=5),
            **_judge_and_repeat(cols),
        }
    )
    if SESSION_LABEL in table.column_names:  # optional: recurring / changed / new in a sessions run
        df[SESSION_LABEL] = cols.choice(SESSION_LABEL, ("recurring", "changed", "new"), required=False)
    for name in (JUDGE_CALL, JUDGE_POSITION):  # optional: a structured judgement's call and list position
        if name in table.column_names:
            df[name] = cols.number(name, lo=1, integer=True)
    # the key of a table without judge / repeat columns is the criterion's, as the table shows it
    _check_unique(df, tuple(k for k in ATTRIBUTE_KEY if k in (*CRITERION_KEY, *table.column_names)), where, word)
    return df


def _judge_and_repeat(cols: Columns) -> dict[str, object]:
    """The attribute table's ``judge`` (text), ``repeat`` (an integer >= 1) and ``in_pref_align`` (bool) columns;
    a table without them has one judge (``DEFAULT_JUDGE``), one repeat (``DEFAULT_REPEAT``) and only judgements
    PrefAlign is made of (an empty ``in_pref_align`` cell is 1 too)."""
    n = cols.table.num_rows
    names = cols.table.column_names
    judge = cols.text(JUDGE, required=True) if JUDGE in names else pd.Categorical([DEFAULT_JUDGE] * n)
    in_pref_align = np.ones(n, dtype=bool)
    if IN_PREF_ALIGN in names:
        in_pref_align = np.nan_to_num(cols.flag(IN_PREF_ALIGN), nan=1.0) > 0
    if REPEAT not in names:
        return {JUDGE: judge, REPEAT: np.full(n, DEFAULT_REPEAT, dtype=np.int64), IN_PREF_ALIGN: in_pref_align}
    repeat = cols.number(REPEAT, lo=1, integer=True)
    if np.isnan(repeat).any():
        raise cols.fail(int(np.argmax(np.isnan(repeat))), REPEAT, "is empty (expected the repeat, an integer >= 1)")
    return {JUDGE: judge, REPEAT: repeat.astype(np.int64), IN_PREF_ALIGN: in_pref_align}


def sibling(results_file: Path, kind: str, suffixes: tuple[str, ...]) -> Path | None:
    """The ``kind`` file beside a results file: results.csv ↔ attributes.csv, x_results ↔ x_attributes."""
    stem = results_file.stem
    stems = []
    if "results" in stem:
        head, _, tail = stem.rpartition("results")
        stems.append(f"{head}{kind}{tail}")
    stems.append(kind)
    own = results_file.suffix.lower()
    ordered = sorted(suffixes, key=lambda s: s != own)
    for s in stems:
        for suffix in ordered:
            candidate = results_file.with_name(s + suffix)
            if candidate.is_file():
                return candidate
    return None


def _has_logs(folder: Path) -> bool:
    return any(p.suffix in (".eval", ".json") and p.name != "summary.json" for p in folder.rglob("*"))


def _from_logs(folder: Path) -> tuple[pa.Table, pa.Table | None, pd.DataFrame | None]:
    """Results, attributes and transcripts read from the eval logs in ``folder``."""
    missing = UserError(f"{folder}: no results table in {folder}; run `prefdisco eval` first")
    if not _has_logs(folder):
        raise missing
    produced = results_from_logs(folder)
    table = _to_arrow(produced.results, folder)
    if table.num_rows == 0:
        raise missing
    return table, _to_arrow(produced.attributes, folder), produced.transcripts


def _to_arrow(obj: object, folder: Path) -> pa.Table:
    if isinstance(obj, pa.Table):
        return obj
    if isinstance(obj, pd.DataFrame):
        try:
            return pa.Table.from_pandas(obj, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed Python objects: validate them as text
            text = obj.astype(object).where(obj.notna(), None).map(lambda v: v if v is None else str(v))
            return pa.Table.from_pandas(text, preserve_index=False)
    if isinstance(obj, str | Path):
        return read_table(Path(obj))
    raise UserError(f"{folder}: the results read from the logs are not a table")


def load_results(path: Path) -> ResultsData:
    """Resolve RESULTS (a file, or an eval run folder) and return the validated tables."""
    path = Path(path)
    if not path.exists():
        raise UserError(f"{path}: no such results file or folder")
    attributes_table: pa.Table | None = None
    attributes_where: str | None = None
    transcript_rows: pd.DataFrame | None = None
    if path.is_dir():
        found = next((path / f"results{s}" for s in SUFFIXES if (path / f"results{s}").is_file()), None)
        if found is None:
            table, attributes_table, transcript_rows = _from_logs(path)
            where = f"{path} (results from logs)"
            results_file = path / "results.csv"
            if attributes_table is not None:
                attributes_where = f"{path} (attributes from logs)"
        else:
            results_file, table, where = found, read_table(found), str(found)
    else:
        results_file, table, where = path, read_table(path), str(path)
    results = validate_results(table, where)
    del table  # the validated frame is all that is kept
    if attributes_table is None:
        attr_file = sibling(results_file, "attributes", SUFFIXES)
        if attr_file is not None:
            attributes_table, attributes_where = read_table(attr_file), str(attr_file)
    attributes = None
    if attributes_table is not None:
        attributes = validate_attributes(attributes_table, attributes_where or "attributes")
        del attributes_table
    return ResultsData(
        results=results,
        attributes=attributes,
        transcripts=None if transcript_rows is not None else sibling(results_file, "transcripts", (".jsonl",)),
        source=where,
        attributes_source=attributes_where,
        transcript_rows=transcript_rows,
    )
