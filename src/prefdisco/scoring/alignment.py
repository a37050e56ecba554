"""PrefAlign: one response's alignment with one profile.

PrefAlign(response) = Σ_k w_k · g_k over the rubric criteria, where g_k is the judge's score on the 1-5 scale
and the profile weights w_k sum to 1, so PrefAlign is itself on the 1-5 scale.

An invalid judgement is excluded, never zeroed: the remaining weights are renormalized
(Σ_valid w_k g_k / Σ_valid w_k). How much of the profile that leaves is the response's *coverage*,
Σ_valid w_k / Σ_k w_k (``coverage``). A response whose valid criteria cover less than half of its profile's weight
(``MIN_COVERAGE``) is unscored — PrefAlign None, reason ``COVERAGE_REASON`` — never a full 1-5 score read off one
light criterion; with no valid judgement at all the coverage is 0, so the same rule applies.

NormAlign, which compares the conditions' means, is the analysis stage's (``analysis/stats/normalign.py``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from prefdisco.schema import AttributeJudgement

MIN_COVERAGE = 0.5
"""The least share of the profile's weight the valid criteria must cover for a response to be scored."""
COVERAGE_TOLERANCE = 1e-9
"""Float noise in a sum of weights (0.3 + 0.2) never makes a half-covered response unscored."""
COVERAGE_REASON = "judge coverage"
"""Why a judged response has no PrefAlign: its valid criteria cover less than ``MIN_COVERAGE`` of the weight."""


def coverage(judgements: Iterable[AttributeJudgement]) -> float | None:
    """The share of the profile's weight whose criteria were judged validly; None without any weight."""
    items = list(judgements)
    total = math.fsum(j.weight for j in items)
    if not items or total <= 0:
        return None
    return math.fsum(j.weight for j in items if j.valid and j.score is not None) / total


def covered(share: float | None) -> bool:
    """Whether a coverage ``share`` is enough for a PrefAlign (at least ``MIN_COVERAGE``)."""
    return share is not None and share + COVERAGE_TOLERANCE >= MIN_COVERAGE


def pref_align(judgements: Iterable[AttributeJudgement]) -> float | None:
    items = list(judgements)
    if not covered(coverage(items)):
        return None
    valid = [j for j in items if j.valid and j.score is not None]
    return math.fsum(j.weight * j.score for j in valid) / math.fsum(j.weight for j in valid)  # type: ignore[operator]
