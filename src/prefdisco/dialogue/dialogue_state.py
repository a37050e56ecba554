"""The engine's state of one dialogue (``engine.py``): its rules and everything said so far, as pydantic records.

``DialogueState`` holds no client: it is copied, saved between a web page's requests (a person in the user's seat),
chained in a session, and resumed with ``Dialogue.restore``. ``DialogueRules`` is what decides a dialogue's course.
"""

from __future__ import annotations

from inspect_ai.model import ChatMessage
from inspect_ai.tool import ToolCall
from inspect_ai.util import Store
from pydantic import BaseModel, ConfigDict, Field

from prefdisco.dialogue.budget import QuestionBudget
from prefdisco.dialogue.presets import DialogueStyle
from prefdisco.dialogue.response_end import ResponseEnd
from prefdisco.dialogue.state import DialogueRecord, StopReason
from prefdisco.schema import DialogueTurn, FlaggedReply


class DialogueRules(BaseModel):
    """What decides a dialogue's course: its condition (the cache scope of its calls), protocol, budget and style."""

    model_config = ConfigDict(frozen=True)

    condition: str
    ask: str = "text"
    """``text`` (markers) or ``tools`` (the ``ask_user`` tool)."""
    limit: int = 0
    """The question budget K."""
    forced: bool = False
    """Exactly ``limit`` questions (fixed-K)."""
    single_turn: bool = False
    """One turn, the response (baseline, oracle, wrong_persona)."""
    style: DialogueStyle = Field(default_factory=DialogueStyle)
    pushback: int = Field(default=0, ge=0)
    """After the final answer, the person pushes back this many turns (``--pushback N``); the answer that is scored
    stays the one before."""
    user_retry: int = Field(default=0, ge=0)
    """A simulated reply the hygiene checks flag is drawn again up to this many times (``--user-retry N``)."""

    @property
    def budget(self) -> QuestionBudget:
        return QuestionBudget(self.limit, self.forced, self.style)

    @property
    def needs_user(self) -> bool:
        """Whether the dialogue talks to a (simulated) person: it may ask questions, or the person pushes back after
        the answer. The one rule every driver reads (a single-turn condition without pushback needs none)."""
        return not self.single_turn or self.pushback > 0


class Pending(BaseModel):
    """A question waiting for the user's reply, and the tool calls its reply answers (tool ask)."""

    question: str
    call: ToolCall | None = None
    extra_calls: list[ToolCall] = Field(default_factory=list)
    redrawn: list[FlaggedReply] = Field(default_factory=list)
    """Flagged simulated replies to it, drawn again (``user_retry``)."""


class PushbackTurn(BaseModel):
    """One turn of pushback after the final answer: the person's challenge and the assistant's reply to it."""

    challenge: str
    reply: str | None = None


class DialogueState(BaseModel):
    """The whole of a dialogue, serialisable: rules, the assistant's messages, the turns as read, the end."""

    scenario_id: str
    rules: DialogueRules
    messages: list[ChatMessage] = Field(default_factory=list)
    asked: int = 0
    closing: bool = False
    """The final-answer instruction followed an early answer: the next turn is the response."""
    turns: list[DialogueTurn] = Field(default_factory=list)
    violations: list[str] = Field(default_factory=list)
    pending: Pending | None = None
    stop_reason: StopReason | None = None
    final: str | None = None
    """The response that is scored; set once the dialogue proper has ended (pushback may follow)."""
    final_end: ResponseEnd | None = None
    """How the final response's generation ended (``response_end.py``); None: a driver handed over text."""
    pushback_target: str | None = None
    """The wrong answer the person insists on when pushing back (``wrong_answers.py``; None: none named)."""
    pushback: list[PushbackTurn] = Field(default_factory=list)

    @property
    def done(self) -> bool:
        """The response is given and every pushback turn replied to."""
        replied = sum(t.reply is not None for t in self.pushback)
        return self.final is not None and replied >= self.rules.pushback

    @property
    def pushing_back(self) -> bool:
        """The final answer is given and a challenge is waiting for the assistant's reply."""
        return self.final is not None and bool(self.pushback) and self.pushback[-1].reply is None

    def record(self) -> DialogueRecord:
        """What the scorer reads (``state.py``), in a store of its own (a ``StoreModel`` made without one would
        write to the running sample's store, or to one shared by every record made outside a sample)."""
        return DialogueRecord(
            store=Store(),
            condition=self.rules.condition,
            final_response=self.final,
            final_end=self.final_end,
            turns=list(self.turns),
            unmarked_turns=len(self.violations),
            violations=list(self.violations),
            stop_reason=self.stop_reason,
            pushback_target=self.pushback_target,
            pushback=[t.model_dump() for t in self.pushback],
        )
