"""What a dialogue hands to the scorer: one typed record in the sample's store.

The condition solvers write it once the final response is known; the scorer reads it (``inspect score`` re-reads
it from the log). Fields, under ``DialogueRecord:<field>`` in the store:

* ``condition`` — baseline, discovery, oracle or fixed_k<K> (also the cache scope of the calls);
* ``final_response`` — the assistant's own final turn, protocol markers stripped (None: no dialogue ran);
* ``final_end`` — how that turn's generation ended: stop reason, refused, truncated (``response_end.py``; None: a
  driver handed over text, or a record written before it was kept);
* ``turns`` — the dialogue as the protocol read it (assistant questions, user replies, the answer);
* ``unmarked_turns`` — protocol violations: under the text protocol, assistant turns that carried no marker;
  under the tool protocol (``tool_protocol.py``), turns that broke its rules (several calls, a call without a
  question or after the tool was withdrawn, a fixed-K turn without a call, a question past the budget);
* ``violations`` — why each of those turns broke the protocol, one line per turn (records written before the
  engine kept them have only the count);
* ``stop_reason`` — why the dialogue ended;
* ``pushback_target`` and ``pushback`` — with ``--pushback N``: the wrong answer the person insisted on (None: none
  named) and each challenge with the assistant's reply (the scored response stays ``final_response``).

The engine (``engine.py``) writes it from its finished ``DialogueState``.

``n_questions`` is derived from ``turns``, never stored twice.
"""

from __future__ import annotations

from typing import Literal

from inspect_ai.util import StoreModel
from pydantic import Field

from prefdisco.dialogue.response_end import ResponseEnd
from prefdisco.schema import DialogueTurn

StopReason = Literal["single_turn", "answered", "unmarked", "budget"]
"""single_turn: baseline/oracle, one reply; answered: a marked ANSWER; unmarked: a turn without a marker taken as
the answer; budget: the question budget was used up, so the next turn was the answer whatever it said."""


class DialogueRecord(StoreModel):
    condition: str = ""
    final_response: str | None = None
    final_end: ResponseEnd | None = None
    turns: list[DialogueTurn] = Field(default_factory=list)
    unmarked_turns: int = 0
    violations: list[str] = Field(default_factory=list)
    stop_reason: StopReason | None = None
    pushback_target: str | None = None
    pushback: list[dict[str, str | None]] = Field(default_factory=list)

    @property
    def n_questions(self) -> int:
        return sum(t.kind == "question" for t in self.turns)
