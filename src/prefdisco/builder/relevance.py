"""F(i): the attributes of Θ relevant to one problem, selected by the LLM.

The LLM sees the problem and the catalogue (name and meaning of every attribute) and names between
``min_relevant`` and ``max_relevant`` catalogue attributes; names are constrained to the catalogue by the
response schema (an enum) and checked again on validation. It may propose at most ``max_new`` new attributes.
All proposals of a build are deduplicated together, first lexically (:func:`propose`, order-independent): a
proposal that means a catalogue attribute becomes that attribute, near-identical proposals share one canonical
name, and each remaining canonical name becomes one new ``Attribute``; a proposed name that is not words
(``Moloch 253.506``, from a small model) is dropped first. The builder then runs the model-judged
pass (:mod:`prefdisco.builder.semantic_dedup`) over those new attributes, and :func:`assign` writes F(i) with
the final canonical names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_validator

from prefdisco import prompts
from prefdisco.builder.catalogue import not_words
from prefdisco.builder.dedup import Match, clean, explain
from prefdisco.builder.pool import StepOutcome, StepRunner
from prefdisco.schema import ATTRIBUTE_CATEGORIES, Attribute, Problem

STEP = "relevance"
UNIQUE: dict[str, Any] = {"uniqueItems": True}
"""Marks a list whose items must differ: grammar-constrained providers then cannot repeat one item."""


class RelevanceConfig(BaseModel):
    min_relevant: int = Field(default=8, ge=1)
    max_relevant: int = Field(default=15, ge=1)
    max_new: int = Field(default=3, ge=0)
    max_problem_chars: int = Field(default=2000, ge=100)

    @model_validator(mode="after")
    def _bounds(self) -> RelevanceConfig:
        if self.min_relevant > self.max_relevant:
            raise ValueError(f"min_relevant ({self.min_relevant}) exceeds max_relevant ({self.max_relevant})")
        return self


def max_tokens(config: RelevanceConfig) -> int:
    """Output budget: the names, plus room for each new attribute (name, description, value space)."""
    return 384 + 400 * config.max_new


class NewAttributeDraft(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str = Field(min_length=3, max_length=60)
    category: Literal[ATTRIBUTE_CATEGORIES]  # type: ignore[valid-type]
    description: str = Field(min_length=10, max_length=300)
    values: list[str] = Field(min_length=2, max_length=6)

    @field_validator("values")
    @classmethod
    def _distinct(cls, v: list[str]) -> list[str]:
        values = list(dict.fromkeys(" ".join(x.split()) for x in v if x.strip()))
        if len(values) < 2:
            raise ValueError("values must hold at least 2 distinct non-empty values")
        return values


class _RelevanceBase(BaseModel):
    model_config = ConfigDict(extra="ignore")
    allowed: ClassVar[tuple[str, ...]] = ()

    @model_validator(mode="before")
    @classmethod
    def _names(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not isinstance(data.get("relevant"), list):
            return data
        by_fold = {a.casefold(): a for a in cls.allowed}
        names: list[str] = []
        for i, raw in enumerate(data["relevant"]):
            name = by_fold.get(" ".join(str(raw).split()).casefold())
            if name is None:
                raise ValueError(f"relevant[{i}] {raw!r} is not a catalogue attribute name")
            if name not in names:
                names.append(name)
        return {**data, "relevant": names}


@cache
def relevance_schema(names: tuple[str, ...], lo: int, hi: int, max_new: int) -> type[BaseModel]:
    """Reply schema: ``relevant`` (lo..hi catalogue names) and, when ``max_new`` > 0, ``new_attributes``."""
    name_type: Any = Literal[names]
    fields: dict[str, Any] = {
        "relevant": (list[name_type], Field(min_length=lo, max_length=hi, json_schema_extra=UNIQUE))
    }
    if max_new > 0:
        fields["new_attributes"] = (list[NewAttributeDraft], Field(max_length=max_new))
    model = create_model("Relevance", __base__=_RelevanceBase, **fields)
    model.allowed = names
    return model


def problem_text(problem: Problem, max_chars: int) -> str:
    text = problem.prompt_text()
    return text if len(text) <= max_chars else text[: max_chars - 1].rstrip() + "…"


def relevance_prompt(problem: Problem, catalogue: Sequence[Attribute], config: RelevanceConfig) -> str:
    lo, hi = bounds(catalogue, config)
    listing = "\n".join(f"- {a.name}: {a.description}" for a in catalogue)
    if config.max_new > 0:
        categories = ", ".join(ATTRIBUTE_CATEGORIES)
        new_rule = prompts.render("build_relevance_new", max_new=config.max_new, categories=categories)
        reply = '{"relevant": [names copied exactly from the catalogue], "new_attributes": []}'
    else:
        new_rule, reply = "", '{"relevant": [names copied exactly from the catalogue]}'
    return prompts.render(
        "build_relevance",
        domain=problem.domain,
        problem=problem_text(problem, config.max_problem_chars),
        catalogue=listing,
        lo=lo,
        hi=hi,
        new_rule=new_rule,
        reply=reply,
    )


def bounds(catalogue: Sequence[Attribute], config: RelevanceConfig) -> tuple[int, int]:
    n = len(catalogue)
    return min(config.min_relevant, n), min(config.max_relevant, n)


async def select_relevant(
    runner: StepRunner, problem: Problem, catalogue: Sequence[Attribute], config: RelevanceConfig
) -> StepOutcome[BaseModel] | None:
    """One relevance call for ``problem`` (``None`` when the reply stayed invalid; the runner records why)."""
    lo, hi = bounds(catalogue, config)
    schema = relevance_schema(tuple(a.name for a in catalogue), lo, hi, config.max_new)
    text = relevance_prompt(problem, catalogue, config)
    return await runner.run(STEP, problem.id, text, schema, name="relevance", max_tokens=max_tokens(config))


@dataclass(frozen=True)
class Proposals:
    """The new attributes proposed in a build, after the lexical pass (:func:`propose`)."""

    mapping: dict[str, str]
    """Every proposed name -> its canonical name: a Θ name or the name of one of ``new``."""
    new: list[Attribute]
    """The new attributes, sorted by name; each one's aliases are the other proposed names merged into it."""
    matches: list[Match]
    """How the lexical pass resolved each distinct proposed name (sorted by name)."""
    rejected: dict[str, str] = field(default_factory=dict)
    """Proposed names that are not words (``catalogue.not_words``) → why; dropped before F(i), never in a
    profile."""

    def renamed(self, renames: Mapping[str, str], new: list[Attribute]) -> Proposals:
        """The proposals after a later pass renamed some canonical names (``renames``) and kept ``new``."""
        mapping = {name: renames.get(canonical, canonical) for name, canonical in self.mapping.items()}
        new = sorted(new, key=lambda a: a.name)
        return Proposals(mapping=mapping, new=new, matches=self.matches, rejected=self.rejected)


def _drafts(answers: Mapping[str, BaseModel]) -> list[NewAttributeDraft]:
    return [d for answer in answers.values() for d in getattr(answer, "new_attributes", [])]


def propose(answers: Mapping[str, BaseModel], catalogue: Sequence[Attribute]) -> Proposals:
    """The lexical pass over every proposal of the build (``dedup.explain``, order-independent): a proposal that
    means a Θ attribute becomes it, near-identical proposals share one canonical name, and each remaining
    canonical name becomes one new ``Attribute``. Its category, description and values come from the proposal
    spelled like the canonical name with the smallest (description, category, values), so they do not depend
    on the order of the problems either."""
    drafts = _drafts(answers)
    rejected = {d.name: why for d in drafts if (why := not_words(d.name))}
    drafts = [d for d in drafts if d.name not in rejected]
    matches = explain([d.name for d in drafts], list(catalogue))
    mapping = {m.proposed: m.canonical for m in matches}
    known = {a.name for a in catalogue}
    groups: dict[str, list[NewAttributeDraft]] = {}
    for draft in drafts:
        if mapping[draft.name] not in known:
            groups.setdefault(mapping[draft.name], []).append(draft)
    new: list[Attribute] = []
    for canonical in sorted(groups):
        members = groups[canonical]
        head = min(members, key=lambda d: (clean(d.name) != canonical, d.description, d.category, d.values, d.name))
        new.append(
            Attribute(
                name=canonical,
                category=head.category,
                description=head.description,
                value_space=head.values,
                aliases=sorted({clean(d.name) for d in members} - {canonical}),
            )
        )
    return Proposals(mapping=mapping, new=new, matches=matches, rejected=dict(sorted(rejected.items())))


def assign(
    answers: Mapping[str, BaseModel], catalogue: Sequence[Attribute], proposals: Proposals
) -> dict[str, list[str]]:
    """F(i) per problem: its catalogue names plus the canonical names of its proposals, in catalogue order and
    then in the order of ``proposals.new``."""
    order = [a.name for a in catalogue] + [a.name for a in proposals.new]
    relevant: dict[str, list[str]] = {}
    for pid, answer in answers.items():
        chosen = set(answer.relevant)  # type: ignore[attr-defined]
        drafts = getattr(answer, "new_attributes", [])
        chosen |= {proposals.mapping[d.name] for d in drafts if d.name not in proposals.rejected}
        relevant[pid] = [name for name in order if name in chosen]
    return relevant


def resolve(
    answers: Mapping[str, BaseModel], catalogue: Sequence[Attribute]
) -> tuple[dict[str, list[str]], list[Attribute]]:
    """F(i) per problem and the new attributes after the lexical pass alone (no model call)."""
    proposals = propose(answers, catalogue)
    return assign(answers, catalogue, proposals), proposals.new
