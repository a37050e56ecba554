"""The question budget of a dialogue: how many questions, whether they are forced, and the notes that say so.

* a turn after the last allowed question is the final answer, whatever it says (``must_answer``);
* a *forced* budget (fixed-K) makes the first ``limit`` turns questions whatever they say (``must_ask``), and its
  notes count the questions asked;
* the reply to the last allowed question carries a note that the questions are used up;
* under a style that asks again (``DialogueStyle.ask_again``, the ``paper`` preset) an early answer is followed
  by the final-answer instruction on its own (``closing_note``).

The budget only answers questions about itself; the dialogue engine (``engine.py``) is the one place that applies
it to a turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from prefdisco.dialogue.presets import DialogueStyle
from prefdisco.dialogue.protocol import ANSWER_ONLY_GBNF, PROTOCOL_GBNF, QUESTION_ONLY_GBNF
from prefdisco.prompts import render


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
        """The message that carries ``reply`` after ``asked`` questions (the reply as is when the style has no
        notes)."""
        if not self.style.notes:
            return reply
        if asked >= self.limit:
            return render(self.style.last_question, reply=reply, max_questions=self.limit)
        if self.forced:
            return render(self.style.next_question, reply=reply, asked=asked, k=self.limit)
        return reply

    def closing_note(self) -> str:
        """The final-answer instruction on its own, after an early answer (styles that ask again)."""
        return render(self.style.last_question, reply="", max_questions=self.limit).strip()
