"""General quality: one task-independent judgement of a response, whatever the condition that produced it.

Personalization can buy preference alignment at the price of quality (the paper's own Figure 4: accuracy falls
from baseline to oracle and discovery). So every judged response of every condition is also scored, in one
grader call, on three criteria that do not depend on the person (``prompts/judge_quality.txt``), each 1-5:

* ``reasoning`` — the reasoning the response shows is correct and leads to its answer;
* ``completeness`` — it does everything the task asks;
* ``facts`` — it invents nothing (facts, figures, names, sources).

The judge sees the task and the response only: never the persona, the profile, the rubric or the gold answer
(correctness is measured on its own, by the benchmark's metric). The reply is the ``QualityScores`` JSON object,
asked through ``structured.generate_structured`` (an ``enum`` of 1..5 per key, every key required; an invalid
reply is re-asked ``JUDGE_RETRIES`` times, every attempt cached under the caller's policy). The response's
``quality`` is the mean of the three scores; a reply still invalid after the re-asks gives ``quality`` None ("not
measured": left out of every mean, never a 0) and the reason in ``error``.

The scorer calls it once per response on the first judge (role ``grader``, the trial's grader seed, cache role
``QUALITY_ROLE``); ``prefdisco eval --no-quality`` makes no such call (``quality`` None). With the structured judge
there is no call of its own: the three criteria ride in the first judge's first structured call (``joint_part``,
``judge_structured.py``), under their own keys beside the rubric's ``c1..cM``, and their scores are kept apart from
the rubric's (``quality_scores``, never a judgement of the profile) — one grader call fewer per response.
"""

from __future__ import annotations

from inspect_ai.model import CachePolicy, Model
from pydantic import BaseModel

from prefdisco.prompts import render
from prefdisco.schema import Problem
from prefdisco.scoring.grader_config import grader_config
from prefdisco.scoring.judge import JUDGE_MAX_TOKENS, JUDGE_RETRIES, TOKENS_PER_KEY, ScoreLevel
from prefdisco.structured import StructuredOutputError, generate_structured

QUALITY_TEMPLATE = "judge_quality"
CRITERIA_TEMPLATE = "quality_criteria"
"""The three criteria's text, in the quality judge's own prompt and in the structured judge's (``JOINT_TEMPLATES``)."""
JOINT_TEMPLATES: tuple[str, ...] = ("judge_structured_quality", CRITERIA_TEMPLATE)
"""The templates the structured judge's first call adds when it also judges the quality."""
QUALITY_ROLE = "quality"
"""The cache role of the quality call (its own cache entries, beside the rubric judge's ``grader``)."""


class QualityScores(BaseModel):
    """The quality judge's reply: one level per criterion."""

    reasoning: ScoreLevel
    completeness: ScoreLevel
    facts: ScoreLevel


QUALITY_CRITERIA: tuple[str, ...] = tuple(QualityScores.model_fields)


class QualityVerdict(BaseModel):
    """What the quality judge said of one response: its three scores (None when its reply stayed invalid), how
    many calls it took and why it was rejected (None when valid)."""

    scores: dict[str, int] | None
    attempts: int
    error: str | None = None

    @property
    def value(self) -> float | None:
        """``quality``: the mean of the three scores; None when not measured (never 0)."""
        if self.scores is None:
            return None
        return sum(self.scores[c] for c in QUALITY_CRITERIA) / len(QUALITY_CRITERIA)

    @classmethod
    def of(cls, levels: dict[str, int], attempts: int, reason: str) -> QualityVerdict:
        """The verdict of a reply's valid ``levels`` (by key; others ignored): all three, or not measured."""
        if all(c in levels for c in QUALITY_CRITERIA):
            return cls(scores={c: levels[c] for c in QUALITY_CRITERIA}, attempts=attempts)
        return cls(scores=None, attempts=attempts, error=f"no valid quality reply: {reason or 'a key missing'}")


def criteria_text() -> str:
    return render(CRITERIA_TEMPLATE).rstrip()


def joint_part() -> str:
    """The quality section of a structured judge's call: its criteria under the keys ``QUALITY_CRITERIA``."""
    return render(JOINT_TEMPLATES[0], criteria=criteria_text())


def quality_prompt(problem: Problem, response: str) -> str:
    return render(
        QUALITY_TEMPLATE,
        criteria=criteria_text(),
        problem=problem.prompt_text(),
        response=response if response.strip() else "(empty response)",
    )


async def judge_quality(
    grader: Model, problem: Problem, response: str, *, retries: int = JUDGE_RETRIES, cache: CachePolicy | bool = False
) -> QualityVerdict:
    """The quality of ``response`` to ``problem`` as ``grader`` judges it (one call, re-asked when invalid)."""
    try:
        result = await generate_structured(
            grader,
            quality_prompt(problem, response),
            QualityScores,
            config=grader_config(grader, JUDGE_MAX_TOKENS + TOKENS_PER_KEY * len(QUALITY_CRITERIA)),
            retries=retries,
            name="quality_scores",
            strict=True,
            cache=cache,
        )
    except StructuredOutputError as err:
        reason = "; ".join(err.errors)
        return QualityVerdict(scores=None, attempts=err.attempts, error=f"no valid quality reply: {reason}")
    return QualityVerdict(scores=result.value.model_dump(), attempts=result.attempts)
