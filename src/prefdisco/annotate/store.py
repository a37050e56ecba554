"""The attribute-validation tables of the annotation database: the fixed item set and the annotators' labels.

``Store`` is a ``database.Database`` (its connections, ``BEGIN IMMEDIATE`` transactions, WAL and busy timeout) with
three tables: ``items`` and ``candidates`` (the item set, written once in the transaction that checks it is absent)
and ``annotations``, keyed by (annotator, scenario, attribute): resubmitting replaces, never duplicates.

Only annotator names are stored — never access tokens.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path

from prefdisco.annotate.database import Database, SubmissionError, upsert
from prefdisco.annotate.labels import LabelRow
from prefdisco.annotate.sampling import Candidate, Item

__all__ = ["Store", "SubmissionError", "stored_labels"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS items (
    scenario_id TEXT PRIMARY KEY,
    position INTEGER NOT NULL UNIQUE,
    task TEXT NOT NULL,
    problem_id TEXT NOT NULL,
    task_text TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS candidates (
    scenario_id TEXT NOT NULL REFERENCES items (scenario_id),
    attribute TEXT NOT NULL,
    category TEXT NOT NULL,
    description TEXT NOT NULL,
    llm_relevant INTEGER NOT NULL CHECK (llm_relevant IN (0, 1)),
    PRIMARY KEY (scenario_id, attribute)
);
CREATE TABLE IF NOT EXISTS annotations (
    annotator TEXT NOT NULL,
    scenario_id TEXT NOT NULL,
    attribute TEXT NOT NULL,
    label INTEGER NOT NULL CHECK (label IN (0, 1)),
    updated_at TEXT NOT NULL,
    PRIMARY KEY (annotator, scenario_id, attribute),
    FOREIGN KEY (scenario_id, attribute) REFERENCES candidates (scenario_id, attribute)
);
"""


class Store(Database):
    SCHEMA = _SCHEMA

    def require_items(self) -> None:
        """UserError unless the file exists and holds an item set (for export, stats and serving)."""
        self.require(lambda: bool(self.items()), "serve", "annotation items")

    def initialize(self, items: list[Item], meta: Mapping[str, str]) -> bool:
        """Store the item set and its metadata unless one is stored already. True when this call stored it."""

        def insert(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "INSERT INTO items (scenario_id, position, task, problem_id, task_text) VALUES (?, ?, ?, ?, ?)",
                [(i.scenario_id, i.position, i.task, i.problem_id, i.task_text) for i in items],
            )
            conn.executemany(
                "INSERT INTO candidates (scenario_id, attribute, category, description, llm_relevant) "
                "VALUES (?, ?, ?, ?, ?)",
                [
                    (i.scenario_id, c.attribute, c.category, c.description, int(c.llm_relevant))
                    for i in items
                    for c in i.candidates
                ],
            )

        return self.initialize_once("items", meta, insert)

    def items(self) -> list[Item]:
        candidates: dict[str, list[Candidate]] = {}
        for sid, attribute, category, description, llm in self.fetch(
            "SELECT scenario_id, attribute, category, description, llm_relevant FROM candidates "
            "ORDER BY scenario_id, attribute"
        ):
            candidates.setdefault(sid, []).append(Candidate(attribute, category, description, bool(llm)))
        return [
            Item(position, sid, task, problem_id, task_text, tuple(candidates.get(sid, ())))
            for sid, position, task, problem_id, task_text in self.fetch(
                "SELECT scenario_id, position, task, problem_id, task_text FROM items ORDER BY position"
            )
        ]

    # -- labels ---------------------------------------------------------------------------------------------

    def submit(self, annotator: str, scenario_id: str, labels: Mapping[str, bool]) -> int:
        """Store one annotator's full answer for one item in one transaction; replaces an earlier answer.

        Raises ``SubmissionError`` (and changes nothing) for an unknown scenario, an unknown attribute, or a
        missing answer.
        """
        with self.transaction() as conn:
            expected = {
                row[0] for row in conn.execute("SELECT attribute FROM candidates WHERE scenario_id = ?", (scenario_id,))
            }
            if not expected:
                raise SubmissionError(f"unknown scenario_id {scenario_id!r}", status=404)
            unknown = sorted(set(labels) - expected)
            if unknown:
                raise SubmissionError(f"attribute(s) not shown for scenario {scenario_id!r}: {unknown}")
            missing = sorted(expected - set(labels))
            if missing:
                raise SubmissionError(f"missing answer(s) for attribute(s) {missing}")
            rows = [(annotator, scenario_id, attribute, int(value)) for attribute, value in labels.items()]
            upsert(conn, "annotations", ("annotator", "scenario_id", "attribute"), "label", rows)
        return len(labels)

    def answers(self, annotator: str, scenario_id: str) -> dict[str, bool]:
        return {
            attribute: bool(label)
            for attribute, label in self.fetch(
                "SELECT attribute, label FROM annotations WHERE annotator = ? AND scenario_id = ?",
                (annotator, scenario_id),
            )
        }

    def completed(self, annotator: str) -> set[str]:
        """Scenario ids this annotator has answered in full."""
        return {
            row[0]
            for row in self.fetch(
                "SELECT c.scenario_id FROM candidates c LEFT JOIN annotations a "
                "ON a.scenario_id = c.scenario_id AND a.attribute = c.attribute AND a.annotator = ? "
                "GROUP BY c.scenario_id HAVING COUNT(a.label) = COUNT(*)",
                (annotator,),
            )
        }

    def label_rows(self) -> list[LabelRow]:
        return [
            LabelRow(*row)
            for row in self.fetch(
                "SELECT a.annotator, a.scenario_id, a.attribute, c.llm_relevant, a.label "
                "FROM annotations a JOIN candidates c USING (scenario_id, attribute) "
                "JOIN items i USING (scenario_id) ORDER BY a.annotator, i.position, a.attribute"
            )
        ]


def stored_labels(db: Path) -> list[LabelRow]:
    """Every label in an annotation database; UserError unless it exists and holds an item set."""
    store = Store(db)
    store.require_items()
    return store.label_rows()
