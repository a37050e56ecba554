"""A run's protocol record (``protocol.json``): what its numbers were made under, read and compared.

The record is made by ``evaluation/protocol/protocols.py`` (the id, the settings, the prompt hash, the user and judge
models,
the benchmark's rubrics hash) and read here, below the report and the leaderboard, which refuse to put runs of
different records in one table (``results/merge.py``) and name what differs (``differences``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, field_validator

from prefdisco.atomic import atomic_write
from prefdisco.errors import UserError
from prefdisco.results.sent_settings import RoleSent

PROTOCOL_FILE = "protocol.json"
PROTOCOL_SETTINGS: tuple[str, ...] = (
    "preset",
    "ask",
    "max_questions",
    "user_type",
    "user_temperature",
    "user_max_tokens",
    "user_reasoning_effort",
    "user_retry",
    "pushback",
    "distractors",
    "judge",
    "judge_repeats",
    "judge_max_criteria",
    "logprobs",
    "grader_temperature",
    "grader_max_tokens",
    "grader_reasoning_effort",
    "constrain_ask",
    "refusals",
    "user_reasoning_tokens",
    "grader_reasoning_tokens",
)
"""The ``RunConfig`` fields of a protocol (with the user and judge models and the prompt hash beside them)."""
ADDED_SETTINGS: dict[str, Any] = {
    "constrain_ask": False,
    "refusals": "score",
    "user_reasoning_tokens": None,
    "grader_reasoning_tokens": None,
}
"""Protocol settings added after records were first written, at the value every earlier run ran with: a record
without one is read at it (``setting``), so an older run stays comparable with a new one."""


RENAMED_SETTINGS: dict[str, str] = {"protocol": "ask", "constrain_protocol": "constrain_ask"}
"""Settings with an older name (before 2026-12): "protocol" means the versioned, result-changing settings alone,
so the ask channel (text or tools) is ``ask`` and its grammar ``constrain_ask``. A record, ``run.json``, config file
or stored study written under the older name is read under the new one (``renamed``)."""


def renamed(settings: Mapping[str, Any]) -> dict[str, Any]:
    """``settings`` with each older name of ``RENAMED_SETTINGS`` read as its new one (the new one wins)."""
    out = {RENAMED_SETTINGS.get(key, key): value for key, value in settings.items() if key in RENAMED_SETTINGS}
    return out | {key: value for key, value in settings.items() if key not in RENAMED_SETTINGS}


def setting(record: ProtocolRecord, key: str) -> Any:
    """A protocol setting of ``record`` (one it predates read at its ``ADDED_SETTINGS`` value)."""
    return record.settings.get(key, ADDED_SETTINGS.get(key))


class ProtocolRecord(BaseModel):
    """What a run's numbers were made under (``protocol.json``)."""

    id: str
    settings: dict[str, Any]
    prompts: str
    """The hash of ``protocol_templates`` (``prompts.templates_hash``)."""
    user_model: str
    judges: list[str]
    rubrics: str | None = None
    """``rubrics_hash`` of the benchmark the run was given (None: not known, e.g. a record made from a task)."""
    builders: list[str] = Field(default_factory=list)
    """The models that built that benchmark's scenarios (their provenance, ``builder/pipeline.written_by``); empty
    when not known (a hand-written or imported benchmark, an older record). Not compared: ``rubrics`` is."""
    benchmark: str | None = None
    """The content hash of the benchmark the run was given (``benchio.source_hash``: a benchmark folder's manifest
    ``content_hash``, a file's ``sha256:``): what a submission names its benchmark by
    (``analysis/leaderboard/submission.py``).
    The demo's: its scenarios' (``benchio.scenarios_hash``). None: not known (an older record). Not compared:
    ``rubrics`` is (the same scenarios given as a folder and as its scenarios.jsonl alone hash apart)."""
    regraded_from: dict[str, Any] | None = None
    """A regrade's origin (``prefdisco regrade``): the run, its protocol id and what changed."""
    sent: dict[str, RoleSent] | None = None
    """Each role's first recorded request: the settings asked and sent (``sent_settings.py``); None before the run's
    calls were read (or in an older record)."""
    not_sent: list[str] = Field(default_factory=list)
    """A line per setting a provider was asked for but not sent, or sent changed (``SentSettings.notes``)."""
    given: dict[str, Any] | None = None
    """The protocol settings as the flags gave them, when what was sent differs (``settings`` are then the effective
    ones)."""
    asked_id: str | None = None
    """The id of the settings as given, when what was sent made the protocol another one (``id`` is then that one's,
    and ``settings`` the effective ones: a setting not sent is null; ``evaluation/protocol/effective.py``)."""
    user_prompts: str | None = None
    """The hash of the simulated user's own templates (``dialogue/user.user_templates``; inside ``prompts`` too): with
    its settings and model, the simulated user's whole protocol (``user_protocol``). None where no simulated user
    answered (a person) and in a record written before it was kept."""

    @field_validator("settings", mode="before")
    @classmethod
    def _renamed(cls, value: Any) -> Any:
        return renamed(value) if isinstance(value, Mapping) else value

    def described(self) -> str:
        judges = ", ".join(self.judges)
        sent = f", as sent: the flags gave {self.asked_id}" if self.asked_id else ""
        return f"{self.id} (simulator {self.user_model}, judge {judges}{sent})"


USER_PROTOCOL: tuple[str, ...] = (
    "user_type",
    "user_model",
    "user_temperature",
    "user_max_tokens",
    "user_reasoning_effort",
    "user_reasoning_tokens",
    "user_retry",
    "user_prompts",
)
"""What makes a simulated user: its type, model, temperature, token and reasoning limits, redraws and the hash of its
prompts. Two simulators of one type and model under another of these answer otherwise: a reading of one (its
reference fidelity, ``analysis/validity/reference.py``) is not the other's."""


def user_protocol(record: ProtocolRecord) -> dict[str, Any]:
    """The simulated user's whole protocol of ``record`` (``USER_PROTOCOL``), its settings as the flags gave them
    (``given``, where what was sent differs: a reference run that calls the same provider is sent the same)."""
    given = {**record.settings, **(renamed(record.given) if record.given else {})}
    settings = {key: given.get(key, ADDED_SETTINGS.get(key)) for key in USER_PROTOCOL}
    return settings | {"user_model": record.user_model, "user_prompts": record.user_prompts}


def write_record(log_dir: Path, record: ProtocolRecord) -> None:
    atomic_write(log_dir / PROTOCOL_FILE, record.model_dump_json(indent=2))


def read_record(run: Path) -> ProtocolRecord | None:
    """The protocol record of the run folder ``run``; None when it has none (an older run, a results file)."""
    path = run / PROTOCOL_FILE
    if not path.is_file():
        return None
    try:
        return ProtocolRecord.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as e:
        raise UserError(f"{path}: not a protocol record ({str(e).splitlines()[0]})") from None


def differences(a: ProtocolRecord, b: ProtocolRecord) -> list[str]:
    """What differs between two records, one ``name a vs b`` each (empty: comparable)."""
    out = []
    for key in PROTOCOL_SETTINGS:
        if setting(a, key) != setting(b, key):
            out.append(f"{key} {json.dumps(setting(a, key))} vs {json.dumps(setting(b, key))}")
    for name in ("prompts", "user_model", "judges", "rubrics"):
        x, y = getattr(a, name), getattr(b, name)
        if x != y and not (name == "rubrics" and (x is None or y is None)):
            out.append(f"{name} {json.dumps(x)} vs {json.dumps(y)}")
    return out
