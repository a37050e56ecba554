"""PrefAlign: one response's alignment with one profile.

PrefAlign(response) = Σ_k w_k · g_k over the rubric criteria, where g_k is the judge's score on the 1-5 scale
and the profile weights w_k sum to 1, so PrefAlign is itself on the 1-5 scale.

An invalid judgement is excluded, never zeroed: the remaining weights are renormalized
(Σ_valid w_k g_k / Σ_valid w_k). With no valid judgement at all, PrefAlign is None.

NormAlign, which compares the conditions' means, is the analysis stage's (``analysis/normalign.py``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from prefdisco.schema import AttributeJudgement


def pref_align(judgements: Iterable[AttributeJudgement]) -> float | None:
    valid = [j for j in judgements if j.valid and j.score is not None]
    total_weight = math.fsum(j.weight for j in valid)
    if not valid or total_weight <= 0:
        return None
    return math.fsum(j.weight * j.score for j in valid) / total_weight  # type: ignore[operator]
