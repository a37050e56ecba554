"""Typed, validated columns read from a pyarrow table (CSV or Parquet), one vectorized pass per column.

Every check names the file, the 1-based data row and the column in a one-line ``UserError``. Data row 1 is the
first row after the CSV header (line 2 of the file), or the first row of a Parquet file.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from prefdisco.errors import UserError

TRUE_WORDS = ("1", "1.0", "true")
FALSE_WORDS = ("0", "0.0", "false")


def _first(mask: pa.ChunkedArray | pa.Array) -> int:
    """Index of the first true value of a boolean array (nulls count as false); -1 when none."""
    return int(pc.index(pc.fill_null(mask, False), True).as_py())


def _as_text(col: pa.ChunkedArray) -> pa.ChunkedArray:
    if pa.types.is_dictionary(col.type):
        col = col.cast(col.type.value_type)
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        col = col.cast(pa.string())
    trimmed = pc.utf8_trim_whitespace(col)
    return pc.if_else(pc.equal(trimmed, ""), pa.scalar(None, trimmed.type), trimmed)


class Columns:
    """Column readers bound to one table and the name its errors should show."""

    def __init__(self, table: pa.Table, where: str, *, row_word: str = "data row") -> None:
        self.table = table
        self.where = where
        self.row_word = row_word

    def fail(self, index: int, column: str, message: str) -> UserError:
        return UserError(f"{self.where}: {self.row_word} {index + 1}: column {column}: {message}")

    def require(self, names: tuple[str, ...]) -> None:
        missing = [n for n in names if n not in self.table.column_names]
        if missing:
            raise UserError(
                f"{self.where}: missing required column {', '.join(missing)} (required: {', '.join(names)})"
            )

    def text(self, name: str, *, required: bool) -> pd.Categorical:
        """Stripped text as a pandas categorical (NaN for empty cells); ``required`` rejects empty cells.

        Works on the dictionary (the distinct values) and the integer codes only, so a column of millions of
        rows with few distinct values costs little.
        """
        raw = self.table.column(name)
        if not pa.types.is_dictionary(raw.type):
            if not (pa.types.is_string(raw.type) or pa.types.is_large_string(raw.type)):
                raw = raw.cast(pa.string())
            raw = pc.dictionary_encode(raw)
        cat = raw.to_pandas()
        if not isinstance(cat.dtype, pd.CategoricalDtype):
            cat = cat.astype("category")
        cat = pd.Categorical(cat)
        stripped = pd.Index(cat.categories.astype(str)).str.strip()
        if len(stripped) and (not stripped.equals(pd.Index(cat.categories.astype(str))) or (stripped == "").any()):
            keep = stripped[stripped != ""].unique()
            lookup = np.append(keep.get_indexer(stripped), -1)  # code -1 (empty) stays -1
            cat = pd.Categorical.from_codes(lookup[cat.codes], categories=keep)
        if required and (cat.codes < 0).any():
            raise self.fail(int(np.argmax(cat.codes < 0)), name, "is empty (expected a value)")
        return cat

    def choice(self, name: str, allowed: tuple[str, ...], required: bool = True) -> pd.Categorical:
        cat = self.text(name, required=required)
        bad_codes = [i for i, c in enumerate(cat.categories) if c not in allowed]
        if bad_codes:
            i = int(np.argmax(np.isin(cat.codes, bad_codes)))
            raise self.fail(i, name, f"unknown value {cat[i]!r} (expected one of {', '.join(allowed)})")
        return cat

    def number(
        self, name: str, *, lo: float | None = None, hi: float | None = None, integer: bool = False
    ) -> np.ndarray:
        """Float64 values, NaN for empty cells (and a literal ``nan``); anything else non-numeric fails."""
        raw = self.table.column(name)
        expected = "an integer" if integer else "a number"
        if lo is not None and hi is not None:
            expected += f" in [{lo:g}, {hi:g}]"
        elif lo is not None:
            expected += f" >= {lo:g}"
        if pa.types.is_boolean(raw.type) or pa.types.is_integer(raw.type) or pa.types.is_floating(raw.type):
            values = pc.cast(raw, pa.float64())
        elif pa.types.is_null(raw.type):
            values = pa.chunked_array([pa.nulls(len(raw), pa.float64())])
        else:
            col = _as_text(raw)
            try:
                values = pc.cast(col, pa.float64())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                values = self._parse_numbers(col, name, expected)
        out = values.to_numpy().astype(np.float64, copy=True)
        if not len(out):
            return out
        checks = [(np.isinf(out), f"{expected} (not infinite)")]
        if integer:
            checks.append((np.isfinite(out) & (out != np.round(out)), expected))
        if lo is not None:
            checks.append((out < lo, expected))
        if hi is not None:
            checks.append((out > hi, expected))
        for bad, message in checks:
            if bad.any():
                i = int(np.argmax(bad))
                raise self.fail(i, name, f"{_show(out[i])} is not {message}")
        return out

    def _parse_numbers(self, col: pa.ChunkedArray, name: str, expected: str) -> pa.ChunkedArray:
        uniques = pc.unique(col).drop_null().to_pylist()
        parsed: dict[str, float] = {}
        for u in uniques:
            try:
                parsed[u] = float(u)
            except ValueError:
                i = _first(pc.equal(col, u))
                raise self.fail(i, name, f"{u!r} is not {expected}") from None
        keys = pa.array(list(parsed))
        idx = pc.index_in(col, value_set=keys)
        table = pa.array(list(parsed.values()), pa.float64())
        return pa.chunked_array([pc.take(table, chunk) for chunk in idx.chunks], pa.float64())

    def flag(self, name: str) -> np.ndarray:
        """0/1/true/false (any case; 0.0/1.0 too) as float 0.0/1.0; empty is NaN."""
        raw = self.table.column(name)
        expected = "expected 0, 1, true, false or empty"
        if pa.types.is_boolean(raw.type) or pa.types.is_integer(raw.type) or pa.types.is_floating(raw.type):
            out = pc.cast(raw, pa.float64()).to_numpy().astype(np.float64, copy=True)
            bad = ~np.isnan(out) & (out != 0) & (out != 1)
            if bad.any():
                i = int(np.argmax(bad))
                raise self.fail(i, name, f"{_show(out[i])} is not a flag ({expected})")
            return out
        col = pc.utf8_lower(_as_text(raw))
        words = (*TRUE_WORDS, *FALSE_WORDS)
        bad = pc.and_(pc.is_valid(col), pc.invert(pc.is_in(col, value_set=pa.array(words))))
        i = _first(bad)
        if i >= 0:
            raise self.fail(i, name, f"{_as_text(raw)[i].as_py()!r} is not a flag ({expected})")
        idx = pc.index_in(col, value_set=pa.array(words))
        lookup = np.array([1.0] * len(TRUE_WORDS) + [0.0] * len(FALSE_WORDS) + [np.nan])
        codes = pc.fill_null(idx, len(words)).to_numpy()
        return lookup[codes]


def _show(x: float) -> str:
    return f"{x:g}"
