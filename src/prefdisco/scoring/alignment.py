"""PrefAlign and NormAlign arithmetic.

PrefAlign(response) = Σ_k w_k · g_k over the rubric criteria, where g_k is the judge's score on the 1-5 scale
and the profile weights w_k sum to 1, so PrefAlign is itself on the 1-5 scale.

An invalid judgement is excluded, never zeroed: the remaining weights are renormalized
(Σ_valid w_k g_k / Σ_valid w_k). With no valid judgement at all, PrefAlign is None.

NormAlign = 100 · (PrefAlign_discovery − PrefAlign_baseline) / (PrefAlign_oracle − PrefAlign_baseline),
computed over means; None when a term is missing or the denominator is 0.
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


def norm_align(baseline: float | None, discovery: float | None, oracle: float | None) -> tuple[float | None, str]:
    """Return (NormAlign, reason). The reason is empty when the value is defined."""
    if baseline is None or discovery is None or oracle is None:
        missing = [n for n, v in (("baseline", baseline), ("discovery", discovery), ("oracle", oracle)) if v is None]
        return None, f"no scored {'/'.join(missing)} results"
    denominator = oracle - baseline
    if math.isclose(denominator, 0.0, abs_tol=1e-12):
        return None, "oracle and baseline PrefAlign are equal (denominator 0)"
    return 100.0 * (discovery - baseline) / denominator, ""
