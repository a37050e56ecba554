"""How a report shows a value: as text in a table cell (``num``, ``interval``, ``span``, ``md``), as template rows
(``records``, the templates' environment with those filters), and as plain JSON in ``summary.json`` (``plain``,
``nested``, ``summary_json``: null, never NaN). Every section, the report, the leaderboard and the reference page
show numbers through these; a reading lists its cells with ``listed``."""

from __future__ import annotations

import functools
import json
import math
from typing import Any

import numpy as np
import pandas as pd


def finite(value: Any) -> float | None:
    """A finite float, or None (None, NA, NaN and ±inf alike)."""
    if value is None or value is pd.NA:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def num(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)) or value is pd.NA:
        return "—"
    if isinstance(value, int | bool):
        return str(value)
    return f"{float(value):.{digits}f}"


def fixed(value: Any, digits: int = 2, sign: bool = False) -> str:
    """A finite number with ``digits`` decimals (and its sign with ``sign``), else "—"."""
    number = finite(value)
    if number is None:
        return "—"
    return f"{number:+.{digits}f}" if sign else f"{number:.{digits}f}"


def interval(lo: Any, hi: Any, digits: int = 1) -> str:
    if lo is None or hi is None or (isinstance(lo, float) and math.isnan(lo)):
        return "—"
    return f"[{num(lo, digits)}, {num(hi, digits)}]"


def span(cell: dict[str, Any]) -> str:
    """A NormAlign cell's interval, or why it has none ("too few scenarios (n = 2)")."""
    if cell.get("ci_low") is None and cell.get("ci_reason"):
        return str(cell["ci_reason"])
    return interval(cell.get("ci_low"), cell.get("ci_high"))


def listed(parts: list[str], limit: int = 4) -> str:
    """A reading's cells: the first ``limit``, then how many more."""
    return "; ".join(parts[:limit]) + (f"; and {len(parts) - limit} more" if len(parts) > limit else "")


def md(value: Any) -> str:
    """Text safe inside a Markdown table cell."""
    return str(value).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def records(frame: pd.DataFrame | None) -> list[dict[str, Any]]:
    """A frame's rows as dicts, None for every missing value ([] for no frame)."""
    if frame is None:
        return []
    return [{k: (None if pd.isna(v) else v) for k, v in r.items()} for r in frame.to_dict("records")]


@functools.cache
def template_env(autoescape: bool):
    """The report templates' environment (the report's and the leaderboard's pages), one per process for each
    escaping: jinja compiles a template once per environment (about 0.3 s of a report's render when a new one was
    made for every report)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("prefdisco.analysis.report", "templates"),
        autoescape=autoescape,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters |= {"num": num, "interval": interval, "md": md, "span": span}
    return env


def plain(value: Any) -> Any:
    """Python scalars, lists and dicts only; NaN/inf/None become None."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def summary_json(summary: dict[str, Any]) -> bytes:
    """The bytes of a ``summary.json``: plain JSON, indented, null for every missing or non-finite number."""
    return (json.dumps(plain(summary), indent=2, allow_nan=False) + "\n").encode("utf-8")


def nested(frame: pd.DataFrame, keys: list[str], value: Any) -> dict:
    out: dict = {}
    for row in frame.to_dict("records"):
        node = out
        for k in keys[:-1]:
            node = node.setdefault(str(row[k]), {})
        node[str(row[keys[-1]])] = value(row)
    return out
