"""The conditions, each a dialogue's rules and opening played by ``solver.converse``.

* ``baseline``: the problem alone, one reply.
* ``oracle``: a system message with the profile (preferences, values and weights; never the rubric), one reply.
* ``discovery``: the protocol in ``protocol.py``; at most ``max_questions`` questions, the model decides when to
  answer. After the last allowed question has been answered the user message says the questions are used up,
  and whatever the next turn says is the final answer.
* ``fixed_k``: exactly ``k`` questions, then the final answer.
* ``wrong_persona`` (a negative control, not a paper condition): the oracle, its system message filled with
  another scenario's profile and persona (``decoys.py``); scored against the scenario's own rubric.
* ``oracle_distractor`` (a harm probe): the oracle with its profile plus preferences that do not matter to the
  problem (``distractors.py``); scored against the scenario's own rubric.
* ``stated_belief`` (a harm probe): discovery after the person states a wrong belief about the answer in their
  first message (``prompts/user_stated_belief.txt``; the wrong answer of ``wrong_answers.py``).

A condition with questions may redraw a simulated reply the hygiene checks flag (``user_retry``; ``hygiene.py``).

Every condition may end with pushback (``pushback``: the person insists on a wrong answer for that many turns after
the final answer; ``engine.py``).

The rules of every dialogue are the engine's (``engine.py``). The response that is scored is the visible text of
the assistant's own final turn (``visible.py``) with protocol markers stripped (under the default preset never a
regenerated one); it and the dialogue reach the scorer as a ``DialogueRecord`` (``state.py``).

``protocol`` (discovery, fixed-K): ``text``, the markers of ``protocol.py``, or ``tools``, an ``ask_user`` tool
through the provider's native tool calling (``tool_protocol.py``; default preset only, no grammar).

``preset`` names the evaluator protocol (``presets.py``): its prompts, and, for ``paper``, its end rule (an
early answer is followed by the final-answer instruction, and the reply to it is scored).
"""

from __future__ import annotations

from inspect_ai.model import ChatMessage
from inspect_ai.solver import Solver, TaskState, solver

from prefdisco.dialogue.dialogue_state import DialogueRules
from prefdisco.dialogue.plan import (
    MAX_DISCOVERY_QUESTIONS,
    PlanSettings,
    ask_style,
    condition_label,
    opening_for,
    rules_for,
    stated_belief_opening,
)
from prefdisco.dialogue.solver import converse
from prefdisco.schema import Mode, Scenario

__all__ = [
    "MAX_DISCOVERY_QUESTIONS",
    "ask_style",
    "baseline",
    "condition_label",
    "discovery",
    "fixed_k",
    "oracle",
    "oracle_distractor",
    "stated_belief",
    "stated_belief_opening",
    "wrong_persona",
]
"""``MAX_DISCOVERY_QUESTIONS``, ``condition_label`` and ``ask_style`` are ``plan.py``'s, named here too."""


def _single_turn(mode: Mode, preset: str, pushback: int) -> DialogueRules:
    return rules_for(mode, PlanSettings(preset=preset, pushback=pushback))


@solver
def baseline(
    cache_scope: str | None = None, preset: str = "default", pushback: int = 0, user_type: str = "passive"
) -> Solver:
    rules = _single_turn(Mode.BASELINE, preset, pushback)

    def opening(state: TaskState, scenario: Scenario) -> list[ChatMessage]:
        return opening_for(Mode.BASELINE, rules, scenario, state.metadata or {})

    return converse(rules, opening, user_type, cache_scope=cache_scope)


@solver
def oracle(
    cache_scope: str | None = None, preset: str = "default", pushback: int = 0, user_type: str = "passive"
) -> Solver:
    rules = _single_turn(Mode.ORACLE, preset, pushback)

    def opening(state: TaskState, scenario: Scenario) -> list[ChatMessage]:
        return opening_for(Mode.ORACLE, rules, scenario, state.metadata or {})

    return converse(rules, opening, user_type, cache_scope=cache_scope)


@solver
def wrong_persona(
    cache_scope: str | None = None, preset: str = "default", pushback: int = 0, user_type: str = "passive"
) -> Solver:
    """The oracle with the decoy's profile and persona in its system message (the preset's oracle template)."""
    rules = _single_turn(Mode.WRONG_PERSONA, preset, pushback)

    def opening(state: TaskState, scenario: Scenario) -> list[ChatMessage]:
        return opening_for(Mode.WRONG_PERSONA, rules, scenario, state.metadata or {})

    return converse(rules, opening, user_type, cache_scope=cache_scope)


@solver
def oracle_distractor(
    cache_scope: str | None = None, preset: str = "default", pushback: int = 0, user_type: str = "passive"
) -> Solver:
    """The oracle with distractor preferences among the scenario's own (``distractors.py``)."""
    rules = _single_turn(Mode.ORACLE_DISTRACTOR, preset, pushback)

    def opening(state: TaskState, scenario: Scenario) -> list[ChatMessage]:
        return opening_for(Mode.ORACLE_DISTRACTOR, rules, scenario, state.metadata or {})

    return converse(rules, opening, user_type, cache_scope=cache_scope)


@solver
def stated_belief(
    max_questions: int = MAX_DISCOVERY_QUESTIONS,
    user_type: str = "passive",
    constrain_ask: bool = False,
    cache_scope: str | None = None,
    preset: str = "default",
    ask: str = "text",
    pushback: int = 0,
    user_retry: int = 0,
) -> Solver:
    """Discovery after the person states a wrong belief about the answer (the sample's wrong answer)."""
    settings = PlanSettings(preset, ask, constrain_ask, max_questions, pushback, user_retry)
    rules = rules_for(Mode.STATED_BELIEF, settings)

    def opening(state: TaskState, scenario: Scenario) -> list[ChatMessage]:
        return opening_for(Mode.STATED_BELIEF, rules, scenario, state.metadata or {})

    return converse(rules, opening, user_type, constrain_ask, cache_scope)


@solver
def discovery(
    max_questions: int = MAX_DISCOVERY_QUESTIONS,
    user_type: str = "passive",
    constrain_ask: bool = False,
    cache_scope: str | None = None,
    preset: str = "default",
    ask: str = "text",
    pushback: int = 0,
    user_retry: int = 0,
) -> Solver:
    """Discovery: the model may ask up to ``max_questions`` (0..5, the paper's setting) before answering."""
    if not 0 <= max_questions <= MAX_DISCOVERY_QUESTIONS:
        raise ValueError(f"discovery allows 0..{MAX_DISCOVERY_QUESTIONS} questions, got {max_questions}")
    settings = PlanSettings(preset, ask, constrain_ask, max_questions, pushback, user_retry)
    rules = rules_for(Mode.DISCOVERY, settings)

    def opening(state: TaskState, scenario: Scenario) -> list[ChatMessage]:
        return opening_for(Mode.DISCOVERY, rules, scenario, state.metadata or {})

    return converse(rules, opening, user_type, constrain_ask, cache_scope)


@solver
def fixed_k(
    k: int | None = None,
    user_type: str = "passive",
    constrain_ask: bool = False,
    cache_scope: str | None = None,
    preset: str = "default",
    ask: str = "text",
    pushback: int = 0,
    user_retry: int = 0,
) -> Solver:
    """Fixed-K ablation: the model must ask exactly ``k`` questions, then answer."""
    if k is None or k < 1:
        raise ValueError("fixed_k mode needs k >= 1")
    settings = PlanSettings(preset, ask, constrain_ask, pushback=pushback, user_retry=user_retry)
    rules = rules_for(Mode.FIXED_K, settings, k)

    def opening(state: TaskState, scenario: Scenario) -> list[ChatMessage]:
        return opening_for(Mode.FIXED_K, rules, scenario, state.metadata or {})

    return converse(rules, opening, user_type, constrain_ask, cache_scope)
