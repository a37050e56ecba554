"""The tool-call ask channel (``--ask tools``): the assistant asks through an ``ask_user`` tool.

The same dialogue as the text protocol (``protocol.py``), read from the provider's native tool calls instead of
``QUESTION:`` / ``ANSWER:`` markers, so it works with every provider inspect supports. This module is its codec
(``read``, ``reply_messages``, ``hints``); the budget and the end rule are the engine's (``engine.py``). What a
question, a reply, the answer and a violation are under each channel is described once, in docs/agents.md,
"Protocols"; violations are recorded in ``DialogueRecord.violations`` (counted as ``unmarked_turns``), and
questions, turns and ``stop_reason`` are counted exactly as under the text protocol. Once the budget is used up the
tool is withdrawn (``tool_choice="none"``; inspect then drops the tool definitions where the provider allows it).

``ask_user`` is also the tool of a bring-your-own assistant (``byo.py``), whose agent calls it itself: its calls go
to the dialogue of the running sample (``asking``), which keeps the budget (``Dialogue.ask``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import Protocol

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import Tool, ToolCall, tool

from prefdisco.dialogue.action import Action, Expect, TurnHints
from prefdisco.dialogue.presets import DialogueStyle
from prefdisco.dialogue.protocol import as_question, strip_markers
from prefdisco.prompts import render

ASK_CHANNELS: tuple[str, ...] = ("text", "tools")
"""How a dialogue's assistant asks (``--ask``): the text markers (``protocol.py``) or the ``ask_user`` tool."""
TOOL_NAME = "ask_user"
NO_MORE_QUESTIONS = "protocol_no_more_questions_tools"
ONE_QUESTION = "protocol_one_question_tools"
TOOL_TEMPLATES: tuple[str, ...] = (NO_MORE_QUESTIONS, ONE_QUESTION)
"""The tool results the protocol writes itself (besides the style's notes)."""


def tools_style(style: DialogueStyle) -> DialogueStyle:
    """``style`` with the tool protocol's system prompts and notes (no markers; "use the ask_user tool").
    Only the default style has them: a preset with its own prompts (``paper``) is a text-protocol evaluator."""
    if style != DialogueStyle():
        raise ValueError("the tool protocol has prompts for the default preset only")
    return replace(
        style,
        discovery="assistant_discovery_tools",
        fixed_k="assistant_fixed_k_tools",
        next_question="protocol_next_question_tools",
        last_question="protocol_last_question_tools",
    )


# -- the codec ----------------------------------------------------------------------------------------------------


def _question(call: ToolCall, said: str) -> tuple[str, bool]:
    """The question a call asks, and whether the call was a well-formed ``ask_user(question)``."""
    asked = call.arguments.get("question") if isinstance(call.arguments, dict) else None
    if call.function == TOOL_NAME and call.parse_error is None and isinstance(asked, str) and asked.strip():
        return asked.strip(), True
    return as_question(said) or "(no question)", False


def read(message: ChatMessageAssistant, said: str, expect: Expect) -> Action:
    """The tool protocol's reading of ``message`` (visible text ``said``), given what the budget expects."""
    calls = list(message.tool_calls or [])
    if expect in ("answer", "final") or (not calls and expect == "free"):
        withdrawn = "an ask_user call after the tool was withdrawn" if calls and expect == "answer" else None
        content = strip_markers(said) or (_question(calls[0], said)[0] if calls else "")
        return Action("answer", content, withdrawn)
    if not calls:  # fixed-K: a turn that should have called the tool is a question all the same
        return Action("question", as_question(said), "no ask_user call in a turn that must ask")
    question, well_formed = _question(calls[0], said)
    problems = [*([] if well_formed else ["a malformed ask_user call"]), *(["several calls"] if calls[1:] else [])]
    return Action("question", question, "; ".join(problems) or None, call=calls[0], extra_calls=tuple(calls[1:]))


def reply_messages(note: str, call: ToolCall | None, extra_calls: tuple[ToolCall, ...] = ()) -> list[ChatMessage]:
    """The reply (with the budget's note) as the result of ``call``, every other call of the turn told to ask one
    question at a time; a question asked without a call gets its reply as a user message."""
    note = note.rstrip()
    if call is None:
        return [ChatMessageUser(content=note)]
    one = render(ONE_QUESTION).strip()
    return [
        ChatMessageTool(content=note, tool_call_id=call.id, function=call.function),
        *(ChatMessageTool(content=one, tool_call_id=c.id, function=c.function) for c in extra_calls),
    ]


def refusal(limit: int) -> str:
    """The tool result of a question asked past the budget (bring-your-own assistants: the user is not called)."""
    return render(NO_MORE_QUESTIONS, max_questions=limit).strip()


def hints(expect: Expect) -> TurnHints:
    """The tool offered, withdrawn once the turn must be the answer."""
    return TurnHints(tools=[ask_user()], tool_choice="none" if expect in ("answer", "final") else "auto")


# -- the tool of bring-your-own assistants ---------------------------------------------------------------------------


class Asker(Protocol):
    """Who answers ``ask_user`` calls: the running sample's dialogue (``engine.Dialogue``)."""

    async def ask_for_tool(self, question: str) -> str: ...


_ASKER: ContextVar[Asker | None] = ContextVar("prefdisco_asker", default=None)


@contextmanager
def asking(asker: Asker) -> Iterator[Asker]:
    """Route this task's ``ask_user`` calls (and those of the tasks it starts) to ``asker``."""
    token = _ASKER.set(asker)
    try:
        yield asker
    finally:
        _ASKER.reset(token)


def current_asker() -> Asker:
    asker = _ASKER.get()
    if asker is None:
        raise RuntimeError("ask_user runs only inside a PrefDisco discovery sample (bring-your-own assistant)")
    return asker


@tool
def ask_user() -> Tool:
    """The one tool of the tool protocol. Its calls go to the dialogue of the running sample (``byo.py`` sets it),
    so an agent built once, before any sample runs, can hold it."""

    async def execute(question: str) -> str:
        """Ask the person you are helping one question about their preferences and needs.

        Args:
          question: One single question for the person.

        Returns:
          The person's reply.
        """
        return await current_asker().ask_for_tool(question)

    return execute
