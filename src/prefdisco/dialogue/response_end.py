"""How the final response's generation ended, read from the provider's output as inspect reports it.

A provider ends a generation in one of inspect's stop reasons (``stop``, ``max_tokens``, ``model_length``,
``tool_calls``, ``content_filter``, ``unknown``) and marks a refusal in its own way; inspect's clients bring each
to one shape:

* Anthropic ``stop_reason: "refusal"`` → ``content_filter`` with ``stop_details.type == "refusal"``;
* OpenAI chat completions ``message.refusal`` and a Responses ``refusal`` part → a ``ContentText`` with
  ``refusal=True``; ``finish_reason: "content_filter"`` → ``content_filter``;
* ``finish_reason: "length"``, Anthropic ``max_tokens``, a Responses ``incomplete`` (max output tokens) →
  ``max_tokens``; a context overflow → ``model_length``.

``ResponseEnd`` keeps what the scorer needs of it: the stop reason, ``refused`` (a content filter, a refusal stop or
a refusal part) and ``truncated`` (cut at the token or context limit). The engine records it for the turn that became
the final response (``Dialogue._end``); a driver that hands over text has no output to read (``stop_reason`` None).
An *empty* response (no visible text: a reasoning model that spent its whole budget thinking, an empty completion)
is read from the response itself (``scoring/non_answer.py``), whatever the stop reason.
"""

from __future__ import annotations

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ContentText, ModelOutput
from pydantic import BaseModel, ConfigDict

CUT_OFF = ("max_tokens", "model_length")
"""inspect's stop reasons of a generation cut at a limit."""


class ResponseEnd(BaseModel):
    """How one generation ended (module docstring)."""

    model_config = ConfigDict(frozen=True)

    stop_reason: str | None = None
    """inspect's stop reason of the generation; None when the driver handed over text, not a model's output."""
    refused: bool = False
    """The provider refused: a content filter, a refusal stop or a refusal part in the message."""
    truncated: bool = False
    """Cut off at the token or context limit."""


def _refusal_part(message: ChatMessage | None) -> bool:
    content = message.content if message is not None else None
    return isinstance(content, list) and any(isinstance(c, ContentText) and c.refusal for c in content)


def response_end(turn: object) -> ResponseEnd | None:
    """How ``turn`` (what a driver hands the engine: text, a message or a model's output) ended; None for text and
    for a message without a refusal part (nothing says how its generation ended)."""
    if isinstance(turn, ModelOutput):
        choice = turn.choices[0] if turn.choices else None
        details = choice.stop_details if choice is not None else None
        reason = str(turn.stop_reason)
        refused = (
            reason == "content_filter"
            or (details is not None and details.type == "refusal")
            or _refusal_part(choice.message if choice is not None else None)
        )
        return ResponseEnd(stop_reason=reason, refused=refused, truncated=reason in CUT_OFF)
    if isinstance(turn, ChatMessageAssistant) and _refusal_part(turn):
        return ResponseEnd(refused=True)
    return None
