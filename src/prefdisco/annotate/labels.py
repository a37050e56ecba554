"""The exported label table: one row per (annotator, scenario, attribute), and its CSV form.

Columns: ``annotator, scenario_id, attribute, llm_relevant, label`` — the last two are 0/1. ``llm_relevant``
is whether the builder's model put the attribute in F(i); ``label`` is the annotator's answer (1 = relevant).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import NamedTuple

from prefdisco.annotate.export import write_rows
from prefdisco.errors import UserError

COLUMNS = ("annotator", "scenario_id", "attribute", "llm_relevant", "label")

TIE_RULE = "a tie in a majority vote (even number of voters, half say relevant) counts as relevant (1)"


class LabelRow(NamedTuple):
    annotator: str
    scenario_id: str
    attribute: str
    llm_relevant: int
    label: int


def write_csv(rows: list[LabelRow], out: Path) -> None:
    """Write the rows to ``out`` atomically (temp file in the same folder, then ``os.replace``)."""
    write_rows(out, COLUMNS, rows)


def read_csv(path: Path) -> list[LabelRow]:
    """Read and check a label CSV: the five columns, 0/1 flags, one row per key, one LLM flag per item."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: file not found (expected a CSV with columns {', '.join(COLUMNS)})")
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None or set(COLUMNS) - set(reader.fieldnames):
            missing = sorted(set(COLUMNS) - set(reader.fieldnames or ()))
            raise UserError(f"{path}: missing column(s) {', '.join(missing)} (expected {', '.join(COLUMNS)})")
        rows: list[LabelRow] = []
        seen: set[tuple[str, str, str]] = set()
        llm: dict[tuple[str, str], int] = {}
        for number, record in enumerate(reader, start=2):
            where = f"{path} row {number}"
            text = {c: (record.get(c) or "").strip() for c in COLUMNS}
            for column in ("annotator", "scenario_id", "attribute"):
                if not text[column]:
                    raise UserError(f"{where}: {column} is empty")
            flags = {c: _flag(text[c], where, c) for c in ("llm_relevant", "label")}
            key = (text["annotator"], text["scenario_id"], text["attribute"])
            if key in seen:
                raise UserError(f"{where}: second label by {key[0]!r} for {key[1]!r} / {key[2]!r}")
            seen.add(key)
            item = (text["scenario_id"], text["attribute"])
            if llm.setdefault(item, flags["llm_relevant"]) != flags["llm_relevant"]:
                raise UserError(f"{where}: llm_relevant differs from an earlier row for {item[0]!r} / {item[1]!r}")
            rows.append(LabelRow(*key, flags["llm_relevant"], flags["label"]))
    return rows


def _flag(value: str, where: str, column: str) -> int:
    if value not in ("0", "1"):
        raise UserError(f"{where}: {column} must be 0 or 1, got {value!r}")
    return int(value)
