"""Clean simulated turns: deterministic checks of every simulated-user reply, no model call.

Users of simulated-user harnesses report replies that leak the simulator's reasoning, swap roles or restart the
conversation while the judge still passes the dialogue. Every reply of a simulated user is checked for five faults;
a flagged reply is recorded with its reasons (never silently kept or dropped):

* ``role_inversion`` — the person solves the problem or instructs the assistant: states an answer ("the answer is",
  "the correct option"), walks through a solution ("step 1", "first, we"), or tells the assistant how to answer;
* ``restart`` — the person greets the assistant or starts over ("Hello!", "How can I help you?") or re-asks the
  problem (twelve or more consecutive words of the problem's text in the reply);
* ``reasoning_leak`` — the simulator's own reasoning or identity shows: ``<think>`` tags in the raw reply, "as an
  AI", "as a language model", "I'm an AI", "let's think step by step", "chain of thought", "(thinking)";
* ``empty_or_cut`` — nothing left to read ("(no reply)"), or the reply was cut off at the token limit;
* ``profile_echo`` — the person recites the machinery of their profile: a weight or importance figure ("importance
  0.35", "weight: 0.2"), an attribute listed as ``Name: value``, or eight or more consecutive words of a rubric
  criterion (which the person never sees).

The checks are string rules, so they are cheap, reproducible and testable, and they err on the side of flagging:
a flag is a reason to look, counted per dialogue in the results (``user_flags``, ``user_flag_reasons``).

The engine screens every reply to a question (``Screen``, given to ``Dialogue``): the faults of the reply kept are
the turn's ``flags``; with ``DialogueRules.user_retry`` = N a flagged reply is redrawn up to N times with another
seed (``user_reply.redraw``), every flagged draw kept in the turn's ``redrawn``. The person's pushback challenges
are not screened: they are told to state an answer, which the role-inversion rule exists to catch.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from inspect_ai.model import ContentReasoning, ContentText, ModelOutput

from prefdisco.dialogue.user_reply import UserReply
from prefdisco.schema import DialogueTurn, Scenario

FAULTS: tuple[str, ...] = ("role_inversion", "restart", "reasoning_leak", "empty_or_cut", "profile_echo")
MAX_USER_RETRY = 3
"""The most redraws of a flagged reply a run may ask for (``--user-retry``)."""
RUN_OF_PROBLEM_WORDS = 12
RUN_OF_RUBRIC_WORDS = 8

_SOLVES = re.compile(
    r"\b(the (correct |right )?(answer|option|solution) (is|would be|should be)|the answer:|"
    r"step \d|first,? (we|you) (need|have|should|calculate|compute|find)|to solve (this|it)|"
    r"(you|we) (can|could|should) (calculate|compute|solve|divide|multiply|add|subtract))\b",
    re.IGNORECASE,
)
_INSTRUCTS = re.compile(
    r"\b(as (my|your) assistant|you (must|should) (answer|respond|reply|explain)|please (answer|solve|respond) "
    r"(this|the question|the task)|your (answer|response) (must|should))\b",
    re.IGNORECASE,
)
_GREETS = re.compile(
    r"^\W*(hello|hi|hey|greetings|good (morning|afternoon|evening))\b|how (can|may) i (help|assist) you|"
    r"what can i do for you|let'?s (start|begin) (over|again)",
    re.IGNORECASE,
)
_LEAKS = re.compile(
    r"</?think(ing)?>|\bas an ai\b|\bas a (large )?language model\b|\bi'?m an ai\b|\bi am an ai\b|"
    r"let'?s think step by step|chain[- ]of[- ]thought|\(thinking\)|\[thinking\]",
    re.IGNORECASE,
)
_WEIGHTS = re.compile(r"\b(importance|weight)\s*[:=]?\s*\[?\s*0?\.\d+|\[importance", re.IGNORECASE)
EMPTY_REPLIES = frozenset({"", "(no reply)"})
"""A reply with nothing to read: none, or the placeholder ``user_reply.clean_reply`` gives for one."""


@dataclass(frozen=True)
class TurnFlags:
    """What one reply was flagged for (in ``FAULTS`` order; empty: clean)."""

    reasons: tuple[str, ...] = ()

    @property
    def flagged(self) -> bool:
        return bool(self.reasons)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.casefold())


def shares_run(text: str, source: str, length: int) -> bool:
    """Whether ``text`` holds ``length`` or more consecutive words of ``source`` (case and punctuation aside)."""
    words = _words(source)
    if len(words) < length:
        return False
    said = " " + " ".join(_words(text)) + " "
    return any(" " + " ".join(words[i : i + length]) + " " in said for i in range(len(words) - length + 1))


def _echoes_profile(reply: str, scenario: Scenario) -> bool:
    if _WEIGHTS.search(reply):
        return True
    for item in scenario.profile.items:
        if re.search(rf"(^|\n)\W*{re.escape(item.attribute)}\s*:", reply, re.IGNORECASE):
            return True
    texts: Iterable[str] = (t for c in scenario.rubric for t in (c.description, *c.levels.values()))
    return any(shares_run(reply, text, RUN_OF_RUBRIC_WORDS) for text in texts)


def check_reply(reply: str, raw: str, scenario: Scenario, cut_off: bool = False) -> TurnFlags:
    """The faults of one simulated-user reply: ``reply`` as the assistant received it (visible text), ``raw`` as the
    user model wrote it (reasoning included), ``cut_off`` when its generation stopped at the token limit."""
    found = set()
    if _SOLVES.search(reply) or _INSTRUCTS.search(reply):
        found.add("role_inversion")
    if _GREETS.search(reply) or shares_run(reply, scenario.problem.question, RUN_OF_PROBLEM_WORDS):
        found.add("restart")
    if _LEAKS.search(raw) or _LEAKS.search(reply):
        found.add("reasoning_leak")
    if reply.strip() in EMPTY_REPLIES or cut_off:
        found.add("empty_or_cut")
    if _echoes_profile(reply, scenario):
        found.add("profile_echo")
    return TurnFlags(tuple(f for f in FAULTS if f in found))


def raw_text(output: ModelOutput) -> str:
    """Everything a user model wrote: its reasoning blocks and its text, inline reasoning included."""
    if not output.choices:
        return output.completion
    content = output.message.content
    if isinstance(content, str):
        return content
    parts = [
        c.reasoning if isinstance(c, ContentReasoning) else c.text
        for c in content
        if isinstance(c, (ContentReasoning, ContentText))
    ]
    return "\n".join(parts)


@dataclass(frozen=True)
class Screen:
    """The hygiene checks of one scenario's dialogue, as the engine applies them to each reply."""

    scenario: Scenario

    def check(self, reply: UserReply | str) -> TurnFlags:
        """The faults of ``reply``: a model's (its raw text and stop reason read too) or a person's text."""
        if isinstance(reply, str) or reply.output is None:
            text = reply if isinstance(reply, str) else reply.text
            return check_reply(text, text, self.scenario)
        cut = reply.output.stop_reason == "max_tokens"
        return check_reply(reply.text, raw_text(reply.output), self.scenario, cut_off=cut)


def _screened(turns: Sequence[DialogueTurn]) -> list[DialogueTurn]:
    return [t for t in turns if t.kind == "reply" and t.flags is not None]


def flag_counts(turns: Sequence[DialogueTurn]) -> dict[str, int | None]:
    """A dialogue's ``user_flags`` (its reply turns kept with a fault) and ``user_redraws`` (flagged draws redrawn);
    None for both when no reply was screened (no question asked, a single-turn condition, an old log)."""
    screened = _screened(turns)
    if not screened:
        return {"user_flags": None, "user_redraws": None}
    return {
        "user_flags": sum(bool(t.flags) for t in screened),
        "user_redraws": sum(len(t.redrawn) for t in screened),
    }


def flag_reasons(turns: Sequence[DialogueTurn]) -> str | None:
    """A dialogue's ``user_flag_reasons``: a JSON object, each fault with the number of kept replies that have it
    (``{}``: every reply clean); None when no reply was screened."""
    screened = _screened(turns)
    if not screened:
        return None
    found = Counter(reason for t in screened for reason in t.flags or ())
    return json.dumps({f: found[f] for f in FAULTS if found[f]})
