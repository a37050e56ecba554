"""Rubrics: one criterion per profile attribute, with an anchor for every score 1..5.

The LLM writes, for each preference of a scenario's profile, what a grader checks on this problem and a
description of each level 1..5, where 5 fully matches the preferred value and 1 ignores or contradicts it.
The response schema requires all five levels and exactly one criterion per profile attribute: a missing level
or attribute is a structured-output failure that gets retried, as is a level or description that is no text or
two levels alike (``degenerate.py``). The preferred value comes from the profile
(code), never from the rubric reply.
"""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_validator

from prefdisco import prompts
from prefdisco.builder.degenerate import level_problems, no_text
from prefdisco.builder.pool import StepOutcome, StepRunner
from prefdisco.builder.relevance import UNIQUE, problem_text
from prefdisco.schema import AnswerType, Persona, PreferenceProfile, Problem, RubricCriterion
from prefdisco.structured import literal

STEP = "rubric"
TOKENS_PER_CRITERION = 640
"""Output budget per rubric criterion (a description and five anchors); the step's budget is 256 plus this per
criterion, so a 7-attribute rubric is not cut off where a 3-attribute one fits. Providers bill what is written,
not the budget; the embedded model shortens it to what its context window has left."""


def max_tokens(criteria: int) -> int:
    return 256 + TOKENS_PER_CRITERION * criteria


class Levels(BaseModel):
    """The five score anchors, keyed "1".."5" in JSON."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    l1: str = Field(alias="1", min_length=3, max_length=400)
    l2: str = Field(alias="2", min_length=3, max_length=400)
    l3: str = Field(alias="3", min_length=3, max_length=400)
    l4: str = Field(alias="4", min_length=3, max_length=400)
    l5: str = Field(alias="5", min_length=3, max_length=400)

    def as_dict(self) -> dict[int, str]:
        return {1: self.l1.strip(), 2: self.l2.strip(), 3: self.l3.strip(), 4: self.l4.strip(), 5: self.l5.strip()}

    @model_validator(mode="after")
    def _text(self) -> Levels:
        """No level that is no text, no two alike (``degenerate.py``): such a reply is asked again."""
        problems = level_problems(self.as_dict())
        if problems:
            raise ValueError("; ".join(problems))
        return self


def _description_text(value: str) -> str:
    why = no_text(value)
    if why:
        raise ValueError(f"description {value!r}: {why}")
    return value


class _RubricBase(BaseModel):
    model_config = ConfigDict(extra="ignore")
    expected: ClassVar[tuple[str, ...]] = ()

    @model_validator(mode="before")
    @classmethod
    def _attributes(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not isinstance(data.get("criteria"), list):
            return data
        by_fold = {a.casefold(): a for a in cls.expected}
        seen: list[str] = []
        criteria = []
        for i, raw in enumerate(data["criteria"]):
            if not isinstance(raw, dict):
                raise ValueError(f"criteria[{i}] must be an object")
            name = by_fold.get(" ".join(str(raw.get("attribute", "")).split()).casefold())
            if name is None:
                raise ValueError(f"criteria[{i}].attribute {raw.get('attribute')!r} is not one of the preferences")
            if name in seen:
                raise ValueError(f"criteria: attribute {name!r} has more than one criterion")
            seen.append(name)
            criteria.append({**raw, "attribute": name})
        missing = [a for a in cls.expected if a not in seen]
        if missing:
            raise ValueError(f"criteria: no criterion for {', '.join(repr(m) for m in missing)}")
        return {**data, "criteria": criteria}


@cache
def rubric_schema(attributes: tuple[str, ...]) -> type[BaseModel]:
    """Reply schema: exactly one criterion per attribute, each with a description and levels "1".."5".

    Validation uses one criterion model (clear error paths such as ``criteria.1.levels.4``). The JSON schema
    sent to the model is a *wire* form of the same document: one member per attribute (``attribute`` fixed
    to its name) in a list marked ``uniqueItems``, so a grammar-constrained provider writes every attribute
    exactly once, in profile order."""
    name_type: Any = Literal[attributes]
    criterion = create_model(
        "Criterion",
        __config__=ConfigDict(extra="ignore"),
        __validators__={"_description_text": field_validator("description")(_description_text)},
        attribute=(name_type, ...),
        description=(str, Field(min_length=5, max_length=500)),
        levels=(Levels, ...),
    )
    n = len(attributes)
    model = create_model("Rubric", __base__=_RubricBase, criteria=(list[criterion], Field(min_length=n, max_length=n)))
    model.expected = attributes
    wire = _wire_schema(attributes)
    model.model_json_schema = classmethod(lambda cls, *a, **k: wire.model_json_schema(*a, **k))  # type: ignore[method-assign,assignment]
    return model


def _wire_schema(attributes: tuple[str, ...]) -> type[BaseModel]:
    members = [
        create_model(
            f"Criterion{index}",
            __config__=ConfigDict(extra="ignore"),
            attribute=(literal(name), Field(json_schema_extra={"enum": [name]})),
            description=(str, Field(min_length=5, max_length=500)),
            levels=(Levels, ...),
        )
        for index, name in enumerate(attributes)
    ]
    criterion: Any = Union[tuple(members)] if len(members) > 1 else members[0]  # noqa: UP007
    n = len(attributes)
    field = Field(min_length=n, max_length=n, json_schema_extra=UNIQUE)
    return create_model("Rubric", __config__=ConfigDict(extra="ignore"), criteria=(list[criterion], field))


def answer_line(problem: Problem) -> str:
    if problem.answer_type is AnswerType.LETTER:
        text = problem.choices[problem.letters.index(problem.answer)]
        return f"{problem.answer}. {text}"
    return problem.answer


def rubric_prompt(problem: Problem, persona: Persona, profile: PreferenceProfile, max_problem_chars: int) -> str:
    preferences = "\n".join(
        f"- {i.attribute}: {i.description or i.attribute} Preferred: {i.value}. Why: {i.justification}"
        for i in profile.items
    )
    return prompts.render(
        "build_rubric",
        problem=problem_text(problem, max_problem_chars),
        answer=answer_line(problem),
        persona=f"{persona.name}, {persona.age}, {persona.occupation}. {persona.summary}",
        preferences=preferences,
    )


async def generate_rubric(
    runner: StepRunner, persona: Persona, problem: Problem, profile: PreferenceProfile, max_problem_chars: int
) -> StepOutcome[BaseModel] | None:
    schema = rubric_schema(tuple(i.attribute for i in profile.items))
    text = rubric_prompt(problem, persona, profile, max_problem_chars)
    budget = max_tokens(len(profile.items))
    return await runner.run(STEP, f"{problem.id}|{persona.id}", text, schema, name="rubric", max_tokens=budget)


def to_criteria(reply: BaseModel, profile: PreferenceProfile) -> list[RubricCriterion]:
    """Criteria in profile order; the preferred value is the profile's."""
    by_name = {c.attribute: c for c in reply.criteria}  # type: ignore[attr-defined]
    return [
        RubricCriterion(
            attribute=item.attribute,
            preferred_value=item.value,
            description=by_name[item.attribute].description.strip(),
            levels=by_name[item.attribute].levels.as_dict(),
        )
        for item in profile.items
    ]
