"""The targeted simulated user (``--user-type targeted``): a reply can only reveal what its question asked about.

A prompted user sees the whole profile and is trusted to reveal only what it is asked; the audit then measures how
often it does not. The targeted user makes that structural. Each assistant question is handled in two steps:

1. **Mapping** — one call on the ``grader`` role model (``structured.generate_structured``) reads the question and
   the profile's attribute names (with their meanings) and answers ``{"about": [...]}``, each entry one of the
   profile's attribute names, ``none`` (the question asks about nothing in the profile) or ``vague`` (too general
   to say what it asks about). The reply model is built per profile (``mapping_reply_model``): one list of an enum
   of at most K + 2 values, small enough for a grammar-constrained tiny model.
2. **Reply** — mapped to at least one attribute: the ``user`` model answers in character under
   ``prompts/user_targeted.txt``, which holds the persona and *only* those attributes (name, meaning, value,
   justification) — never the other attributes, the weights or the problem. ``none`` or ``vague``: the fixed
   in-character reply of ``prompts/user_targeted_vague.txt``, with no model call.

Every reply records what it revealed (``UserReply.revealed``: the attributes the user model was shown, in profile
order; () after a fixed reply) and how its question was read (``UserReply.mapping``); the loop copies both onto the
reply's ``DialogueTurn``, and the scorer's elicitation metrics read them (``scoring/elicitation.py``). A mapping
still invalid after ``MAPPING_RETRIES`` re-asks is answered like a vague question and recorded as ``invalid``
(the reason in ``mappings``) — never a crash.

Both calls go through the cache the user was built with (scoped to the run, scenario, condition and the ``user``
role; the two calls differ in model and messages, so they never share a key). The mapping model is the sample's
``grader`` role model carrying the trial's grader seed, unless one is given (tests), as its own role ``mapper``
(``mapping_model``): the dialogue waits for each mapping, so it is sent real-time even when ``--batch`` sends the
judges' calls by batch, and its tokens are counted apart from theirs (``results/sample_rows.py``: with the judges'
``grader_*`` tokens, priced at the real-time rate).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache as memoize
from typing import Any, ClassVar

from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    get_model,
)
from inspect_ai.util import store_as
from pydantic import BaseModel, Field, create_model

from prefdisco.dialogue.user_reply import UserReply, clean_reply, preference_lines, push_back, reply_config
from prefdisco.dialogue.visible import visible_text
from prefdisco.prompts import render
from prefdisco.schema import Scenario, UserMapping
from prefdisco.seeds import TrialSeeds, seeded_model
from prefdisco.structured import StructuredOutputError, generate_structured, literal

NONE = "none"
VAGUE = "vague"
MAPPER_ROLE = "mapper"
"""The role the mapping calls are made under (inspect's ``ModelEvent.role`` and ``role_usage`` key)."""
MAPPING_RETRIES = 1
"""Re-asks of an invalid mapping reply (every attempt cached) before it counts as vague."""


@memoize
def mapping_reply_model(names: tuple[str, ...]) -> type[BaseModel]:
    """``{"about": [...]}``: at most K + 2 entries, each an attribute name, ``none`` or ``vague`` (an empty list
    reads as ``none``: schemas sent to most providers lose ``minItems``, and [] is a clear answer)."""
    choice: Any = literal(*names, NONE, VAGUE)
    about: Any = (list[choice], Field(max_length=len(names) + 2))
    return create_model("QuestionMapping", about=about)


@dataclass(frozen=True)
class QuestionMapping:
    """What one question asks about: ``attributes`` (profile order, each once) and how it was read."""

    question: str
    attributes: tuple[str, ...]
    kind: UserMapping
    error: str | None = None


def read_mapping(question: str, about: list[str], names: tuple[str, ...]) -> QuestionMapping:
    """A valid reply read: its attribute names when it has any (``none`` / ``vague`` beside them are ignored),
    else ``vague`` when it says so, else ``none`` (an empty list too)."""
    hit = tuple(name for name in names if name in about)
    if hit:
        return QuestionMapping(question, hit, "attributes")
    return QuestionMapping(question, (), "vague" if VAGUE in about else "none")


def _mapping_config(model: Model, n_attributes: int) -> GenerateConfig:
    """Deterministic and short, unless the grader role was given its own temperature or max_tokens."""
    base = model.config
    return GenerateConfig(
        temperature=0.0 if base.temperature is None else None,
        max_tokens=32 + 24 * n_attributes if base.max_tokens is None else None,
    )


def mapping_model(grader: Model) -> Model:
    """``grader`` as the mapping model: a copy under the role ``mapper`` that never goes by batch (a turn waits
    for it), its other settings, connection cap and provider client the grader's."""
    mapper = get_model(role=MAPPER_ROLE, default=grader)  # no such eval role: a copy of ``grader`` renamed
    mapper.config = grader.config.merge(GenerateConfig(batch=False))
    return mapper


@dataclass
class TargetedUser:
    """Maps each question to the attributes it asks about, then answers seeing only those (module docstring)."""

    template: ClassVar[str] = "user_targeted"
    extra_templates: ClassVar[tuple[str, ...]] = ("user_targeted_map", "user_targeted_vague")
    """Every other template the user renders (``run.json`` hashes them with ``template``)."""

    model: Model
    scenario: Scenario
    cache: CachePolicy | bool = False
    mapper: Model | None = None
    """The mapping model; None: the sample's ``grader`` role model with the trial's grader seed."""
    history: list[ChatMessage] = field(default_factory=list, init=False)
    mappings: list[QuestionMapping] = field(default_factory=list, init=False)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(item.attribute for item in self.scenario.profile.items)

    def mapping_prompt(self, question: str) -> str:
        attributes = "\n".join(
            f"- {i.attribute}: {i.description or '(no description)'}" for i in self.scenario.profile.items
        )
        choices = " | ".join(f'"{name}"' for name in (*self.names, NONE, VAGUE))
        return render("user_targeted_map", question=question, attributes=attributes, choices=choices)

    def system_for(self, attributes: tuple[str, ...]) -> str:
        """The user model's system prompt when the question asks about ``attributes``: persona and those only."""
        shown = [item for item in self.scenario.profile.items if item.attribute in attributes]
        return render(
            "user_targeted", persona=self.scenario.persona.profile_text(), preferences=preference_lines(shown)
        )

    def _mapper(self) -> Model:
        if self.mapper is None:
            self.mapper = seeded_model(mapping_model(get_model(role="grader")), store_as(TrialSeeds).grader)
        return self.mapper

    async def map_question(self, question: str) -> QuestionMapping:
        """One structured call on the mapping model; an invalid reply after the retries reads as ``invalid``."""
        mapper = self._mapper()
        try:
            result = await generate_structured(
                mapper,
                self.mapping_prompt(question),
                mapping_reply_model(self.names),
                config=_mapping_config(mapper, len(self.names)),
                retries=MAPPING_RETRIES,
                name="question_mapping",
                cache=self.cache,
            )
        except StructuredOutputError as err:
            reason = f"invalid mapping reply after {err.attempts} attempt(s): {'; '.join(err.errors)}"
            return QuestionMapping(question, (), "invalid", reason)
        return read_mapping(question, list(result.value.model_dump()["about"]), self.names)

    async def challenge(self, answer: str, target: str | None, turn: int) -> UserReply:
        persona, problem = self.scenario.persona.profile_text(), self.scenario.problem.prompt_text()
        return await push_back(self.model, self.cache, persona, problem, answer, target, turn)

    async def reply(self, question: str) -> UserReply:
        mapping = await self.map_question(question)
        self.mappings.append(mapping)
        if mapping.attributes:
            messages = [
                ChatMessageSystem(content=self.system_for(mapping.attributes)),
                *self.history,
                ChatMessageUser(content=question),
            ]
            output = await self.model.generate(messages, config=reply_config(self.model), cache=self.cache)
            text = clean_reply(visible_text(output))
        else:
            output, text = None, render("user_targeted_vague").strip()
        self.history = [*self.history, ChatMessageUser(content=question), ChatMessageAssistant(content=text)]
        return UserReply(text, output, mapping.attributes, mapping.kind)
