"""The rubric judge: one 1-5 score per rubric criterion.

Per-criterion judging (the paper's method): one call per criterion, run concurrently. The judge sees the
problem, the final response (protocol markers already stripped) and that one criterion (attribute, its
meaning, the preferred value, what to check, the five level anchors) — never the persona, never the other
attributes, never the weights.

The score is requested as JSON ``{"score": N}`` with a response schema whose ``enum`` is 1..5 (providers with
structured output — and the embedded model's grammar — then always return a parseable value). Parsing also
accepts a bare digit or ``score: N``. An unparseable reply is retried; after the last attempt the judgement
is recorded as invalid, with no score: it is excluded from PrefAlign, never counted as a number.

With ``logprobs=True`` and a provider that returns token log-probabilities, the score is the G-Eval
probability-weighted mean Σ k·p(k) / Σ p(k) over the score tokens 1..5 at the position where the score was
written; without usable log-probabilities the hard score is used and ``rationale`` says so.
"""

from __future__ import annotations

import asyncio
import json
import math
import re

from inspect_ai.model import CachePolicy, GenerateConfig, Logprob, Model, ModelOutput, ResponseSchema
from inspect_ai.util import JSONSchema

from prefdisco.prompts import render
from prefdisco.schema import SCORE_LEVELS, AttributeJudgement, PreferenceItem, Problem, RubricCriterion

JUDGE_RETRIES = 2
"""Extra attempts after an unparseable judge reply."""

SCORE_SCHEMA = ResponseSchema(
    name="criterion_score",
    description="The rubric level, 1 to 5, that best describes the response.",
    json_schema=JSONSchema(
        type="object",
        properties={"score": JSONSchema(type="integer", enum=list(SCORE_LEVELS))},
        required=["score"],
        additionalProperties=False,
    ),
    strict=True,
)

_SCORE_PATTERNS = (
    re.compile(r'"score"\s*:\s*"?([1-5])(?![0-9.])'),
    re.compile(r"\bscore\b\s*(?:is|=|:)?\s*\**([1-5])(?![0-9.])", re.IGNORECASE),
    re.compile(r"^\s*\**([1-5])\**\s*(?:/\s*5)?\s*\.?\s*$"),
)


def parse_score(text: str) -> int | None:
    """The 1-5 score in a judge reply, or None when there is no unambiguous one."""
    stripped = text.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    try:
        data = json.loads(stripped)
    except (json.JSONDecodeError, ValueError):
        data = None
    if isinstance(data, dict) and "score" in data:
        value = data["score"]
        if isinstance(value, bool):
            return None
        if isinstance(value, int | float) and float(value).is_integer() and int(value) in SCORE_LEVELS:
            return int(value)
        if isinstance(value, str) and value.strip() in {str(s) for s in SCORE_LEVELS}:
            return int(value.strip())
        return None
    if isinstance(data, int) and not isinstance(data, bool) and data in SCORE_LEVELS:
        return data
    for pattern in _SCORE_PATTERNS:
        found = {m.group(1) for m in pattern.finditer(stripped)}
        if len(found) == 1:
            return int(found.pop())
        if len(found) > 1:
            return None
    return None


SCORE_DIGITS = frozenset(str(s) for s in SCORE_LEVELS)


def score_digit(token: str) -> str | None:
    """The score digit a token spells (``"4"``, `` 4``, ``"4``), or None."""
    digit = token.strip().strip('"')
    return digit if digit in SCORE_DIGITS else None


def digit_expectation(entry: Logprob) -> float | None:
    """Σ k·p(k) / Σ p(k) over the score digits among a generated token and its top alternatives."""
    candidates: dict[str, float] = {}
    for token, logprob in [(entry.token, entry.logprob), *((t.token, t.logprob) for t in entry.top_logprobs or [])]:
        digit = score_digit(token)
        if digit is not None and digit not in candidates:
            candidates[digit] = logprob
    weights = {int(d): math.exp(lp) for d, lp in candidates.items()}
    total = sum(weights.values())
    return sum(k * w for k, w in weights.items()) / total if total > 0 else None


def logprob_weighted_score(output: ModelOutput) -> float | None:
    """G-Eval score from the first generated token that is a score digit, or None when unavailable."""
    choice = output.choices[0] if output.choices else None
    if choice is None or choice.logprobs is None:
        return None
    for entry in choice.logprobs.content:
        if score_digit(entry.token) is not None:
            return digit_expectation(entry)
    return None


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


def judge_config(model: Model, logprobs: bool) -> GenerateConfig:
    """Deterministic, short, schema-constrained — unless the grader role was given its own settings."""
    base = model.config
    return GenerateConfig(
        temperature=0.0 if base.temperature is None else None,
        max_tokens=16 if base.max_tokens is None else None,
        response_schema=SCORE_SCHEMA,
        logprobs=True if logprobs else None,
        top_logprobs=5 if logprobs else None,
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
    prompt = judge_prompt(problem, response, criterion, item)
    config = judge_config(grader, logprobs)
    replies: list[str] = []
    for attempt in range(1, retries + 2):
        # a retry must reach the model again, never replay the cached bad reply
        output = await grader.generate(prompt, config=config, cache=cache if attempt == 1 else False)
        hard = parse_score(output.completion)
        if hard is None:
            replies.append(output.completion[:200])
            continue
        score: float = hard
        rationale = f"hard score {hard}"
        if logprobs:
            weighted = logprob_weighted_score(output)
            if weighted is None:
                rationale = f"hard score {hard} (no log-probabilities returned)"
            else:
                score, rationale = weighted, f"probability-weighted {weighted:.3f} (hard score {hard})"
        return AttributeJudgement(
            attribute=criterion.attribute,
            weight=item.weight,
            score=score,
            valid=True,
            attempts=attempt,
            rationale=rationale,
        )
    return AttributeJudgement(
        attribute=criterion.attribute,
        weight=item.weight,
        score=None,
        valid=False,
        attempts=retries + 1,
        error="unparseable judge reply: " + " | ".join(repr(r) for r in replies),
    )


async def judge_all(
    grader: Model,
    problem: Problem,
    response: str,
    rubric: list[RubricCriterion],
    items: dict[str, PreferenceItem],
    *,
    logprobs: bool = False,
    cache: CachePolicy | bool = False,
) -> list[AttributeJudgement]:
    """Per-criterion judging: every criterion concurrently, results in rubric order."""
    return list(
        await asyncio.gather(
            *(
                judge_criterion(grader, problem, response, c, items[c.attribute], logprobs=logprobs, cache=cache)
                for c in rubric
            )
        )
    )
