"""The annotation database file every study shares (SQLite, WAL): connections, transactions, metadata.

Safe under concurrent annotators: every call opens its own connection (``busy_timeout`` set), and every write is
one ``BEGIN IMMEDIATE`` transaction. An item set is written once, in the same transaction that checks it is
absent (``initialize_once``), so two servers started at once on a fresh file still agree on one set. Answers are
upserted (``upsert``): resubmitting replaces, never duplicates.

``Database`` holds only the ``meta`` table; ``store.Store`` (attribute labels), ``rating_store.RatingStore``
(response ratings) and ``play_store.PlayStore`` (play the user) add their tables, so one file may hold every
study. ``Database.open`` is how every study's first start opens its file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from prefdisco.errors import UserError

SCHEMA_VERSION = "1"
BUSY_TIMEOUT_MS = 30_000

_META_SCHEMA = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"


class SubmissionError(ValueError):
    """A submission that does not match its item; ``status`` is the HTTP status it deserves."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


class Database:
    """One annotation database file; subclasses name their tables in ``SCHEMA``."""

    SCHEMA = ""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @classmethod
    def open(cls, path: Path) -> Self:
        """The database at ``path`` with its tables created (the file too, when absent), as every study's first
        start opens it; a one-line UserError when its folder does not exist."""
        path = Path(path)
        if not path.parent.is_dir():
            raise UserError(f"{path}: folder {path.parent} does not exist")
        store = cls(path)
        store.ensure_schema()
        return store

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

    def fetch(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        """Every row of one query, on its own connection."""
        with self.connect() as conn:
            return conn.execute(sql, params).fetchall()

    # -- set-up ---------------------------------------------------------------------------------------------

    def ensure_schema(self) -> None:
        try:
            with self.connect() as conn:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.executescript(_META_SCHEMA + self.SCHEMA)
        except sqlite3.DatabaseError as e:
            raise UserError(f"{self.path}: not a PrefDisco annotation database ({e})") from None

    def require(self, has_items: Callable[[], bool], command: str, what: str) -> None:
        """UserError unless the file exists and ``has_items`` (started by ``prefdisco annotate COMMAND``)."""
        if not self.path.is_file():
            raise UserError(f"{self.path}: annotation database not found (start `prefdisco annotate {command}` first)")
        self.ensure_schema()
        if not has_items():
            raise UserError(f"{self.path}: the database holds no {what}")

    def meta(self) -> dict[str, str]:
        return dict(self.fetch("SELECT key, value FROM meta"))

    def study_meta(self, prefix: str) -> dict[str, str]:
        """One study's metadata rows (the ``meta`` keys it stored under ``prefix``), without the prefix."""
        return {k.removeprefix(prefix): v for k, v in self.meta().items() if k.startswith(prefix)}

    def initialize_once(
        self,
        table: str,
        meta: Mapping[str, str],
        insert: Callable[[sqlite3.Connection], None],
        prefix: str = "",
    ) -> bool:
        """Unless ``table`` holds a row: store ``meta`` (keys prefixed, with the schema version and the time)
        and run ``insert``, in one transaction. True when this call stored the item set."""
        with self.transaction() as conn:
            if conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone():
                return False
            entries = {"schema_version": SCHEMA_VERSION, "created_at": now(), **meta}
            conn.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [(prefix + key, value) for key, value in entries.items()],
            )
            insert(conn)
        return True


def check_unchanged(db: Path, meta: Mapping[str, str], given: Mapping[str, int | None], verb: str) -> None:
    """UserError when an option given on a later start differs from the stored one: the stored sample cannot
    change. ``given`` maps meta keys (``per_task`` is the option ``--per-task``) to the values given, or None."""
    for key, value in given.items():
        if value is not None and str(value) != meta.get(key):
            raise UserError(
                f"{db}: the items were {verb} with --{key.replace('_', '-')} {meta.get(key)}; "
                "drop the option or use a new --db"
            )


def upsert(conn: sqlite3.Connection, table: str, keys: tuple[str, ...], value: str, rows: Iterable[tuple]) -> None:
    """Write ``(*keys, value)`` rows with the time; a row whose keys are stored replaces its value and time."""
    columns = ", ".join([*keys, value, "updated_at"])
    marks = ", ".join("?" * (len(keys) + 2))
    stamp = now()
    conn.executemany(
        f"INSERT INTO {table} ({columns}) VALUES ({marks}) ON CONFLICT ({', '.join(keys)}) "
        f"DO UPDATE SET {value} = excluded.{value}, updated_at = excluded.updated_at",
        [(*row, stamp) for row in rows],
    )


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
