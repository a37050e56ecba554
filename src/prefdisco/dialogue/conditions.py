"""The conditions, each a dialogue's rules and opening played by ``solver.converse``.

* ``baseline``: the problem alone, one reply.
* ``oracle``: a system message with the profile (preferences, values and weights; never the rubric), one reply.
* ``discovery``: the protocol in ``protocol.py``; at most ``max_questions`` questions, the model decides when to
  answer. After the last allowed question has been answered the user message says the questions are used up,
  and whatever the next turn says is the final answer.
* ``fixed_k``: exactly ``k`` questions, then the final answer.
* ``wrong_persona`` (a negative control, not a paper condition): the oracle, its system message filled with
  another scenario's profile and persona (``decoys.py``); scored against the scenario's own rubric.

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

from prefdisco.dialogue.decoys import decoy_of
from prefdisco.dialogue.engine import DialogueRules
from prefdisco.dialogue.openings import discovery_opening, fixed_k_opening, oracle_opening, problem_message
from prefdisco.dialogue.presets import DialogueStyle, preset_named
from prefdisco.dialogue.solver import converse
from prefdisco.dialogue.tool_protocol import PROTOCOLS, tools_style
from prefdisco.schema import Mode, Scenario

MAX_DISCOVERY_QUESTIONS = 5


def protocol_style(preset: str, protocol: str, constrain_protocol: bool = False) -> DialogueStyle:
    """The prompts and end rule of ``preset`` under ``protocol`` (``text`` or ``tools``)."""
    style = preset_named(preset).style
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}: expected one of {', '.join(PROTOCOLS)}")
    if protocol == "text":
        return style
    if constrain_protocol:
        raise ValueError("the protocol grammar is of the text protocol: constrain_protocol needs protocol 'text'")
    return tools_style(style)


def condition_label(mode: Mode, k: int | None) -> str:
    """baseline, discovery, oracle, or fixed_k<K>."""
    return f"fixed_k{k}" if mode is Mode.FIXED_K else mode.value


def _single_turn(mode: Mode, preset: str) -> DialogueRules:
    return DialogueRules(condition=mode.value, single_turn=True, style=preset_named(preset).style)


@solver
def baseline(cache_scope: str | None = None, preset: str = "default") -> Solver:
    rules = _single_turn(Mode.BASELINE, preset)

    def opening(state: TaskState, scenario: Scenario) -> list[ChatMessage]:
        return [problem_message(scenario.problem, rules.style)]

    return converse(rules, opening, cache_scope=cache_scope)


@solver
def oracle(cache_scope: str | None = None, preset: str = "default") -> Solver:
    rules = _single_turn(Mode.ORACLE, preset)

    def opening(state: TaskState, scenario: Scenario) -> list[ChatMessage]:
        return oracle_opening(scenario.problem, rules.style, scenario.profile, scenario.persona)

    return converse(rules, opening, cache_scope=cache_scope)


@solver
def wrong_persona(cache_scope: str | None = None, preset: str = "default") -> Solver:
    """The oracle with the decoy's profile and persona in its system message (the preset's oracle template)."""
    rules = _single_turn(Mode.WRONG_PERSONA, preset)

    def opening(state: TaskState, scenario: Scenario) -> list[ChatMessage]:
        decoy = decoy_of(state)
        return oracle_opening(scenario.problem, rules.style, decoy.profile, decoy.persona)

    return converse(rules, opening, cache_scope=cache_scope)


@solver
def discovery(
    max_questions: int = MAX_DISCOVERY_QUESTIONS,
    user_type: str = "passive",
    constrain_protocol: bool = False,
    cache_scope: str | None = None,
    preset: str = "default",
    protocol: str = "text",
) -> Solver:
    """Discovery: the model may ask up to ``max_questions`` (0..5, the paper's setting) before answering."""
    if not 0 <= max_questions <= MAX_DISCOVERY_QUESTIONS:
        raise ValueError(f"discovery allows 0..{MAX_DISCOVERY_QUESTIONS} questions, got {max_questions}")
    style = protocol_style(preset, protocol, constrain_protocol)
    rules = DialogueRules(condition=Mode.DISCOVERY.value, protocol=protocol, limit=max_questions, style=style)

    def opening(state: TaskState, scenario: Scenario) -> list[ChatMessage]:
        return discovery_opening(scenario.problem, style, max_questions)

    return converse(rules, opening, user_type, constrain_protocol, cache_scope)


@solver
def fixed_k(
    k: int | None = None,
    user_type: str = "passive",
    constrain_protocol: bool = False,
    cache_scope: str | None = None,
    preset: str = "default",
    protocol: str = "text",
) -> Solver:
    """Fixed-K ablation: the model must ask exactly ``k`` questions, then answer."""
    if k is None or k < 1:
        raise ValueError("fixed_k mode needs k >= 1")
    style = protocol_style(preset, protocol, constrain_protocol)
    condition = condition_label(Mode.FIXED_K, k)
    rules = DialogueRules(condition=condition, protocol=protocol, limit=k, forced=True, style=style)

    def opening(state: TaskState, scenario: Scenario) -> list[ChatMessage]:
        return fixed_k_opening(scenario.problem, style, k)

    return converse(rules, opening, user_type, constrain_protocol, cache_scope)
