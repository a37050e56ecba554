"""The structured judge: one call that scores every rubric criterion of a scenario at once.

The criteria are numbered ``c1..cN`` in rubric order and the reply is a JSON object ``{"c1": N, ..., "cN": N}``
whose schema makes every key required and every value an ``enum`` of 1..5. The judge sees the problem, the
final response and the scenario's rubric (the criteria being scored — still never the persona, the weights or
the justifications). A reply that does not give a valid score for every key is retried; keys still missing
after the last attempt become invalid judgements (no score), the others keep their scores.

With ``logprobs=True`` each score is the probability-weighted mean over the digit tokens 1..5 at the position
where that key's score was written (G-Eval), when the provider returns log-probabilities.
"""

from __future__ import annotations

import json
import re

from inspect_ai.model import CachePolicy, GenerateConfig, Model, ModelOutput, ResponseSchema
from inspect_ai.util import JSONSchema

from prefdisco.prompts import render
from prefdisco.schema import SCORE_LEVELS, AttributeJudgement, PreferenceItem, Problem, RubricCriterion
from prefdisco.scoring.judge import JUDGE_RETRIES, SCORE_DIGITS, digit_expectation, score_digit


def criterion_keys(rubric: list[RubricCriterion]) -> list[str]:
    return [f"c{i}" for i in range(1, len(rubric) + 1)]


def structured_schema(keys: list[str]) -> ResponseSchema:
    score = JSONSchema(type="integer", enum=list(SCORE_LEVELS))
    return ResponseSchema(
        name="rubric_scores",
        description="One rubric level (1-5) per criterion key.",
        json_schema=JSONSchema(
            type="object", properties={k: score for k in keys}, required=keys, additionalProperties=False
        ),
        strict=True,
    )


def structured_prompt(
    problem: Problem, response: str, rubric: list[RubricCriterion], items: dict[str, PreferenceItem]
) -> str:
    blocks = []
    for key, criterion in zip(criterion_keys(rubric), rubric, strict=True):
        meaning = items[criterion.attribute].description or "(see the criterion)"
        levels = "\n".join(f"  {level}: {text}" for level, text in criterion.levels.items())
        blocks.append(
            f"Criterion {key} — {criterion.attribute}\n"
            f"What it means: {meaning}\n"
            f"The person's preferred value: {criterion.preferred_value}\n"
            f"What to check: {criterion.description}\n"
            f"Score levels:\n{levels}"
        )
    keys = ", ".join(f'"{k}": N' for k in criterion_keys(rubric))
    return render(
        "judge_structured",
        problem=problem.prompt_text(),
        criteria="\n\n".join(blocks),
        response=response if response.strip() else "(empty response)",
        keys=keys,
    )


def parse_scores(text: str, keys: list[str]) -> dict[str, int]:
    """The valid scores in a reply (a key with a missing or out-of-range value is left out)."""
    stripped = text.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    start, end = stripped.find("{"), stripped.rfind("}")
    try:
        data = json.loads(stripped[start : end + 1]) if start >= 0 and end > start else None
    except (json.JSONDecodeError, ValueError):
        data = None
    if not isinstance(data, dict):
        return {}
    scores = {}
    for key in keys:
        value = data.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float) and float(value).is_integer() and int(value) in SCORE_LEVELS:
            scores[key] = int(value)
        elif isinstance(value, str) and value.strip() in SCORE_DIGITS:
            scores[key] = int(value.strip())
    return scores


def weighted_scores(output: ModelOutput, keys: list[str]) -> dict[str, float]:
    """G-Eval score per key from the digit token that follows ``"key":``."""
    choice = output.choices[0] if output.choices else None
    if choice is None or choice.logprobs is None:
        return {}
    pattern = re.compile(r'"(c\d+)"\s*:\s*"?$')
    text = ""
    result: dict[str, float] = {}
    for entry in choice.logprobs.content:
        match = pattern.search(text)
        if score_digit(entry.token) and match and match.group(1) in keys and match.group(1) not in result:
            expected = digit_expectation(entry)
            if expected is not None:
                result[match.group(1)] = expected
        text += entry.token
    return result


async def judge_structured(
    grader: Model,
    problem: Problem,
    response: str,
    rubric: list[RubricCriterion],
    items: dict[str, PreferenceItem],
    *,
    logprobs: bool = False,
    retries: int = JUDGE_RETRIES,
    cache: CachePolicy | bool = False,
) -> list[AttributeJudgement]:
    keys = criterion_keys(rubric)
    prompt = structured_prompt(problem, response, rubric, items)
    base = grader.config
    config = GenerateConfig(
        temperature=0.0 if base.temperature is None else None,
        max_tokens=16 + 10 * len(keys) if base.max_tokens is None else None,
        response_schema=structured_schema(keys),
        logprobs=True if logprobs else None,
        top_logprobs=5 if logprobs else None,
    )
    best: dict[str, int] = {}
    weighted: dict[str, float] = {}
    attempts = 0
    bad_replies: list[str] = []
    for attempt in range(1, retries + 2):
        attempts = attempt
        output = await grader.generate(prompt, config=config, cache=cache if attempt == 1 else False)
        scores = parse_scores(output.completion, keys)
        if len(scores) > len(best):
            best = scores
            weighted = weighted_scores(output, keys) if logprobs else {}
        if len(best) == len(keys):
            break
        bad_replies.append(output.completion[:200])
    judgements = []
    for key, criterion in zip(keys, rubric, strict=True):
        weight = items[criterion.attribute].weight
        if key in best:
            score: float = weighted.get(key, best[key])
            rationale = (
                f"probability-weighted {score:.3f} (hard score {best[key]})"
                if key in weighted
                else f"hard score {best[key]}"
            )
            judgements.append(
                AttributeJudgement(
                    attribute=criterion.attribute,
                    weight=weight,
                    score=score,
                    valid=True,
                    attempts=attempts,
                    rationale=rationale,
                )
            )
        else:
            judgements.append(
                AttributeJudgement(
                    attribute=criterion.attribute,
                    weight=weight,
                    score=None,
                    valid=False,
                    attempts=attempts,
                    error=f"no valid score for {key} after {attempts} attempt(s): "
                    + " | ".join(repr(r) for r in bad_replies),
                )
            )
    return judgements
