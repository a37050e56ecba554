"""A run's simulated user against real people, in its report (``prefdisco report --reference-table DIR``): the
table a ``prefdisco simfidelity --reference`` run wrote to ``DIR`` (``reference.csv``, ``summary.json``), shown in
the Validity section, and one reading naming this run's simulator's fidelity when ``DIR`` measured it (the label
``USER_TYPE@USER_MODEL`` of its protocol record), or saying that it did not."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from prefdisco.analysis.validity import Reading
from prefdisco.errors import UserError
from prefdisco.results.merge import RunProtocol

INSTRUMENT = "Simulator against people"
SHOWN = ("n", "mean_words", "starts_no", "starts_yes", "bare_yes_no", "dont_know", "disclosure", "fidelity")
"""The columns of the reference table the report shows (``reference.csv`` has them all)."""


@dataclass
class ReferenceTable:
    """``reference.csv`` of a reference run, with what it was measured against."""

    folder: Path
    reference: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    matched: list[str] = field(default_factory=list)
    """This run's simulators found in the table (set by ``reference_reading``)."""


def _plain(value: Any) -> Any:
    return None if isinstance(value, float) and math.isnan(value) else value


def load_reference_table(folder: Path) -> ReferenceTable:
    """The reference run in ``folder``; a folder without one is one line naming what to give."""
    folder = Path(folder)
    table, summary = folder / "reference.csv", folder / "summary.json"
    if not table.is_file() or not summary.is_file():
        raise UserError(
            f"--reference-table {folder}: no reference.csv and summary.json; give the --out of prefdisco "
            "simfidelity --reference"
        )
    try:
        about = json.loads(summary.read_text(encoding="utf-8"))
        rows = [{k: _plain(v) for k, v in r.items()} for r in pd.read_csv(table).to_dict("records")]
    except (ValueError, OSError) as e:
        raise UserError(f"--reference-table {folder}: cannot be read ({str(e).splitlines()[0]})") from None
    if not rows or rows[0].get("simulator") != "people":
        raise UserError(f"--reference-table {folder}: reference.csv has no people's row; not a reference run's")
    return ReferenceTable(folder, f"{about.get('reference', '?')} ({about.get('rows', '?')} rows)", rows)


def run_simulators(protocols: list[RunProtocol]) -> list[str]:
    """``USER_TYPE@USER_MODEL`` of every run with a protocol record, as a reference run labels its simulators."""
    labels = []
    for p in protocols:
        if p.record is not None:
            labels.append(f"{p.record.settings.get('user_type')}@{p.record.user_model}")
    return list(dict.fromkeys(labels))


def simulator_fidelity(table: ReferenceTable, protocol: RunProtocol) -> str:
    """What ``table`` says of ``protocol``'s simulator, for the leaderboard's protocol box."""
    labels = run_simulators([protocol])
    rows = {str(r["simulator"]): r for r in table.rows[1:]}
    if not labels:
        return "simulator not recorded (no protocol.json)"
    if labels[0] not in rows:
        return f"{labels[0]}: not measured against {table.reference}"
    return f"{labels[0]}: {_fidelity(rows[labels[0]])} against {table.reference}"


def _fidelity(row: dict[str, Any]) -> str:
    if row.get("fidelity") is None:
        return "fidelity undefined"
    span = ""
    if row.get("fidelity_low") is not None:
        span = f" [{row['fidelity_low']:.3f}, {row['fidelity_high']:.3f}]"
    return f"fidelity {row['fidelity']:.3f}{span}"


def reference_reading(table: ReferenceTable, protocols: list[RunProtocol]) -> Reading:
    """The Validity line of this run's simulator against the people of ``table``."""
    people = table.rows[0]
    by_label = {str(r["simulator"]): r for r in table.rows[1:]}
    ours = run_simulators(protocols)
    table.matched = [label for label in ours if label in by_label]
    about = (
        f"against {table.reference} ({table.folder / 'reference.csv'}): people answer in "
        f"{people['mean_words']:.1f} words, {people['starts_no']:.0%} start with no"
    )
    if not table.matched:
        why = "this run records no simulated user (no protocol.json)" if not ours else f"{', '.join(ours)} not in it"
        return Reading(INSTRUMENT, "not measured", f"{why}; the table measured {', '.join(by_label) or 'nothing'}")
    parts = []
    for label in table.matched:
        r = by_label[label]
        parts.append(
            f"{label}: {_fidelity(r)}, {r['mean_words']:.1f} words, {r['starts_no']:.0%} start with no"
            + (f", rank {int(r['rank'])} of {len(by_label)}" if r.get("rank") is not None else "")
        )
    finding = "; ".join(_fidelity(by_label[label]) for label in table.matched)
    return Reading(INSTRUMENT, finding, f"{'; '.join(parts)} — {about} (1 = as people answer)")
