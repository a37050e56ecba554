"""The simulated user: answers the assistant's questions in character, from the persona, profile and problem.

It is its own model role (``user``). It sees the persona, the sparse preference profile (values and
justifications, never weights or the rubric) and the problem (the paper's simulator did not see the problem,
which left its answers unanchored). It answers only what is asked and never ends the dialogue: the
assistant alone decides when to answer.

User types, selected by name:

* ``passive`` (default): answers only the question asked and volunteers nothing;
* ``cooperative``: answers, then volunteers at most one related preference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
)

from prefdisco.dialogue.protocol import strip_markers
from prefdisco.prompts import render
from prefdisco.schema import PreferenceProfile, Scenario

UserType = Literal["passive", "cooperative"]
USER_TYPES: tuple[str, ...] = ("passive", "cooperative")

USER_MAX_TOKENS = 160


def preferences_for_user(profile: PreferenceProfile) -> str:
    """The profile as the simulated user knows it: what they want and why (no weights)."""
    lines = []
    for item in profile.items:
        meaning = f" ({item.description})" if item.description else ""
        why = f" Why: {item.justification}" if item.justification else ""
        lines.append(f"- {item.attribute}{meaning}: {item.value}.{why}")
    return "\n".join(lines)


def user_system_prompt(scenario: Scenario, user_type: UserType) -> str:
    if user_type not in USER_TYPES:
        raise ValueError(f"unknown user type {user_type!r}: expected one of {', '.join(USER_TYPES)}")
    return render(
        f"user_{user_type}",
        persona=scenario.persona.profile_text(),
        problem=scenario.problem.prompt_text(),
        preferences=preferences_for_user(scenario.profile),
    )


@dataclass
class SimulatedUser:
    """Replies to assistant questions. ``history`` is the simulator's own view: questions in, replies out."""

    model: Model
    scenario: Scenario
    user_type: UserType = "passive"
    cache: CachePolicy | bool = False

    def __post_init__(self) -> None:
        self.system = user_system_prompt(self.scenario, self.user_type)
        self.history: list[ChatMessage] = []

    def messages_for(self, question: str) -> list[ChatMessage]:
        """What the user model is sent to answer ``question`` (the previous exchanges included)."""
        return [ChatMessageSystem(content=self.system), *self.history, ChatMessageUser(content=question)]

    async def reply(self, question: str) -> tuple[str, ModelOutput]:
        messages = self.messages_for(question)
        config = GenerateConfig() if self.model.config.max_tokens else GenerateConfig(max_tokens=USER_MAX_TOKENS)
        output = await self.model.generate(messages, config=config, cache=self.cache)
        text = _clean(output.completion)
        self.history = [*messages[1:], ChatMessageAssistant(content=text)]
        return text, output


def _clean(text: str) -> str:
    text = strip_markers(text).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text or "(no reply)"
