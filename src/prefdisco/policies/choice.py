"""The choice math of the elicitation policies: pure functions of a fitted prior and the answers so far.

``asked`` maps each attribute asked about, in asking order, to whether the person has it (True: it is in their
profile). Attributes the family's prior never saw carry no statistics and do not change any belief.

**Beliefs.** Before any answer, P(b) is the prior. One answer about ``a`` gives, from the pairwise statistics,

    P(b | a present) = P(a, b) / P(a),        P(b | a absent) = (P(b) − P(a, b)) / (1 − P(a)),

each clipped to [0, 1] (a hand-edited prior may be inconsistent). With several answers the pairwise statistics
cannot give the joint conditional, so the answers are applied in turn, each multiplying b's odds by the factor
by which that answer alone changes them:

    odds(b | x₁ … xₙ) = odds(b) · Πᵢ odds(b | xᵢ) / odds(b)

which is exact when the answers are independent given b and given not-b (naive Bayes); with one answer it is
the formula above. A conditional of exactly 0 or 1 settles b; once settled, later answers do not move it (the
first such answer in asking order wins). Nothing depends on the order of answers otherwise.

**Information gain (PEP's policy).** The uncertainty left is the sum, over the unasked attributes, of the binary
entropy (bits) of their presence. Asking ``a`` removes a's own term and changes the others': its expected
reduction is ``H(now) − [q(a) · H(after a present) + (1 − q(a)) · H(after a absent)]``, with q(a) the current
belief in a. ``infogain_next`` asks the unasked attribute with the largest reduction (ties, within 1e-12, by
name); ``checklist`` asks the K most likely attributes (ties by name), whatever the answers.

**Inferred profile.** The attributes believed present: those answered present, and the unasked ones with
belief ≥ 0.5, each with its most frequent value in the prior (None for one the prior never saw).
``precision_recall_at_k`` scores it against the true profile's attributes (PEP's P@K and R@K after K
questions).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from prefdisco.errors import UserError
from prefdisco.policies.model import FamilyPrior, Policy

TIE_TOLERANCE = 1e-12
PRESENT_THRESHOLD = 0.5


def binary_entropy(p: float) -> float:
    """H(p) in bits; 0 at p = 0 and p = 1."""
    if p <= 0 or p >= 1:
        return 0.0
    return -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


def _clip(p: float) -> float:
    return min(1.0, max(0.0, p))


def conditional(prior: FamilyPrior, b: str, a: str, present: bool) -> float:
    """P(b | a present) or P(b | a absent) from the pairwise statistics, clipped to [0, 1]. An answer that
    carries no information (P(a) = 0 for present, P(a) = 1 for absent) leaves P(b)."""
    pa, pb, pab = prior.p(a), prior.p(b), prior.joint(a, b)
    if present:
        return _clip(pab / pa) if pa > 0 else pb
    return _clip((pb - pab) / (1 - pa)) if pa < 1 else pb


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


def _apply(q: float, p0: float, c: float) -> float:
    """Move the belief ``q`` by the odds factor odds(c) / odds(p0) (see the module docstring)."""
    if q <= 0 or q >= 1:  # settled (this also covers a prior of 0 or 1)
        return q
    if c <= 0 or c >= 1:
        return c
    x = _logit(q) + _logit(c) - _logit(p0)
    return 1 / (1 + math.exp(-x))


def beliefs(prior: FamilyPrior, asked: Mapping[str, bool]) -> dict[str, float]:
    """The belief that each unasked attribute of the family is present, given the answers in ``asked``."""
    known = [(a, present) for a, present in asked.items() if a in prior.attributes]
    out: dict[str, float] = {}
    for b in prior.attributes:
        if b in asked:
            continue
        p0 = prior.p(b)
        q = p0
        for a, present in known:
            q = _apply(q, p0, conditional(prior, b, a, present))
        out[b] = q
    return out


def total_entropy(prior: FamilyPrior, asked: Mapping[str, bool]) -> float:
    """The summed binary entropy (bits) of the unasked attributes' presence."""
    return sum(binary_entropy(q) for q in beliefs(prior, asked).values())


def expected_reduction(prior: FamilyPrior, asked: Mapping[str, bool], candidate: str) -> float:
    """How much asking ``candidate`` is expected to reduce :func:`total_entropy`."""
    q = beliefs(prior, asked)[candidate]
    after = 0.0
    for present, chance in ((True, q), (False, 1 - q)):
        if chance > 0:
            after += chance * total_entropy(prior, {**asked, candidate: present})
    return total_entropy(prior, asked) - after


def checklist(policy: Policy, family: str, k: int) -> list[str]:
    """The ``k`` most likely attributes of ``family`` (ties by name)."""
    if k < 0:
        raise UserError(f"checklist: K must be >= 0, got {k}")
    prior = policy.family(family)
    ranked = sorted(prior.attributes, key=lambda a: (-prior.p(a), a))
    return ranked[:k]


def infogain_next(policy: Policy, family: str, asked: Mapping[str, bool]) -> str | None:
    """The unasked attribute whose answer is expected to reduce the uncertainty most; None when all are asked."""
    prior = policy.family(family)
    gains = {a: expected_reduction(prior, asked, a) for a in sorted(prior.attributes) if a not in asked}
    if not gains:
        return None
    best = max(gains.values())
    return min(a for a, gain in gains.items() if gain >= best - TIE_TOLERANCE)


@dataclass(frozen=True)
class InferredAttribute:
    attribute: str
    value: str | None
    probability: float


def inferred_profile(policy: Policy, family: str, asked: Mapping[str, bool]) -> list[InferredAttribute]:
    """The attributes believed present, most probable first (ties by name)."""
    prior = policy.family(family)
    found = [InferredAttribute(a, prior.most_frequent_value(a), 1.0) for a, present in asked.items() if present]
    found += [
        InferredAttribute(a, prior.most_frequent_value(a), q)
        for a, q in beliefs(prior, asked).items()
        if q >= PRESENT_THRESHOLD
    ]
    return sorted(found, key=lambda i: (-i.probability, i.attribute))


class PrecisionRecall(NamedTuple):
    precision: float
    recall: float


def precision_recall_at_k(
    inferred: Iterable[str | InferredAttribute], true_attributes: Iterable[str]
) -> PrecisionRecall:
    """P@K = |inferred ∩ true| / |inferred| (0 when nothing is inferred), R@K = |inferred ∩ true| / |true|."""
    guessed = {i.attribute if isinstance(i, InferredAttribute) else i for i in inferred}
    truth = set(true_attributes)
    if not truth:
        raise ValueError("precision_recall_at_k: the true profile has no attributes")
    hits = len(guessed & truth)
    return PrecisionRecall(precision=hits / len(guessed) if guessed else 0.0, recall=hits / len(truth))
