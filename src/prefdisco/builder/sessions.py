"""Benchmarks for sessions (``prefdisco build --session-length K``): personas that recur, with a stable core.

* **Who gets which problems** (``assign_personas``). A seeded sample of the library, as many personas as the
  build's slots allow at K problems each (``min(library, problems × per problem // K)``), is spread over the
  problems: each problem, in the build's order, takes the ``per_problem`` personas with the fewest problems so
  far (ties in a seeded order). Loads then never differ by more than one, so every chosen persona gets at least K
  problems. Without the flag the pipeline keeps its own per-problem choice, untouched.
* **A stable core** (``chained_profiles``). A persona's profiles are written one after another in problem order
  (the personas' chains run concurrently). A later profile's prompt shows the latest value this persona was given
  for each attribute of the problem's F(i) that an earlier profile of theirs had (``core_note``,
  ``prompts/build_profile_session.txt``): keep it unless this problem changes what they want, and then say why in
  the justification. Each prompt depends only on the chain's earlier replies, which the checkpoint replays, so a
  rerun makes the same prompts and no call for a finished profile.
* **What came of it** (``manifest_section``, the manifest's ``sessions``): problems per persona, the share of
  profile items whose attribute was in an earlier profile of the same persona (``recurring_share``), and of those
  the share that kept the latest earlier value (``stable_share``), over the scenarios written.
"""

from __future__ import annotations

import asyncio
import random
import statistics
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from prefdisco import prompts
from prefdisco.builder import profiles as profile_lib
from prefdisco.builder.pool import StepOutcome, StepRunner
from prefdisco.errors import UserError
from prefdisco.schema import Attribute, Persona, PreferenceProfile, Problem, Scenario


def check_session_length(n_problems: int, length: int) -> None:
    """A persona appears at most once per problem, so K problems each needs K problems in the build."""
    if length > n_problems:
        raise UserError(
            f"--session-length {length}: the build has {n_problems} problem(s) and a persona gets at most one "
            f"scenario per problem; give --problems {length} or more, or --session-length {n_problems} or less"
        )


def session_persona_count(library_size: int, n_problems: int, per_problem: int, length: int) -> int:
    """How many personas a session build uses: as many as its slots allow at ``length`` problems each."""
    return min(library_size, n_problems * per_problem // length)


def assign_personas(
    library: Sequence[Persona], problems: Sequence[Problem], per_problem: int, length: int, seed: int
) -> dict[str, list[Persona]]:
    """Problem id -> its ``per_problem`` personas, every chosen persona on at least ``length`` problems (seeded by
    (seed, per_problem, length); the order of ``problems`` matters, the global random state does not)."""
    check_session_length(len(problems), length)
    rng = random.Random(f"{seed}\x1fsession-personas\x1f{per_problem}\x1f{length}")
    m = session_persona_count(len(library), len(problems), per_problem, length)
    chosen = rng.sample(list(library), m)
    load = {p.id: 0 for p in chosen}
    plan: dict[str, list[Persona]] = {}
    for problem in problems:
        order = sorted(rng.sample(chosen, m), key=lambda p: load[p.id])  # stable: ties keep the seeded order
        plan[problem.id] = order[:per_problem]
        for persona in plan[problem.id]:
            load[persona.id] += 1
    return plan


def core_note(earlier: dict[str, str], relevant: Sequence[Attribute]) -> str:
    """The session part of a later profile's prompt: the persona's latest earlier value of each attribute of F(i)
    they had before (empty when none of F(i) was in an earlier profile)."""
    shown = [f"- {a.name}: {earlier[a.name]}" for a in relevant if a.name in earlier]
    return prompts.render("build_profile_session", values="\n".join(shown)) if shown else ""


ProfileOutcome = StepOutcome[BaseModel] | None


async def chained_profiles(
    runner: StepRunner,
    pairs: Sequence[tuple[Problem, Persona]],
    f_of: Callable[[Problem], list[Attribute]],
    config: profile_lib.ProfileConfig,
) -> tuple[list[ProfileOutcome], dict[int, str]]:
    """One profile per pair (aligned with ``pairs``, ``None`` for a failure), written in ``pairs`` order within each
    persona and concurrently across personas; also the core note each pair's prompt carried (index -> note), for
    a regeneration of that profile."""
    chains: dict[str, list[int]] = {}
    for index, (_, persona) in enumerate(pairs):
        chains.setdefault(persona.id, []).append(index)
    outcomes: list[ProfileOutcome] = [None] * len(pairs)
    notes: dict[int, str] = {}

    async def chain(indices: list[int]) -> None:
        earlier: dict[str, str] = {}
        for index in indices:
            problem, persona = pairs[index]
            relevant = f_of(problem)
            notes[index] = core_note(earlier, relevant)
            outcome = await profile_lib.generate_profile(runner, persona, problem, relevant, config, core=notes[index])
            outcomes[index] = outcome
            if outcome is not None:
                earlier.update((i.attribute, i.value) for i in profile_lib.to_profile(outcome.value, relevant).items)

    await asyncio.gather(*(chain(indices) for indices in chains.values()))
    return outcomes, notes


def core_shares(chains: Sequence[Sequence[PreferenceProfile]]) -> dict[str, Any]:
    """Over profiles in session order per persona: items in all, items whose attribute an earlier profile of the same
    persona had (recurring), and of those the ones with the latest earlier value (stable); shares ``None`` when
    their denominator is 0."""
    items = recurring = stable = 0
    for profiles in chains:
        latest: dict[str, str] = {}
        for profile in profiles:
            for item in profile.items:
                items += 1
                if item.attribute in latest:
                    recurring += 1
                    stable += latest[item.attribute] == item.value
            latest.update((i.attribute, i.value) for i in profile.items)
    return {
        "items": items,
        "recurring_items": recurring,
        "stable_items": stable,
        "recurring_share": round(recurring / items, 4) if items else None,
        "stable_share": round(stable / recurring, 4) if recurring else None,
    }


def manifest_section(length: int, problems: Sequence[Problem], scenarios: Sequence[Scenario]) -> dict[str, Any]:
    """The manifest's ``sessions``: over the scenarios written, in the build's problem order per persona."""
    position = {p.id: i for i, p in enumerate(problems)}
    by_persona: dict[str, list[Scenario]] = {}
    for scenario in sorted(scenarios, key=lambda s: position[s.problem.id]):
        by_persona.setdefault(scenario.persona.id, []).append(scenario)
    counts = [len(v) for v in by_persona.values()]
    shares = core_shares([[s.profile for s in chain] for chain in by_persona.values()])
    return {
        "length": length,
        "personas": len(by_persona),
        "personas_below_length": sum(n < length for n in counts),
        "problems_per_persona": {
            "min": min(counts, default=0),
            "mean": round(statistics.fmean(counts), 2) if counts else 0,
            "max": max(counts, default=0),
        },
        **shares,
    }
