"""The negative control ``wrong_persona``: each scenario's decoy (``plan.opening_for`` fills the oracle prompt
with it, read from the sample's metadata).

A wrong_persona sample is the oracle condition with one change: its system message is the oracle template filled
with the profile and persona of another scenario, the *decoy*, while the scorer still judges the response against
the sample's own rubric. If the judge rewards the true profile, oracle PrefAlign beats wrong_persona PrefAlign;
if the two are close, the judge is rewarding a tailored-looking answer, not this person's preferences
(``analysis/validity/control.py`` measures the gap).

The decoy of a scenario is chosen among its candidates, in scenario-id order:

1. the other scenarios of the same problem (same benchmark and problem id) with a different persona;
2. when there is none, the scenarios of other problems of the same benchmark (the task family).

The choice is the first 8 bytes of ``sha256(scope \\x1f scenario id \\x1f "decoy")``, big-endian, modulo the
number of candidates (``scope`` is the run's seed scope, ``seeds.seed_scope``): no global random state, and
nothing of the run's split. ``choose_decoys`` is given the full scenario set, before ``--limit`` or ``--workers``
cut it, so a scenario has the same decoy however the run is cut. A scenario with no candidate at all refuses
the mode (``UserError``).

The decoy rides on the sample's metadata (``decoy``: its id, persona and profile, never its rubric; and
``decoy_scenario_id``), so ``inspect view`` shows it and the results table reads its id back.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Mapping, Sequence

from inspect_ai.dataset import Sample
from pydantic import BaseModel, ConfigDict

from prefdisco.dialogue.scenario import scenario_sample
from prefdisco.errors import UserError
from prefdisco.schema import Persona, PreferenceProfile, Scenario

DECOY_KEY = "decoy"
"""Sample metadata: the decoy's id, persona and profile."""
DECOY_ID_KEY = "decoy_scenario_id"
"""Sample metadata: the decoy's scenario id (the results table's ``decoy_scenario_id`` column)."""


class Decoy(BaseModel):
    """What a wrong_persona sample shows the assistant of its decoy scenario (never the decoy's rubric)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    persona: Persona
    profile: PreferenceProfile

    @classmethod
    def of(cls, scenario: Scenario) -> Decoy:
        return cls(id=scenario.id, persona=scenario.persona, profile=scenario.profile)


def decoy_index(scope: str, scenario_id: str, n: int) -> int:
    """Which of ``n`` candidates (in scenario-id order) is ``scenario_id``'s decoy in the run ``scope``."""
    text = "\x1f".join((scope, scenario_id, "decoy"))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") % n


def choose_decoys(scenarios: Sequence[Scenario], scope: str) -> dict[str, Scenario]:
    """Every scenario's decoy (scenario id → decoy scenario), chosen from ``scenarios`` as described above;
    give it the full scenario set of the run. Refuses a set in which some scenario has no candidate."""
    by_benchmark: dict[str, list[Scenario]] = defaultdict(list)
    for s in scenarios:
        by_benchmark[s.problem.benchmark].append(s)
    decoys: dict[str, Scenario] = {}
    for benchmark, members in by_benchmark.items():
        # the benchmark's scenarios by (problem, id): one problem's scenarios are a contiguous block
        ordered = sorted(members, key=lambda s: (s.problem.id, s.id))
        blocks: dict[str, tuple[int, int]] = {}
        for i, s in enumerate(ordered):
            start, _ = blocks.get(s.problem.id, (i, i))
            blocks[s.problem.id] = (start, i + 1)
        for s in members:
            start, end = blocks[s.problem.id]
            same = sorted((o for o in ordered[start:end] if o.persona.id != s.persona.id), key=lambda o: o.id)
            if same:
                decoys[s.id] = same[decoy_index(scope, s.id, len(same))]
                continue
            n_other = len(ordered) - (end - start)
            if n_other == 0:
                raise UserError(
                    f"--modes wrong_persona: scenario {s.id} has no decoy (no other persona of problem "
                    f"{s.problem.id} and no other problem of benchmark {benchmark}); the negative control needs "
                    "another scenario of the same problem or benchmark"
                )
            i = decoy_index(scope, s.id, n_other)  # the benchmark's order with the own problem's block left out
            decoys[s.id] = ordered[i if i < start else i + (end - start)]
    return decoys


def decoy_sample(scenario: Scenario, decoy: Scenario) -> Sample:
    """The sample of ``scenario`` (``scenario_sample``) carrying ``decoy`` in its metadata."""
    sample = scenario_sample(scenario)
    sample.metadata = {
        **(sample.metadata or {}),
        DECOY_KEY: Decoy.of(decoy).model_dump(mode="json"),
        DECOY_ID_KEY: decoy.id,
    }
    return sample


def decoy_samples(scenarios: Sequence[Scenario], decoys: Mapping[str, Scenario]) -> list[Sample]:
    missing = [s.id for s in scenarios if s.id not in decoys]
    if missing:
        raise UserError(f"--modes wrong_persona: no decoy chosen for scenario(s) {', '.join(missing[:5])}")
    return [decoy_sample(s, decoys[s.id]) for s in scenarios]
