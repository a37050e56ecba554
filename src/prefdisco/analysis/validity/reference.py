"""A run's simulated user against real people, in its report (``prefdisco report --reference-table DIR``): the
table a ``prefdisco simfidelity --reference`` run wrote to ``DIR`` (``reference.csv``, ``reference_pairs.csv``,
``summary.json``), shown in the Validity section, and one reading naming this run's simulator's reference fidelity
when ``DIR`` measured it, or saying why not.

A reference run's simulator is this run's only when their simulated users share the whole protocol
(``protocol_record.USER_PROTOCOL``: type, model, temperature, token and reasoning limits, redraws and the hash of
the user's prompts; the run's from its ``protocol.json``, the reference run's from its ``summary.json``): two
simulators of one type and model at another temperature answer otherwise, and one's reading is not the other's. A
run whose user matches none gets no fidelity, and the reading names what differs.

The reading gives the composite with each statistic's distance from the people and its interval beside it, the
empty replies, and per other simulator of the table which is closer to the people on each statistic
(``table.py``), never a verdict from the composite alone.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from prefdisco.analysis.section.registry import Reading
from prefdisco.errors import UserError
from prefdisco.results.merge import RunProtocol
from prefdisco.results.protocol_record import USER_PROTOCOL, user_protocol

SHARES = ("starts_no", "starts_yes", "bare_yes_no", "dont_know")
CLOSENESS = ("mean_words", *SHARES, "disclosure", "discloses_any", "polarity_agreement")
FIDELITY_COLUMNS = ("reference_fidelity", "reference_fidelity_low", "reference_fidelity_high")
"""The composite and its interval (named ``fidelity``, ``fidelity_low``, ``fidelity_high`` before issue 45:
``LEGACY_COLUMNS``)."""
LEGACY_COLUMNS = dict(zip(("fidelity", "fidelity_low", "fidelity_high"), FIDELITY_COLUMNS, strict=True))
"""An older ``reference.csv``'s names of the reference fidelity, read under the new ones."""
LABELS = {
    "mean_words": "mean words",
    "starts_no": "starts no",
    "starts_yes": "starts yes",
    "bare_yes_no": "bare yes/no",
    "dont_know": "don't know",
    "disclosure": "disclosure",
    "discloses_any": "discloses any",
    "polarity_agreement": "polarity agreement",
    "reference_fidelity": "reference fidelity (composite)",
}
"""How each part is named where it is shown."""
NOT_APART, NO_INTERVAL = "not told apart", "no interval"

INSTRUMENT = "Simulator against people"
SHOWN = (
    "n",
    "empty",
    "mean_words",
    "starts_no",
    "starts_yes",
    "bare_yes_no",
    "dont_know",
    "disclosure",
    "reference_fidelity",
)
"""The columns of the reference table the report shows (``reference.csv`` has them all)."""
PAIRS_FILE = "reference_pairs.csv"


@dataclass
class ReferenceTable:
    """``reference.csv`` of a reference run, with what it was measured against."""

    folder: Path
    reference: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    protocols: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    """Each simulator's user protocol (``USER_PROTOCOL``) as the reference run recorded it (None: not recorded, an
    older run)."""
    pairs: pd.DataFrame | None = None
    """``reference_pairs.csv`` (None: an older run without it)."""
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
        frame = pd.read_csv(table).rename(columns=LEGACY_COLUMNS)  # an older run's "fidelity": the same score
        rows = [{k: _plain(v) for k, v in r.items()} for r in frame.to_dict("records")]
        pairs = pd.read_csv(folder / PAIRS_FILE) if (folder / PAIRS_FILE).is_file() else None
    except (ValueError, OSError) as e:
        raise UserError(f"--reference-table {folder}: cannot be read ({str(e).splitlines()[0]})") from None
    if not rows or rows[0].get("simulator") != "people":
        raise UserError(f"--reference-table {folder}: reference.csv has no people's row; not a reference run's")
    protocols = {str(s.get("label")): s.get("protocol") for s in about.get("simulators") or [] if isinstance(s, dict)}
    reference = f"{about.get('reference', '?')} ({about.get('rows', '?')} rows)"
    return ReferenceTable(folder, reference, rows, protocols, pairs)


def _label(protocol: dict[str, Any]) -> str:
    return f"{protocol.get('user_type')}@{protocol.get('user_model')}"


def _shown(value: Any) -> str:
    return "none" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def match(table: ReferenceTable, record: Any) -> tuple[str | None, str]:
    """The label of ``table``'s simulator whose user protocol is ``record``'s (None when none is) and what this run's
    simulated user is called; with no match, why (the second item then says so)."""
    ours = user_protocol(record)
    name = _label(ours)
    same_user = {label: p for label, p in table.protocols.items() if p is not None and _label(p) == name}
    for label, theirs in same_user.items():
        if all(theirs.get(key) == ours.get(key) for key in USER_PROTOCOL) and ours.get("user_prompts") is not None:
            return label, name
    if not any(str(r["simulator"]).split(" (")[0] == name for r in table.rows[1:]):
        return None, f"{name} not in it"
    if ours.get("user_prompts") is None:
        return None, (
            f"{name}: this run's protocol.json records no hash of its simulated user's prompts (an older record), so "
            "its user's protocol cannot be matched"
        )
    if not same_user:
        return None, (
            f"{name}: the reference run records no protocol of its simulators (an older run; rerun it with "
            "--overwrite), so none can be matched"
        )
    apart = []
    for label, theirs in same_user.items():
        keys = [k for k in USER_PROTOCOL if ours.get(k) != theirs.get(k)]
        apart.append(
            f"{label} ({', '.join(f'{k} {_shown(ours[k])} here, {_shown(theirs.get(k))} there' for k in keys)})"
        )
    return None, f"{name}: measured only under another user protocol: {'; '.join(apart)}"


def _fidelity(row: dict[str, Any]) -> str:
    if row.get("reference_fidelity") is None:
        return "reference fidelity undefined"
    span = ""
    if row.get("reference_fidelity_low") is not None:
        span = f" [{row['reference_fidelity_low']:.3f}, {row['reference_fidelity_high']:.3f}]"
    return f"reference fidelity {row['reference_fidelity']:.3f}{span}"


def _parts(row: dict[str, Any]) -> str:
    """The composite's parts: the empty replies and each statistic's distance from the people with its interval."""
    empty = row.get("empty")
    counted = f"{int(empty)} empty replies" if empty is not None else "empty replies not counted"
    return f"{counted}; distance from the people per statistic [95 % CI]: {distances_text(row)}"


def simulator_fidelity(table: ReferenceTable, protocol: RunProtocol) -> str:
    """What ``table`` says of ``protocol``'s simulator, for the leaderboard's protocol box."""
    if protocol.record is None:
        return "simulator not recorded (no protocol.json)"
    label, said = match(table, protocol.record)
    if label is None:
        return f"{said}: no reference fidelity against {table.reference}"
    row = next(r for r in table.rows[1:] if str(r["simulator"]) == label)
    return f"{label}: {_fidelity(row)} ({_parts(row)}) against {table.reference}"


def _against_others(table: ReferenceTable, label: str) -> str:
    others = [str(r["simulator"]) for r in table.rows[1:] if str(r["simulator"]) != label]
    if not others:
        return ""
    if table.pairs is None:
        return "; which simulator is closer to the people per statistic not recorded (an older reference run)"
    return "".join(f"; against {other}: {pair_text(table.pairs, label, other)}" for other in others)


def reference_reading(table: ReferenceTable, protocols: list[RunProtocol]) -> Reading:
    """The Validity line of this run's simulator against the people of ``table``."""
    people = table.rows[0]
    by_label = {str(r["simulator"]): r for r in table.rows[1:]}
    found = [match(table, p.record) for p in protocols if p.record is not None]
    table.matched = list(dict.fromkeys(label for label, _ in found if label is not None))
    about = (
        f"against {table.reference} ({table.folder / 'reference.csv'}): people answer in "
        f"{people['mean_words']:.1f} words, {people['starts_no']:.0%} start with no"
    )
    if not table.matched:
        said = "; ".join(dict.fromkeys(why for _, why in found))
        why = said or "this run records no simulated user (no protocol.json)"
        return Reading(INSTRUMENT, "not measured", f"{why}; the table measured {', '.join(by_label) or 'nothing'}")
    parts = []
    for label in table.matched:
        r = by_label[label]
        parts.append(
            f"{label}: {_fidelity(r)}"
            + (f", rank {int(r['rank'])} of {len(by_label)} by the composite" if r.get("rank") is not None else "")
            + f"; {_parts(r)}{_against_others(table, label)}"
        )
    finding = "; ".join(_fidelity(by_label[label]) for label in table.matched)
    return Reading(INSTRUMENT, finding, f"{' — '.join(parts)} — {about} (distance 0 = as people answer)")


def _number(value: object) -> float | None:
    return None if value is None or (isinstance(value, float) and np.isnan(value)) else float(value)  # type: ignore[arg-type]


def distances_text(row: dict) -> str:
    """Each statistic's distance from the people with its interval, as one phrase (``—`` where undefined); an older
    ``reference.csv`` without them says so."""
    if f"distance_{CLOSENESS[0]}" not in row:
        return "distances per statistic not recorded (a reference run made before they were: rerun it)"
    parts = []
    for name in CLOSENESS:
        value, lo, hi = (_number(row.get(f"distance_{name}{end}")) for end in ("", "_low", "_high"))
        span = f" [{lo:.3f}, {hi:.3f}]" if lo is not None and hi is not None else ""
        parts.append(f"{LABELS[name]} {'—' if value is None else f'{value:.3f}'}{span}")
    return ", ".join(parts)


def pair_text(pairs: pd.DataFrame, a: str, b: str) -> str:
    """Which of ``a`` and ``b`` is closer to the people, per statistic (``reference_pairs.csv``), then the composite."""
    mine = pairs[
        ((pairs["simulator"] == a) & (pairs["other"] == b)) | ((pairs["simulator"] == b) & (pairs["other"] == a))
    ]
    said: dict[str, list[str]] = {a: [], b: [], NOT_APART: [], NO_INTERVAL: []}
    composite = NO_INTERVAL
    for row in mine.to_dict("records"):
        if row["statistic"] == "reference_fidelity":
            composite = str(row["closer"])
        else:
            said.setdefault(str(row["closer"]), []).append(LABELS[row["statistic"]])
    groups = [f"{who} on {', '.join(names)}" for who, names in said.items() if names]
    return f"closer to people per statistic: {'; '.join(groups)} (composite: {composite})"
