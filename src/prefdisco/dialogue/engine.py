"""The dialogue engine: one dialogue of one scenario under one condition, stepped one assistant turn at a time.

Every driver plays a dialogue through a ``Dialogue`` and none applies a rule of its own: the condition solvers
(``solver.py``, both protocols), a bring-your-own assistant's ``ask_user`` tool (``byo.py``), the strategy solvers
(``strategies.py``), the dry-run planner, and the RL environment (``env/``: its episode, gymnasium and verl). The
engine never calls the assistant's model: a driver generates each turn (``drive.play`` for a model) and hands it to
``step``. The rules, all here:

* a turn is read under the run's protocol (``protocol.py`` text markers, ``tool_protocol.py`` the ``ask_user``
  tool) given what the budget expects of it (``action.Expect``; ``budget.py``): a question goes to the simulated
  user, an answer ends the dialogue;
* the budget: at most K questions (discovery), exactly K (fixed-K): the turn after the last allowed question is
  the answer whatever it says, the reply to the last one carries the note that the questions are used up;
* under a style that asks again (the ``paper`` preset) an early answer is followed by the final-answer instruction
  and the next turn, whatever it says, is the response that is scored;
* a single-turn condition (baseline, oracle, wrong_persona) takes the first turn's visible text as the response;
* a turn that breaks the protocol is recorded (``violations``) and read by rule, never raised;
* a question asked by a driver that decides itself what a question is (an agent's tool call, a policy's question:
  ``ask``) past the budget is refused with a fixed text and counted as a violation; ``finish`` ends such a
  dialogue with the driver's final response.

The user side is an input too: with a ``SimulatedUser`` attached, a question is answered at once; without one,
``step`` returns the question as ``pending`` and ``reply`` answers it later (a person on a web page, a replayed
log). Everything that reads a turn reads its visible text (``visible.py``); the assistant's history
(``messages``) keeps each turn as given, reasoning included.

Every reply to a question is screened when the dialogue has a ``Screen`` (``hygiene.py``: role inversion, restart,
reasoning leak, empty or cut, profile echo; no model call): the reply turn records its faults (``flags``), and
under ``rules.user_retry`` = N a flagged simulated reply is drawn again up to N times, each flagged draw kept
(``redrawn``).

The state is one pydantic record (``DialogueState``: rules, messages, turns, pending question, end) with no client
in it: copy it, save it between requests, and ``Dialogue.restore`` it with a user rebuilt from its turns.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageUser, ModelOutput

from prefdisco.dialogue import protocol as text_protocol
from prefdisco.dialogue import tool_protocol
from prefdisco.dialogue.action import Action, Expect, TurnHints
from prefdisco.dialogue.dialogue_state import DialogueRules, DialogueState, Pending, PushbackTurn
from prefdisco.dialogue.hygiene import Screen
from prefdisco.dialogue.protocol import strip_markers
from prefdisco.dialogue.response_end import response_end
from prefdisco.dialogue.user_reply import SimulatedUser, UserReply, redraw
from prefdisco.dialogue.visible import visible_text
from prefdisco.schema import DialogueTurn, FlaggedReply

Turn = str | ChatMessage | ModelOutput
"""An assistant turn as a driver hands it over: text, a message (tool calls included) or a model's output."""


@dataclass(frozen=True)
class Observation:
    """What one step gives back: the messages now sent to the assistant, a question waiting for a reply (no user
    attached), whether the dialogue has ended, and how the turn was read."""

    messages: tuple[ChatMessage, ...] = ()
    pending: str | None = None
    done: bool = False
    kind: str | None = None
    """question or answer: how the turn was read (None for a reply given later)."""
    violation: str | None = None
    refused: bool = False
    """A question past the budget, refused (``ask``)."""

    @property
    def text(self) -> str:
        """The messages' text, as one string."""
        return "\n\n".join(m.text for m in self.messages)


def as_message(turn: Turn) -> ChatMessageAssistant:
    """An assistant turn as the message the assistant's history keeps."""
    if isinstance(turn, str):
        return ChatMessageAssistant(content=turn)
    if isinstance(turn, ModelOutput):
        return turn.message if turn.choices else ChatMessageAssistant(content=turn.completion)
    if not isinstance(turn, ChatMessageAssistant):
        raise TypeError(f"an assistant turn is text, a ModelOutput or an assistant message, not a {turn.role} message")
    return turn


def user_history(turns: list[DialogueTurn]) -> list[ChatMessage]:
    """A simulated user's own view of the dialogue so far (questions in, replies out), from the turns."""
    history: list[ChatMessage] = []
    for turn in turns:
        if turn.kind == "question":
            history.append(ChatMessageUser(content=turn.content))
        elif turn.kind == "reply":
            history.append(ChatMessageAssistant(content=turn.content))
    return history


class Dialogue:
    """One dialogue (module docstring). ``start`` a new one, or ``restore`` a saved ``DialogueState``."""

    def __init__(self, state: DialogueState, user: SimulatedUser | None = None, screen: Screen | None = None) -> None:
        self.state = state
        self.user = user
        self.screen = screen

    @classmethod
    def start(
        cls,
        scenario_id: str,
        rules: DialogueRules,
        opening: list[ChatMessage],
        user: SimulatedUser | None = None,
        pushback_target: str | None = None,
        screen: Screen | None = None,
    ) -> Dialogue:
        """A new dialogue whose assistant sees ``opening`` (``openings.py``) first; ``pushback_target``: the wrong
        answer the person insists on if the rules push back; ``screen``: the hygiene checks of every reply."""
        if rules.ask not in tool_protocol.ASK_CHANNELS:
            raise ValueError(f"unknown ask channel {rules.ask!r}: expected one of {tool_protocol.ASK_CHANNELS}")
        state = DialogueState(scenario_id=scenario_id, rules=rules, messages=list(opening))
        state.pushback_target = pushback_target
        return cls(state, user, screen)

    @classmethod
    def restore(cls, state: DialogueState, user: SimulatedUser | None = None, screen: Screen | None = None) -> Dialogue:
        """Go on with a saved dialogue; ``user``'s history is rebuilt from the turns."""
        if user is not None:
            user.history = user_history(state.turns[: len(state.turns) - (state.pending is not None)])
        return cls(state.model_copy(deep=True), user, screen)

    # -- what the next turn must be ---------------------------------------------------------------------------

    @property
    def rules(self) -> DialogueRules:
        return self.state.rules

    @property
    def messages(self) -> list[ChatMessage]:
        """The assistant's history: the opening, its turns as given and what it was sent back."""
        return self.state.messages

    @property
    def done(self) -> bool:
        return self.state.done

    @property
    def spent(self) -> bool:
        """The question budget is used up."""
        return self.rules.budget.must_answer(self.state.asked)

    @property
    def expect(self) -> Expect:
        if self.rules.single_turn or self.state.pushing_back:
            return "final"
        if self.state.closing or self.spent:
            return "answer"
        return "question" if self.rules.budget.must_ask(self.state.asked) else "free"

    def hints(self, constrain_ask: bool = False) -> TurnHints:
        """What to send with the call that makes the next turn (``constrain_ask``: the text protocol's
        grammar, for llama.cpp models)."""
        if self.rules.ask == "tools":
            return tool_protocol.hints(self.expect)
        grammar = self.rules.budget.grammar(self.state.asked, self.state.closing)
        free = self.rules.single_turn or self.state.pushing_back
        return text_protocol.hints(grammar if constrain_ask and not free else None)

    # -- the assistant's side ---------------------------------------------------------------------------------

    async def step(self, turn: Turn) -> Observation:
        """Read one assistant turn and apply the rules: a question goes to the user (or waits for ``reply``), an
        answer ends the dialogue (or, asking again, brings the final-answer instruction)."""
        self._running()
        message = as_message(turn)
        expect = self.expect
        self.state.messages.append(message)
        said = visible_text(turn)
        if self.state.pushing_back:  # the reply to a challenge: read whole, as a single turn is
            self.state.pushback[-1].reply = strip_markers(said)
            return await self._push_back() if not self.state.done else Observation(done=True, kind="reply")
        if self.rules.ask == "tools":
            action = tool_protocol.read(message, said, expect)
        else:
            action = text_protocol.read(said, expect)
        observed = await self._act(action, expect, turn)
        if observed.done and not self.state.done:  # the final answer: the person pushes back
            return await self._push_back()
        return observed

    async def ask(self, question: str) -> Observation:
        """A question from a driver that decides itself what a question is (an agent's ``ask_user`` call, a
        policy's question): past the budget it is refused, counted as a violation, and the user is not called."""
        self._running()
        self.state.messages.append(ChatMessageAssistant(content=question))
        if self.spent:
            self.state.violations.append("a question past the budget")
            refused = ChatMessageUser(content=tool_protocol.refusal(self.rules.limit))
            self.state.messages.append(refused)
            return Observation((refused,), kind="question", violation=self.state.violations[-1], refused=True)
        return await self._act(Action("question", question), "free")

    async def ask_for_tool(self, question: str) -> str:
        """``ask`` for the ``ask_user`` tool: the text its call returns."""
        return (await self.ask(question)).text.rstrip()

    def finish(self, turn: Turn) -> Observation:
        """End the dialogue with a driver's final response (an agent's last output, a strategy's answer): its
        visible text, markers stripped; stop reason ``budget`` when the questions were used up."""
        self._running()
        message = as_message(turn)
        self.state.messages.append(message)
        expect: Expect = "answer" if self.spent else "free"
        return self._end(Action("answer", strip_markers(visible_text(turn))), expect, ask_again=False, turn=turn)

    # -- the user's side --------------------------------------------------------------------------------------

    async def reply(self, reply: UserReply | str) -> Observation:
        """The reply to the pending question: recorded, and sent to the assistant with the budget's note."""
        pending = self.state.pending
        if pending is None and self._challenge_due:  # a person's (or a replayed) challenge
            return self._challenge(reply if isinstance(reply, str) else reply.text)
        if pending is None:
            raise RuntimeError("no question is waiting for a reply")
        if isinstance(reply, str):
            reply = UserReply(reply, None)
        revealed = None if reply.revealed is None else list(reply.revealed)
        flags = None if self.screen is None else list(self.screen.check(reply).reasons)
        self.state.turns.append(
            DialogueTurn(
                role="user",
                kind="reply",
                content=reply.text,
                revealed=revealed,
                mapping=reply.mapping,
                flags=flags,
                redrawn=list(pending.redrawn),
            )
        )
        note = self.rules.budget.note(reply.text, self.state.asked)
        if self.rules.ask == "tools":
            sent = tool_protocol.reply_messages(note, pending.call, tuple(pending.extra_calls))
        else:
            sent = text_protocol.reply_messages(note)
        self.state.messages.extend(sent)
        self.state.pending = None
        return Observation(tuple(sent))

    # -- the rules --------------------------------------------------------------------------------------------

    def _running(self) -> None:
        if self.state.done:
            raise RuntimeError("the dialogue has ended")
        if self.state.pending is not None or self._challenge_due:
            raise RuntimeError("a question is waiting for the user's reply: call reply() first")

    @property
    def _challenge_due(self) -> bool:
        """The final answer is given, pushback remains, and no challenge is waiting for the assistant."""
        return self.state.final is not None and not self.state.done and not self.state.pushing_back

    async def _push_back(self) -> Observation:
        """The next challenge: from the simulated user (``challenge``), or waiting for ``reply`` without one."""
        if self.user is None:
            return Observation(pending="(pushback)", kind="answer")
        answer = self.state.pushback[-1].reply if self.state.pushback else self.state.final
        said = await self.user.challenge(answer or "", self.state.pushback_target, len(self.state.pushback) + 1)
        return self._challenge(said.text)

    def _challenge(self, text: str) -> Observation:
        self.state.pushback.append(PushbackTurn(challenge=text))
        sent = ChatMessageUser(content=text)
        self.state.messages.append(sent)
        return Observation((sent,), kind="answer")

    async def _act(self, action: Action, expect: Expect, turn: Turn | None = None) -> Observation:
        if action.violation:
            self.state.violations.append(action.violation)
        if action.kind == "answer":
            return self._end(action, expect, ask_again=True, turn=turn)
        self.state.asked += 1
        self.state.turns.append(DialogueTurn(role="assistant", kind="question", content=action.text))
        self.state.pending = Pending(question=action.text, call=action.call, extra_calls=list(action.extra_calls))
        if self.user is None:
            return Observation(pending=action.text, kind="question", violation=action.violation)
        answered = await self.reply(await self._draw(self.user, action.text))
        return Observation(answered.messages, kind="question", violation=action.violation)

    async def _draw(self, user: SimulatedUser, question: str) -> UserReply:
        """The simulated user's reply to the pending ``question``; a flagged one drawn again up to
        ``rules.user_retry`` times, each flagged draw kept in the pending question's ``redrawn``."""
        reply = await user.reply(question)
        pending = self.state.pending
        for attempt in range(1, self.rules.user_retry + 1):
            flags = self.screen.check(reply) if self.screen is not None else None
            if flags is None or not flags.flagged or pending is None:
                break
            before = user_history(self.state.turns[:-1])  # the user's view before this question
            again = await redraw(user, question, attempt, before)
            if again is None:  # a user with no model of its own: nothing to draw again
                break
            pending.redrawn.append(FlaggedReply(content=reply.text, flags=list(flags.reasons)))
            reply = again
        return reply

    def _end(self, action: Action, expect: Expect, ask_again: bool, turn: Turn | None = None) -> Observation:
        """The answer ``action`` ends the dialogue (or brings the final-answer instruction); the final response's
        ``final_end`` is read from ``turn``, the output it came from (``response_end.py``)."""
        self.state.turns.append(DialogueTurn(role="assistant", kind="answer", content=action.text))
        if not self.state.closing:
            self.state.stop_reason = (
                "single_turn"
                if expect == "final"
                else "budget"
                if expect == "answer"
                else "unmarked"
                if action.unmarked
                else "answered"
            )
        if ask_again and self.rules.style.ask_again and expect == "free":
            self.state.closing = True
            note = ChatMessageUser(content=self.rules.budget.closing_note())
            self.state.messages.append(note)
            return Observation((note,), kind="answer", violation=action.violation)
        self.state.final = action.text
        self.state.final_end = response_end(turn)
        return Observation(done=True, kind="answer", violation=action.violation)
