"""The protocol a run really had: its record rewritten from what each role's requests carried.

``protocol.json`` is written from the flags before the first call (``protocols.protocol_record``). Once the run's
calls are in its logs, ``settle_protocol`` reads what each role was really sent (``results/sent_settings.py``) and
rewrites the record:

* ``sent`` — each role's first recorded request: the settings asked and the settings sent;
* ``not_sent`` — a line per setting a provider was asked for and not sent (Anthropic drops every temperature, OpenAI
  drops a reasoning model's), or sent changed;
* ``settings`` — the *effective* protocol settings: a user or judge setting that was not sent is null (the provider's
  own default), one sent changed is the value sent; ``id`` is the id of those settings (``protocols.id_of``: a
  standard id only when they match it, else ``custom-…``), and ``asked_id`` the id the flags gave, when it differs.

The results rows carry the record's id (``results/logs.results_from_logs`` reads it), so a run on a model that
dropped the judge's temperature 0 is never filed under ``default-v1.0`` beside one whose judge ran at 0; the report
names what was not sent. A role whose calls were all answered from the cache sent nothing, and keeps its flags.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefdisco.evaluation.protocols import id_of
from prefdisco.models.sampling import drops_temperature
from prefdisco.results.protocol_record import ProtocolRecord, read_record, write_record
from prefdisco.results.sent_settings import SentSettings, sent_settings

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


def settle_protocol(log_dir: Path) -> ProtocolRecord | None:
    """Rewrite ``log_dir``'s ``protocol.json`` from what was sent (module docstring); the record, or None when the
    folder has none (a shard's own folder, an older run)."""
    record = read_record(log_dir)
    if record is None:
        return None
    judges = ["grader", *(f"grader_{i}" for i in range(2, len(record.judges) + 1))]
    sent = sent_settings(log_dir, wanted=["user", *judges])
    if not sent.roles:
        return record
    asked = record.asked_id or record.id
    given = _given(record)
    effective = effective_settings(given, sent)
    new_id = id_of(effective, record.prompts) if effective != given else asked
    settled = record.model_copy(
        update={
            "id": new_id,
            "settings": effective,
            "sent": sent.roles,
            "not_sent": sent.notes(why=_why),
            "asked_id": asked if new_id != asked else None,
            "given": given if effective != given else None,
        }
    )
    write_record(log_dir, settled)
    return settled


def _why(setting: str, model: str) -> str | None:
    """Why ``model`` was sent no ``setting``, where inspect's rules say (``models/sampling.py``)."""
    return drops_temperature(model) if setting == "temperature" else None


def _given(record: ProtocolRecord) -> dict[str, Any]:
    """The settings as the flags gave them (a record already settled keeps them in ``given``)."""
    return dict(record.given) if record.given is not None else dict(record.settings)
