"""The protocol a run really had: its record rewritten from what each role's requests carried.

``protocol.json`` is written from the flags before the first call (``protocols.protocol_record``). Once a command's
calls are made, ``settle_protocol`` — the one function every command that calls a model settles its record through,
after its calls: ``eval`` (every executor: one process, ``--workers``, ``--ray``, ``--sessions``), ``prefdisco
judge``, ``regrade`` and the play study's export — reads what each role was really sent and rewrites the record:

* ``sent`` — each role's first recorded request: the settings asked and the settings sent. Read from the run's logs
  (``results/sent_settings.py``: an eval's samples keep their first requests), over what the record already held
  (the eval's own, when a later command adds calls), under what the command's own calls outside an eval sent
  (``sent_settings.recording_sent``: a judging of existing logs, a regrade, a play study's server), so the
  settings of its last calls win: a judge role is the judge that judged the rows;
* ``not_sent`` — a line per setting a provider was asked for and not sent (Anthropic drops every temperature, OpenAI
  drops a reasoning model's), or sent changed;
* ``settings`` — the *effective* protocol settings: a user or judge setting that was not sent is null (the provider's
  own default), one sent changed is the value sent; ``id`` is the id of those settings (``protocols.id_of``: a
  standard id only when they match it, else ``custom-…``; a play study's own ``human-…``), and ``asked_id`` the id
  the flags gave, when it differs.

The results rows carry the record's id (``results/logs.results_from_logs`` reads it), so a run on a model that
dropped the judge's temperature 0 is never filed under ``default-v1.0`` beside one whose judge ran at 0; the report
names what was not sent. A role whose calls were all answered from the cache sent nothing, and keeps its flags.

A later judging changes what the record is of (``rejudged``): ``prefdisco judge``'s first judging of a ``--judge
later`` run and a regrade give the record their judges, judge kind, repeats and temperature, made from the settings
as the source record was *given* (never from ``run.json``'s flags again), so what an earlier settling found is not
undone, and then settle it with their own calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from prefdisco.evaluation.protocol.protocols import id_of, record_of
from prefdisco.models.sampling import drops_temperature
from prefdisco.results.protocol_record import (
    ADDED_SETTINGS,
    PROTOCOL_SETTINGS,
    ProtocolRecord,
    read_record,
    write_record,
)
from prefdisco.results.sent_settings import SentSettings, sent_settings
from prefdisco.scoring.panel import panel_roles

PROTOCOL_KEYS: dict[tuple[str, str], str] = {
    ("user", "temperature"): "user_temperature",
    ("user", "max_tokens"): "user_max_tokens",
    ("user", "reasoning_effort"): "user_reasoning_effort",
    ("grader", "temperature"): "grader_temperature",
    ("grader", "max_tokens"): "grader_max_tokens",
    ("grader", "reasoning_effort"): "grader_reasoning_effort",
    ("user", "reasoning_tokens"): "user_reasoning_tokens",
    ("grader", "reasoning_tokens"): "grader_reasoning_tokens",
}
"""(role, setting sent) → the protocol setting it is (a panel's further judges share the first judge's)."""

Identify = Callable[[dict[str, Any], str], str]
"""The id of a record's protocol settings with its prompt hash (``protocols.id_of``, or a play study's own)."""


def effective_settings(settings: dict[str, Any], sent: SentSettings) -> dict[str, Any]:
    """``settings`` (a record's protocol settings, as the flags gave them) as the requests really had them."""
    out = dict(settings)
    for (role, name), key in PROTOCOL_KEYS.items():
        seen = sent.roles.get(role)
        if seen is None or out.get(key) is None:  # the role made no recorded call, or the flag left it to the provider
            continue
        if name in seen.not_sent():
            out[key] = None
        elif name in seen.changed():
            out[key] = seen.sent[name]
    return out


def _is_judge(role: str) -> bool:
    return role == "grader" or role.startswith("grader_")


def settled(
    record: ProtocolRecord,
    log_dir: Path | None = None,
    sent: SentSettings | None = None,
    identify: Identify = id_of,
) -> ProtocolRecord:
    """``record`` settled (module docstring): each role's first request read from the logs below ``log_dir`` (None:
    no logs) over ``record.sent``, under ``sent`` (the command's own calls outside an eval); a judge role beyond the
    record's judges is left out (a regrade's copied logs hold the run's own panel)."""
    judges = panel_roles(len(record.judges))
    logged = sent_settings(log_dir, wanted=["user", *judges]) if log_dir is not None else SentSettings()
    roles = {**(record.sent or {}), **logged.roles, **(sent.roles if sent is not None else {})}
    roles = {role: seen for role, seen in roles.items() if not _is_judge(role) or role in judges}
    found = SentSettings(roles=roles)
    asked = record.asked_id or record.id
    given = _given(record)
    effective = effective_settings(given, found)
    new_id = identify(effective, record.prompts) if effective != given else asked
    return record.model_copy(
        update={
            "id": new_id,
            "settings": effective,
            "sent": found.roles or None,
            "not_sent": found.notes(why=_why),
            "asked_id": asked if new_id != asked else None,
            "given": given if effective != given else None,
        }
    )


def settle_protocol(
    log_dir: Path, record: ProtocolRecord | None = None, sent: SentSettings | None = None
) -> ProtocolRecord | None:
    """Settle ``record`` (None: ``log_dir``'s ``protocol.json``) with what was sent (``settled``: the logs below
    ``log_dir``, then ``sent``) and write it to ``log_dir``; the record, or None when there is none (a shard's own
    folder, an older run)."""
    record = record if record is not None else read_record(log_dir)
    if record is None:
        return None
    result = settled(record, log_dir, sent)
    write_record(log_dir, result)
    return result


def rejudged(
    record: ProtocolRecord,
    judges: Sequence[str],
    judge: str,
    repeats: int,
    temperature: float | None = None,
    run: dict[str, Any] | None = None,
    rubrics: str | None = None,
    builders: Sequence[str] | None = None,
    benchmark: str | None = None,
) -> ProtocolRecord:
    """``record`` (a run's, settled or not) as a later judging makes it: the settings it was given with the
    judging's ``judge`` kind, ``repeats`` and (not None) judge ``temperature``, its ``judges``, and (a regrade)
    the benchmark's ``rubrics`` hash, ``builders`` and content hash (``benchmark``); the prompts' hash and the id
    made again from them (``protocols.record_of``, with what of the run's ``run.json`` chooses templates:
    ``quality``, ``solver``); what the run's calls sent kept, for ``settled`` to read with the judging's own."""
    flags = _given(record)  # a setting added since an older record was written: the value it ran with
    given = {key: flags.get(key, ADDED_SETTINGS.get(key)) for key in PROTOCOL_SETTINGS}
    given |= {"judge": judge, "judge_repeats": repeats}
    if temperature is not None:
        given["grader_temperature"] = temperature
    run = run or {}
    made = record_of(
        SimpleNamespace(**given, quality=bool(run.get("quality", True)), solver=run.get("solver")),
        record.user_model,
        list(judges),
        record.rubrics if rubrics is None else rubrics,
        builders=record.builders if builders is None else builders,
        benchmark=record.benchmark if benchmark is None else benchmark,
    )
    return made.model_copy(update={"sent": record.sent, "regraded_from": record.regraded_from})


def _why(setting: str, model: str) -> str | None:
    """Why ``model`` was sent no ``setting``, where inspect's rules say (``models/sampling.py``)."""
    return drops_temperature(model) if setting == "temperature" else None


def _given(record: ProtocolRecord) -> dict[str, Any]:
    """The settings as the flags gave them (a record already settled keeps them in ``given``)."""
    return dict(record.given) if record.given is not None else dict(record.settings)
