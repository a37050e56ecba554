"""The question/answer loop of discovery and fixed-K, and the budget rule that bounds it.

The assistant speaks first. Each turn is read under the protocol (``protocol.py``): a question goes to the
simulated user and its reply comes back as the next user message; an answer ends the dialogue. The budget
decides the rest:

* a turn after the last allowed question is the final answer, whatever it says;
* the reply to the last allowed question carries a note that the questions are used up;
* a *forced* budget (fixed-K) makes the first ``limit`` turns questions whatever their marker says, and its
  notes count the questions asked.

``converse`` is the whole loop as one function over a message list, a model and a user; the solver around it
(``steps.question_loop``) only wires it to the sample.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from inspect_ai.model import CachePolicy, ChatMessage, ChatMessageAssistant, ChatMessageUser, GenerateConfig, Model

from prefdisco.dialogue.protocol import ANSWER_ONLY_GBNF, PROTOCOL_GBNF, QUESTION_ONLY_GBNF, as_question, parse_turn
from prefdisco.dialogue.state import StopReason
from prefdisco.dialogue.user import SimulatedUser
from prefdisco.prompts import render
from prefdisco.schema import DialogueTurn


@dataclass(frozen=True)
class QuestionBudget:
    """At most ``limit`` questions; with ``forced``, exactly ``limit``."""

    limit: int
    forced: bool = False

    def must_ask(self, asked: int) -> bool:
        return self.forced and asked < self.limit

    def must_answer(self, asked: int) -> bool:
        return asked >= self.limit

    def grammar(self, asked: int) -> str:
        """The GBNF grammar of the next turn (sent only when the run constrains the protocol)."""
        if self.must_ask(asked):
            return QUESTION_ONLY_GBNF
        return ANSWER_ONLY_GBNF if self.must_answer(asked) else PROTOCOL_GBNF

    def note(self, reply: str, asked: int) -> str:
        """The user message that carries ``reply`` after ``asked`` questions."""
        if asked >= self.limit:
            return render("protocol_last_question", reply=reply, max_questions=self.limit)
        if self.forced:
            return render("protocol_next_question", reply=reply, asked=asked, k=self.limit)
        return reply


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
    while True:
        must_ask, must_answer = budget.must_ask(asked), budget.must_answer(asked)
        config = (
            GenerateConfig(extra_body={"grammar": budget.grammar(asked)}) if constrain_protocol else GenerateConfig()
        )
        output = await model.generate(messages, config=config, cache=cache)
        messages.append(ChatMessageAssistant(content=output.completion, model=output.model))
        if must_ask:
            kind, content = "question", as_question(output.completion)
        else:
            turn = parse_turn(output.completion)
            outcome.unmarked += turn.unmarked
            kind = "answer" if must_answer else turn.kind
            content = turn.content
            if kind == "answer":
                outcome.stop_reason = "budget" if must_answer else "unmarked" if turn.unmarked else "answered"
        if kind == "answer":
            outcome.turns.append(DialogueTurn(role="assistant", kind="answer", content=content))
            outcome.final = content
            return outcome
        asked += 1
        outcome.turns.append(DialogueTurn(role="assistant", kind="question", content=content))
        reply = (await user.reply(content)).text
        outcome.turns.append(DialogueTurn(role="user", kind="reply", content=reply))
        messages.append(ChatMessageUser(content=budget.note(reply, asked)))
