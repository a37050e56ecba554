"""The simulated user: answers the assistant's questions in character, from the persona, profile and problem.

It is its own model role (``user``). It sees the persona, the sparse preference profile (values and
justifications, never weights or the rubric) and the problem (the paper's simulator did not see the problem,
which left its answers unanchored). It answers only what is asked and never ends the dialogue: the
assistant alone decides when to answer.

Every user type implements ``SimulatedUser`` and is built as ``USERS[name](model, scenario, cache)``:

* ``passive`` (default): answers only the question asked and volunteers nothing;
* ``cooperative``: answers, then volunteers at most one related preference;
* ``paper_passive`` (the ``paper`` preset): the paper's passive simulator — minimal, atomic answers, and it does
  **not** see the problem (its prompt has no ``$problem``);
* ``humanlike`` (``humanlike.py``): the passive user answering as people do — its manner each turn (don't know, a
  bare yes or no, opening with yes or no, disclosing its need, a word cap) drawn from how real people answered;
* ``targeted`` (recommended; ``targeted.py``): each question is first mapped to the profile attributes it asks
  about by one grader call, and the user model then sees only those attributes (a vague or off-profile question
  gets a fixed reply, no call), so every reply records what it revealed (``UserReply.revealed``);
* ``trained`` (``trained_user.py``): a trained user LM (the UserLM-8b format) — no instructions, the persona and
  profile as the user's intent in the system prompt, the conversation with its own roles, the model's
  end-of-conversation token cut.

The reply the assistant gets is the user model's visible text (``visible.py``): a reasoning user model's thinking
never reaches the assistant.

A new type is one class (for a prompted one: a subclass of ``PromptedUser`` naming its template) and one line in
``USERS``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    Model,
)

from prefdisco.dialogue.humanlike import (
    PROFILE_TEMPLATE,
    TURN_TEMPLATE,
    Behaviour,
    manner,
    packaged_behaviour,
    shaped,
)
from prefdisco.dialogue.targeted import TargetedUser
from prefdisco.dialogue.trained_user import TrainedUser
from prefdisco.dialogue.user_reply import (
    SimulatedUser,
    UserReply,
    clean_reply,
    preference_lines,
    push_back,
    reply_config,
)
from prefdisco.dialogue.visible import visible_text
from prefdisco.prompts import render
from prefdisco.schema import PreferenceProfile, Scenario


def preferences_for_user(profile: PreferenceProfile) -> str:
    """The profile as the simulated user knows it: what they want and why (no weights)."""
    return preference_lines(profile.items)


@dataclass
class PromptedUser:
    """A user played by the ``user`` model under the system prompt ``prompts/<template>.txt``."""

    template: ClassVar[str]

    model: Model
    scenario: Scenario
    cache: CachePolicy | bool = False
    history: list[ChatMessage] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        """A subclass's own setup once built (none here)."""

    @cached_property
    def system(self) -> str:
        return render(
            self.template,
            persona=self.scenario.persona.profile_text(),
            problem=self.scenario.problem.prompt_text(),
            preferences=preferences_for_user(self.scenario.profile),
        )

    def messages_for(self, question: str) -> list[ChatMessage]:
        """What the user model is sent to answer ``question`` (the previous exchanges included)."""
        return [ChatMessageSystem(content=self.system), *self.history, ChatMessageUser(content=question)]

    async def challenge(self, answer: str, target: str | None, turn: int) -> UserReply:
        persona, problem = self.scenario.persona.profile_text(), self.scenario.problem.prompt_text()
        return await push_back(self.model, self.cache, persona, problem, answer, target, turn)

    async def reply(self, question: str) -> UserReply:
        messages = self.messages_for(question)
        output = await self.model.generate(messages, config=reply_config(self.model), cache=self.cache)
        text = clean_reply(visible_text(output))
        self.history = [*messages[1:], ChatMessageAssistant(content=text)]
        return UserReply(text, output)


class PassiveUser(PromptedUser):
    template = "user_passive"


class CooperativeUser(PromptedUser):
    template = "user_cooperative"


class PaperPassiveUser(PromptedUser):
    template = "user_paper_passive"


class HumanlikeUser(PromptedUser):
    """The passive user answering as people do, its manner drawn turn by turn from ``behaviour`` (``humanlike.py``;
    None: the packaged one) with the seed its model was built to send (the trial's user call seed: ``seed``, kept
    from the build, so a redraw's reseeded model keeps the turn's manner)."""

    template = "user_humanlike"
    extra_templates = (PROFILE_TEMPLATE, TURN_TEMPLATE)
    behaviour: ClassVar[Behaviour | None] = None

    def __post_init__(self) -> None:
        self.seed: int | None = self.model.config.seed if self.model is not None else None

    async def reply(self, question: str) -> UserReply:
        number = len(self.history) // 2 + 1
        turn = manner(self.behaviour or packaged_behaviour(), self.seed, self.scenario.id, number)
        output = None
        if turn.dont_know:
            text = turn.unsure
        else:  # the manner beside the question for the user model; its history keeps the question alone
            messages = self.messages_for(f"{question}\n\n{turn.instruction()}")
            output = await self.model.generate(messages, config=reply_config(self.model), cache=self.cache)
            text = shaped(clean_reply(visible_text(output)), turn)
        self.history = [*self.history, ChatMessageUser(content=question), ChatMessageAssistant(content=text)]
        return UserReply(text, output)


UserFactory = Callable[[Model, Scenario, CachePolicy | bool], SimulatedUser]

USERS: dict[str, UserFactory] = {
    "passive": PassiveUser,
    "cooperative": CooperativeUser,
    "paper_passive": PaperPassiveUser,
    "humanlike": HumanlikeUser,
    "targeted": TargetedUser,
    "trained": TrainedUser,
}
USER_TYPES: tuple[str, ...] = tuple(USERS)


def user_templates(user_type: str) -> list[str]:
    """The templates of ``user_type``'s own prompts (its system prompt and any more it renders: the targeted user's
    mapping, the human-like user's behaviour and turn note); empty for a type that is no simulated user (a person)."""
    user = USERS.get(user_type)
    if user is None:
        return []
    names = [t for t in (getattr(user, "template", None),) if isinstance(t, str)]
    return names + list(getattr(user, "extra_templates", ()))


def check_user_type(name: str) -> str:
    if name not in USERS:
        raise ValueError(f"unknown user type {name!r}: expected one of {', '.join(USER_TYPES)}")
    return name


def build_user(
    user_type: str, model: Model, scenario: Scenario, cache: CachePolicy | bool = False, mapper: Model | None = None
) -> SimulatedUser:
    """The simulated user of ``scenario`` played by ``model``; ``mapper``: the model that maps a targeted user's
    questions (None: the sample's ``grader`` role, inside an eval)."""
    user = USERS[check_user_type(user_type)](model, scenario, cache)
    if mapper is not None and isinstance(user, TargetedUser):
        user.mapper = mapper
    return user
