"""The response-rating tables of the annotation database, in the same SQLite file as the attribute labels.

``RatingStore`` is a ``database.Database`` (its connections, ``BEGIN IMMEDIATE`` transactions, WAL and busy
timeout) with two tables: ``rating_items`` (the fixed item set, written once in the transaction that checks it is
absent, like the attribute items) and ``ratings`` (one score 1–5 per annotator and item; resubmitting replaces).
Its metadata rows are the ``meta`` table's ``ratings_*`` keys, so one file may hold every study.

The item rows hold what the page shows and the keys the export writes — never the judge's score.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Mapping
from typing import Any, NamedTuple

from prefdisco.annotate.database import Database, SubmissionError, upsert
from prefdisco.annotate.rating_items import RatingItem

META_PREFIX = "ratings_"

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
_ITEM_COLUMNS = tuple(field.name for field in dataclasses.fields(RatingItem))
"""The ``rating_items`` columns: ``RatingItem``'s fields, in order (``levels`` stored as a JSON list)."""


class Rating(NamedTuple):
    """One stored score of one item; ``value`` reads an export column (``annotator``, ``score`` or an item field)."""

    annotator: str
    item: RatingItem
    score: int

    def value(self, column: str) -> Any:
        return getattr(self, column) if column in ("annotator", "score") else getattr(self.item, column)


class RatingStore(Database):
    SCHEMA = _SCHEMA

    def require_rating_items(self) -> None:
        """UserError unless the file exists and holds a rating item set (for export and serving)."""
        self.require(lambda: bool(self.rating_items()), "serve-ratings", "response-rating items")

    def rating_meta(self) -> dict[str, str]:
        """The ``ratings_*`` metadata, without the prefix."""
        return self.study_meta(META_PREFIX)

    def initialize_ratings(self, items: list[RatingItem], meta: Mapping[str, str]) -> bool:
        """Store the item set and its metadata unless one is stored already. True when this call stored it."""

        def insert(conn: sqlite3.Connection) -> None:
            rows = [
                tuple(json.dumps(list(i.levels)) if c == "levels" else getattr(i, c) for c in _ITEM_COLUMNS)
                for i in items
            ]
            marks = ", ".join("?" * len(_ITEM_COLUMNS))
            conn.executemany(f"INSERT INTO rating_items ({', '.join(_ITEM_COLUMNS)}) VALUES ({marks})", rows)

        return self.initialize_once("rating_items", meta, insert, prefix=META_PREFIX)

    def rating_items(self) -> list[RatingItem]:
        rows = self.fetch(f"SELECT {', '.join(_ITEM_COLUMNS)} FROM rating_items ORDER BY position")
        return [
            RatingItem(**{**dict(zip(_ITEM_COLUMNS, row, strict=True)), "levels": tuple(json.loads(row[-1]))})
            for row in rows
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
            upsert(conn, "ratings", ("annotator", "position"), "score", [(annotator, position, score)])

    def rated(self, annotator: str) -> dict[int, int]:
        """Position -> score of every item this annotator has rated."""
        return dict(self.fetch("SELECT position, score FROM ratings WHERE annotator = ?", (annotator,)))

    def ratings(self) -> list[Rating]:
        """Every stored score, by annotator and item position."""
        items = {item.position: item for item in self.rating_items()}
        return [
            Rating(annotator, items[position], score)
            for annotator, position, score in self.fetch(
                "SELECT annotator, position, score FROM ratings ORDER BY annotator, position"
            )
        ]
