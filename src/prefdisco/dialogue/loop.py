"""The question/answer loop of discovery and fixed-K, and the budget rule that bounds it.

The assistant speaks first. Each turn is read under the protocol (``protocol.py``): a question goes to the
simulated user and its reply comes back as the next user message; an answer ends the dialogue. The budget
decides the rest:

* a turn after the last allowed question is the final answer, whatever it says;
* the reply to the last allowed question carries a note that the questions are used up;
* a *forced* budget (fixed-K) makes the first ``limit`` turns questions whatever their marker says, and its
  notes count the questions asked;
* under a style that asks again (``DialogueStyle.ask_again``, the ``paper`` preset) an early answer does not end
  the dialogue: the final-answer instruction follows it, and the next turn, whatever it says, is the final answer.

The assistant's history (``messages``) keeps each turn as the provider returned it, reasoning blocks included (a
reasoning model expects them back); everything that reads a turn reads its visible text (``visible.py``).

``converse`` is the whole loop as one function over a message list, a model and a user; the solver around it
(``steps.question_loop``) only wires it to the sample.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from inspect_ai.model import CachePolicy, ChatMessage, ChatMessageUser, GenerateConfig, Model

from prefdisco.dialogue.presets import DialogueStyle
from prefdisco.dialogue.protocol import ANSWER_ONLY_GBNF, PROTOCOL_GBNF, QUESTION_ONLY_GBNF, as_question, parse_turn
from prefdisco.dialogue.state import StopReason
from prefdisco.dialogue.user_reply import SimulatedUser
from prefdisco.dialogue.visible import visible_text
from prefdisco.prompts import render
from prefdisco.schema import DialogueTurn


@dataclass(frozen=True)
class QuestionBudget:
    """At most ``limit`` questions; with ``forced``, exactly ``limit``; notes worded by ``style``."""

    limit: int
    forced: bool = False
    style: DialogueStyle = field(default_factory=DialogueStyle)

    def must_ask(self, asked: int) -> bool:
        return self.forced and asked < self.limit

    def must_answer(self, asked: int) -> bool:
        return asked >= self.limit

    def grammar(self, asked: int, closing: bool = False) -> str:
        """The GBNF grammar of the next turn (sent only when the run constrains the protocol)."""
        if closing or self.must_answer(asked):
            return ANSWER_ONLY_GBNF
        return QUESTION_ONLY_GBNF if self.must_ask(asked) else PROTOCOL_GBNF

    def note(self, reply: str, asked: int) -> str:
        """The user message that carries ``reply`` after ``asked`` questions."""
        if asked >= self.limit:
            return render(self.style.last_question, reply=reply, max_questions=self.limit)
        if self.forced:
            return render(self.style.next_question, reply=reply, asked=asked, k=self.limit)
        return reply

    def closing_note(self) -> str:
        """The final-answer instruction on its own, after an early answer (styles that ask again)."""
        return render(self.style.last_question, reply="", max_questions=self.limit).strip()


@dataclass
class Outcome:
    final: str = ""
    turns: list[DialogueTurn] = field(default_factory=list)
    unmarked: int = 0
    stop_reason: StopReason = "answered"


async def converse(
    model: Model,
    user: SimulatedUser,
    messages: list[ChatMessage],
    budget: QuestionBudget,
    *,
    constrain_protocol: bool = False,
    cache: CachePolicy | bool = False,
) -> Outcome:
    """Run the dialogue to its final answer, appending the assistant's view of it to ``messages``."""
    outcome = Outcome()
    asked = 0
    closing = False  # the final-answer instruction followed an early answer: this turn is the final one
    while True:
        must_answer = closing or budget.must_answer(asked)
        must_ask = not must_answer and budget.must_ask(asked)
        config = (
            GenerateConfig(extra_body={"grammar": budget.grammar(asked, closing)})
            if constrain_protocol
            else GenerateConfig()
        )
        output = await model.generate(messages, config=config, cache=cache)
        messages.append(output.message)  # as returned, reasoning included: the model's own history
        said = visible_text(output)
        if must_ask:
            kind, content = "question", as_question(said)
        else:
            turn = parse_turn(said)
            outcome.unmarked += turn.unmarked
            kind = "answer" if must_answer else turn.kind
            content = turn.content
            if kind == "answer" and not closing:
                outcome.stop_reason = "budget" if must_answer else "unmarked" if turn.unmarked else "answered"
        if kind == "answer":
            outcome.turns.append(DialogueTurn(role="assistant", kind="answer", content=content))
            if budget.style.ask_again and not must_answer:
                closing = True
                messages.append(ChatMessageUser(content=budget.closing_note()))
                continue
            outcome.final = content
            return outcome
        asked += 1
        outcome.turns.append(DialogueTurn(role="assistant", kind="question", content=content))
        reply = await user.reply(content)
        revealed = None if reply.revealed is None else list(reply.revealed)
        outcome.turns.append(
            DialogueTurn(role="user", kind="reply", content=reply.text, revealed=revealed, mapping=reply.mapping)
        )
        messages.append(ChatMessageUser(content=budget.note(reply.text, asked)))
