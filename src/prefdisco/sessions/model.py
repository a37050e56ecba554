"""A session set: the file ``prefdisco sessions`` writes and ``prefdisco eval --sessions`` reads.

A **session** is one person (``persona_id``) and an ordered list of K of their scenarios, each of a different
problem (``scenario_ids``). Per position it records how each attribute of that scenario's profile relates to the
earlier positions of the session (``labels``):

* ``recurring`` — the attribute was in an earlier profile of the session, and the latest earlier value is this one;
* ``changed`` — the latest earlier value is another (the person's preference moved: a drifted scenario, or a
  builder profile whose context changed it);
* ``new`` — it was not in any earlier profile of the session.

Drift (PAHF's persona shift, ``--drift F``) replaces some scenarios from the middle of a session on by **derived**
scenarios: the original with the value of a recurring attribute flipped, and the rubric criterion of that attribute
for the new value. They are not in the benchmark, so the session carries them (``derived``); their ids are derived
from the originals' (``derive_id``).

The file is JSONL: a first line ``{"type": "session_set", ...}`` (``SessionSetHeader``: how the set was chosen),
then one line ``{"type": "session", ...}`` per session. Every scenario id of a session is in the benchmark it was
planned on, or in its own ``derived`` list.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from prefdisco.atomic import atomic_write
from prefdisco.benchio import json_lines
from prefdisco.errors import UserError, describe_validation_error
from prefdisco.schema import Scenario

SESSION_SET_FORMAT: Literal["prefdisco-sessions/1"] = "prefdisco-sessions/1"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PositionLabels(_Model):
    """How the attributes of one position's profile relate to the earlier positions of its session."""

    recurring: list[str] = Field(default_factory=list)
    changed: list[str] = Field(default_factory=list)
    new: list[str] = Field(default_factory=list)


class Session(_Model):
    type: Literal["session"] = "session"
    session_id: str = Field(min_length=1)
    persona_id: str = Field(min_length=1)
    scenario_ids: list[str] = Field(min_length=1)
    labels: list[PositionLabels]
    drift_from: int | None = Field(default=None, ge=1, description="the first position that may have drifted")
    derived: list[Scenario] = Field(default_factory=list)

    @model_validator(mode="after")
    def _positions(self) -> Session:
        if len(self.labels) != len(self.scenario_ids):
            n, m = len(self.scenario_ids), len(self.labels)
            raise ValueError(f"session {self.session_id}: {n} scenario ids but {m} position labels")
        if len(set(self.scenario_ids)) != len(self.scenario_ids):
            raise ValueError(f"session {self.session_id}: a scenario appears twice")
        return self

    @property
    def length(self) -> int:
        return len(self.scenario_ids)


class SessionSetHeader(_Model):
    type: Literal["session_set"] = "session_set"
    format: Literal["prefdisco-sessions/1"] = SESSION_SET_FORMAT
    source: str = Field(description="the benchmark folder or release file the sessions were planned on")
    length: int = Field(ge=2)
    seed: int = 0
    drift: float = Field(default=0.0, ge=0.0, le=1.0)
    n_sessions: int = Field(ge=0)
    n_drifted: int = Field(default=0, ge=0, description="attributes flipped, counted once per session")
    n_cannot_drift: int = Field(
        default=0, ge=0, description="attributes chosen to drift that kept their value: no other value in the source"
    )


class SessionSet(_Model):
    header: SessionSetHeader
    sessions: list[Session]

    def scenarios_with(self, scenarios: Iterable[Scenario]) -> dict[str, Scenario]:
        """Every scenario a session names, by id: from ``scenarios`` (the benchmark) and the sessions' derived
        ones; a missing one is a one-line ``UserError``."""
        known = {s.id: s for s in scenarios}
        for session in self.sessions:
            known.update({s.id: s for s in session.derived})
        for session in self.sessions:
            missing = [i for i in session.scenario_ids if i not in known]
            if missing:
                raise UserError(
                    f"session {session.session_id}: scenario {missing[0]} is neither in the benchmark nor derived "
                    f"in the session file (were the sessions planned on another benchmark?)"
                )
        return known

    def positions(self) -> dict[str, tuple[str, int]]:
        """scenario id → (session id, 1-based position); a scenario is in at most one session."""
        where: dict[str, tuple[str, int]] = {}
        for session in self.sessions:
            for position, sid in enumerate(session.scenario_ids, start=1):
                if sid in where:
                    raise UserError(f"scenario {sid} is in sessions {where[sid][0]} and {session.session_id}")
                where[sid] = (session.session_id, position)
        return where


def derive_id(original: str, attribute: str, value: str) -> str:
    """The id of ``original`` with ``attribute`` drifted to ``value``: stable, and never an original id."""
    digest = hashlib.sha256(f"{original}\x1f{attribute}\x1f{value}".encode()).hexdigest()[:8]
    return f"{original}~drift-{digest}"


def write_session_set(path: Path, session_set: SessionSet) -> None:
    lines = [session_set.header.model_dump_json(), *(s.model_dump_json() for s in session_set.sessions)]
    atomic_write(Path(path), "\n".join(lines) + "\n")


def read_session_set(path: Path) -> SessionSet:
    """Read a session set; a problem is a one-line ``UserError`` naming the file, line and field."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no session file (write one with prefdisco sessions BENCH --length K --out FILE)")
    header: SessionSetHeader | None = None
    sessions: list[Session] = []
    for number, data in json_lines(path):
        kind = data.get("type") if isinstance(data, dict) else None
        try:
            if number == 1 or kind == "session_set":
                if number != 1 or kind != "session_set":
                    raise UserError(f"{path}:{number}: the first line, and only it, is the session_set header")
                header = SessionSetHeader.model_validate(data)
            else:
                sessions.append(Session.model_validate(data))
        except ValidationError as err:
            raise UserError(describe_validation_error(err, f"{path}:{number}")) from None
    if header is None:
        raise UserError(f"{path}: empty (expected a session_set header line, then the sessions)")
    ids = [s.session_id for s in sessions]
    if len(set(ids)) != len(ids):
        raise UserError(f"{path}: session ids must be unique")
    return SessionSet(header=header, sessions=sessions)


def label_positions(profiles: Sequence[dict[str, str]]) -> list[PositionLabels]:
    """The labels of each position of a session whose profiles, in order, are ``profiles`` (attribute → value):
    against the latest earlier value of each attribute."""
    latest: dict[str, str] = {}
    labels = []
    for profile in profiles:
        position = PositionLabels()
        for attribute, value in profile.items():
            kind = "new" if attribute not in latest else "recurring" if latest[attribute] == value else "changed"
            getattr(position, kind).append(attribute)
        latest.update(profile)
        labels.append(position)
    return labels
