"""Stand-in models for planning a run's calls without making any (``prefdisco eval --dry-run``).

A ``Probe`` is an inspect ``Model`` with no provider: every ``generate`` records what it was sent (``Sent``: the
characters of the messages, the response schema and the tool definitions, and the call's ``max_tokens``) and
answers at once with the next of its scripted replies; with none left it records the call and stops its caller.
The real dialogue, user, judge, audit and grader code runs against probes unchanged, so a plan counts exactly
the calls and prompts that code makes. ``drive`` runs such a coroutine by hand: nothing in it awaits anything but
a probe, so no event loop, provider, API key or file is touched.
"""

from __future__ import annotations

import json
from collections.abc import Coroutine, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from inspect_ai._util.notgiven import NOT_GIVEN, NotGiven
from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelAPI,
    ModelOutput,
    StreamHandler,
)
from inspect_ai.tool import Tool, ToolChoice, ToolDef, ToolInfo, ToolSource

T = TypeVar("T")


class Stopped(Exception):
    """A stand-in with no reply left was called: its caller stops there."""


@dataclass(frozen=True)
class Sent:
    """One planned call: characters sent, characters of the expected reply, the call's max_tokens (None: none)."""

    input_chars: int
    output_chars: int
    bound: int | None


class Probe(Model):
    """A stand-in model: records each call it is sent and answers with the next of ``replies`` (a string or a
    ``ModelOutput``); with none left it records the call and stops its caller (``Stopped``)."""

    def __init__(self, name: str, config: GenerateConfig, replies: Iterator[str | ModelOutput] | None = None) -> None:
        self.api = cast(ModelAPI, None)  # no provider: a probe never calls one
        self.config = config
        self.model_args = {}
        self._role, self._explicit_base_url = None, None
        self.label = name
        self.replies = replies
        self.sent: list[Sent] = []

    def __str__(self) -> str:
        return self.label

    async def generate(
        self,
        input: str | list[ChatMessage],
        tools: Sequence[Tool | ToolDef | ToolInfo | ToolSource] | ToolSource = [],  # noqa: B006 - inspect's default
        tool_choice: ToolChoice | None = None,
        config: GenerateConfig = GenerateConfig(),
        cache: bool | CachePolicy | NotGiven = NOT_GIVEN,
        on_stream: StreamHandler | None = None,
    ) -> ModelOutput:
        messages = [ChatMessageUser(content=input)] if isinstance(input, str) else input
        chars = sum(_message_chars(m) for m in messages) + _schema_chars(config) + _tools_chars(tools)
        bound = config.max_tokens or self.config.max_tokens
        reply = next(self.replies, None) if self.replies is not None else None
        if reply is None:
            self.sent.append(Sent(chars, 4 * bound if bound else 0, bound))
            raise Stopped
        output = reply if isinstance(reply, ModelOutput) else ModelOutput.from_content(self.label, reply)
        self.sent.append(Sent(chars, _message_chars(output.message), bound))
        return output


def _message_chars(message: ChatMessage) -> int:
    calls = getattr(message, "tool_calls", None) or []
    return len(message.text) + sum(len(c.function) + len(json.dumps(c.arguments)) for c in calls)


def _schema_chars(config: GenerateConfig) -> int:
    schema = config.response_schema
    return len(schema.json_schema.model_dump_json(exclude_none=True)) if schema else 0


def _tools_chars(tools: Any) -> int:
    total = 0
    for t in tools if isinstance(tools, Sequence) else []:
        info = t if isinstance(t, ToolInfo) else ToolDef(t) if callable(t) else None
        if info is not None:
            total += len(info.name) + len(info.description) + len(info.parameters.model_dump_json(exclude_none=True))
    return total


def drive(coro: Coroutine[Any, Any, T]) -> T | None:
    """Run a coroutine whose only awaits are stand-in calls: its result, or None when a stand-in stopped it."""
    try:
        coro.send(None)
    except StopIteration as done:
        return cast(T, done.value)
    except Stopped:
        return None
    coro.close()
    raise RuntimeError("the dry-run's stand-in models answer at once; this step awaited something else")
