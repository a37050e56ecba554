"""The text ask channel (the default ``--ask text``): how an assistant turn is read as a question or a final answer.

This module is the protocol's codec for the dialogue engine (``engine.py``): ``read`` gives a turn's ``Action``
given what the budget expects of it, ``reply_messages`` and ``hints`` what the assistant is sent; the rules that
decide what a turn must be are the engine's.

Every assistant turn is either

* ``QUESTION: <one question>`` — forwarded to the simulated user, counted against the question budget, or
* ``ANSWER: <complete response>`` — ends the dialogue; the text after the marker is what gets scored.

Markers are matched case-insensitively at the start of a line, optionally wrapped in markdown emphasis
(``**ANSWER:**``) or written as ``Question -``. If a turn contains an ANSWER marker anywhere, it is an answer
(text before the marker is dropped as preamble). A turn that starts with a QUESTION marker is a question.
A turn with no marker at all is taken as the final answer: a model that ignores the protocol and simply
answers is scored on what it answered, never stuck in the dialogue. Such turns are flagged ``unmarked`` (a
protocol violation) so protocol compliance can be reported.

In the fixed-K ablation the first K turns are questions whatever their marker says (the assistant is told to
ask); their markers are stripped.

``PROTOCOL_GBNF`` is a llama.cpp grammar for the protocol, sent only when a run asks for protocol-constrained
decoding (for tiny local models that cannot follow the format on their own).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from inspect_ai.model import ChatMessage, ChatMessageUser, GenerateConfig

from prefdisco.dialogue.action import Action, Expect, TurnHints

_MARKER = re.compile(
    r"^[ \t>#*_`]*(?P<kind>question|answer|final answer)[ \t*_`]*[:\-–][ \t*_`]*",
    re.IGNORECASE | re.MULTILINE,
)


@dataclass(frozen=True)
class Turn:
    kind: Literal["question", "answer"]
    content: str
    unmarked: bool = False


def parse_turn(text: str) -> Turn:
    """Read one assistant turn under the discovery protocol."""
    markers = list(_MARKER.finditer(text))
    answers = [m for m in markers if m.group("kind").lower() != "question"]
    if answers:
        return Turn("answer", strip_markers(text[answers[0].end() :]))
    if markers and not text[: markers[0].start()].strip():
        return Turn("question", strip_markers(text[markers[0].end() :]))
    return Turn("answer", strip_markers(text), unmarked=True)


def read(said: str, expect: Expect) -> Action:
    """The text protocol's reading of a turn whose visible text is ``said``, given what the budget expects."""
    if expect == "final":
        return Action("answer", strip_markers(said))
    if expect == "question":
        return Action("question", as_question(said))
    turn = parse_turn(said)
    kind = "answer" if expect == "answer" else turn.kind
    return Action(kind, turn.content, "no QUESTION or ANSWER marker" if turn.unmarked else None, turn.unmarked)


def reply_messages(note: str) -> list[ChatMessage]:
    """The user's reply (with the budget's note) as the assistant receives it."""
    return [ChatMessageUser(content=note)]


def hints(grammar: str | None) -> TurnHints:
    """No tools; the protocol's grammar when the run constrains it (llama.cpp models only)."""
    return TurnHints(config=GenerateConfig(extra_body={"grammar": grammar}) if grammar else GenerateConfig())


def as_question(text: str) -> str:
    """The question text of a fixed-K turn, whatever marker it carried."""
    return strip_markers(text)


def strip_markers(text: str) -> str:
    """Remove protocol markers (so they are never scored) and surrounding whitespace."""
    return _MARKER.sub("", text).strip()


# Unbounded repetitions on purpose: counted ones (x{1,4000}) expand into thousands of grammar rules and slow
# every sampling step; the length is bounded by max_tokens anyway.
PROTOCOL_GBNF = r"""
root     ::= question | answer
question ::= "QUESTION: " [^\n?]+ "?"
answer   ::= "ANSWER: " [^\x00]+
"""

QUESTION_ONLY_GBNF = r"""
root     ::= "QUESTION: " [^\n?]+ "?"
"""

ANSWER_ONLY_GBNF = r"""
root     ::= "ANSWER: " [^\x00]+
"""
