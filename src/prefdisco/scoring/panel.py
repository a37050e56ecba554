"""Judge panels and repeats: several judges, each scoring every criterion several times, combined per criterion.

A panel of J judges is the inspect model roles ``grader`` (the first judge, which also checks correctness and
audits the simulated user), ``grader_2`` … ``grader_J`` (``panel_roles``). With R repeats every judge scores
every criterion R times. Each (judge, repeat) is one *judging* with a call name of its own (``judging_name``):
``grader`` for the first judge's first repeat — exactly the cache scope and seed a single-judge run has always
used, so such runs keep their cache — and ``grader_2``, ``grader#2``, ``grader_2#2`` … for the others. The name is
the ``role`` scope of the judging's cache policy and the role string its seed is derived from
(``prefdisco.seeds.call_seed``), so every repeat is a real re-judgement with its own seed and its own cache
entries, and a rerun of a finished run replays all of them from the cache.

The panel score of a criterion (``combine``): the mean of each judge's repeat-mean, then the mean over the
judges, invalid judgements left out (a judge with no valid repeat is left out of the judges' mean); a criterion
no judgement of which is valid is an invalid panel judgement, so PrefAlign (``alignment.pref_align``) excludes
it exactly as it excludes an invalid single judgement. One judge with one repeat: the panel judgement is that
judgement itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from prefdisco.schema import AttributeJudgement
from prefdisco.scoring.quality import QualityVerdict

FIRST_ROLE = "grader"
"""The first judge's role: also the correctness grader and the audit."""


def panel_roles(judges: int) -> tuple[str, ...]:
    """The model roles of a panel of ``judges`` judges: ``grader``, ``grader_2``, ``grader_3``, …"""
    if judges < 1:
        raise ValueError(f"a judge panel needs at least one judge, got {judges}")
    return (FIRST_ROLE, *(f"{FIRST_ROLE}_{i}" for i in range(2, judges + 1)))


def judging_name(role: str, repeat: int) -> str:
    """The cache-scope role and seed role of ``role``'s ``repeat``-th judging (1-based): ``role`` itself for the
    first repeat, ``role#N`` for repeat N."""
    if repeat < 1:
        raise ValueError(f"repeats are 1-based, got {repeat}")
    return role if repeat == 1 else f"{role}#{repeat}"


@dataclass(frozen=True)
class Judging:
    """One judge's judgements of one response in one repeat."""

    judge: str
    """The judge's model name."""
    role: str
    repeat: int
    judgements: list[AttributeJudgement]
    quality: QualityVerdict | None = None
    """The response's general quality when this judging's call also asked it (the structured judge's first)."""

    def records(self) -> list[dict[str, Any]]:
        """The judgements as the score's metadata holds them: each with its judge, role and repeat."""
        return [
            {**j.model_dump(), "judge": self.judge, "judge_role": self.role, "repeat": self.repeat}
            for j in self.judgements
        ]


@dataclass(frozen=True)
class PanelVerdict:
    """Every judging of one response, in panel order (judge, then repeat)."""

    judgings: list[Judging]

    def combined(self) -> list[AttributeJudgement]:
        """One panel judgement per criterion in rubric order (see ``combine``)."""
        return combine(self.judgings)

    @property
    def quality(self) -> QualityVerdict | None:
        """The general quality a judging asked beside the rubric (the first judge's first); None: none did."""
        return next((j.quality for j in self.judgings if j.quality is not None), None)

    def n_invalid(self) -> int:
        """Invalid judgements over every judge and repeat (``judge_invalid``)."""
        return sum(not j.valid for judging in self.judgings for j in judging.judgements)

    def records(self) -> list[dict[str, Any]]:
        return [record for judging in self.judgings for record in judging.records()]


def combine(judgings: list[Judging]) -> list[AttributeJudgement]:
    """The panel judgement of each criterion: the mean over judges of each judge's mean over its valid repeats."""
    if not judgings:
        return []
    if len(judgings) == 1:
        return list(judgings[0].judgements)
    first = judgings[0].judgements
    out = []
    for k, criterion in enumerate(first):
        by_judge: dict[str, list[float]] = {}
        attempts = 0
        for judging in judgings:
            j = judging.judgements[k]
            if j.attribute != criterion.attribute:
                raise ValueError(f"judgings disagree on criterion {k}: {j.attribute!r} vs {criterion.attribute!r}")
            attempts += j.attempts
            scores = by_judge.setdefault(judging.role, [])  # roles are unique; two roles may share a model
            if j.valid and j.score is not None:
                scores.append(float(j.score))
        means = [math.fsum(s) / len(s) for s in by_judge.values() if s]
        n, score = len(judgings), (math.fsum(means) / len(means) if means else None)
        shown = f"panel mean {score:.3f} of {len(means)} judge(s) over {n} judgement(s)" if means else ""
        out.append(
            AttributeJudgement(
                attribute=criterion.attribute,
                weight=criterion.weight,
                score=score,
                valid=score is not None,
                attempts=attempts,
                rationale=shown,
                error=f"no valid judgement among {n} (judges x repeats)" if score is None else None,
            )
        )
    return out
