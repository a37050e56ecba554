"""Real people's answers to clarifying questions, read as ``ReferenceRow``s: the human reference a simulated user is
measured against (``prefdisco simfidelity --reference``).

Two layouts are read, from a path the user gives (the files are not shipped):

* ``qulac`` — Qulac (Aliannejadi et al., SIGIR 2019; MIT): ``qulac.json``, one JSON object of columns as pandas
  writes a frame with ``orient="columns"`` (each column maps a row index to its value). Crowd workers were shown a
  search topic and one facet of it (their hidden information need, ``facet_desc``) and a clarifying question
  (``question``), and wrote the answer (``answer``) a person with that need would give. 11,039 rows, 198 topics.
* ``clariq`` — the ClariQ TSV layout: tab-separated with a header naming at least ``question``, ``answer`` and
  ``facet_desc`` (``topic``, ``topic_id``, ``facet_id`` and ``facet_type`` are read where present; ClariQ's
  ``initial_request`` is its topic).

A row's need, question and answer must each be present: a row without one is refused in one line naming the file
and the row, never skipped silently — but for Qulac's facet records: Qulac has one row per facet with neither a
question nor an answer (762 of its 11,039: the facet before any question was asked), which is no answer to
measure; those are left out and counted (``Reference.facet_records``). The people's text is kept as typed (lower
case, unpunctuated in places).
"""

from __future__ import annotations

import csv
import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from prefdisco.errors import UserError

LAYOUTS: tuple[str, ...] = ("qulac", "clariq")
REQUIRED = ("facet_desc", "question", "answer")
"""The columns every layout must give: the hidden need, the clarifying question, the person's answer."""


class ReferenceRow(BaseModel):
    """One person's answer to one clarifying question, with the need they held."""

    model_config = ConfigDict(frozen=True)

    row: str
    """The row's id in its file (Qulac's row index; a TSV's line number from 1 under the header)."""
    topic: str
    topic_id: str
    facet_id: str
    facet_type: str
    """Qulac: ``inf`` (informational), ``nav`` (navigational) or ``inv``; empty where the file gives none."""
    need: str
    """The facet: the information need the person held (hidden from whoever asked)."""
    question: str
    answer: str


@dataclass(frozen=True)
class Reference:
    """A reference file read: its answers, in file order, and what was left out of them."""

    rows: list[ReferenceRow]
    total: int
    """Rows in the file."""
    facet_records: int
    """Rows with neither a question nor an answer (Qulac's one per facet): no answer, left out."""


def read_reference(layout: str, path: Path) -> Reference:
    """Every answer of ``path`` in ``layout`` (``LAYOUTS``), in file order; bad input is one ``UserError`` line."""
    if layout not in LAYOUTS:
        raise UserError(f"--reference: unknown layout {layout!r}; expected one of {', '.join(LAYOUTS)}")
    path = Path(path)
    if not path.is_file():
        raise UserError(f"--reference {layout} {path}: no such file")
    records = _qulac(path) if layout == "qulac" else _clariq(path)
    answers = [(i, r) for i, r in records if _text(r.get("question")) or _text(r.get("answer"))]
    if not answers:
        raise UserError(f"--reference {layout} {path}: holds no answer")
    rows = [_row(path, row_id, record) for row_id, record in answers]
    return Reference(rows, len(records), len(records) - len(answers))


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _row(path: Path, row_id: str, record: dict[str, Any]) -> ReferenceRow:
    for column in REQUIRED:
        if not _text(record.get(column)):
            raise UserError(f"{path}: row {row_id} has no {column} (every row needs {', '.join(REQUIRED)})")
    topic = _text(record.get("topic") or record.get("initial_request"))
    return ReferenceRow(
        row=row_id,
        topic=topic,
        topic_id=_text(record.get("topic_id")) or topic,
        facet_id=_text(record.get("facet_id")),
        facet_type=_text(record.get("facet_type")),
        need=_text(record["facet_desc"]),
        question=_text(record["question"]),
        answer=_text(record["answer"]),
    )


def _qulac(path: Path) -> list[tuple[str, dict[str, Any]]]:
    try:
        columns = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise UserError(f"--reference qulac {path}: not Qulac's JSON ({str(e).splitlines()[0]})") from None
    if not isinstance(columns, dict) or not all(isinstance(v, dict) for v in columns.values()):
        raise UserError(f"--reference qulac {path}: expected one JSON object of columns (row index → value)")
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise UserError(f"--reference qulac {path}: no column {', '.join(missing)} (is it the ClariQ layout?)")
    ids = sorted(columns["answer"], key=lambda k: (len(k), k))  # "0" … "11038" in numeric order
    return [(i, {name: values.get(i) for name, values in columns.items()}) for i in ids]


def _clariq(path: Path) -> list[tuple[str, dict[str, Any]]]:
    try:
        with path.open(encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f, delimiter="\t")
            header = reader.fieldnames or []
            missing = [c for c in REQUIRED if c not in header]
            if missing:
                raise UserError(
                    f"--reference clariq {path}: the header has no {', '.join(missing)} column (a TSV with "
                    f"{', '.join(REQUIRED)})"
                )
            return [(str(n), dict(record)) for n, record in enumerate(reader, start=1)]
    except UnicodeDecodeError as e:
        raise UserError(f"--reference clariq {path}: not UTF-8 text ({e.reason})") from None


SPLITS = ("all", "fit", "heldout")
"""The topic halves of a reference: ``fit`` (a topic whose id's CRC-32 is even), ``heldout`` (odd), or ``all``. The
human-like user's packaged behaviour is fitted on Qulac's ``fit`` topics and measured on its ``heldout`` ones."""


def topic_split(topic_id: str) -> str:
    return "fit" if zlib.crc32(topic_id.encode()) % 2 == 0 else "heldout"


def in_split(rows: list[ReferenceRow], split: str) -> list[ReferenceRow]:
    """The rows of ``split``'s topics (every row for ``all``)."""
    if split not in SPLITS:
        raise UserError(f"--topics: expected one of {', '.join(SPLITS)}, got {split!r}")
    return list(rows) if split == "all" else [r for r in rows if topic_split(r.topic_id) == split]
