"""Sparse preference profiles: for one (persona, problem), a few attributes of F(i) with values and weights.

The LLM picks between ``min_attributes`` and ``max_attributes`` attributes of F(i) (default 3-7) and gives each
a value from the attribute's value space, a justification grounded in the persona, and an importance 1-5.
The response schema constrains every item to one attribute of F(i) and one of *its* values (an ``anyOf`` of
per-attribute objects, which a grammar-constrained model must follow); validation repeats every check with a
one-line reason so a wrong reply is retried, and a reply still out of range after the retries is rejected.
Code turns importances into weights with ``PreferenceProfile.normalized`` (sum exactly 1).

``signature`` identifies a profile by its (attribute, value) pairs: two personas on one problem with the same
signature get the later one regenerated once with a note (see the pipeline).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import Any, ClassVar, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from prefdisco import prompts
from prefdisco.builder.pool import StepOutcome, StepRunner
from prefdisco.builder.relevance import UNIQUE, problem_text
from prefdisco.schema import Attribute, Persona, PreferenceItem, PreferenceProfile, Problem
from prefdisco.structured import literal

STEP = "profile"
MAX_TOKENS = 1024
REGEN_STEP = "profile_regenerate"

_LEADING_NUMBER = re.compile(r"^\s*(\d+)\s*(?:[:.)-]|$)")


class ProfileConfig(BaseModel):
    min_attributes: int = Field(default=3, ge=1)
    max_attributes: int = Field(default=7, ge=1)
    max_problem_chars: int = Field(default=2000, ge=100)

    @model_validator(mode="after")
    def _bounds(self) -> ProfileConfig:
        if self.min_attributes > self.max_attributes:
            raise ValueError(f"min_attributes ({self.min_attributes}) exceeds max_attributes ({self.max_attributes})")
        return self


def match_value(raw: Any, values: Sequence[str]) -> str | None:
    """The value-space entry ``raw`` names: exact, case/space-insensitive, or a bare number of an ``N: ...``
    scale anchor (``"3"`` -> ``"3: comfortable with standard material"``)."""
    text = " ".join(str(raw).split())
    if text in values:
        return text
    folded = {" ".join(v.split()).casefold(): v for v in values}
    if text.casefold() in folded:
        return folded[text.casefold()]
    number = _LEADING_NUMBER.match(text)
    if number and number.end() == len(text.rstrip()):
        hits = [v for v in values if (m := _LEADING_NUMBER.match(v)) and m.group(1) == number.group(1)]
        if len(hits) == 1:
            return hits[0]
    return None


class _ProfileBase(BaseModel):
    model_config = ConfigDict(extra="ignore")
    allowed: ClassVar[dict[str, tuple[str, ...]]] = {}

    @model_validator(mode="before")
    @classmethod
    def _items(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not isinstance(data.get("preferences"), list):
            return data
        by_fold = {a.casefold(): a for a in cls.allowed}
        seen: set[str] = set()
        items = []
        for i, raw in enumerate(data["preferences"]):
            if not isinstance(raw, dict):
                raise ValueError(f"preferences[{i}] must be an object")
            name = by_fold.get(" ".join(str(raw.get("attribute", "")).split()).casefold())
            if name is None:
                raise ValueError(f"preferences[{i}].attribute {raw.get('attribute')!r} is not a listed attribute")
            if name in seen:
                raise ValueError(f"preferences: attribute {name!r} is listed twice")
            seen.add(name)
            value = match_value(raw.get("value", ""), cls.allowed[name])
            if value is None:
                raise ValueError(
                    f"preferences[{i}].value {raw.get('value')!r} is not an allowed value of {name!r} "
                    f"(allowed: {' | '.join(cls.allowed[name])})"
                )
            importance = raw.get("importance")
            if isinstance(importance, str) and importance.strip().isdigit():
                importance = int(importance.strip())
            if isinstance(importance, float) and importance.is_integer():
                importance = int(importance)
            if importance not in (1, 2, 3, 4, 5) or isinstance(importance, bool):
                raise ValueError(f"preferences[{i}].importance must be an integer 1 to 5, got {importance!r}")
            if not str(raw.get("justification", "")).strip():
                raise ValueError(f"preferences[{i}].justification is empty")
            items.append({**raw, "attribute": name, "value": value, "importance": importance})
        return {**data, "preferences": items}


@cache
def _schema(spec: tuple[tuple[str, tuple[str, ...]], ...], lo: int, hi: int) -> type[BaseModel]:
    members = []
    for index, (name, values) in enumerate(spec):
        members.append(
            create_model(
                f"Preference{index}",
                __config__=ConfigDict(extra="ignore"),
                attribute=(literal(name), Field(json_schema_extra={"enum": [name]})),
                value=(literal(*values), ...),
                justification=(str, Field(min_length=3, max_length=400)),
                importance=(Literal[1, 2, 3, 4, 5], ...),
            )
        )
    item_type: Any = Union[tuple(members)]  # noqa: UP007
    model = create_model(
        "Profile",
        __base__=_ProfileBase,
        preferences=(list[item_type], Field(min_length=lo, max_length=hi, json_schema_extra=UNIQUE)),
    )
    model.allowed = dict(spec)
    return model


def bounds(relevant: Sequence[Attribute], config: ProfileConfig) -> tuple[int, int]:
    n = len(relevant)
    return min(config.min_attributes, n), min(config.max_attributes, n)


def profile_schema(relevant: Sequence[Attribute], config: ProfileConfig) -> type[BaseModel]:
    """Reply schema for F(i) = ``relevant``: lo..hi items, each one attribute of F(i) with one of its values."""
    lo, hi = bounds(relevant, config)
    return _schema(tuple((a.name, tuple(a.value_space)) for a in relevant), lo, hi)


def profile_prompt(
    persona: Persona,
    problem: Problem,
    relevant: Sequence[Attribute],
    config: ProfileConfig,
    note: str = "",
    core: str = "",
) -> str:
    """The profile prompt; ``core``: a session build's earlier values of this persona (``sessions.core_note``),
    ``note``: the regeneration's note after an identical profile. Without either, the plain prompt."""
    lo, hi = bounds(relevant, config)
    listing = "\n".join(f"- {a.name}: {a.description} Values: {' | '.join(a.value_space)}" for a in relevant)
    return prompts.render(
        "build_profile",
        persona=persona.profile_text(),
        problem=problem_text(problem, config.max_problem_chars),
        attributes=listing,
        lo=lo,
        hi=hi,
        note="".join(f"\n{text}" for text in (core.rstrip("\n"), note) if text),
    )


def duplicate_note(previous: PreferenceProfile) -> str:
    pairs = "; ".join(f"{i.attribute} = {i.value}" for i in previous.items)
    return prompts.render("build_profile_duplicate", pairs=pairs)


async def generate_profile(
    runner: StepRunner,
    persona: Persona,
    problem: Problem,
    relevant: Sequence[Attribute],
    config: ProfileConfig,
    *,
    note: str = "",
    core: str = "",
) -> StepOutcome[BaseModel] | None:
    """One profile call (``note`` set: the regeneration after an identical profile, a separate step; ``core``: a
    session build's earlier values of this persona)."""
    schema = profile_schema(relevant, config)
    text = profile_prompt(persona, problem, relevant, config, note, core)
    step = REGEN_STEP if note else STEP
    return await runner.run(step, f"{problem.id}|{persona.id}", text, schema, name="profile", max_tokens=MAX_TOKENS)


def to_profile(reply: BaseModel, relevant: Sequence[Attribute]) -> PreferenceProfile:
    """Weights from importances, normalized to sum exactly 1; items in F(i) order; meaning copied from Θ."""
    by_name = {a.name: a for a in relevant}
    chosen = {p.attribute: p for p in reply.preferences}  # type: ignore[attr-defined]
    items = [
        PreferenceItem(
            attribute=name,
            value=chosen[name].value,
            weight=chosen[name].importance / 5,  # raw importance 1-5 scaled into [0, 1]; normalized below
            justification=chosen[name].justification.strip(),
            description=by_name[name].description,
            category=by_name[name].category,
        )
        for name in by_name
        if name in chosen
    ]
    return PreferenceProfile.normalized(items)


def signature(profile: PreferenceProfile) -> tuple[tuple[str, str], ...]:
    """What makes two profiles the same: their (attribute, value) pairs."""
    return tuple(sorted((i.attribute, i.value) for i in profile.items))
