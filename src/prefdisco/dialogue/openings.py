"""What the assistant sees before its first turn, per condition: the problem, and the system message.

* the problem as the first user message, as is or framed by the preset's task template (``$problem``);
* discovery / fixed-K: the protocol's rules as the system message (``$max_questions`` / ``$k``);
* oracle: the profile — preferences, values and weights, never the rubric — (``$preferences``; a template may
  also place the persona, ``$persona``); wrong_persona fills the same template with a decoy's (``decoys.py``).
"""

from __future__ import annotations

from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser

from prefdisco.dialogue.presets import DialogueStyle
from prefdisco.prompts import render
from prefdisco.schema import Persona, PreferenceProfile, Problem


def oracle_preferences(profile: PreferenceProfile) -> str:
    lines = []
    for item in profile.items:
        meaning = f" ({item.description})" if item.description else ""
        why = f" — {item.justification}" if item.justification else ""
        lines.append(f"- {item.attribute}{meaning}: {item.value} [importance {item.weight:.2f}]{why}")
    return "\n".join(lines)


def problem_message(problem: Problem, style: DialogueStyle) -> ChatMessageUser:
    """The problem as the assistant's first user message (framed by ``style.task`` when it has one)."""
    text = problem.prompt_text()
    return ChatMessageUser(content=render(style.task, problem=text).strip() if style.task else text)


def with_system(system: str, problem: Problem, style: DialogueStyle) -> list[ChatMessage]:
    return [ChatMessageSystem(content=system), problem_message(problem, style)]


def discovery_opening(problem: Problem, style: DialogueStyle, max_questions: int) -> list[ChatMessage]:
    return with_system(render(style.discovery, max_questions=max_questions), problem, style)


def fixed_k_opening(problem: Problem, style: DialogueStyle, k: int) -> list[ChatMessage]:
    return with_system(render(style.fixed_k, k=k), problem, style)


def oracle_opening(
    problem: Problem, style: DialogueStyle, profile: PreferenceProfile, persona: Persona
) -> list[ChatMessage]:
    """The oracle's opening with ``profile`` and ``persona`` (the scenario's own, or a decoy's)."""
    system = render(style.oracle, preferences=oracle_preferences(profile), persona=persona.profile_text())
    return with_system(system, problem, style)
