"""The structured judge: one call that scores every rubric criterion of a scenario at once (or a few, for a long
rubric).

The criteria are listed in a shuffled order and split over calls of at most ``max_criteria`` criteria each
(``criterion_order.py``: seeded, recorded in each judgement's ``judge_call`` and ``judge_position``). In each call
the criteria are numbered ``c1..cM`` in the order listed and the reply is a JSON object ``{"c1": N, ..., "cM": N}``,
a pydantic model built per call size (``rubric_scores_model``) with every key required and every value a
``ScoreLevel`` (an ``enum`` of 1..5). The judge sees the problem, the final response and the scenario's rubric
(the criteria the call scores — still never the persona, the weights or the justifications). The call goes through
``structured.generate_structured``: a reply missing a key or giving an invalid level is re-asked with the bad
reply and a one-line reason, every attempt cached under the caller's policy. When no attempt is valid, the
rejected attempt with the most valid scores keeps them (the earliest on a tie); the other criteria become
invalid judgements (no score, with the reason).

With ``quality=True`` (the first judge's judging, unless ``--no-quality``) the first call also scores the response's
general quality (``quality.py``) under the keys ``reasoning``, ``completeness`` and ``facts``, after the rubric's and
apart from them: one call gives both, and the quality scores are returned beside the judgements
(``Judged``), never among them. A call without them renders exactly the prompt it always had.

With ``logprobs=True`` each score is the probability-weighted mean over the digit tokens 1..5 at the position
where that key's score was written (G-Eval, ``geval.weighted_scores``), when the provider returns
log-probabilities.
"""

from __future__ import annotations

import asyncio
from contextlib import suppress
from dataclasses import dataclass
from functools import cache as memoize

from inspect_ai.model import CachePolicy, Model, ModelOutput
from pydantic import BaseModel, TypeAdapter, ValidationError, create_model

from prefdisco.prompts import render
from prefdisco.schema import AttributeJudgement, PreferenceItem, Problem, RubricCriterion
from prefdisco.scoring.criterion_order import DEFAULT_MAX_CRITERIA, CriterionCall, criterion_calls, order_seed
from prefdisco.scoring.geval import weighted_scores
from prefdisco.scoring.grader_config import grader_config
from prefdisco.scoring.judge import JUDGE_MAX_TOKENS, JUDGE_RETRIES, TOKENS_PER_KEY, ScoreLevel, invalid, scored
from prefdisco.scoring.quality import QUALITY_CRITERIA, QualityVerdict, joint_part
from prefdisco.structured import StructuredOutputError, extract_json, generate_structured

_LEVEL: TypeAdapter[int] = TypeAdapter(ScoreLevel)


def criterion_keys(rubric: list[RubricCriterion]) -> list[str]:
    return [f"c{i}" for i in range(1, len(rubric) + 1)]


@memoize
def rubric_scores_model(n_criteria: int, quality: bool = False) -> type[BaseModel]:
    """``{"c1": ScoreLevel, ..., "cN": ScoreLevel}`` (then ``reasoning``, ``completeness``, ``facts`` with
    ``quality``), every key required."""
    keys = [f"c{i}" for i in range(1, n_criteria + 1)] + (list(QUALITY_CRITERIA) if quality else [])
    fields: dict[str, object] = {key: (ScoreLevel, ...) for key in keys}
    return create_model("RubricScores", **fields)  # type: ignore[call-overload]


@dataclass(frozen=True)
class Judged:
    """A judging of one response: one judgement per criterion in rubric order, and the response's general quality
    when its call also asked it (None otherwise)."""

    judgements: list[AttributeJudgement]
    quality: QualityVerdict | None = None


def structured_prompt(
    problem: Problem,
    response: str,
    rubric: list[RubricCriterion],
    items: dict[str, PreferenceItem],
    quality: bool = False,
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
    keys = ", ".join(f'"{k}": N' for k in criterion_keys(rubric) + (list(QUALITY_CRITERIA) if quality else []))
    return render(
        "judge_structured",
        problem=problem.prompt_text(),
        criteria="\n\n".join(blocks),
        quality=joint_part() if quality else "",
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
    order_key: tuple[str, str] | None = None,
    max_criteria: int = DEFAULT_MAX_CRITERIA,
) -> list[AttributeJudgement]:
    """Every criterion of ``rubric`` scored in ``ceil(k / max_criteria)`` concurrent calls, each listing its part
    of the rubric in a shuffled order (``criterion_order.py``) drawn from ``grader``'s seed and ``order_key``
    (scenario id, condition; None: the rubric's order); judgements in rubric order, each with its call and
    position."""
    judged = await judge_structured_quality(
        grader,
        problem,
        response,
        rubric,
        items,
        logprobs=logprobs,
        retries=retries,
        cache=cache,
        order_key=order_key,
        max_criteria=max_criteria,
        quality=False,
    )
    return judged.judgements


async def judge_structured_quality(
    grader: Model,
    problem: Problem,
    response: str,
    rubric: list[RubricCriterion],
    items: dict[str, PreferenceItem],
    *,
    logprobs: bool = False,
    retries: int = JUDGE_RETRIES,
    cache: CachePolicy | bool = False,
    order_key: tuple[str, str] | None = None,
    max_criteria: int = DEFAULT_MAX_CRITERIA,
    quality: bool = True,
) -> Judged:
    """``judge_structured``, its first call also judging the response's general quality when ``quality``."""
    seed = None if order_key is None else order_seed(grader.config.seed, *order_key)
    calls = criterion_calls(len(rubric), max_criteria, seed)
    parts = await asyncio.gather(
        *(
            judge_call(
                grader,
                problem,
                response,
                rubric,
                items,
                call,
                logprobs=logprobs,
                retries=retries,
                cache=cache,
                quality=quality and call.number == 1,
            )
            for call in calls
        )
    )
    found = {index: judgement for part in parts for index, judgement in part.judged}
    judged = next((part.quality for part in parts if part.quality is not None), None)
    return Judged([found[index] for index in range(len(rubric))], judged)


@dataclass(frozen=True)
class CallResult:
    """One structured call's judgements, as (rubric index, judgement), and its quality verdict when it asked one."""

    judged: list[tuple[int, AttributeJudgement]]
    quality: QualityVerdict | None = None


async def judge_call(
    grader: Model,
    problem: Problem,
    response: str,
    rubric: list[RubricCriterion],
    items: dict[str, PreferenceItem],
    call: CriterionCall,
    *,
    logprobs: bool = False,
    retries: int = JUDGE_RETRIES,
    cache: CachePolicy | bool = False,
    quality: bool = False,
) -> CallResult:
    """One call: the criteria ``call`` lists, keyed ``c1..cM`` in the order listed (and the quality's three keys
    after them when ``quality``)."""
    listed = [rubric[i] for i in call.criteria]
    keys = criterion_keys(listed)
    asked = keys + (list(QUALITY_CRITERIA) if quality else [])
    try:
        result = await generate_structured(
            grader,
            structured_prompt(problem, response, listed, items, quality),
            rubric_scores_model(len(keys), quality),
            config=grader_config(grader, JUDGE_MAX_TOKENS + TOKENS_PER_KEY * len(asked), logprobs=logprobs),
            retries=retries,
            name="rubric_scores",
            strict=True,
            cache=cache,
        )
    except StructuredOutputError as err:
        attempts, reason = err.attempts, "; ".join(err.errors)
        partial = [(valid_levels(output, asked), output) for output in err.outputs]
        best, output = max(partial, key=lambda p: len(p[0]), default=({}, None))  # max keeps the earliest tie
    else:
        attempts, reason = result.attempts, ""
        best, output = result.value.model_dump(), result.output
    weighted = weighted_scores(output, keys) if logprobs and output is not None else {}
    judgements = []
    for position, (key, index) in enumerate(zip(keys, call.criteria, strict=True), start=1):
        criterion = rubric[index]
        item = items[criterion.attribute]
        if key in best:
            judgement = scored(criterion, item, best[key], weighted.get(key), logprobs=logprobs, attempts=attempts)
        else:
            error = f"no valid score for {key} after {attempts} attempt(s): {reason}"
            judgement = invalid(criterion, item, attempts=attempts, error=error)
        placed = judgement.model_copy(update={"judge_call": call.number, "judge_position": position})
        judgements.append((index, placed))
    return CallResult(judgements, QualityVerdict.of(best, attempts, reason) if quality else None)
