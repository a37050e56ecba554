"""The structured judge: one call that scores every rubric criterion of a scenario at once.

The criteria are numbered ``c1..cN`` in rubric order and the reply is a JSON object ``{"c1": N, ..., "cN": N}``,
a pydantic model built per rubric size (``rubric_scores_model``) with every key required and every value a
``ScoreLevel`` (an ``enum`` of 1..5). The judge sees the problem, the final response and the scenario's rubric
(the criteria being scored — still never the persona, the weights or the justifications). The call goes through
``structured.generate_structured``: a reply missing a key or giving an invalid level is re-asked with the bad
reply and a one-line reason, every attempt cached under the caller's policy. When no attempt is valid, the
rejected attempt with the most valid scores keeps them (the earliest on a tie); the other criteria become
invalid judgements (no score, with the reason).

With ``logprobs=True`` each score is the probability-weighted mean over the digit tokens 1..5 at the position
where that key's score was written (G-Eval, ``geval.weighted_scores``), when the provider returns
log-probabilities.
"""

from __future__ import annotations

from contextlib import suppress
from functools import cache as memoize

from inspect_ai.model import CachePolicy, Model, ModelOutput
from pydantic import BaseModel, TypeAdapter, ValidationError, create_model

from prefdisco.prompts import render
from prefdisco.schema import AttributeJudgement, PreferenceItem, Problem, RubricCriterion
from prefdisco.scoring.geval import weighted_scores
from prefdisco.scoring.grader_config import grader_config
from prefdisco.scoring.judge import JUDGE_MAX_TOKENS, JUDGE_RETRIES, ScoreLevel, invalid, scored
from prefdisco.structured import StructuredOutputError, extract_json, generate_structured

TOKENS_PER_KEY = 10
_LEVEL: TypeAdapter[int] = TypeAdapter(ScoreLevel)


def criterion_keys(rubric: list[RubricCriterion]) -> list[str]:
    return [f"c{i}" for i in range(1, len(rubric) + 1)]


@memoize
def rubric_scores_model(n_criteria: int) -> type[BaseModel]:
    """``{"c1": ScoreLevel, ..., "cN": ScoreLevel}``, every key required."""
    fields: dict[str, object] = {f"c{i}": (ScoreLevel, ...) for i in range(1, n_criteria + 1)}
    return create_model("RubricScores", **fields)  # type: ignore[call-overload]


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


def valid_levels(output: ModelOutput, keys: list[str]) -> dict[str, int]:
    """The keys of a rejected reply that do hold a valid level (each validated as a ``ScoreLevel``)."""
    try:
        data = extract_json(output.completion)
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    found = {}
    for key in keys:
        if key in data:
            with suppress(ValidationError):
                found[key] = _LEVEL.validate_python(data[key])
    return found


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
    try:
        result = await generate_structured(
            grader,
            structured_prompt(problem, response, rubric, items),
            rubric_scores_model(len(keys)),
            config=grader_config(grader, JUDGE_MAX_TOKENS + TOKENS_PER_KEY * len(keys), logprobs=logprobs),
            retries=retries,
            name="rubric_scores",
            strict=True,
            cache=cache,
        )
    except StructuredOutputError as err:
        attempts, reason = err.attempts, "; ".join(err.errors)
        partial = [(valid_levels(output, keys), output) for output in err.outputs]
        best, output = max(partial, key=lambda p: len(p[0]), default=({}, None))  # max keeps the earliest tie
    else:
        attempts, reason = result.attempts, ""
        best, output = result.value.model_dump(), result.output
    weighted = weighted_scores(output, keys) if logprobs and output is not None else {}
    judgements = []
    for key, criterion in zip(keys, rubric, strict=True):
        item = items[criterion.attribute]
        if key in best:
            judgements.append(
                scored(criterion, item, best[key], weighted.get(key), logprobs=logprobs, attempts=attempts)
            )
        else:
            error = f"no valid score for {key} after {attempts} attempt(s): {reason}"
            judgements.append(invalid(criterion, item, attempts=attempts, error=error))
    return judgements
