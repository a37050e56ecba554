"""The response-rating tables of the annotation database, on the same SQLite store as the attribute labels.

``RatingStore`` is a ``Store`` (its connections, ``BEGIN IMMEDIATE`` transactions, WAL and busy timeout) with two
tables more: ``rating_items`` (the fixed item set, written once in the transaction that checks it is absent, like
the attribute items) and ``ratings`` (one score 1–5 per annotator and item; resubmitting replaces). Its metadata
rows are the ``meta`` table's ``ratings_*`` keys, so one file may hold both task kinds.

The item rows hold what the page shows and the keys the export writes — never the judge's score.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import NamedTuple

from prefdisco.annotate.rating_items import RatingItem
from prefdisco.annotate.store import Store, SubmissionError
from prefdisco.errors import UserError

META_PREFIX = "ratings_"
SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rating_items (
    position INTEGER PRIMARY KEY,
    model TEXT NOT NULL,
    task TEXT NOT NULL,
    scenario_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    fixed_k INTEGER,
    epoch INTEGER NOT NULL,
    attribute TEXT NOT NULL,
    problem_text TEXT NOT NULL,
    response TEXT NOT NULL,
    description TEXT NOT NULL,
    preferred_value TEXT NOT NULL,
    levels TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ratings (
    annotator TEXT NOT NULL,
    position INTEGER NOT NULL REFERENCES rating_items (position),
    score INTEGER NOT NULL CHECK (score BETWEEN 1 AND 5),
    updated_at TEXT NOT NULL,
    PRIMARY KEY (annotator, position)
);
"""
_ITEM_COLUMNS = (
    "position, model, task, scenario_id, mode, fixed_k, epoch, attribute, problem_text, response, description, "
    "preferred_value, levels"
)


class RatingRow(NamedTuple):
    annotator: str
    model: str
    task: str
    scenario_id: str
    mode: str
    fixed_k: int | None
    epoch: int
    attribute: str
    score: int


class RatingStore(Store):
    def ensure_schema(self) -> None:
        super().ensure_schema()
        try:
            with self.connect() as conn:
                conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as e:
            raise UserError(f"{self.path}: not a PrefDisco annotation database ({e})") from None

    def require_rating_items(self) -> None:
        """UserError unless the file exists and holds a rating item set (for export and serving)."""
        if not self.path.is_file():
            raise UserError(
                f"{self.path}: annotation database not found (start `prefdisco annotate serve-ratings` first)"
            )
        self.ensure_schema()
        if not self.rating_items():
            raise UserError(f"{self.path}: the database holds no response-rating items")

    def rating_meta(self) -> dict[str, str]:
        """The ``ratings_*`` metadata, without the prefix."""
        return {k.removeprefix(META_PREFIX): v for k, v in self.meta().items() if k.startswith(META_PREFIX)}

    def initialize_ratings(self, items: list[RatingItem], meta: Mapping[str, str]) -> bool:
        """Store the item set and its metadata unless one is stored already. True when this call stored it."""
        with self.transaction() as conn:
            if conn.execute("SELECT 1 FROM rating_items LIMIT 1").fetchone():
                return False
            entries = {"schema_version": SCHEMA_VERSION, "created_at": _now(), **meta}
            conn.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [(META_PREFIX + key, value) for key, value in entries.items()],
            )
            conn.executemany(
                f"INSERT INTO rating_items ({_ITEM_COLUMNS}) VALUES ({', '.join('?' * 13)})",
                [
                    (
                        i.position,
                        i.model,
                        i.task,
                        i.scenario_id,
                        i.mode,
                        i.fixed_k,
                        i.epoch,
                        i.attribute,
                        i.problem_text,
                        i.response,
                        i.description,
                        i.preferred_value,
                        json.dumps(list(i.levels)),
                    )
                    for i in items
                ],
            )
        return True

    def rating_items(self) -> list[RatingItem]:
        with self.connect() as conn:
            rows = conn.execute(f"SELECT {_ITEM_COLUMNS} FROM rating_items ORDER BY position").fetchall()
        names = [name.strip() for name in _ITEM_COLUMNS.split(",")]
        return [
            RatingItem(**{**dict(zip(names, row, strict=True)), "levels": tuple(json.loads(row[12]))}) for row in rows
        ]

    # -- ratings --------------------------------------------------------------------------------------------

    def rate(self, annotator: str, position: int, score: int) -> None:
        """Store (or replace) one annotator's score of one item; ``SubmissionError`` for an unknown item or a
        score outside 1–5 (nothing is changed then)."""
        if isinstance(score, bool) or not isinstance(score, int) or not 1 <= score <= 5:
            raise SubmissionError(f"score must be an integer from 1 to 5, got {score!r}")
        with self.transaction() as conn:
            if not conn.execute("SELECT 1 FROM rating_items WHERE position = ?", (position,)).fetchone():
                raise SubmissionError(f"unknown item {position}", status=404)
            conn.execute(
                "INSERT INTO ratings (annotator, position, score, updated_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (annotator, position) DO UPDATE SET score = excluded.score, "
                "updated_at = excluded.updated_at",
                (annotator, position, score, _now()),
            )

    def rated(self, annotator: str) -> dict[int, int]:
        """Position -> score of every item this annotator has rated."""
        with self.connect() as conn:
            return dict(
                conn.execute("SELECT position, score FROM ratings WHERE annotator = ?", (annotator,)).fetchall()
            )

    def rating_rows(self) -> list[RatingRow]:
        with self.connect() as conn:
            return [
                RatingRow(*row)
                for row in conn.execute(
                    "SELECT r.annotator, i.model, i.task, i.scenario_id, i.mode, i.fixed_k, i.epoch, i.attribute, "
                    "r.score FROM ratings r JOIN rating_items i USING (position) ORDER BY r.annotator, i.position"
                )
            ]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
