"""The human-like simulated user (``--user-type humanlike``): it answers as people do, not as a model likes to.

Simulated users are an easy mode: measured against the people of Qulac, an LLM simulator answers in nine times as
many words, almost never opens with yes or no, and volunteers a fifth as much of its need (docs/evaluation.md,
"Simulated users against real people"). This user is the passive one with its manner set, turn by turn, from how
people answered (``Behaviour``, fitted from a reference's people by ``analysis/answer_behaviour.fit_behaviour``; the
packaged one from Qulac's ``fit`` topics, ``prompts/user_humanlike_profile.txt``):

* with probability ``dont_know`` it says it does not know (one of ``DONT_KNOW_REPLIES``; no model call);
* else with probability ``bare`` it is asked for a bare yes or no, and a reply that opens with one is cut to it;
* else (a full answer) with probability ``opens_yes_no`` it is asked to open with yes or no (its need decides
  which), and with probability ``discloses`` to say what it is looking for, else to answer only what is asked;
* every reply is capped at a number of words drawn from the people's (``words``, their quantiles): cut at the last
  sentence end within the cap, else at the cap.

The shares are fitted as they are applied, each of the answers the step before leaves
(``analysis/answer_behaviour.fit_behaviour``): ``bare`` of the answers that are not a don't-know, ``opens_yes_no``
and ``discloses`` of the full answers (neither a don't-know nor bare). A don't-know or bare reply says nothing of
the need, so a disclosure share fitted over every answer and applied to full answers only would make the user
disclose less often than the people did; fitted over the full answers it discloses, over all its replies, as often
as the people's full answers did (the people's don't-knows and bare answers that disclosed something, rare, it
does not copy).

The draws are seeded from the seed the user's calls send (``seeds.draw_seed`` of the trial's ``user`` call seed,
the scenario and the turn), so another ``--seed`` or trial (``--epochs``) draws other don't-knows and caps, and a
rerun draws the same; the seed is the one the user was built with, so a redraw of a flagged reply
(``--user-retry``) keeps its turn's manner. The manner's instruction goes to the user model beside the question,
never into the dialogue the assistant sees. The behaviour is part of the user's prompts (``extra_templates``), so
it is in the protocol: a run with another behaviour has another protocol id.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from functools import cache

from pydantic import BaseModel, Field

from prefdisco.prompts import load, render
from prefdisco.seeds import draw_seed

PROFILE_TEMPLATE = "user_humanlike_profile"
TURN_TEMPLATE = "user_humanlike_turn"
DONT_KNOW_REPLIES = ("I'm not sure.", "I don't know.", "Not sure, sorry.", "No idea.")
YES_NO = re.compile(r"^\W*(yes|yeah|yep|no|nope|nah)\b", re.IGNORECASE)


class Behaviour(BaseModel):
    """How people answered a clarifying question: the shares and the word counts the user draws its manner from."""

    source: str
    """Where it was fitted (the reference, its split and rows)."""
    dont_know: float = Field(ge=0, le=1)
    bare: float = Field(ge=0, le=1)
    """Of the answers that are not a don't-know: the share that is a bare yes or no."""
    opens_yes_no: float = Field(ge=0, le=1)
    """Of the full answers (neither don't-know nor bare): the share opening with a yes- or no-word."""
    discloses: float = Field(ge=0, le=1)
    """Of the full answers: the share disclosing any of the need (of those where disclosure is defined)."""
    words: list[int] = Field(min_length=1)
    """The people's word counts at the 5th, 10th, …, 95th percentiles: the cap is drawn from them."""


@cache
def packaged_behaviour() -> Behaviour:
    """The packaged behaviour (``prompts/user_humanlike_profile.txt``: Qulac's ``fit`` topics)."""
    return Behaviour.model_validate(json.loads(load(PROFILE_TEMPLATE).template))


@dataclass(frozen=True)
class Manner:
    """How one turn is answered."""

    dont_know: bool
    bare: bool
    opens_yes_no: bool
    discloses: bool
    words: int
    unsure: str = DONT_KNOW_REPLIES[0]
    """The reply of a don't-know turn."""

    def instruction(self) -> str:
        parts = []
        if self.bare:
            parts.append("answer with only yes or no")
        else:
            if self.opens_yes_no:
                parts.append("start with yes or no")
            parts.append(
                "say in your own words what you are looking for"
                if self.discloses
                else "answer only what is asked, add nothing"
            )
        parts.append(f"use at most {self.words} words")
        return render(TURN_TEMPLATE, manner="; ".join(parts))


def manner(behaviour: Behaviour, seed: int | None, scenario_id: str, turn: int) -> Manner:
    """The manner of ``turn`` (1-based) of ``scenario_id``'s dialogue, drawn from ``behaviour`` with the seed the
    user's calls send (``seed``; ``seeds.draw_seed``): each share applied to the answers the step before leaves
    (module docstring)."""
    rng = random.Random(draw_seed(seed, scenario_id, turn, "manner"))
    dont_know = rng.random() < behaviour.dont_know
    bare = not dont_know and rng.random() < behaviour.bare
    full = not dont_know and not bare
    opens = full and rng.random() < behaviour.opens_yes_no
    discloses = full and rng.random() < behaviour.discloses
    words = max(1, behaviour.words[rng.randrange(len(behaviour.words))])
    return Manner(dont_know, bare, opens, discloses, words, rng.choice(DONT_KNOW_REPLIES))


def shaped(text: str, turn: Manner) -> str:
    """``text`` cut to ``turn``'s manner: a bare turn's opening yes or no alone, else at most ``words`` words (at
    the last sentence end within them where there is one)."""
    if turn.bare:
        found = YES_NO.match(text)
        if found:
            return found.group(1).capitalize() + "."
    words = text.split()
    if len(words) <= turn.words:
        return text.strip()
    cut = " ".join(words[: turn.words])
    end = max(cut.rfind(". "), cut.rfind("? "), cut.rfind("! "))
    if cut.endswith((".", "?", "!")):
        return cut
    return cut[: end + 1] if end > 0 else cut
