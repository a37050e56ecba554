"""What a protocol reads an assistant turn as, and what it asks of the next one.

The two protocols (``protocol.py``: text markers; ``tool_protocol.py``: the ``ask_user`` tool) are codecs: each
reads a turn into an ``Action`` — a question or an answer, with the protocol violation the turn made, if any — and
writes the user's reply back in its own form. What the turn *must* be comes from the budget, through the engine
(``engine.py``), as an ``Expect``:

* ``free`` — the assistant may ask or answer;
* ``question`` — a fixed-K turn before the K-th question: a question whatever it says;
* ``answer`` — the budget is used up, or the final-answer instruction followed an early answer: the answer
  whatever it says;
* ``final`` — a single-turn condition (baseline, oracle, wrong_persona): the turn's whole visible text, protocol
  markers stripped, is the response.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from inspect_ai.model import GenerateConfig
from inspect_ai.tool import Tool, ToolCall, ToolChoice

Expect = Literal["free", "question", "answer", "final"]


@dataclass(frozen=True)
class Action:
    """One assistant turn as its protocol read it."""

    kind: Literal["question", "answer"]
    text: str
    """The question asked, or the response (markers stripped)."""
    violation: str | None = None
    """Why the turn broke the protocol (None: it did not); one per turn at most."""
    unmarked: bool = False
    """Text protocol: an answer read from a turn without any marker (stop reason ``unmarked``)."""
    call: ToolCall | None = None
    """Tool protocol: the ``ask_user`` call the question came in (its reply is that call's result)."""
    extra_calls: tuple[ToolCall, ...] = ()
    """Tool protocol: further calls of the same turn, answered "one question at a time"."""


@dataclass(frozen=True)
class TurnHints:
    """What a driver sends with the call that makes the next assistant turn: the tools offered, the tool choice
    and the generation settings (the protocol's grammar for a constrained text protocol)."""

    tools: list[Tool] = field(default_factory=list)
    tool_choice: ToolChoice | None = None
    config: GenerateConfig = field(default_factory=GenerateConfig)
