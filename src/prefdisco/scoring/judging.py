"""The rubric judges, by name: every judge scores one response against a scenario's rubric.

* ``per_criterion`` — one grader call per criterion, concurrently (the paper's method; ``judge.py``);
* ``structured`` — one grader call scoring every criterion under a JSON schema (``judge_structured.py``).

A judge returns one ``AttributeJudgement`` per criterion in rubric order, invalid ones included (score None).
``order_key`` (scenario id, condition) and ``max_criteria`` are the structured judge's criterion order and split
(``criterion_order.py``); the per-criterion judge lists one criterion a call and ignores them.
A new judge is one function of the ``Judge`` shape and one line in ``JUDGES``. The structured judge's first call also
judges the response's general quality when the run judges it (``JOINT_QUALITY``; ``scorer.RubricJudging``).
"""

from __future__ import annotations

from typing import Protocol

from inspect_ai.model import CachePolicy, Model

from prefdisco.schema import AttributeJudgement, PreferenceItem, Problem, RubricCriterion
from prefdisco.scoring.judge import judge_all
from prefdisco.scoring.judge_structured import judge_structured


class Judge(Protocol):
    async def __call__(
        self,
        grader: Model,
        problem: Problem,
        response: str,
        rubric: list[RubricCriterion],
        items: dict[str, PreferenceItem],
        *,
        logprobs: bool = ...,
        cache: CachePolicy | bool = ...,
        order_key: tuple[str, str] | None = ...,
        max_criteria: int = ...,
    ) -> list[AttributeJudgement]: ...


JUDGES: dict[str, Judge] = {
    "per_criterion": judge_all,
    "structured": judge_structured,
}


JOINT_QUALITY: frozenset[str] = frozenset({"structured"})
"""The judges whose first call also judges the response's general quality (no quality call of its own)."""


JUDGE_TEMPLATES: dict[str, tuple[str, ...]] = {
    "per_criterion": ("judge_criterion",),
    "structured": ("judge_structured",),
}
"""The prompt templates each judge renders (a run records their hash)."""


def judge_named(name: str) -> Judge:
    if name not in JUDGES:
        raise ValueError(f"unknown judge {name!r}: expected one of {', '.join(JUDGES)}")
    return JUDGES[name]
