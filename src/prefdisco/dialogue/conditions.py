"""The four conditions, each a chain of the steps in ``steps.py``.

* ``baseline``: the problem alone, one reply.
* ``oracle``: a system message with the profile (preferences, values and weights; never the rubric), one reply.
* ``discovery``: the protocol in ``protocol.py``; at most ``max_questions`` questions, the model decides when to
  answer. After the last allowed question has been answered the user message says the questions are used up,
  and whatever the next turn says is the final answer.
* ``fixed_k``: exactly ``k`` questions, then the final answer.
* ``wrong_persona`` (a negative control, not a paper condition): the oracle, its system message filled with
  another scenario's profile and persona (``decoys.py``); scored against the scenario's own rubric.

The response that is scored is the visible text of the assistant's own final turn (``visible.py``) with
protocol markers stripped (under the default preset never a regenerated one); it and the dialogue reach the
scorer as a ``DialogueRecord`` (``state.py``).

``protocol`` (discovery, fixed-K): ``text``, the markers of ``protocol.py``, or ``tools``, an ``ask_user`` tool
through the provider's native tool calling (``tool_protocol.py``; default preset only, no grammar).

``preset`` names the evaluator protocol (``presets.py``): its prompts, and, for ``paper``, its end rule (an
early answer is followed by the final-answer instruction, and the reply to it is scored).
"""

from __future__ import annotations

from inspect_ai.solver import Solver, chain, solver

from prefdisco.dialogue.decoys import decoy_profile
from prefdisco.dialogue.presets import DialogueStyle, preset_named
from prefdisco.dialogue.steps import instructions, oracle_profile, pose_problem, question_loop, single_reply
from prefdisco.dialogue.tool_protocol import PROTOCOLS, tools_style
from prefdisco.schema import Mode

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


@solver
def baseline(cache_scope: str | None = None, preset: str = "default") -> Solver:
    style = preset_named(preset).style
    return chain(pose_problem(style.task), single_reply(Mode.BASELINE.value, cache_scope))


@solver
def oracle(cache_scope: str | None = None, preset: str = "default") -> Solver:
    style = preset_named(preset).style
    return chain(pose_problem(style.task), oracle_profile(style.oracle), single_reply(Mode.ORACLE.value, cache_scope))


@solver
def wrong_persona(cache_scope: str | None = None, preset: str = "default") -> Solver:
    """The oracle with the decoy's profile and persona in its system message (the preset's oracle template)."""
    style = preset_named(preset).style
    return chain(
        pose_problem(style.task), decoy_profile(style.oracle), single_reply(Mode.WRONG_PERSONA.value, cache_scope)
    )


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
    return chain(
        pose_problem(style.task),
        instructions(style.discovery, max_questions=max_questions),
        question_loop(
            Mode.DISCOVERY.value,
            max_questions,
            False,
            user_type,
            constrain_protocol,
            cache_scope,
            style=style,
            protocol=protocol,
        ),
    )


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
    return chain(
        pose_problem(style.task),
        instructions(style.fixed_k, k=k),
        question_loop(
            condition_label(Mode.FIXED_K, k),
            k,
            True,
            user_type,
            constrain_protocol,
            cache_scope,
            style=style,
            protocol=protocol,
        ),
    )
