"""Evaluator presets: named protocols a run follows, as data (``prefdisco eval --preset NAME``).

A preset fixes two things:

* ``settings`` — run settings (``RunConfig`` fields: the simulated-user type, the roles' temperatures, the
  question budget, the judge). ``evaluation/settings/config.py`` applies them before validation; under a preset other
  than ``default`` a flag that contradicts one of them is refused, so a run that says ``paper`` in ``run.json``
  ran the paper's protocol;
* ``style`` — what the condition solvers say and when the dialogue ends: the prompt templates of each
  condition and whether the scored response is the assistant's own answer or a fresh reply to a final-answer
  instruction.

``default`` is this toolkit's protocol (its settings are ``RunConfig``'s own defaults). ``paper`` follows the
paper's evaluator (``stellalisy/PrefDisco``'s ``src/environment.py``; see docs/evaluation.md, "paper vs
default"), minus its confirmed defects: its prompts' intent is rewritten in our words, in ``prompts/*_paper.txt``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class DialogueStyle:
    """The prompts of the conditions and the rule that ends a dialogue (template names in ``prompts/``)."""

    task: str | None = None
    """Frames the problem as the assistant's first user message (``$problem``); None: the problem as is."""
    oracle: str = "assistant_oracle"
    """The oracle system message (``$preferences``, ``$persona``)."""
    discovery: str = "assistant_discovery"
    fixed_k: str = "assistant_fixed_k"
    next_question: str = "protocol_next_question"
    """Fixed-K: the user message after a reply while questions remain (``$reply``, ``$asked``, ``$k``)."""
    last_question: str = "protocol_last_question"
    """The user message after the reply to the last allowed question (``$reply``, ``$max_questions``)."""
    ask_again: bool = False
    """False: an ANSWER the assistant gives ends the dialogue and is scored. True: the dialogue always ends with
    the ``last_question`` instruction (after an early answer on its own) and the assistant's next turn, whatever
    it says, is the scored response."""
    notes: bool = True
    """False: a reply reaches the assistant as the user said it, without the budget's notes (the strategy solvers,
    whose final prompt tells the assistant what to do)."""


@dataclass(frozen=True)
class Preset:
    name: str
    settings: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """The ``RunConfig`` fields the preset fixes (empty for ``default``: every flag is free)."""
    style: DialogueStyle = field(default_factory=DialogueStyle)


PAPER = Preset(
    name="paper",
    settings=MappingProxyType(
        {
            "user_type": "paper_passive",  # does not see the problem; minimal answers (the paper's passive_nostop)
            "temperature": 0.7,  # model under test (evaluation_config.yaml)
            "user_temperature": 0.4,  # the simulator's temperature fixed in the paper's code
            "grader_temperature": 0.1,  # the judge's temperature fixed in the paper's code
            "max_questions": 5,  # evaluation.max_turns
            "judge": "per_criterion",  # one call per criterion
            "logprobs": False,  # the paper scores the judge's stated level
        }
    ),
    style=DialogueStyle(
        task="assistant_task_paper",
        oracle="assistant_oracle_paper",
        discovery="assistant_discovery_paper",
        fixed_k="assistant_fixed_k_paper",
        last_question="protocol_final_paper",
        ask_again=True,
    ),
)

PRESETS: dict[str, Preset] = {"default": Preset("default"), "paper": PAPER}
PRESET_NAMES: tuple[str, ...] = tuple(PRESETS)


def preset_named(name: str) -> Preset:
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}: expected one of {', '.join(PRESET_NAMES)}")
    return PRESETS[name]
