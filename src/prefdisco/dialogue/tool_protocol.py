"""The tool-call protocol (``--protocol tools``): the assistant asks through an ``ask_user`` tool.

The same dialogue as the text protocol (``loop.py``), read from the provider's native tool calls instead of
``QUESTION:`` / ``ANSWER:`` markers, so it works with every provider inspect supports:

* an assistant turn that calls ``ask_user(question)`` asks that question; the user's reply comes back as the
  tool's result, with the same budget notes the text protocol appends (worded for the tool);
* a turn without a tool call is the final answer (its visible text, markers stripped);
* several calls in one turn: the first is the question, every other call gets a result saying one question at a
  time, and the turn counts as one protocol violation;
* once the budget is used up the tool is withdrawn (``tool_choice="none"``; inspect then drops the tool
  definitions where the provider allows it), so the next turn is the answer whatever it holds — a call made anyway
  is a violation, and the answer is its visible text (else the question it tried to ask);
* fixed-K: the first K turns are questions; a turn without a call there is a question with its visible text (as
  under the text protocol), its reply comes back as a user message, and it counts as a violation;
* a call without a non-empty ``question`` string asks the turn's visible text and counts as a violation.

Violations are recorded as ``DialogueRecord.unmarked_turns`` (the text protocol's unmarked turns); questions,
turns and ``stop_reason`` are counted exactly as under the text protocol. ``AskSession`` is the budget-keeping
half shared with the bring-your-own assistant (``byo.py``), whose agent calls ``ask_user`` itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace

from inspect_ai.model import CachePolicy, ChatMessage, ChatMessageTool, ChatMessageUser, Model
from inspect_ai.tool import Tool, ToolCall, tool

from prefdisco.dialogue.loop import Outcome, QuestionBudget
from prefdisco.dialogue.presets import DialogueStyle
from prefdisco.dialogue.protocol import as_question, strip_markers
from prefdisco.dialogue.user_reply import SimulatedUser
from prefdisco.dialogue.visible import visible_text
from prefdisco.prompts import render
from prefdisco.schema import DialogueTurn

PROTOCOLS: tuple[str, ...] = ("text", "tools")
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


@dataclass
class AskSession:
    """One sample's questions to its simulated user under ``budget``: asks, records the turns, counts what broke
    the protocol (``violations``)."""

    user: SimulatedUser
    budget: QuestionBudget
    asked: int = 0
    violations: int = 0
    turns: list[DialogueTurn] = field(default_factory=list)

    @property
    def spent(self) -> bool:
        return self.budget.must_answer(self.asked)

    async def ask(self, question: str) -> str:
        """The user's reply to ``question`` with the budget's note; past the budget a fixed refusal (counted as a
        violation; the user is not called)."""
        if self.spent:
            self.violations += 1
            return render(NO_MORE_QUESTIONS, max_questions=self.budget.limit).strip()
        self.asked += 1
        self.turns.append(DialogueTurn(role="assistant", kind="question", content=question))
        reply = await self.user.reply(question)
        revealed = None if reply.revealed is None else list(reply.revealed)
        self.turns.append(
            DialogueTurn(role="user", kind="reply", content=reply.text, revealed=revealed, mapping=reply.mapping)
        )
        return self.budget.note(reply.text, self.asked).rstrip()


_SESSION: ContextVar[AskSession | None] = ContextVar("prefdisco_ask_session", default=None)


@contextmanager
def asking(session: AskSession) -> Iterator[AskSession]:
    """Route this task's ``ask_user`` calls (and those of the tasks it starts) to ``session``."""
    token = _SESSION.set(session)
    try:
        yield session
    finally:
        _SESSION.reset(token)


def current_session() -> AskSession:
    session = _SESSION.get()
    if session is None:
        raise RuntimeError("ask_user runs only inside a PrefDisco discovery sample (bring-your-own assistant)")
    return session


@tool
def ask_user() -> Tool:
    """The one tool of the tool protocol. Its calls go to the session of the running sample (``byo.py`` sets it),
    so an agent built once, before any sample runs, can hold it."""

    async def execute(question: str) -> str:
        """Ask the person you are helping one question about their preferences and needs.

        Args:
          question: One single question for the person.

        Returns:
          The person's reply.
        """
        return await current_session().ask(question)

    return execute


def _question(call: ToolCall, said: str) -> tuple[str, bool]:
    """The question a call asks, and whether the call was a well-formed ``ask_user(question)``."""
    asked = call.arguments.get("question") if isinstance(call.arguments, dict) else None
    if call.function == TOOL_NAME and call.parse_error is None and isinstance(asked, str) and asked.strip():
        return asked.strip(), True
    return as_question(said) or "(no question)", False


async def converse_tools(
    model: Model,
    user: SimulatedUser,
    messages: list[ChatMessage],
    budget: QuestionBudget,
    *,
    cache: CachePolicy | bool = False,
) -> Outcome:
    """Run the dialogue under the tool protocol to its final answer, appending the assistant's view of it to
    ``messages`` (the rules: this module's docstring; the budget and end rule: ``loop.py``)."""
    session = AskSession(user, budget)
    outcome = Outcome(turns=session.turns)
    tools = [ask_user()]
    closing = False  # the final-answer instruction followed an early answer: this turn is the final one
    while True:
        must_answer = closing or session.spent
        must_ask = not must_answer and budget.must_ask(session.asked)
        output = await model.generate(messages, tools=tools, tool_choice="none" if must_answer else "auto", cache=cache)
        messages.append(output.message)  # as returned, reasoning and tool calls included
        said = visible_text(output)
        calls = list(output.message.tool_calls or [])
        if must_answer or (not calls and not must_ask):
            if must_answer and calls:
                session.violations += 1  # the tool was withdrawn
            content = strip_markers(said) or (_question(calls[0], said)[0] if calls else "")
            if not closing:
                outcome.stop_reason = "budget" if must_answer else "answered"
            outcome.turns.append(DialogueTurn(role="assistant", kind="answer", content=content))
            if budget.style.ask_again and not must_answer:
                closing = True
                messages.append(ChatMessageUser(content=budget.closing_note()))
                continue
            outcome.final = content
            outcome.unmarked = session.violations
            return outcome
        if not calls:  # fixed-K: a turn that should have called the tool is a question all the same
            session.violations += 1
            messages.append(ChatMessageUser(content=await session.ask(as_question(said))))
            continue
        question, well_formed = _question(calls[0], said)
        if not well_formed or len(calls) > 1:
            session.violations += 1
        note = await session.ask(question)
        messages.append(ChatMessageTool(content=note, tool_call_id=calls[0].id, function=calls[0].function))
        for extra in calls[1:]:
            text = render(ONE_QUESTION).strip()
            messages.append(ChatMessageTool(content=text, tool_call_id=extra.id, function=extra.function))
