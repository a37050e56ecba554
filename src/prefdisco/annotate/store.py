"""The annotation database (SQLite, WAL): the fixed item set and the annotators' labels.

Safe under concurrent annotators: every call opens its own connection (``busy_timeout`` set), and every
write is one ``BEGIN IMMEDIATE`` transaction. The item set is written once, in the same transaction that
checks it is absent, so two servers started at once on a fresh file still agree on one set. Labels are
keyed by (annotator, scenario, attribute): resubmitting replaces, never duplicates.

Only annotator names are stored — never access tokens.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from prefdisco.annotate.labels import LabelRow
from prefdisco.annotate.sampling import Candidate, Item
from prefdisco.errors import UserError

SCHEMA_VERSION = "1"
BUSY_TIMEOUT_MS = 30_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
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


class SubmissionError(ValueError):
    """A submission that does not match its item; ``status`` is the HTTP status it deserves."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


class Store:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        """A fresh connection in autocommit mode (transactions are explicit), closed afterwards."""
        try:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        except sqlite3.OperationalError as e:
            raise UserError(f"{self.path}: cannot open the annotation database ({e})") from None
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys = ON")
            yield conn
        finally:
            conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self.connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    # -- set-up ---------------------------------------------------------------------------------------------

    def ensure_schema(self) -> None:
        try:
            with self.connect() as conn:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as e:
            raise UserError(f"{self.path}: not a PrefDisco annotation database ({e})") from None

    def require_items(self) -> None:
        """UserError unless the file exists and holds an item set (for export, stats and serving)."""
        if not self.path.is_file():
            raise UserError(f"{self.path}: annotation database not found (start `prefdisco annotate serve` first)")
        self.ensure_schema()
        if not self.items():
            raise UserError(f"{self.path}: the database holds no annotation items")

    def meta(self) -> dict[str, str]:
        with self.connect() as conn:
            return dict(conn.execute("SELECT key, value FROM meta").fetchall())

    def initialize(self, items: list[Item], meta: Mapping[str, str]) -> bool:
        """Store the item set and its metadata unless one is stored already. True when this call stored it."""
        with self.transaction() as conn:
            if conn.execute("SELECT 1 FROM items LIMIT 1").fetchone():
                return False
            conn.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?)",
                [("schema_version", SCHEMA_VERSION), ("created_at", _now()), *meta.items()],
            )
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
        return True

    def items(self) -> list[Item]:
        with self.connect() as conn:
            candidates: dict[str, list[Candidate]] = {}
            for sid, attribute, category, description, llm in conn.execute(
                "SELECT scenario_id, attribute, category, description, llm_relevant FROM candidates "
                "ORDER BY scenario_id, attribute"
            ):
                candidates.setdefault(sid, []).append(Candidate(attribute, category, description, bool(llm)))
            return [
                Item(position, sid, task, problem_id, task_text, tuple(candidates.get(sid, ())))
                for sid, position, task, problem_id, task_text in conn.execute(
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
            now = _now()
            conn.executemany(
                "INSERT INTO annotations (annotator, scenario_id, attribute, label, updated_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (annotator, scenario_id, attribute) "
                "DO UPDATE SET label = excluded.label, updated_at = excluded.updated_at",
                [(annotator, scenario_id, attribute, int(value), now) for attribute, value in labels.items()],
            )
        return len(labels)

    def answers(self, annotator: str, scenario_id: str) -> dict[str, bool]:
        with self.connect() as conn:
            return {
                attribute: bool(label)
                for attribute, label in conn.execute(
                    "SELECT attribute, label FROM annotations WHERE annotator = ? AND scenario_id = ?",
                    (annotator, scenario_id),
                )
            }

    def completed(self, annotator: str) -> set[str]:
        """Scenario ids this annotator has answered in full."""
        with self.connect() as conn:
            return {
                row[0]
                for row in conn.execute(
                    "SELECT c.scenario_id FROM candidates c LEFT JOIN annotations a "
                    "ON a.scenario_id = c.scenario_id AND a.attribute = c.attribute AND a.annotator = ? "
                    "GROUP BY c.scenario_id HAVING COUNT(a.label) = COUNT(*)",
                    (annotator,),
                )
            }

    def label_rows(self) -> list[LabelRow]:
        with self.connect() as conn:
            return [
                LabelRow(*row)
                for row in conn.execute(
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


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
