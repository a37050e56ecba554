"""The harm probe ``oracle_distractor``: the oracle's profile with preferences that do not matter to the problem.

pref_aligner found models break more often when they are given preferences irrelevant to the question. Here each
scenario's oracle prompt lists its true profile plus D **distractors** (``--distractors D``, default 3), and the
response is scored against the scenario's own rubric, as the oracle's is:

* the **attribute universe** is the attribute catalogue Θ the builder draws from (the packaged one,
  ``builder/catalogue.py``): names, meanings and value spaces;
* a scenario's candidates are the catalogue's attributes that are neither in its profile nor among its relevant
  attributes F(i) (names compared case-folded): they do not matter to this problem;
* D of them are chosen by sha256 of (the run's seed scope, the scenario, the attribute), each with one value of its
  value space drawn the same way (the builder draws a value from the value space too), its meaning from the catalogue
  and no reason (the reasons of true items were written for this person; none is invented here);
* each distractor gets the true items' mean weight, then all weights are renormalised to sum to 1, and the items are
  interleaved in a seeded order, so the list looks like any profile.

The choice depends on the scenario and the seed only (never on which other scenarios are in the run or in a shard),
is made when the task is built and rides on the sample's metadata (``DISTRACTOR_KEY``), so ``inspect view`` shows it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from prefdisco.schema import Attribute, PreferenceItem, PreferenceProfile, Scenario

DISTRACTOR_KEY = "prefdisco_distractors"
"""Sample metadata: the distractor items of the scenario (``PreferenceItem`` JSON)."""
DEFAULT_DISTRACTORS = 3


def _rank(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(parts).encode()).digest()[:8], "big")


def choose_distractors(
    scenario: Scenario, catalogue: Sequence[Attribute], scope: str, count: int
) -> list[PreferenceItem]:
    """The scenario's ``count`` distractor items (fewer when the catalogue has fewer candidates; module docstring)."""
    taken = {i.attribute.casefold() for i in scenario.profile.items}
    taken |= {a.casefold() for a in scenario.relevant_attributes}
    candidates = sorted(
        (a for a in catalogue if a.name.casefold() not in taken), key=lambda a: _rank(scope, scenario.id, a.name)
    )
    items = []
    for attribute in candidates[:count]:
        value = attribute.value_space[_rank(scope, scenario.id, attribute.name, "value") % len(attribute.value_space)]
        items.append(
            PreferenceItem(attribute=attribute.name, value=value, weight=0.0, description=attribute.description)
        )
    return items


def with_distractors(profile: PreferenceProfile, distractors: Sequence[PreferenceItem], key: str) -> PreferenceProfile:
    """``profile`` with ``distractors`` at its items' mean weight, renormalised, interleaved in a seeded order."""
    if not distractors:
        return profile
    mean = sum(i.weight for i in profile.items) / len(profile.items)
    extra = [d.model_copy(update={"weight": mean}) for d in distractors]
    items = sorted([*profile.items, *extra], key=lambda i: _rank(key, i.attribute))
    return PreferenceProfile.normalized(items)
