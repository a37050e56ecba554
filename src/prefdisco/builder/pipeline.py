"""``prefdisco build``: problems -> personas -> F(i) -> sparse profiles -> rubrics -> a benchmark folder.

Stages run one after another; items within a stage run concurrently (``asyncio.gather``, bounded by the step
runner's semaphore and inspect's own connection limits). Every finished step result is appended to
``DIR/.checkpoint/steps.jsonl`` keyed by a hash of its inputs and step config, so a rerun makes no model call for
finished items and a crash loses at most the items in flight. Replies that stay invalid after the retries are
reported (manifest and return value) and their items skipped, never filled with defaults; they are not
checkpointed, so a rerun tries them again. A build in which no scenario survives writes nothing (UserError).

The manifest records the config, seeds, model ids, counts, failures, duplicate profiles, the persona library's
diversity, and model calls and tokens per step and per scenario (from inspect's ``ModelOutput.usage``).
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.model import GenerateConfig, Model
from pydantic import BaseModel, Field, ValidationError, model_validator

from prefdisco.builder import personas as persona_lib
from prefdisco.builder import profiles as profile_lib
from prefdisco.builder import relevance as relevance_lib
from prefdisco.builder import rubrics as rubric_lib
from prefdisco.builder.pool import Checkpoint, Failure, ModelPool, NoProgress, Progress, StepOutcome, StepRunner
from prefdisco.errors import UserError
from prefdisco.schema import BIG_FIVE, Attribute, Persona, PreferenceItem, PreferenceProfile, Problem, Scenario
from prefdisco.structured import response_schema

CHECKPOINT_DIR = ".checkpoint"
CHECKPOINT_FILE = "steps.jsonl"
STEPS = (persona_lib.STEP, relevance_lib.STEP, profile_lib.STEP, profile_lib.REGEN_STEP, rubric_lib.STEP)


class BuildConfig(BaseModel):
    """Everything ``prefdisco build`` needs; recorded in the manifest."""

    benchmark: str
    source: str | None = None
    split: str | None = None
    mapping: str | None = Field(default=None, description="field mapping for --benchmark generic")
    problems: int | None = Field(default=100, ge=1)
    personas_per_problem: int = Field(default=10, ge=1)
    persona_library: Path | None = None
    library_size: int = Field(default=100, ge=1, description="personas to generate when no library is given")
    models: list[str] = Field(default_factory=list)
    model_args: dict[str, str] = Field(default_factory=dict, description="provider args (-M) for every model")
    seed: int = 0
    temperature: float = Field(default=0.7, ge=0)
    retries: int = Field(default=2, ge=0)
    max_connections: int = Field(default=8, ge=1)
    max_retries: int | None = Field(default=None, ge=0, description="inspect's retries of a failed request")
    timeout: int | None = Field(default=None, ge=1, description="seconds for a request, its retries included")
    attempt_timeout: int | None = Field(default=None, ge=1, description="seconds for one attempt")
    catalogue: Path | None = None
    ipip: Path | None = None
    facets: bool = False
    max_share: float = Field(default=0.05, gt=0, le=1)
    max_marginal_share: float | None = Field(default=2.0, gt=0)
    persona_batch: int = Field(default=8, ge=1)
    relevance: relevance_lib.RelevanceConfig = Field(default_factory=relevance_lib.RelevanceConfig)
    profile: profile_lib.ProfileConfig = Field(default_factory=profile_lib.ProfileConfig)
    out: Path

    @model_validator(mode="after")
    def _consistent(self) -> BuildConfig:
        if self.relevance.min_relevant < self.profile.min_attributes:
            raise ValueError(
                f"min_relevant ({self.relevance.min_relevant}) must be at least min_attributes "
                f"({self.profile.min_attributes})"
            )
        if self.benchmark == "generic" and (not self.source or not self.mapping):
            raise ValueError("--benchmark generic needs --source PATH and --map question=...,answer=...")
        return self


@dataclass
class BuildReport:
    out: Path
    scenarios: int
    counts: dict[str, Any]
    failures: list[dict[str, Any]]
    skipped: dict[str, int]
    duplicates: dict[str, int]
    usage: dict[str, Any]
    personas: dict[str, Any]
    seconds: float
    manifest: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------------------


def load_build_problems(config: BuildConfig) -> list[Problem]:
    from prefdisco.benchmarks import load_generic, load_problems

    if config.benchmark == "generic":
        assert config.source is not None and config.mapping is not None
        problems = load_generic(config.source, config.mapping, n=config.problems, seed=config.seed, split=config.split)
    else:
        problems = load_problems(
            config.benchmark, source=config.source, n=config.problems, seed=config.seed, split=config.split
        )
    if not problems:
        raise UserError(f"{config.source or config.benchmark}: no problems to build from")
    return problems


def first_failure(runner: StepRunner) -> str:
    """``; first failure: step item (model): reason``, or nothing when no item failed."""
    if not runner.failures:
        return ""
    f = runner.failures[0]
    return f"; first failure: {f.step} {f.item} ({f.model}): {f.reason}"


def check_out_folder(out: Path) -> None:
    """Fail before any model call when ``out`` cannot become the output folder (an existing file, or no write
    permission on the folder or on the nearest existing parent)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: --out exists and is not a folder")
    existing = out if out.exists() else next((p for p in out.parents if p.exists()), None)
    if existing is None or not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise UserError(f"{out}: cannot write here (no write permission on {existing})")


def resolve_models(names: Sequence[str], config: BuildConfig) -> list[Model]:
    from inspect_ai.model import get_model

    if not names:
        raise UserError("--model: give at least one model (e.g. --model openai/gpt-4o)")
    try:
        return [
            get_model(
                name,
                config=GenerateConfig(
                    max_connections=config.max_connections,
                    max_retries=config.max_retries,
                    timeout=config.timeout,
                    attempt_timeout=config.attempt_timeout,
                ),
                **config.model_args,
            )
            for name in names
        ]
    except (TypeError, ValueError) as err:
        raise UserError(f"--model / -M: {' '.join(str(err).split())}") from None


def make_runner(models: Sequence[Model], config: BuildConfig, progress: Progress | None) -> StepRunner:
    return StepRunner(
        pool=ModelPool(models, seed=config.seed),
        checkpoint=Checkpoint(config.out / CHECKPOINT_DIR / CHECKPOINT_FILE),
        config=GenerateConfig(temperature=config.temperature, max_connections=config.max_connections),
        retries=config.retries,
        max_concurrency=config.max_connections,
        progress=progress or NoProgress(),
        model_args=dict(config.model_args),
    )


def library_config(config: BuildConfig, n: int) -> persona_lib.LibraryConfig:
    return persona_lib.LibraryConfig(
        n=n,
        seed=config.seed,
        max_share=config.max_share,
        max_marginal_share=config.max_marginal_share,
        batch_size=config.persona_batch,
        space=persona_lib.BlueprintSpace(facets=config.facets),
    )


def choose_personas(library: Sequence[Persona], problem: Problem, k: int, seed: int) -> list[Persona]:
    """k distinct personas for one problem, seeded by (seed, problem id): independent of other problems."""
    rng = random.Random(f"{seed}\x1fpersonas\x1f{problem.benchmark}\x1f{problem.id}")
    return rng.sample(list(library), k)


def scenario_id(problem: Problem, persona: Persona) -> str:
    head = problem.id if problem.id.startswith(problem.benchmark) else f"{problem.benchmark}::{problem.id}"
    return f"{head}::{persona.id}"


# ---------------------------------------------------------------------------------------------------------
# The build
# ---------------------------------------------------------------------------------------------------------


async def build_benchmark(
    config: BuildConfig,
    *,
    models: Sequence[Model] | None = None,
    problems: list[Problem] | None = None,
    catalogue: list[Attribute] | None = None,
    progress: Progress | None = None,
) -> BuildReport:
    """Build the benchmark folder ``config.out`` (see the module docstring)."""
    from prefdisco.benchio import write_bench
    from prefdisco.builder.catalogue import load_catalogue

    started = time.monotonic()
    check_out_folder(config.out)
    problems = problems if problems is not None else load_build_problems(config)
    catalogue = catalogue if catalogue is not None else load_catalogue(config.catalogue)
    runner = make_runner(models if models is not None else resolve_models(config.models, config), config, progress)
    k = config.personas_per_problem

    library, library_info = await _library(runner, config)
    if len(library) < k:
        raise UserError(
            f"persona library: {len(library)} persona(s), fewer than --personas-per-problem {k}{first_failure(runner)}"
        )

    # F(i) for every problem, then the build-wide dedup of proposed attributes.
    runner.progress.start(relevance_lib.STEP, len(problems))
    rel = await asyncio.gather(
        *(relevance_lib.select_relevant(runner, p, catalogue, config.relevance) for p in problems)
    )
    answers = {p.id: o.value for p, o in zip(problems, rel, strict=True) if o is not None}
    rel_model = {p.id: o.model for p, o in zip(problems, rel, strict=True) if o is not None}
    relevant, new_attributes = relevance_lib.resolve(answers, catalogue)
    attributes = [*catalogue, *new_attributes]
    by_name = {a.name: a for a in attributes}

    skipped: Counter[str] = Counter()
    pairs: list[tuple[Problem, Persona]] = []
    for problem in problems:
        chosen = choose_personas(library, problem, k, config.seed)
        if problem.id in relevant:
            pairs.extend((problem, persona) for persona in chosen)
        else:
            skipped["relevance_failed"] += len(chosen)

    def f_of(problem: Problem) -> list[Attribute]:
        return [by_name[n] for n in relevant[problem.id]]

    # Sparse profiles, then one regeneration for profiles identical to an earlier persona's on that problem.
    runner.progress.start(profile_lib.STEP, len(pairs))
    first = await asyncio.gather(
        *(profile_lib.generate_profile(runner, pe, pr, f_of(pr), config.profile) for pr, pe in pairs)
    )
    profiles: dict[int, tuple[PreferenceProfile, list[StepOutcome[Any]]]] = {}
    for index, ((problem, _), outcome) in enumerate(zip(pairs, first, strict=True)):
        if outcome is None:
            skipped["profile_failed"] += 1
            continue
        profiles[index] = (profile_lib.to_profile(outcome.value, f_of(problem)), [outcome])
    duplicates = await _regenerate_duplicates(runner, config, pairs, profiles, f_of, skipped)

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
        detail = first_failure(runner)
        raise UserError(
            f"{config.out}: no scenario was built ({dict(by_step)} invalid replies{detail}); nothing written, "
            "finished steps are kept in the checkpoint"
        )
    used_ids = {s.persona.id for s in scenarios}
    used_personas = [p for p in library if p.id in used_ids]
    report = _report(
        config, runner, problems, library, used_personas, attributes, new_attributes, scenarios,
        per_scenario, skipped, duplicates, library_info, len(relevant), time.monotonic() - started,
    )  # fmt: skip
    write_bench(config.out, scenarios, used_personas, attributes, report.manifest)
    return report


async def _library(runner: StepRunner, config: BuildConfig) -> tuple[list[Persona], dict[str, Any]]:
    if config.persona_library is not None:
        library = persona_lib.load_library(config.persona_library)
        return library, {
            "source": str(config.persona_library),
            "size": len(library),
            "diversity": persona_lib.library_diversity(library),
        }
    ipip = persona_lib.load_ipip(config.ipip) if config.ipip else None
    result = await persona_lib.build_library(runner, library_config(config, config.library_size), ipip)
    return result.personas, {
        "source": "generated",
        "size": len(result.personas),
        "requested": config.library_size,
        "candidates": result.candidates,
        "blueprints": result.blueprints,
        "rejections": result.rejections,
        "diversity": result.diversity,
        "ipip": str(config.ipip) if config.ipip else None,
    }


async def _regenerate_duplicates(
    runner: StepRunner,
    config: BuildConfig,
    pairs: list[tuple[Problem, Persona]],
    profiles: dict[int, tuple[PreferenceProfile, list[StepOutcome[Any]]]],
    f_of: Any,
    skipped: Counter[str],
) -> dict[str, int]:
    """Regenerate (once, with a note) every profile identical to an earlier persona's on the same problem;
    drop it if it is still identical to another profile of that problem."""
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


def _report(
    config: BuildConfig,
    runner: StepRunner,
    problems: list[Problem],
    library: list[Persona],
    used_personas: list[Persona],
    attributes: list[Attribute],
    new_attributes: list[Attribute],
    scenarios: list[Scenario],
    per_scenario: dict[str, dict[str, int]],
    skipped: Counter[str],
    duplicates: dict[str, int],
    library_info: dict[str, Any],
    n_relevant: int,
    seconds: float,
) -> BuildReport:
    steps = runner.usage_table()
    total = {
        key: sum(u[key] for u in steps.values())
        for key in ("calls", "input_tokens", "output_tokens", "calls_run", "input_tokens_run", "output_tokens_run")
    }
    n = len(scenarios)
    mean = {k: (total[k] / n if n else None) for k in ("calls", "input_tokens", "output_tokens")}
    failures = [f.as_dict() for f in runner.failures]
    counts = {
        "problems": len(problems),
        "problems_with_relevance": n_relevant,
        "problems_with_scenarios": len({s.problem.id for s in scenarios}),
        "library_personas": len(library),
        "personas": len(used_personas),
        "scenarios": n,
        "planned_scenarios": len(problems) * config.personas_per_problem,
        "attributes": len(attributes),
        "new_attributes": len(new_attributes),
    }
    usage = {
        "token_source": "inspect ModelOutput.usage, summed over every attempt (retries included)",
        "per_step": steps,
        "total": total,
        "per_scenario_mean": mean,
        "per_scenario_mean_note": "all calls of the build (personas and relevance included) / scenarios",
        "per_scenario": per_scenario,
        "per_scenario_note": "own calls of each scenario: profile (+ regeneration) and rubric",
    }
    manifest = {
        "config": config.model_dump(mode="json"),
        "seeds": {
            "seed": config.seed,
            "problem_sample": config.seed,
            "persona_selection": config.seed,
            "blueprints": config.seed,
            "model_choice": config.seed,
        },
        "models": runner.pool.names,
        "build_counts": counts,
        "failures": {
            "count": len(failures),
            "by_step": dict(Counter(f["step"] for f in failures)),
            "items": failures,
        },
        "skipped": dict(skipped),
        "duplicates": duplicates,
        "personas": library_info,
        "new_attributes": [a.name for a in new_attributes],
        "checkpoint": {"path": f"{CHECKPOINT_DIR}/{CHECKPOINT_FILE}", "records": len(runner.checkpoint)},
        "usage": usage,
        "seconds": round(seconds, 2),
    }
    return BuildReport(
        out=config.out,
        scenarios=n,
        counts=counts,
        failures=failures,
        skipped=dict(skipped),
        duplicates=duplicates,
        usage=usage,
        personas=library_info,
        seconds=seconds,
        manifest=manifest,
    )


def run_build(config: BuildConfig, progress: Progress | None = None) -> BuildReport:
    return asyncio.run(build_benchmark(config, progress=progress))


# ---------------------------------------------------------------------------------------------------------
# The persona library on its own (``prefdisco personas``)
# ---------------------------------------------------------------------------------------------------------


@dataclass
class LibraryReport:
    out: Path
    result: persona_lib.LibraryResult
    usage: dict[str, Any]
    failures: list[dict[str, Any]]


def library_checkpoint(out: Path) -> Path:
    return out.parent / f".{out.name}.checkpoint.jsonl"


async def generate_library(
    out: Path,
    config: BuildConfig,
    *,
    models: Sequence[Model] | None = None,
    progress: Progress | None = None,
) -> LibraryReport:
    """Generate ``config.library_size`` personas into ``out`` (personas.jsonl), resumable from a checkpoint
    beside it."""
    out = Path(out)
    if out.is_dir():
        raise UserError(f"{out}: --out is a folder; give the personas.jsonl file to write")
    check_out_folder(out.parent)
    runner = make_runner(models if models is not None else resolve_models(config.models, config), config, progress)
    runner.checkpoint = Checkpoint(library_checkpoint(out))
    ipip = persona_lib.load_ipip(config.ipip) if config.ipip else None
    result = await persona_lib.build_library(runner, library_config(config, config.library_size), ipip)
    if not result.personas:
        raise UserError(f"{out}: no persona was accepted{first_failure(runner)}")
    persona_lib.save_library(out, result.personas)
    return LibraryReport(
        out=out,
        result=result,
        usage=runner.usage_table(),
        failures=[f.as_dict() for f in runner.failures],
    )


def run_personas(out: Path, config: BuildConfig, progress: Progress | None = None) -> LibraryReport:
    return asyncio.run(generate_library(out, config, progress=progress))


# ---------------------------------------------------------------------------------------------------------
# --dry-run
# ---------------------------------------------------------------------------------------------------------

ESTIMATE_METHOD = "chars/4: one token per 4 characters of prompt + response schema (inspect's JSON schema)"
"""tiktoken needs to download its encodings, which a dry run must not do; chars/4 is the usual rule."""

EXPECTED_OUTPUT_CHARS = {
    persona_lib.STEP: 1100,  # one persona
    "relevance_per_name": 32,  # per attribute name listed
    "profile_per_item": 260,  # attribute, value, one-sentence justification, importance
    "rubric_per_criterion": 800,  # description + five level anchors
}


class StepEstimate(BaseModel):
    calls: int
    input_tokens: int
    output_tokens: int
    note: str = ""


class BuildEstimate(BaseModel):
    method: str = ESTIMATE_METHOD
    steps: dict[str, StepEstimate]
    models: list[str]

    @property
    def total(self) -> StepEstimate:
        return StepEstimate(
            calls=sum(s.calls for s in self.steps.values()),
            input_tokens=sum(s.input_tokens for s in self.steps.values()),
            output_tokens=sum(s.output_tokens for s in self.steps.values()),
        )


def _tokens(chars: int) -> int:
    return math.ceil(chars / 4)


def _schema_chars(schema: type[BaseModel]) -> int:
    return len(response_schema(schema).json_schema.model_dump_json(exclude_none=True))


def estimate_build(
    config: BuildConfig,
    *,
    problems: list[Problem] | None = None,
    catalogue: list[Attribute] | None = None,
) -> BuildEstimate:
    """Model calls and tokens per step, from the real prompts where they are known, without any model call.
    Retries and regenerations of identical profiles are not included (each retry resends the conversation)."""
    from prefdisco.builder.catalogue import load_catalogue

    problems = problems if problems is not None else load_build_problems(config)
    catalogue = catalogue if catalogue is not None else load_catalogue(config.catalogue)
    library = persona_lib.load_library(config.persona_library) if config.persona_library else None
    ipip = persona_lib.load_ipip(config.ipip) if config.ipip else None
    steps: dict[str, StepEstimate] = {}

    if library is None:
        lcfg = library_config(config, config.library_size)
        rng = random.Random(f"{config.seed}\x1fpersona-blueprints")
        schema_chars = _schema_chars(persona_lib.persona_schema(tuple(lcfg.space.occupation_groups)))
        chars = [
            len(persona_lib.persona_prompt(persona_lib.sample_blueprint(rng, lcfg.space, i), ipip, config.seed))
            + schema_chars
            for i in range(min(config.library_size, 20))
        ]
        per_call = sum(chars) / len(chars)
        n = config.library_size
        steps[persona_lib.STEP] = StepEstimate(
            calls=n,
            input_tokens=_tokens(int(per_call * n)),
            output_tokens=_tokens(EXPECTED_OUTPUT_CHARS[persona_lib.STEP] * n),
            note=f"+ one call per rejected candidate (at most {lcfg.max_candidates or 3 * n + 5} calls in all)",
        )
        sample_persona = _typical_persona()
    else:
        steps[persona_lib.STEP] = StepEstimate(calls=0, input_tokens=0, output_tokens=0, note="library given")
        sample_persona = library[0]

    rcfg = config.relevance
    lo, hi = relevance_lib.bounds(catalogue, rcfg)
    rel_schema = relevance_lib.relevance_schema(tuple(a.name for a in catalogue), lo, hi, rcfg.max_new)
    rel_in = sum(len(relevance_lib.relevance_prompt(p, catalogue, rcfg)) for p in problems)
    rel_in += _schema_chars(rel_schema) * len(problems)
    steps[relevance_lib.STEP] = StepEstimate(
        calls=len(problems),
        input_tokens=_tokens(rel_in),
        output_tokens=_tokens((EXPECTED_OUTPUT_CHARS["relevance_per_name"] * (lo + hi) // 2 + 40) * len(problems)),
    )

    k = config.personas_per_problem
    relevant = catalogue[: max(1, (lo + hi) // 2)]
    plo, phi = profile_lib.bounds(relevant, config.profile)
    items = (plo + phi) / 2
    prof_schema = _schema_chars(profile_lib.profile_schema(relevant, config.profile))
    prof_in = sum(
        len(profile_lib.profile_prompt(sample_persona, p, relevant, config.profile)) + prof_schema for p in problems
    )
    steps[profile_lib.STEP] = StepEstimate(
        calls=len(problems) * k,
        input_tokens=_tokens(prof_in * k),
        output_tokens=_tokens(int(EXPECTED_OUTPUT_CHARS["profile_per_item"] * items * len(problems) * k)),
        note=f"F(i) assumed to hold {len(relevant)} attributes; profiles of {plo}-{phi} items",
    )
    steps[profile_lib.REGEN_STEP] = StepEstimate(
        calls=0, input_tokens=0, output_tokens=0, note="one extra profile call per identical profile found"
    )

    sample_profile = PreferenceProfile.normalized(
        [
            PreferenceItem(
                attribute=a.name,
                value=a.value_space[-1],
                weight=1.0,
                justification="x" * 120,
                description=a.description,
                category=a.category,
            )
            for a in relevant[: max(1, round(items))]
        ]
    )
    rub_schema = _schema_chars(rubric_lib.rubric_schema(tuple(i.attribute for i in sample_profile.items)))
    rub_in = sum(
        len(rubric_lib.rubric_prompt(p, sample_persona, sample_profile, config.profile.max_problem_chars)) + rub_schema
        for p in problems
    )
    steps[rubric_lib.STEP] = StepEstimate(
        calls=len(problems) * k,
        input_tokens=_tokens(rub_in * k),
        output_tokens=_tokens(int(EXPECTED_OUTPUT_CHARS["rubric_per_criterion"] * items * len(problems) * k)),
    )
    return BuildEstimate(steps=steps, models=list(config.models))


def _typical_persona() -> Persona:
    """A stand-in of typical length for prompt-size estimates when the library is not generated yet."""
    traits = {t: {"level": "medium", "score": 3.0} for t in BIG_FIVE}
    return Persona.model_validate(
        {
            "id": "persona-estimate",
            "name": "Alex Example",
            "age": 40,
            "occupation": "x" * 24,
            "location": "x" * 20,
            "education": "x" * 30,
            "summary": "x" * 200,
            "big_five": traits,
            "expertise": {"mathematics": "novice", "science": "intermediate", "medicine": "none"},
            "backstory": "x" * 300,
        }
    )
