"""Elicitation metrics: how much of the preference profile a dialogue drew out of the simulated user, and how.

For one dialogue with questions t = 1..n, A_t the profile attributes question t asked about and R_t those reply t
revealed, the five metrics (``elicited_weight``, ``elicited_count``, ``question_hit_rate``, ``volunteered_count``,
``first_hit_turn``), where A_t and R_t come from and when they are null are defined once, in docs/evaluation.md,
"Elicitation metrics". The targeted user (``dialogue/targeted.py``) records A_t = R_t itself: the attributes its
question was mapped to are exactly the ones its user model was shown, so its ``volunteered_count`` is 0 by
construction; every other user type takes them from the audit's per-turn flags (``audit.py``), when the audit ran
and is valid.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prefdisco.schema import DialogueTurn, PreferenceProfile
from prefdisco.scoring.audit import UserAudit

ELICITATION_KEYS: tuple[str, ...] = (
    "elicited_weight",
    "elicited_count",
    "question_hit_rate",
    "volunteered_count",
    "first_hit_turn",
)


@dataclass(frozen=True)
class Exchange:
    """One question and its reply, as profile attributes: what was asked about and what was revealed."""

    asked: frozenset[str]
    revealed: frozenset[str]


def recorded_exchanges(turns: Sequence[DialogueTurn]) -> list[Exchange] | None:
    """The exchanges a user that knows what it revealed recorded on its reply turns; None when any reply turn
    lacks the record (another user type)."""
    replies = [t for t in turns if t.kind == "reply"]
    if not replies or any(t.revealed is None for t in replies):
        return None
    return [Exchange(frozenset(t.revealed or ()), frozenset(t.revealed or ())) for t in replies]


def audited_exchanges(audit: UserAudit | None) -> list[Exchange] | None:
    """The exchanges the audit read; None without a valid audit."""
    if audit is None or not audit.audit_valid:
        return None
    return [
        Exchange(frozenset(asked), frozenset(revealed))
        for asked, revealed in zip(audit.asked_attributes, audit.revealed_attributes, strict=True)
    ]


def elicitation_metrics(profile: PreferenceProfile, exchanges: list[Exchange] | None) -> dict[str, Any]:
    """The five metrics of the module docstring over ``exchanges`` (None: not measured, every metric null)."""
    if exchanges is None:
        return dict.fromkeys(ELICITATION_KEYS)
    weights = {item.attribute: item.weight for item in profile.items}
    revealed = set().union(*(e.revealed for e in exchanges)) & weights.keys()
    volunteered = set().union(*(e.revealed - e.asked for e in exchanges)) & weights.keys()
    hits = [t for t, e in enumerate(exchanges, start=1) if e.asked & weights.keys()]
    return {
        "elicited_weight": math.fsum(weights[a] for a in sorted(revealed)),
        "elicited_count": len(revealed),
        "question_hit_rate": len(hits) / len(exchanges) if exchanges else None,
        "volunteered_count": len(volunteered),
        "first_hit_turn": hits[0] if hits else None,
    }


def dialogue_elicitation(
    profile: PreferenceProfile, turns: Sequence[DialogueTurn], audit: UserAudit | None, *, dialogue: bool
) -> dict[str, Any]:
    """The metrics of one sample: the user's own records first, else the audit; ``dialogue`` False (baseline,
    oracle) gives nulls, and a dialogue without questions elicited nothing."""
    if not dialogue:
        return elicitation_metrics(profile, None)
    if not any(t.kind == "question" for t in turns):
        return elicitation_metrics(profile, [])
    exchanges = recorded_exchanges(turns)
    return elicitation_metrics(profile, exchanges if exchanges is not None else audited_exchanges(audit))
