"""``prefdisco build``: problems -> personas -> F(i) -> sparse profiles -> rubrics -> a benchmark folder.

Stages run one after another; items within a stage run concurrently (``asyncio.gather``, bounded by the step
runner's semaphore and inspect's own connection limits). Every finished step result is appended to
``DIR/.checkpoint/steps.jsonl`` keyed by a hash of its inputs and step config, so a rerun makes no model call for
finished items and a crash loses at most the items in flight. Replies that stay invalid after the retries are
reported (manifest and return value) and their items skipped, never filled with defaults; they are not
checkpointed, so a rerun tries them again. A build in which no scenario survives writes nothing (UserError).

The config is :mod:`prefdisco.builder.config`, the set-up before any call :mod:`prefdisco.builder.setup`, the
persona library :mod:`prefdisco.builder.library`, and the report and manifest :mod:`prefdisco.builder.manifest`.
``--session-length K`` (:mod:`prefdisco.builder.sessions`) replaces the per-problem persona choice by one that gives
every chosen persona K problems, and writes a persona's profiles in problem order, each seeing the earlier ones.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from inspect_ai.model import Model
from pydantic import ValidationError

from prefdisco.benchio import write_bench
from prefdisco.builder import profiles as profile_lib
from prefdisco.builder import relevance as relevance_lib
from prefdisco.builder import rubrics as rubric_lib
from prefdisco.builder import semantic_dedup as semantic_lib
from prefdisco.builder import sessions as session_lib
from prefdisco.builder.catalogue import load_catalogue
from prefdisco.builder.config import BuildConfig
from prefdisco.builder.dedup import DEFAULT_THRESHOLD
from prefdisco.builder.library import library_for_build
from prefdisco.builder.manifest import BuildReport, build_report
from prefdisco.builder.pool import Failure, Progress, StepOutcome, StepRunner
from prefdisco.builder.setup import check_build, check_library_size, load_build_problems, make_runner
from prefdisco.errors import UserError
from prefdisco.schema import Attribute, Persona, PreferenceProfile, Problem, Scenario


def choose_personas(library: Sequence[Persona], problem: Problem, k: int, seed: int) -> list[Persona]:
    """k distinct personas for one problem, seeded by (seed, problem id): independent of other problems."""
    rng = random.Random(f"{seed}\x1fpersonas\x1f{problem.benchmark}\x1f{problem.id}")
    return rng.sample(list(library), k)


WRITERS = ("persona", relevance_lib.STEP, profile_lib.STEP, rubric_lib.STEP)
"""The keys of a built scenario's provenance that name the model that wrote each of its parts."""


def written_by(scenarios: Sequence[Scenario]) -> list[str]:
    """The models that wrote the scenarios' parts (their provenance), each once, sorted; none for scenarios not
    built by ``prefdisco build`` (hand-written, imported from a release)."""
    return sorted({v for s in scenarios for k in WRITERS if isinstance(v := s.provenance.get(k), str) and v})


def scenario_id(problem: Problem, persona: Persona) -> str:
    head = problem.id if problem.id.startswith(problem.benchmark) else f"{problem.benchmark}::{problem.id}"
    return f"{head}::{persona.id}"


async def build_benchmark(
    config: BuildConfig,
    *,
    models: Sequence[Model] | None = None,
    problems: list[Problem] | None = None,
    catalogue: list[Attribute] | None = None,
    progress: Progress | None = None,
    overwrite: bool = False,
) -> BuildReport:
    """Build the benchmark folder ``config.out`` (see the module docstring); a folder holding a benchmark built
    with other settings is refused unless ``overwrite`` (``setup.check_existing_build``)."""
    started = time.monotonic()
    check_build(config, overwrite)
    problems = problems if problems is not None else load_build_problems(config)
    if config.session_length is not None:
        session_lib.check_session_length(len(problems), config.session_length)
    catalogue = catalogue if catalogue is not None else load_catalogue(config.catalogue)
    runner = make_runner(config, progress, models=models)
    k = config.personas_per_problem

    library, library_info = await library_for_build(runner, config)
    check_library_size(len(library), k, runner.first_failure())  # a generated library may fall short

    # F(i) for every problem, then the build-wide dedup of proposed attributes (lexical, then semantic).
    runner.progress.start(relevance_lib.STEP, len(problems))
    rel = await asyncio.gather(
        *(relevance_lib.select_relevant(runner, p, catalogue, config.relevance) for p in problems)
    )
    answers = {p.id: o.value for p, o in zip(problems, rel, strict=True) if o is not None}
    rel_model = {p.id: o.model for p, o in zip(problems, rel, strict=True) if o is not None}
    proposals, semantic = await _dedup_proposals(runner, config, answers, catalogue)
    relevant = relevance_lib.assign(answers, catalogue, proposals)
    new_attributes = proposals.new
    attributes = [*catalogue, *new_attributes]
    by_name = {a.name: a for a in attributes}

    skipped: Counter[str] = Counter()
    pairs: list[tuple[Problem, Persona]] = []
    sessions = (
        None
        if config.session_length is None
        else session_lib.assign_personas(library, problems, k, config.session_length, config.seed)
    )
    for problem in problems:
        chosen = choose_personas(library, problem, k, config.seed) if sessions is None else sessions[problem.id]
        if problem.id in relevant:
            pairs.extend((problem, persona) for persona in chosen)
        else:
            skipped["relevance_failed"] += len(chosen)

    def f_of(problem: Problem) -> list[Attribute]:
        return [by_name[n] for n in relevant[problem.id]]

    # Sparse profiles (a session build: in problem order per persona, each seeing the persona's earlier values), then
    # one regeneration for profiles identical to an earlier persona's on that problem.
    runner.progress.start(profile_lib.STEP, len(pairs))
    cores: dict[int, str] = {}
    if sessions is None:
        first = await asyncio.gather(
            *(profile_lib.generate_profile(runner, pe, pr, f_of(pr), config.profile) for pr, pe in pairs)
        )
    else:
        first, cores = await session_lib.chained_profiles(runner, pairs, f_of, config.profile)
    profiles: dict[int, tuple[PreferenceProfile, list[StepOutcome[Any]]]] = {}
    for index, ((problem, _), outcome) in enumerate(zip(pairs, first, strict=True)):
        if outcome is None:
            skipped["profile_failed"] += 1
            continue
        profiles[index] = (profile_lib.to_profile(outcome.value, f_of(problem)), [outcome])
    duplicates = await _regenerate_duplicates(runner, config, pairs, profiles, f_of, skipped, cores)

    # Rubrics.
    order = sorted(profiles)
    runner.progress.start(rubric_lib.STEP, len(order))
    rubric_out = await asyncio.gather(
        *(
            rubric_lib.generate_rubric(
                runner, pairs[i][1], pairs[i][0], profiles[i][0], config.profile.max_problem_chars
            )
            for i in order
        )
    )

    scenarios: list[Scenario] = []
    per_scenario: dict[str, dict[str, int]] = {}
    for i, outcome in zip(order, rubric_out, strict=True):
        problem, persona = pairs[i]
        profile, steps = profiles[i]
        if outcome is None:
            skipped["rubric_failed"] += 1
            continue
        steps = [*steps, outcome]
        sid = scenario_id(problem, persona)
        cost = {
            "calls": sum(s.attempts for s in steps),
            "input_tokens": sum(s.input_tokens for s in steps),
            "output_tokens": sum(s.output_tokens for s in steps),
        }
        try:
            scenario = Scenario(
                id=sid,
                problem=problem,
                persona=persona,
                profile=profile,
                rubric=rubric_lib.to_criteria(outcome.value, profile),
                relevant_attributes=relevant[problem.id],
                provenance={
                    "persona": persona.extra.get("built_by", ""),
                    relevance_lib.STEP: rel_model[problem.id],
                    profile_lib.STEP: steps[-2].model,
                    rubric_lib.STEP: outcome.model,
                    "regenerated_profile": len(steps) > 2,
                    "seed": config.seed,
                    "source": config.source or "hub",
                    "usage": cost,
                },
            )
        except ValidationError as err:  # an invariant the replies could not have broken; never written
            runner.failures.append(Failure("scenario", sid, outcome.model, 0, str(err).splitlines()[0]))
            skipped["invalid_scenario"] += 1
            continue
        scenarios.append(scenario)
        per_scenario[sid] = cost

    if not scenarios:
        by_step = Counter(f.step for f in runner.failures)
        detail = runner.first_failure()
        raise UserError(
            f"{config.out}: no scenario was built ({dict(by_step)} invalid replies{detail}); nothing written, "
            "finished steps are kept in the checkpoint"
        )
    used_ids = {s.persona.id for s in scenarios}
    used_personas = [p for p in library if p.id in used_ids]
    report = build_report(
        config, runner, problems, library, used_personas, attributes, new_attributes, scenarios,
        per_scenario, skipped, duplicates, library_info, len(relevant), time.monotonic() - started,
        dedup=_dedup_section(config, proposals, semantic),
        sessions=None if config.session_length is None else session_lib.manifest_section(
            config.session_length, problems, scenarios
        ),
    )  # fmt: skip
    write_bench(config.out, scenarios, used_personas, attributes, report.manifest)
    return report


async def _dedup_proposals(
    runner: StepRunner, config: BuildConfig, answers: dict[str, Any], catalogue: list[Attribute]
) -> tuple[relevance_lib.Proposals, semantic_lib.SemanticResult | None]:
    """The lexical pass over every proposed attribute, then (unless switched off) the semantic pass over the
    new attributes it kept; F(i) then uses the final canonical names."""
    proposals = relevance_lib.propose(answers, catalogue)
    if not config.semantic_dedup.enabled:
        return proposals, None
    semantic = await semantic_lib.deduplicate(runner, proposals.new, catalogue, config.semantic_dedup)
    return proposals.renamed(semantic.renames, semantic.attributes), semantic


def _dedup_section(
    config: BuildConfig, proposals: relevance_lib.Proposals, semantic: semantic_lib.SemanticResult | None
) -> dict[str, Any]:
    lexical = [
        {"proposed": m.proposed, "canonical": m.canonical, "kind": m.kind, "score": round(m.score, 4)}
        for m in proposals.matches
        if m.kind != "new"
    ]
    return {
        "not_words": [{"proposed": name, "reason": why} for name, why in proposals.rejected.items()],
        "lexical": {"threshold": DEFAULT_THRESHOLD, "merged": lexical},
        "semantic": semantic_lib.manifest_section(config.semantic_dedup, semantic),
    }


async def _regenerate_duplicates(
    runner: StepRunner,
    config: BuildConfig,
    pairs: list[tuple[Problem, Persona]],
    profiles: dict[int, tuple[PreferenceProfile, list[StepOutcome[Any]]]],
    f_of: Any,
    skipped: Counter[str],
    cores: dict[int, str],
) -> dict[str, int]:
    """Regenerate (once, with a note) every profile identical to an earlier persona's on the same problem;
    drop it if it is still identical to another profile of that problem. ``cores``: a session build's core note
    of each pair, shown again in its regeneration."""
    seen: dict[str, dict[tuple[tuple[str, str], ...], int]] = {}
    repeat: list[tuple[int, int]] = []  # (index, index of the earlier identical profile)
    for index in sorted(profiles):
        sigs = seen.setdefault(pairs[index][0].id, {})
        sig = profile_lib.signature(profiles[index][0])
        if sig in sigs:
            repeat.append((index, sigs[sig]))
        else:
            sigs[sig] = index
    runner.progress.start(profile_lib.REGEN_STEP, len(repeat))
    redo = await asyncio.gather(
        *(
            profile_lib.generate_profile(
                runner,
                pairs[i][1],
                pairs[i][0],
                f_of(pairs[i][0]),
                config.profile,
                note=profile_lib.duplicate_note(profiles[j][0]),
                core=cores.get(i, ""),
            )
            for i, j in repeat
        )
    )
    still = 0
    for (index, _), outcome in zip(repeat, redo, strict=True):
        problem = pairs[index][0]
        earlier = profiles.pop(index)
        if outcome is None:
            skipped["profile_failed"] += 1
            continue
        profile = profile_lib.to_profile(outcome.value, f_of(problem))
        sig = profile_lib.signature(profile)
        if sig in seen[problem.id]:
            still += 1
            skipped["identical_profile"] += 1
            other = pairs[seen[problem.id][sig]][1].id
            runner.failures.append(
                Failure(
                    profile_lib.REGEN_STEP,
                    f"{problem.id}|{pairs[index][1].id}",
                    outcome.model,
                    outcome.attempts,
                    f"profile still identical to persona {other}'s after regeneration",
                )
            )
            continue
        seen[problem.id][sig] = index
        profiles[index] = (profile, [*earlier[1], outcome])
    return {"identical_found": len(repeat), "regenerated": len(repeat), "still_identical": still}


def run_build(config: BuildConfig, progress: Progress | None = None, overwrite: bool = False) -> BuildReport:
    return asyncio.run(build_benchmark(config, progress=progress, overwrite=overwrite))
