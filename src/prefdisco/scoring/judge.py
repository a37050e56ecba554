"""The rubric judge: one 1-5 score per rubric criterion.

Per-criterion judging (the paper's method): one call per criterion, run concurrently. The judge sees the
problem, the final response (protocol markers already stripped) and that one criterion (attribute, its
meaning, the preferred value, what to check, the five level anchors) — never the persona, never the other
attributes, never the weights.

The reply is the ``CriterionScore`` JSON object ``{"score": N}``, asked for through
``structured.generate_structured``: its schema (an ``enum`` of 1..5) is sent, so providers with structured
output — and the embedded model's grammar — always return a valid value; an invalid reply is re-asked with the
bad reply and a one-line reason (``JUDGE_RETRIES`` times), every attempt cached under the caller's policy. A
reply still invalid after the retries is recorded as an invalid judgement, with no score and the reason: it is
excluded from PrefAlign, never counted as a number.

With ``logprobs=True`` and a provider that returns token log-probabilities, the score is the G-Eval
probability-weighted mean over the score digits of the accepted attempt (``geval``); without usable
log-probabilities the hard score is used and ``rationale`` says so.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Literal

from inspect_ai.model import CachePolicy, Model
from pydantic import BaseModel, BeforeValidator

from prefdisco.prompts import render
from prefdisco.schema import AttributeJudgement, PreferenceItem, Problem, RubricCriterion
from prefdisco.scoring.geval import SCORE_DIGITS, logprob_weighted_score
from prefdisco.scoring.grader_config import grader_config
from prefdisco.structured import StructuredOutputError, generate_structured

JUDGE_RETRIES = 2
"""Re-asks after an invalid judge reply."""
JUDGE_MAX_TOKENS = 16
TOKENS_PER_KEY = 10
"""The output tokens a JSON reply's key and level take (a structured reply's budget: JUDGE_MAX_TOKENS + this a key)."""


def _as_level(value: object) -> object:
    """A digit string names its level; a boolean is not a level (pydantic would read ``true`` as 1)."""
    if isinstance(value, bool):
        raise ValueError("a score level is a number 1 to 5, not true/false")
    if isinstance(value, str) and value.strip() in SCORE_DIGITS:
        return int(value.strip())
    return value


ScoreLevel = Annotated[Literal[1, 2, 3, 4, 5], BeforeValidator(_as_level)]
"""One rubric level (``schema.SCORE_LEVELS``); sent as an integer ``enum``."""


class CriterionScore(BaseModel):
    """The per-criterion judge's reply."""

    score: ScoreLevel


def judge_prompt(problem: Problem, response: str, criterion: RubricCriterion, item: PreferenceItem) -> str:
    levels = "\n".join(f"{level}: {text}" for level, text in criterion.levels.items())
    return render(
        "judge_criterion",
        problem=problem.prompt_text(),
        attribute=criterion.attribute,
        attribute_description=item.description or "(see the criterion)",
        preferred_value=criterion.preferred_value,
        criterion_description=criterion.description,
        levels=levels,
        response=response if response.strip() else "(empty response)",
    )


def scored(
    criterion: RubricCriterion,
    item: PreferenceItem,
    hard: int,
    weighted: float | None,
    *,
    logprobs: bool,
    attempts: int,
) -> AttributeJudgement:
    """A valid judgement: the weighted score when there is one, else the hard score (``rationale`` says which)."""
    if weighted is not None:
        score, rationale = weighted, f"probability-weighted {weighted:.3f} (hard score {hard})"
    elif logprobs:
        score, rationale = hard, f"hard score {hard} (no log-probabilities returned)"
    else:
        score, rationale = hard, f"hard score {hard}"
    return AttributeJudgement(
        attribute=criterion.attribute,
        weight=item.weight,
        score=score,
        valid=True,
        attempts=attempts,
        rationale=rationale,
    )


def invalid(criterion: RubricCriterion, item: PreferenceItem, *, attempts: int, error: str) -> AttributeJudgement:
    """A judgement with no score: left out of PrefAlign, counted in ``judge_invalid``."""
    return AttributeJudgement(
        attribute=criterion.attribute, weight=item.weight, score=None, valid=False, attempts=attempts, error=error
    )


async def judge_criterion(
    grader: Model,
    problem: Problem,
    response: str,
    criterion: RubricCriterion,
    item: PreferenceItem,
    *,
    logprobs: bool = False,
    retries: int = JUDGE_RETRIES,
    cache: CachePolicy | bool = False,
) -> AttributeJudgement:
    try:
        result = await generate_structured(
            grader,
            judge_prompt(problem, response, criterion, item),
            CriterionScore,
            config=grader_config(grader, JUDGE_MAX_TOKENS, logprobs=logprobs),
            retries=retries,
            name="criterion_score",
            strict=True,
            cache=cache,
        )
    except StructuredOutputError as err:
        return invalid(criterion, item, attempts=err.attempts, error=f"invalid judge reply: {'; '.join(err.errors)}")
    weighted = logprob_weighted_score(result.output) if logprobs else None
    return scored(criterion, item, result.value.score, weighted, logprobs=logprobs, attempts=result.attempts)


async def judge_all(
    grader: Model,
    problem: Problem,
    response: str,
    rubric: list[RubricCriterion],
    items: dict[str, PreferenceItem],
    *,
    logprobs: bool = False,
    cache: CachePolicy | bool = False,
    order_key: tuple[str, str] | None = None,
    max_criteria: int | None = None,
) -> list[AttributeJudgement]:
    """Per-criterion judging: every criterion concurrently, results in rubric order (one criterion a call: no
    order to shuffle, nothing to split; ``order_key`` and ``max_criteria`` are the structured judge's)."""
    return list(
        await asyncio.gather(
            *(
                judge_criterion(grader, problem, response, c, items[c.attribute], logprobs=logprobs, cache=cache)
                for c in rubric
            )
        )
    )
