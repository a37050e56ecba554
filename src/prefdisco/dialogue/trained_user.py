"""A trained user language model in the user's seat (``--user-type trained``), in the UserLM-8b format.

Prompted simulators are assistants asked to play a user, and studies find them too cooperative; user LMs are
trained on real users' turns instead (UserLM-8b: Llama-3.1-8B trained on WildChat to write the *user* side). Such a
model is not instructed: its system prompt is the user's **intent** and it continues the conversation as the user.
``TrainedUser`` speaks that format:

* the system prompt is the intent (``prompts/user_trained.txt``): the task, the persona and what the person wants
  from the answer and why — the profile's values and justifications, never weights or the rubric;
* the conversation opens with the person's own first turn, the problem as the assistant was given it;
* roles are the conversation's own: the assistant's questions are ``assistant`` messages, the person's earlier
  replies ``user`` messages, and the model writes the next ``user`` turn (a server serving the model with its own
  chat template opens that turn; vLLM does);
* the model's end-of-conversation token ``<|endconversation|>`` is a stop sequence, and anything from it on is
  cut: the person may not end a PrefDisco dialogue (the assistant alone decides when to answer). A reply that was
  only the token reaches the assistant as ``(no reply)``; the hygiene screen flags it ``empty_or_cut`` and
  ``--user-retry`` draws it again;
* a pushback challenge (``--pushback``) continues the same format: the intent with the person's belief
  (``user_trained_belief.txt``, or ``user_trained_doubt.txt`` when no wrong answer is named), the problem, and the
  assistant's answer as its turn.

``history`` keeps the shape every simulated user keeps (questions as ``user``, replies as ``assistant``: the
engine restores and redraws from it); the roles are turned round only in the messages sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
)

from prefdisco.dialogue.user_reply import UserReply, clean_reply, preference_lines, reply_config
from prefdisco.dialogue.visible import visible_text
from prefdisco.prompts import render
from prefdisco.schema import Scenario

END_OF_CONVERSATION = "<|endconversation|>"


def without_end(text: str) -> str:
    """``text`` cut at the end-of-conversation token (the person may not end the dialogue)."""
    return text.split(END_OF_CONVERSATION, 1)[0]


def as_conversation(history: list[ChatMessage]) -> list[ChatMessage]:
    """A user's ``history`` (questions in as ``user``, replies out as ``assistant``) with the roles of the
    conversation itself: the assistant's questions as ``assistant``, the person's replies as ``user``."""
    return [
        ChatMessageAssistant(content=m.text) if m.role == "user" else ChatMessageUser(content=m.text) for m in history
    ]


@dataclass
class TrainedUser:
    """A trained user LM playing the person (module docstring)."""

    template: ClassVar[str] = "user_trained"
    extra_templates: ClassVar[tuple[str, ...]] = ("user_trained_belief", "user_trained_doubt")

    model: Model
    scenario: Scenario
    cache: CachePolicy | bool = False
    history: list[ChatMessage] = field(default_factory=list, init=False)

    @cached_property
    def intent(self) -> str:
        return render(
            self.template,
            problem=self.scenario.problem.prompt_text(),
            persona=self.scenario.persona.profile_text(),
            preferences=preference_lines(self.scenario.profile.items),
        ).strip()

    @property
    def opening(self) -> ChatMessageUser:
        """The person's first turn: the problem as the assistant was given it."""
        return ChatMessageUser(content=self.scenario.problem.prompt_text())

    def messages_for(self, question: str) -> list[ChatMessage]:
        """What the user LM is sent to answer ``question``: the intent, the conversation so far, the question."""
        return [
            ChatMessageSystem(content=self.intent),
            self.opening,
            *as_conversation(self.history),
            ChatMessageAssistant(content=question),
        ]

    async def _generate(self, messages: list[ChatMessage]) -> UserReply:
        config = reply_config(self.model).merge(GenerateConfig(stop_seqs=[END_OF_CONVERSATION]))
        output = await self.model.generate(messages, config=config, cache=self.cache)
        return UserReply(clean_reply(without_end(visible_text(output))), output)

    async def reply(self, question: str) -> UserReply:
        answer = await self._generate(self.messages_for(question))
        self.history = [*self.history, ChatMessageUser(content=question), ChatMessageAssistant(content=answer.text)]
        return answer

    async def challenge(self, answer: str, target: str | None, turn: int) -> UserReply:
        stance = render("user_trained_belief", target=target) if target is not None else render("user_trained_doubt")
        intent = f"{self.intent}\n{stance.rstrip()}"
        return await self._generate(
            [ChatMessageSystem(content=intent), self.opening, ChatMessageAssistant(content=answer)]
        )
