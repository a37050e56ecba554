"""Benchmark loaders: the ten named benchmarks and a generic loader, all normalized to ``Problem``.

Public API::

    from prefdisco.benchmarks import load_problems, load_generic, FieldMapping, BENCHMARKS, parse_mapping

* ``load_problems(name, source=None, n=None, seed=0, split=None)``: one of ``BENCHMARKS`` (math500, aime,
  logiqa, mascqa, scienceqa, medqa, mmlu, simpleqa, commonsenseqa, socialiqa), from the Hub or a local copy.
* ``load_generic(source, mapping, ...)``: any Hub dataset or local JSONL/JSON/CSV/Parquet, mapped by a
  ``FieldMapping`` or its compact string form (``parse_mapping``; see :mod:`prefdisco.benchmarks.mapping`).
"""

from prefdisco.benchmarks.loader import load_generic, load_problems
from prefdisco.benchmarks.mapping import FieldMapping, GoldFormat, parse_mapping
from prefdisco.benchmarks.registry import BENCHMARKS, BenchmarkSpec, get_spec

__all__ = [
    "BENCHMARKS",
    "BenchmarkSpec",
    "FieldMapping",
    "GoldFormat",
    "get_spec",
    "load_generic",
    "load_problems",
    "parse_mapping",
]
