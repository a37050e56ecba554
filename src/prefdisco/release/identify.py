"""What a file given to ``prefdisco validate`` is when it is no benchmark, in one line with what to run instead.

``validate`` reads a benchmark folder, a scenarios file or a prefq-bench release. A file of another kind is named
before any line is checked, rather than answered with an error for every field of every line (a benchmark's 500
raw rows gave 5,000 errors, a results table one per line):

* a table (``.csv``, ``.tsv``, ``.parquet``): a run's results or attributes table when it has their key columns
  (``RESULTS_MARKERS``, ``ATTRIBUTES_MARKERS``), a benchmark's rows when it has a known benchmark's columns, else
  a table;
* JSON lines whose first object is no scenario (no ``persona``, ``profile`` or ``rubric``, and no ``problem``
  object): a known benchmark's rows as its Hugging Face dataset serves them (``registry.BenchmarkSpec``'s
  ``source_fields``), a persona library, a session set, or rows of another dataset (no key of a scenario at all).

A line with a part of a scenario, or rows with a scenario's key (an ``id``) and no known benchmark's columns, are
validated as scenarios, field by field: a broken scenario is never called something else. A JSONL file with no
line that parses is left to the validator too (its lines are the problem).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from prefdisco.benchio import json_lines
from prefdisco.benchmarks import BENCHMARKS
from prefdisco.schema import Scenario

RESULTS_MARKERS = frozenset({"scenario_id", "mode", "pref_align"})
"""Columns every results table of a run has (``results/contract.py``'s ``REQUIRED_RESULT_COLUMNS``)."""
ATTRIBUTES_MARKERS = frozenset({"scenario_id", "mode", "attribute", "score"})
"""Columns every attributes table of a run has (``results/contract.py``'s ``REQUIRED_ATTRIBUTE_COLUMNS``)."""
SCENARIO_PARTS = frozenset({"persona", "profile", "rubric"})
"""Keys of a scenario that no benchmark's own rows have (a ``problem`` key is a scenario's only as an object)."""
TABLES = (".csv", ".tsv", ".parquet")
READS = "validate reads a benchmark folder, a scenarios.jsonl or a prefq-bench release JSONL"


def _table_columns(path: Path) -> set[str]:
    """The column names of a table file (its header row; a Parquet file's schema); none when unreadable."""
    try:
        if path.suffix.lower() == ".parquet":
            import pyarrow.parquet as pq

            return set(pq.read_schema(path).names)
        with path.open(encoding="utf-8", errors="replace", newline="") as f:
            return set(next(csv.reader(f, delimiter="\t" if path.suffix.lower() == ".tsv" else ","), []))
    except Exception:  # any unreadable table is still a table, and no benchmark
        return set()


def _benchmark_of(keys: set[str]) -> str | None:
    """The known benchmark whose source columns ``keys`` hold (the one with the most columns, when several do)."""
    fields = {name: set(spec.source_fields) for name, spec in BENCHMARKS.items() if spec.source_fields}
    matches = [(len(columns), name) for name, columns in fields.items() if columns <= keys]
    return max(matches)[1] if matches else None


def _rows_of(path: Path, keys: set[str], what: str) -> str:
    name = _benchmark_of(keys)
    if name is not None:
        return (
            f"{path}: {what} of the {name} benchmark as its Hugging Face dataset serves them, not a benchmark; build "
            f"one from them: prefdisco build --benchmark {name} --source {path} --model M --out BENCH"
        )
    shown = ", ".join(sorted(keys)[:8]) + (", …" if len(keys) > 8 else "")
    return (
        f"{path}: {what} with the keys {shown}, not scenarios (a scenario has a problem, persona, profile and "
        f"rubric); {READS}; to build a benchmark from a dataset's rows: prefdisco build --benchmark generic "
        f"--source {path} --map question=...,answer=... --model M --out BENCH"
    )


def _table(path: Path) -> str:
    columns = _table_columns(path)
    if columns >= RESULTS_MARKERS:
        return (
            f"{path}: the results table of a run (a row per scenario and condition), not a benchmark; its report: "
            f"prefdisco report {path} --out REPORT"
        )
    if columns >= ATTRIBUTES_MARKERS:
        return (
            f"{path}: the attributes table of a run (a judged criterion a row), not a benchmark; report on its run "
            "folder: prefdisco report RUN_DIR --out REPORT"
        )
    if _benchmark_of(columns) is not None:
        return _rows_of(path, columns, "a table of rows")
    return f"{path}: a table, not a benchmark; {READS}"


def _first_object(path: Path) -> dict[str, object] | None:
    """The first line of a JSONL file that parses, when it is an object."""
    for _, value in json_lines(path, errors="replace"):
        if not isinstance(value, json.JSONDecodeError):
            return value if isinstance(value, dict) else None
    return None


def not_a_benchmark(path: Path) -> str | None:
    """One line naming what the file ``path`` is and what to run instead, when it is no benchmark file; None when
    it may be one (a scenarios file, a release: the validator checks it line by line)."""
    if path.suffix.lower() in TABLES:
        return _table(path)
    first = _first_object(path)
    if first is None:
        return None
    keys = set(first)
    if keys & SCENARIO_PARTS or isinstance(first.get("problem"), dict):
        return None
    if {"name", "occupation", "big_five"} <= keys and not keys & set(Scenario.model_fields):
        return (
            f"{path}: a persona library, not a benchmark; a build draws its personas from it: prefdisco build "
            f"--persona-library {path} ..."
        )
    if first.get("type") == "session_set":
        return f"{path}: a session set, not a benchmark; a run plays it: prefdisco eval BENCH --sessions {path} ..."
    if _benchmark_of(keys) is not None or not keys & set(Scenario.model_fields):
        return _rows_of(path, keys, "rows")
    return None  # a scenario's own key (an id): a broken scenarios file, checked line by line
