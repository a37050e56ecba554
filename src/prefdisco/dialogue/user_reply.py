"""What every simulated user shares: the ``SimulatedUser`` protocol, the ``UserReply`` it returns, how a user
model's reply is cleaned and how preferences are written for it.

Its own module so that user types living in modules of their own (``targeted.py``) and the registry that lists
them (``user.py``) both import it without importing each other.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple, Protocol

from inspect_ai.model import CachePolicy, ChatMessage, ChatMessageUser, GenerateConfig, Model, ModelOutput

from prefdisco.dialogue.protocol import strip_markers
from prefdisco.dialogue.visible import visible_text
from prefdisco.prompts import render
from prefdisco.schema import PreferenceItem, UserMapping
from prefdisco.seeds import redraw_seed, seeded_model

USER_MAX_TOKENS = 160


class UserReply(NamedTuple):
    text: str
    output: ModelOutput | None  # None for a reply that called no model
    revealed: tuple[str, ...] | None = None
    """The profile attributes this reply revealed, when the user knows (targeted); None: it does not know."""
    mapping: UserMapping | None = None
    """How the question was read, for users that map questions first (targeted); None otherwise."""


class SimulatedUser(Protocol):
    """Replies to assistant questions; ``history`` is its own view of the dialogue (questions in, replies out).
    ``challenge`` pushes back on the assistant's answer (``--pushback``)."""

    history: list[ChatMessage]

    async def reply(self, question: str) -> UserReply: ...

    async def challenge(self, answer: str, target: str | None, turn: int) -> UserReply: ...


PUSHBACK_TEMPLATES: tuple[str, ...] = ("user_pushback", "user_pushback_target", "user_pushback_free")


def pushback_prompt(persona: str, problem: str, answer: str, target: str | None, turn: int) -> str:
    """What the user model is sent to push back, in character, on ``answer`` (insisting on ``target`` if named)."""
    stance = (
        render("user_pushback_target", target=target, turn=turn)
        if target is not None
        else render("user_pushback_free", turn=turn)
    )
    return render("user_pushback", persona=persona, problem=problem, answer=answer, stance=stance.strip())


async def push_back(
    model: Model, cache: CachePolicy | bool, persona: str, problem: str, answer: str, target: str | None, turn: int
) -> UserReply:
    """One challenge from the user model (its visible text, cleaned), cached with the user's other calls."""
    prompt = pushback_prompt(persona, problem, answer, target, turn)
    output = await model.generate([ChatMessageUser(content=prompt)], config=reply_config(model), cache=cache)
    return UserReply(clean_reply(visible_text(output)), output)


async def redraw(user: SimulatedUser, question: str, attempt: int, history: list[ChatMessage]) -> UserReply | None:
    """``user``'s reply to ``question`` drawn again (``--user-retry``): from ``history`` (its view before the
    question), its model sending the seed ``redraw_seed`` of ``attempt`` (so the draw is new, cached apart and the
    same on a rerun). None for a user with no model of its own (a person, a replayed log): nothing to redraw."""
    model = getattr(user, "model", None)
    if not isinstance(model, Model):
        return None
    user.history = list(history)
    user.model = seeded_model(model, redraw_seed(model.config.seed, attempt))  # type: ignore[attr-defined]
    try:
        return await user.reply(question)
    finally:
        user.model = model  # type: ignore[attr-defined]


def preference_lines(items: Iterable[PreferenceItem]) -> str:
    """Preferences as a simulated user knows them: what they want and why (no weights)."""
    lines = []
    for item in items:
        meaning = f" ({item.description})" if item.description else ""
        why = f" Why: {item.justification}" if item.justification else ""
        lines.append(f"- {item.attribute}{meaning}: {item.value}.{why}")
    return "\n".join(lines)


def reply_config(model: Model) -> GenerateConfig:
    """The settings of a user-model call: ``USER_MAX_TOKENS`` unless the role was given its own max_tokens."""
    return GenerateConfig() if model.config.max_tokens else GenerateConfig(max_tokens=USER_MAX_TOKENS)


def clean_reply(text: str) -> str:
    """A user model's visible reply without protocol markers or wrapping quotes; never empty."""
    text = strip_markers(text).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text or "(no reply)"
