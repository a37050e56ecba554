"""What each role's requests really carried: the generation settings read from the raw requests in a run's logs.

A flag is not a setting sent. inspect's clients drop what a provider rejects — Anthropic's current API takes no
``temperature``, ``top_p`` or ``top_k`` at all; OpenAI's reasoning models take no temperature — with a warning in the
log, and adapt others (a reasoning effort a model lacks is sent as the nearest one). A run on Claude whose judge was
asked for temperature 0 and a run on gpt-4.1 whose judge ran at 0 are then not one protocol.

inspect keeps the raw request of a sample's first calls per model (``ModelEvent.call.request``); this module reads
them, role by role (``assistant <model>`` for each model under test; ``user``, ``grader``, ``grader_2``, …), and
compares each setting asked (the call's ``GenerateConfig``) with what the request held, in each provider's shape:

* ``temperature`` — ``temperature`` (OpenAI, Anthropic), ``generationConfig.temperature`` (Gemini);
* ``top_p`` — ``top_p``, ``generationConfig.topP``;
* ``max_tokens`` — ``max_tokens`` (chat completions, Anthropic), ``max_completion_tokens``, ``max_output_tokens``
  (Responses), ``generationConfig.maxOutputTokens``;
* ``reasoning_effort`` — ``reasoning_effort`` (chat completions), ``reasoning.effort`` (Responses),
  ``output_config.effort`` (Anthropic);
* ``reasoning_tokens`` — ``thinking.budget_tokens`` (Anthropic), ``generationConfig.thinkingConfig.thinkingBudget``.

A setting asked and absent from the request was **not sent**; one sent with another value was **changed**
(``SentSettings.notes``). ``evaluation/protocol/effective.py`` turns that into the protocol the run really had.

Calls made outside an eval's samples keep no raw request in any log: ``prefdisco judge`` and ``regrade`` score
through inspect's scoring of existing logs, which drops every request it records, and the play-the-user study calls
its models in a server. ``recording_sent`` reads their requests as the calls complete: for the block it routes
inspect's model events through a sink of its own (``use_model_event_sink``, inspect's hook for whoever needs its
model events first: its agent bridge) that keeps each role's first request and hands every event on as inspect
would have (to the sink before it, else the transcript), so nothing else changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

SETTINGS: tuple[str, ...] = ("temperature", "top_p", "max_tokens", "reasoning_effort", "reasoning_tokens")
SAMPLES_PER_LOG = 50
"""The samples read from each log, at most, while a wanted role is still unseen: inspect keeps a sample's first five
requests per model name, so where every role is one model the dialogue's own calls may use them up."""


def _first(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def _part(mapping: Any, *keys: str) -> Any:
    """``mapping[key]`` for the first of ``keys`` present (a provider's camel or snake case), else None."""
    if not isinstance(mapping, Mapping):
        return None
    return _first(*(mapping.get(k) for k in keys))


def from_request(request: Mapping[str, Any]) -> dict[str, Any]:
    """The settings a raw provider request carried (module docstring), only those present."""
    gen = _part(request, "generationConfig", "generation_config", "config") or {}
    thinking = _part(gen, "thinkingConfig", "thinking_config") or {}
    found = {
        "temperature": _first(request.get("temperature"), _part(gen, "temperature")),
        "top_p": _first(request.get("top_p"), _part(gen, "topP", "top_p")),
        "max_tokens": _first(
            request.get("max_tokens"),
            request.get("max_completion_tokens"),
            request.get("max_output_tokens"),
            _part(gen, "maxOutputTokens", "max_output_tokens"),
        ),
        "reasoning_effort": _first(
            request.get("reasoning_effort"),
            _part(request.get("reasoning"), "effort"),
            _part(request.get("output_config"), "effort"),
        ),
        "reasoning_tokens": _first(
            _part(request.get("thinking"), "budget_tokens"), _part(thinking, "thinkingBudget", "thinking_budget")
        ),
    }
    return {k: v for k, v in found.items() if v is not None}


def asked_of(config: Any) -> dict[str, Any]:
    """The settings a call's ``GenerateConfig`` asked for, only those set."""
    return {k: getattr(config, k, None) for k in SETTINGS if getattr(config, k, None) is not None}


class RoleSent(BaseModel):
    """One role's first recorded request: its model, the settings asked and the settings sent."""

    model: str
    asked: dict[str, Any] = Field(default_factory=dict)
    sent: dict[str, Any] = Field(default_factory=dict)

    def not_sent(self) -> list[str]:
        return [k for k in SETTINGS if k in self.asked and k not in self.sent]

    def changed(self) -> list[str]:
        return [k for k in SETTINGS if k in self.asked and k in self.sent and self.sent[k] != self.asked[k]]


class SentSettings(BaseModel):
    """Each role's settings as sent (``roles``: ``assistant``, ``user``, ``grader``, ``grader_2``, …)."""

    roles: dict[str, RoleSent] = Field(default_factory=dict)

    def notes(self, why: Callable[[str, str], str | None] | None = None) -> list[str]:
        """One line per setting not sent or changed, naming the role, the setting and the model, and (``why``:
        setting, model → the reason, when known) why it was not sent."""
        out = []
        for role, seen in sorted(self.roles.items()):
            for k in seen.not_sent():
                reason = why(k, seen.model) if why is not None else None
                out.append(f"{role} {k} {seen.asked[k]!r}: not sent ({seen.model})" + (f": {reason}" if reason else ""))
            out += [f"{role} {k} {seen.asked[k]!r}: sent as {seen.sent[k]!r} ({seen.model})" for k in seen.changed()]
        return out


def role_name(role: str | None, model: str) -> str:
    """The role of a model event: its role, or ``assistant <model>`` for a model under test (a run may have several)."""
    return role or f"assistant {model}"


def _logs(folder: Path) -> Iterable[Path]:
    return sorted(p for p in folder.rglob("*.eval") if p.is_file())


def sent_settings(folder: Path, wanted: Iterable[str] = ()) -> SentSettings:
    """The settings each role's requests carried in the logs under ``folder`` (the first request recorded per
    role; a call answered from the cache sent nothing and is passed over). Every log's first sample is read (each
    model under test has logs of its own), then the logs' further samples in turn while a role of ``wanted`` is
    still unseen (at most ``SAMPLES_PER_LOG`` a log): a single-turn condition's log has no simulated user, and reading
    it to its limit for one cost most of the time from the last call to the tables."""
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import read_eval_log_sample, read_eval_log_sample_summaries

    roles: dict[str, RoleSent] = {}
    wanted = set(wanted)
    logs = []
    for log in _logs(folder):
        try:
            logs.append((log, read_eval_log_sample_summaries(str(log))[:SAMPLES_PER_LOG]))
        except (OSError, ValueError, KeyError):  # a log being written, or not a log: nothing to read yet
            continue
    for depth in range(max((len(summaries) for _, summaries in logs), default=0)):
        for log, summaries in logs:
            if depth and wanted <= set(roles):
                break
            if depth >= len(summaries):
                continue
            try:
                sample = read_eval_log_sample(str(log), summaries[depth].id, summaries[depth].epoch)
            except (OSError, ValueError, KeyError):
                continue
            for event in sample.events:
                if not isinstance(event, ModelEvent) or event.call is None or event.call.error:
                    continue
                role = role_name(event.role, event.model)
                if role not in roles:
                    roles[role] = RoleSent(
                        model=event.model, asked=asked_of(event.config), sent=from_request(event.call.request)
                    )
        if wanted <= set(roles):
            break
    return SentSettings(roles=roles)


class _Recorder:
    """A model-event sink (inspect's ``ModelEventSink``) that keeps each role's first request, then hands the event
    on as inspect would have: to the sink it replaced, else the running transcript."""

    def __init__(self, found: SentSettings, role: str | None, previous: Any) -> None:
        self.found, self.role, self.previous = found, role, previous

    def on_pending(self, event: Any) -> None:
        from inspect_ai.log._transcript import transcript

        if self.previous is not None:
            self.previous.on_pending(event)
        else:
            transcript()._event(event)

    def on_complete(self, event: Any) -> None:
        from inspect_ai.log._transcript import transcript

        call = event.call
        if event.error is None and call is not None and not call.error:  # a cache hit sent nothing: no call
            role = self.role or role_name(event.role, event.model)
            if role not in self.found.roles:
                self.found.roles[role] = RoleSent(
                    model=event.model, asked=asked_of(event.config), sent=from_request(call.request)
                )
        if self.previous is not None:
            self.previous.on_complete(event)
        else:
            transcript()._event_updated(event)


@contextmanager
def recording_sent(role: str | None = None, into: SentSettings | None = None) -> Iterator[SentSettings]:
    """The settings each role's first request carried, of the calls made in the block (module docstring), filled as
    the calls complete (``into``: added to it, a role already there kept). ``role``: every call of the block counts
    as that role's (a model the caller built itself has no inspect role: the play study's judge); None: each call's
    own role, as ``role_name`` reads it."""
    from inspect_ai.model._model import _model_event_sink, use_model_event_sink

    found = into if into is not None else SentSettings()
    with use_model_event_sink(_Recorder(found, role, _model_event_sink.get())):
        yield found
