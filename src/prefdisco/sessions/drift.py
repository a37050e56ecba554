"""Drift (``prefdisco sessions --drift F``, PAHF's persona shift): from the middle of a session on, some of the
person's preferences change, with no model call.

The rule for one session of K positions — where the drift starts (``drift_from``), which recurring attributes are
chosen and in what seeded order, a drifting attribute's new value, the derived scenario with the donor's criterion,
its id (``derive_id``) and the labels after it — is given once, step by step, in docs/sessions.md, "Drift".
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from prefdisco.prompts import render
from prefdisco.schema import Scenario
from prefdisco.sessions.keys import problem_of, rank
from prefdisco.sessions.model import derive_id

DRIFT_PROVENANCE = "session_drift"
"""The provenance key of a derived scenario: the original's id, the session, and each change with its donor."""


def drift_start(length: int) -> int:
    """The first position (1-based) that may drift in a session of ``length`` positions."""
    return length // 2 + 1


class ValueIndex:
    """The benchmark's scenarios by attribute name and value: where a drifted value and its criterion come from."""

    def __init__(self, scenarios: Iterable[Scenario]) -> None:
        self._by: dict[str, dict[str, list[Scenario]]] = defaultdict(lambda: defaultdict(list))
        for s in scenarios:
            for item in s.profile.items:
                self._by[item.attribute][item.value].append(s)

    def other_values(self, attribute: str, value: str) -> list[str]:
        return sorted(v for v in self._by.get(attribute, {}) if v != value)

    def holding(self, attribute: str, value: str) -> list[Scenario]:
        return list(self._by.get(attribute, {}).get(value, []))


@dataclass
class DriftOutcome:
    scenarios: list[Scenario]
    """The session's chain with the drifted positions replaced by their derived scenarios."""
    derived: list[Scenario] = field(default_factory=list)
    flipped: dict[str, str] = field(default_factory=dict)
    """attribute → its new value."""
    kept: list[str] = field(default_factory=list)
    """Chosen attributes that cannot drift (no other value in the benchmark)."""


def recurring_attributes(chain: Sequence[Scenario], start: int) -> dict[str, str]:
    """Rule 2: attribute → its earlier value, for the attributes before ``start`` and at or after it."""
    earlier: dict[str, str] = {}
    for s in chain[: start - 1]:
        earlier.update({i.attribute: i.value for i in s.profile.items})
    later = {i.attribute for s in chain[start - 1 :] for i in s.profile.items}
    return {a: v for a, v in sorted(earlier.items()) if a in later}


def drift_session(
    session_id: str, chain: Sequence[Scenario], values: ValueIndex, share: float, seed: int
) -> DriftOutcome:
    """The session ``chain`` drifted by the rule of docs/sessions.md, "Drift"."""
    start = drift_start(len(chain))
    earlier = recurring_attributes(chain, start)
    n = math.floor(share * len(earlier) + 0.5)
    able = {a for a, v in earlier.items() if values.other_values(a, v)}
    ranked = sorted(earlier, key=lambda a: (a not in able, rank(seed, session_id, a, "drift"), a))
    chosen = ranked[:n]
    outcome = DriftOutcome(scenarios=list(chain), kept=[a for a in chosen if a not in able])
    for attribute in (a for a in chosen if a in able):
        others = values.other_values(attribute, earlier[attribute])
        outcome.flipped[attribute] = others[rank(seed, session_id, attribute, "value") % len(others)]
    for position in range(start - 1, len(chain)):
        original = chain[position]
        now = {i.attribute: i.value for i in original.profile.items}
        changes = {a: v for a, v in sorted(outcome.flipped.items()) if a in now and now[a] != v}
        if changes:
            donors = {a: _donor(session_id, original, a, v, values, seed) for a, v in changes.items()}
            derived = _derived(session_id, original, changes, donors)
            outcome.scenarios[position] = derived
            outcome.derived.append(derived)
    return outcome


def _donor(session_id: str, scenario: Scenario, attribute: str, value: str, values: ValueIndex, seed: int) -> Scenario:
    """Rule 5's donor of ``attribute`` at ``value`` for ``scenario``."""
    holding = sorted((s for s in values.holding(attribute, value) if s.id != scenario.id), key=lambda s: s.id)
    same = [s for s in holding if problem_of(s) == problem_of(scenario)]
    pool = same or holding
    return pool[rank(seed, session_id, attribute, scenario.id, "donor") % len(pool)]


def _derived(session_id: str, original: Scenario, changes: dict[str, str], donors: dict[str, Scenario]) -> Scenario:
    data: dict[str, Any] = original.model_dump(mode="json")
    for item in data["profile"]["items"]:
        if item["attribute"] in changes:
            before, after = item["value"], changes[item["attribute"]]
            item["value"] = after
            item["justification"] = render("session_drift", before=before, after=after).strip()
    data["rubric"] = [
        donors[c["attribute"]].criterion(c["attribute"]).model_dump(mode="json") if c["attribute"] in changes else c
        for c in data["rubric"]
    ]
    names = sorted(changes)
    data["id"] = derive_id(original.id, "\x1e".join(names), "\x1e".join(changes[a] for a in names))
    data["provenance"] = {
        **data["provenance"],
        DRIFT_PROVENANCE: {
            "original": original.id,
            "session": session_id,
            "changes": [
                {
                    "attribute": a,
                    "from": original.profile.item(a).value,
                    "to": changes[a],
                    "donor": donors[a].id,
                }
                for a in names
            ],
        },
    }
    return Scenario.model_validate(data)
