"""SimpleQA's grading: a grader model labels a free-text response CORRECT, INCORRECT or NOT_ATTEMPTED.

The grade is asked for as the ``SimpleQAGrade`` JSON object through ``structured.generate_structured``: the
schema (an enum of the three grades) is sent, an invalid reply is re-asked with the bad reply and a one-line
reason (``GRADER_RETRIES`` times), and every attempt is cached under the caller's policy. A reply still invalid
after the retries gives ``correct=None`` (not judged), never a grade. Errors raised by the model call itself
propagate (inspect already retries transient ones).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from inspect_ai.model import CachePolicy, Model
from pydantic import BaseModel, BeforeValidator, ConfigDict

from prefdisco.prompts import render
from prefdisco.scoring.correctness.result import CorrectnessResult
from prefdisco.scoring.grader_config import grader_config
from prefdisco.structured import StructuredOutputError, generate_structured

METHOD_GRADER = "simpleqa_grader"

GRADER_RETRIES = 2
"""Re-asks after an invalid grader reply (three calls at most)."""
GRADER_MAX_TOKENS = 256


def _grade_word(value: object) -> object:
    """``"not attempted"``, ``"Not-Attempted"`` and ``"correct"`` name grades too."""
    if isinstance(value, str):
        word = re.sub(r"[\s-]+", "_", value.strip().upper())
        return "NOT_ATTEMPTED" if word == "NOTATTEMPTED" else word
    return value


class SimpleQAGrade(BaseModel):
    """The grader's reply."""

    model_config = ConfigDict(extra="forbid")

    grade: Annotated[Literal["CORRECT", "INCORRECT", "NOT_ATTEMPTED"], BeforeValidator(_grade_word)]


async def grade_simpleqa(
    question: str, gold: str, response: str, grader: Model, *, cache: CachePolicy | bool = False
) -> CorrectnessResult:
    """Grade ``response`` against ``gold`` with ``grader`` (every attempt cached under ``cache``)."""
    prompt = render("simpleqa_grader", question=question, target=gold, response=response)
    try:
        result = await generate_structured(
            grader,
            prompt,
            SimpleQAGrade,
            config=grader_config(grader, GRADER_MAX_TOKENS),
            retries=GRADER_RETRIES,
            name="simpleqa_grade",
            strict=True,
            cache=cache,
        )
    except StructuredOutputError as err:
        return CorrectnessResult(
            correct=None,
            extracted=None,
            method=METHOD_GRADER,
            grade=None,
            detail=f"grader output unparseable after {err.attempts} attempt(s): {err.reason}",
        )
    grade = result.value.grade
    return CorrectnessResult(
        correct=grade == "CORRECT",
        extracted=None,
        method=METHOD_GRADER,
        grade=grade,
        detail=f"grader attempt {result.attempts}",
    )
