"""The play-the-user tables of the annotation database: the scenarios, the participants and their dialogues.

``PlayStore`` is a ``database.Database`` (its connections, ``BEGIN IMMEDIATE`` transactions, WAL and busy timeout)
with four tables:

* ``play_items`` — the fixed scenario set (each scenario's whole JSON, so the export needs no benchmark folder),
  written once in the transaction that checks it is absent, as the other studies' item sets are;
* ``play_participants`` — each participant's number (the order they first logged in: the trial, ``epoch``, of
  every dialogue they play) and pseudonym (``p-`` and 10 hex of an HMAC of the name under a key drawn when the
  database was made and kept in it: the export writes the pseudonym, never the name);
* ``play_dialogues`` — one row per (participant, scenario): the engine's ``DialogueState`` as JSON, written after
  every step, a version that every write must match (a write from a stale copy fails instead of losing a
  step), its status (``running``, ``error``: the last model call failed and the next visit tries again,
  ``scored``), its ``Score`` once judged, and the tokens it has cost so far (``PlayUsage``, written with every
  step, so a failed or repeated call's tokens are never lost from it);
* ``play_references`` — baseline and oracle, played and scored once per scenario (no participant needed), so the
  export's NormAlign is defined, with their tokens.

Its metadata rows are the ``meta`` table's ``play_*`` keys, so one file may hold every study.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import ModelUsage
from inspect_ai.scorer import Score
from pydantic import BaseModel, ConfigDict, Field

from prefdisco.annotate.database import Database, now
from prefdisco.call_usage import tokens
from prefdisco.dialogue.dialogue_state import DialogueState
from prefdisco.results.sent_settings import RoleSent, SentSettings
from prefdisco.schema import Scenario

META_PREFIX = "play_"
SALT_KEY = "pseudonym_key"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS play_items (
    position INTEGER PRIMARY KEY,
    scenario_id TEXT NOT NULL UNIQUE,
    task TEXT NOT NULL,
    scenario TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS play_participants (
    name TEXT PRIMARY KEY,
    number INTEGER NOT NULL UNIQUE,
    pseudonym TEXT NOT NULL UNIQUE,
    joined_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS play_dialogues (
    participant TEXT NOT NULL REFERENCES play_participants (name),
    position INTEGER NOT NULL REFERENCES play_items (position),
    state TEXT NOT NULL,
    version INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'error', 'scored')),
    error TEXT,
    score TEXT,
    usage TEXT,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (participant, position)
);
CREATE TABLE IF NOT EXISTS play_references (
    scenario_id TEXT NOT NULL REFERENCES play_items (scenario_id),
    condition TEXT NOT NULL,
    state TEXT NOT NULL,
    score TEXT NOT NULL,
    usage TEXT,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (scenario_id, condition)
);
"""


class PlayUsage(BaseModel):
    """The tokens one stored dialogue has cost: the model under test's (every step) and the judge's (every call
    of its scoring: the rubric, correctness, the audit of the user's turns, quality), as an eval's results count
    them (``input_tokens`` … ``grader_output_tokens``). A person's replies cost none. ``sent``: each role's first
    request, the settings asked and sent (``results/sent_settings.recording_sent``: ``assistant <model>``, and the
    judge's as ``grader``), which the export settles the study's protocol with."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_tokens: int = 0
    output_tokens: int = 0
    grader_input_tokens: int = 0
    grader_output_tokens: int = 0
    sent: dict[str, RoleSent] = Field(default_factory=dict)

    def plus(
        self, counted: Mapping[str, ModelUsage], *, judge: bool = False, sent: SentSettings | None = None
    ) -> PlayUsage:
        """These tokens and the ``counted`` calls' (``call_usage.counting``), as the judge's when ``judge``; and
        what their requests carried (``sent``), a role's first request kept."""
        n_in, n_out = tokens(counted)
        roles = {**(sent.roles if sent is not None else {}), **self.sent}
        if judge:
            return self.model_copy(
                update={
                    "grader_input_tokens": self.grader_input_tokens + n_in,
                    "grader_output_tokens": self.grader_output_tokens + n_out,
                    "sent": roles,
                }
            )
        tested = {"input_tokens": self.input_tokens + n_in, "output_tokens": self.output_tokens + n_out}
        return self.model_copy(update={**tested, "sent": roles})


class StaleDialogue(RuntimeError):
    """A write from a copy of a dialogue another request has moved on since."""


@dataclass(frozen=True)
class PlayItem:
    """One scenario participants play, at its place in the study."""

    position: int
    scenario: Scenario

    @property
    def scenario_id(self) -> str:
        return self.scenario.id

    @property
    def task(self) -> str:
        return self.scenario.problem.benchmark

    @property
    def person(self) -> str:
        return self.scenario.persona.name


@dataclass(frozen=True)
class Participant:
    name: str
    number: int
    pseudonym: str


@dataclass(frozen=True)
class StoredDialogue:
    """One participant's dialogue of one scenario as stored."""

    participant: str
    position: int
    state: DialogueState
    version: int
    status: str
    error: str | None
    score: Score | None
    usage: PlayUsage


@dataclass(frozen=True)
class Reference:
    """A baseline or oracle dialogue of one scenario, played server-side, its score and its tokens."""

    scenario_id: str
    condition: str
    state: DialogueState
    score: Score
    usage: PlayUsage


class PlayStore(Database):
    SCHEMA = _SCHEMA

    def require_play_items(self) -> None:
        """UserError unless the file exists and holds a play study (for export and serving)."""
        self.require(lambda: bool(self.play_items()), "serve-play", "play-the-user scenarios")

    def play_meta(self) -> dict[str, str]:
        """The ``play_*`` metadata, without the prefix."""
        return self.study_meta(META_PREFIX)

    def initialize_play(self, scenarios: list[Scenario], meta: Mapping[str, str]) -> bool:
        """Store the scenarios and the metadata (with a fresh pseudonym key) unless a set is stored already."""

        def insert(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "INSERT INTO play_items (position, scenario_id, task, scenario) VALUES (?, ?, ?, ?)",
                [(n, s.id, s.problem.benchmark, s.model_dump_json()) for n, s in enumerate(scenarios, start=1)],
            )

        entries = {**meta, SALT_KEY: secrets.token_hex(32)}
        return self.initialize_once("play_items", entries, insert, prefix=META_PREFIX)

    def play_items(self) -> list[PlayItem]:
        rows = self.fetch("SELECT position, scenario FROM play_items ORDER BY position")
        return [PlayItem(position, Scenario.model_validate_json(text)) for position, text in rows]

    # -- participants ---------------------------------------------------------------------------------------

    def participant(self, name: str) -> Participant:
        """The participant called ``name``, numbered and given a pseudonym on first sight."""
        found = self.fetch("SELECT name, number, pseudonym FROM play_participants WHERE name = ?", (name,))
        if found:
            return Participant(*found[0])
        key = self.play_meta()[SALT_KEY].encode()
        pseudonym = "p-" + hmac.new(key, name.encode(), hashlib.sha256).hexdigest()[:10]
        with self.transaction() as conn:
            row = conn.execute("SELECT name, number, pseudonym FROM play_participants WHERE name = ?", (name,))
            existing = row.fetchone()
            if existing:
                return Participant(*existing)
            number = conn.execute("SELECT COALESCE(MAX(number), 0) + 1 FROM play_participants").fetchone()[0]
            conn.execute(
                "INSERT INTO play_participants (name, number, pseudonym, joined_at) VALUES (?, ?, ?, ?)",
                (name, number, pseudonym, now()),
            )
        return Participant(name, number, pseudonym)

    def participants(self) -> dict[str, Participant]:
        rows = self.fetch("SELECT name, number, pseudonym FROM play_participants ORDER BY number")
        return {name: Participant(name, number, pseudonym) for name, number, pseudonym in rows}

    # -- dialogues ------------------------------------------------------------------------------------------

    def dialogue(self, participant: str, position: int) -> StoredDialogue | None:
        rows = self.fetch(
            "SELECT participant, position, state, version, status, error, score, usage FROM play_dialogues "
            "WHERE participant = ? AND position = ?",
            (participant, position),
        )
        return _dialogue(rows[0]) if rows else None

    def dialogues(self, participant: str | None = None) -> list[StoredDialogue]:
        where, params = ("WHERE participant = ?", (participant,)) if participant is not None else ("", ())
        rows = self.fetch(
            "SELECT participant, position, state, version, status, error, score, usage FROM play_dialogues "
            f"{where} ORDER BY participant, position",
            params,
        )
        return [_dialogue(row) for row in rows]

    def scored(self, participant: str) -> set[int]:
        """The positions of the dialogues this participant has finished (and the judge has scored)."""
        rows = self.fetch(
            "SELECT position FROM play_dialogues WHERE participant = ? AND status = 'scored'", (participant,)
        )
        return {position for (position,) in rows}

    def save(
        self,
        participant: str,
        position: int,
        state: DialogueState,
        version: int,
        status: str = "running",
        error: str | None = None,
        score: Score | None = None,
        usage: PlayUsage | None = None,
    ) -> int:
        """Write the dialogue over the stored ``version`` (0: none stored yet); its new version. ``StaleDialogue``
        when another write came first: nothing is changed then. ``usage``: the dialogue's tokens so far (None:
        as stored)."""
        with self.transaction() as conn:
            row = conn.execute(
                "SELECT version FROM play_dialogues WHERE participant = ? AND position = ?", (participant, position)
            ).fetchone()
            if (row[0] if row else 0) != version:
                raise StaleDialogue(f"dialogue {position} of {participant!r} moved on (version {row and row[0]})")
            values = (
                state.model_dump_json(),
                version + 1,
                status,
                error,
                None if score is None else score.model_dump_json(),
                None if usage is None else usage.model_dump_json(),
                now(),
            )
            if row is None:
                conn.execute(
                    "INSERT INTO play_dialogues (participant, position, state, version, status, error, score, "
                    "usage, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (participant, position, *values),
                )
            else:
                conn.execute(
                    "UPDATE play_dialogues SET state = ?, version = ?, status = ?, error = ?, score = ?, "
                    "usage = COALESCE(?, usage), updated_at = ? WHERE participant = ? AND position = ?",
                    (*values, participant, position),
                )
        return version + 1

    # -- baseline and oracle --------------------------------------------------------------------------------

    def references(self) -> dict[tuple[str, str], Reference]:
        rows = self.fetch("SELECT scenario_id, condition, state, score, usage FROM play_references")
        return {
            (sid, condition): Reference(
                sid,
                condition,
                DialogueState.model_validate_json(state),
                Score.model_validate_json(score),
                _usage(usage),
            )
            for sid, condition, state, score, usage in rows
        }

    def save_reference(
        self, scenario_id: str, condition: str, state: DialogueState, score: Score, usage: PlayUsage
    ) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO play_references (scenario_id, condition, state, score, usage, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (scenario_id, condition, *(x.model_dump_json() for x in (state, score, usage)), now()),
            )


def _usage(text: str | None) -> PlayUsage:
    return PlayUsage() if text is None else PlayUsage.model_validate_json(text)


def _dialogue(row: tuple[Any, ...]) -> StoredDialogue:
    participant, position, state, version, status, error, score, usage = row
    return StoredDialogue(
        participant,
        position,
        DialogueState.model_validate_json(state),
        version,
        status,
        error,
        None if score is None else Score.model_validate_json(score),
        _usage(usage),
    )
