"""The persona library: Big-Five-grounded simulated users, written by an LLM from seeded blueprints
(:mod:`prefdisco.builder.blueprints`) with rejection sampling against over-represented combinations.

Code samples a blueprint; the LLM (temperature 0.7 by default) fills in a coherent person: name, age,
occupation, location, education, summary, backstory and expertise. A persona's id is
:func:`prefdisco.schema.persona_id` of its name and summary, the paper's scheme.

A persona's *bucket* is (occupation group, age band, trait pattern of the five levels). A candidate is
rejected when its bucket already holds ``floor(max_share * n)`` personas of the target library size ``n``;
when its occupation group or its age band alone already holds its *marginal cap* (``max_marginal_share`` times
that value's expected share under the blueprint space, e.g. 2 × n / 15 for a group: LLMs drift towards a few
stock occupations and ages, which the bucket alone, split by 243 trait patterns, would not notice); or when its
name or occupation duplicates one in the library. Caps are checked on the blueprint before any call, and again
on the generated persona, whose age and group the LLM may have drifted from. Rejections are counted.
Generation runs in fixed-size batches and accepts candidates in blueprint order, so the library depends on the
seed and the batch size only, not on concurrency.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections import Counter
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, create_model, field_validator

from prefdisco import prompts
from prefdisco.atomic import atomic_write
from prefdisco.benchio import read_jsonl_models
from prefdisco.builder.blueprints import (
    Blueprint,
    BlueprintSpace,
    age_band_of,
    band_label,
    sample_blueprint,
    trait_lines,
    trait_pattern,
)
from prefdisco.builder.degenerate import PERSONA_TEXT, no_text
from prefdisco.builder.ipip import IpipItem
from prefdisco.builder.pool import StepRunner
from prefdisco.errors import UserError
from prefdisco.schema import BIG_FIVE, Persona, persona_id

STEP = "persona"
MAX_TOKENS = 640


# ---------------------------------------------------------------------------------------------------------
# The LLM's part
# ---------------------------------------------------------------------------------------------------------


ExpertiseLevel = Literal["none", "novice", "intermediate", "advanced", "expert"]


class ExpertiseDraft(BaseModel):
    """A level in every domain the benchmarks cover (required keys, so a grammar-constrained model fills all)."""

    model_config = ConfigDict(extra="ignore")

    mathematics: ExpertiseLevel
    science: ExpertiseLevel
    medicine: ExpertiseLevel
    logic: ExpertiseLevel
    general_knowledge: ExpertiseLevel
    social_situations: ExpertiseLevel

    def as_dict(self) -> dict[str, str]:
        return {name.replace("_", " "): level for name, level in self.model_dump().items()}


class _PersonaDraftBase(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str = Field(min_length=3, max_length=60)
    age: int = Field(ge=13, le=100)
    occupation: str = Field(min_length=2, max_length=80)
    location: str = Field(min_length=2, max_length=80)
    education: str = Field(min_length=2, max_length=120)
    summary: str = Field(min_length=10, max_length=400)
    backstory: str = Field(min_length=10, max_length=600)
    expertise: ExpertiseDraft

    @field_validator(*PERSONA_TEXT)
    @classmethod
    def _text(cls, v: str, info: ValidationInfo) -> str:
        """A field of punctuation or JSON is asked again (``degenerate.py``)."""
        why = no_text(v)
        if why:
            raise ValueError(f"{info.field_name} {v!r}: {why}")
        return v

    @field_validator("name")
    @classmethod
    def _full_name(cls, v: str) -> str:
        if len(v.split()) < 2:
            raise ValueError("name must be a first and a last name")
        return " ".join(v.split())


@cache
def persona_schema(groups: tuple[str, ...]) -> type[BaseModel]:
    """The reply schema: the person's fields plus the occupation group (one of ``groups``)."""
    group_type: Any = Literal[groups]
    return create_model("PersonaDraft", __base__=_PersonaDraftBase, occupation_group=(group_type, ...))


NAME_LETTERS = "ABCDEFGHIJKLMNOPRSTVW"
"""Initials hinted to the model: LLMs collapse onto a few stock names ("Sarah Chen"), so each blueprint
suggests seeded initials. (A list of names already taken is not sent: small models copied names from it.)
A duplicate name is still rejected by ``rejection_reason``."""


def name_initials(blueprint: Blueprint, seed: int) -> tuple[str, str]:
    rng = random.Random(f"{seed}\x1fname\x1f{blueprint.index}")
    return rng.choice(NAME_LETTERS), rng.choice(NAME_LETTERS)


def persona_prompt(
    blueprint: Blueprint,
    ipip: dict[str, list[IpipItem]] | None,
    seed: int,
    avoid_occupations: Sequence[str] = (),
) -> str:
    avoid = []
    if avoid_occupations:
        avoid.append("Occupations already taken (pick a different one): " + "; ".join(avoid_occupations) + ".")
    first, last = name_initials(blueprint, seed)
    return prompts.render(
        "build_persona",
        first_initial=first,
        last_initial=last,
        age_min=blueprint.age_band[0],
        age_max=blueprint.age_band[1],
        group=blueprint.occupation_group,
        education=blueprint.education,
        traits=trait_lines(blueprint, ipip, seed),
        avoid="\n".join(avoid),
    )


def draft_to_persona(draft: BaseModel, blueprint: Blueprint, built_by: str) -> Persona:
    d = draft.model_dump()
    levels = {t: blueprint.traits[t].level for t in BIG_FIVE}
    return Persona(
        id=persona_id(d["name"], d["summary"]),
        name=d["name"],
        age=d["age"],
        occupation=d["occupation"],
        location=d["location"],
        education=d["education"],
        summary=d["summary"],
        big_five={t: blueprint.traits[t].model_copy() for t in BIG_FIVE},
        expertise=draft.expertise.as_dict(),  # type: ignore[attr-defined]
        backstory=d["backstory"],
        extra={
            "built_by": built_by,
            "occupation_group": d["occupation_group"],
            "age_band": age_band_of(d["age"]),
            "trait_pattern": trait_pattern(levels),
            "blueprint": {
                "index": blueprint.index,
                "age_band": band_label(blueprint.age_band),
                "occupation_group": blueprint.occupation_group,
                "education": blueprint.education,
            },
        },
    )


def bucket_of(persona: Persona) -> tuple[str, str, str]:
    """(occupation group, age band, trait pattern) of any persona (group "unknown" when not recorded)."""
    group = str(persona.extra.get("occupation_group") or "unknown")
    levels = {t: persona.big_five[t].level for t in BIG_FIVE}  # type: ignore[index]
    return (group, age_band_of(persona.age), trait_pattern(levels))


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


# ---------------------------------------------------------------------------------------------------------
# Rejection sampling
# ---------------------------------------------------------------------------------------------------------


class LibraryConfig(BaseModel):
    n: int = Field(ge=1)
    seed: int = 0
    max_share: float = Field(default=0.05, gt=0, le=1)
    batch_size: int = Field(default=8, ge=1)
    max_candidates: int | None = Field(default=None, ge=1, description="LLM persona calls; default 3n + 5")
    max_blueprints: int | None = Field(default=None, ge=1, description="blueprints drawn; default 50n")
    space: BlueprintSpace = Field(default_factory=BlueprintSpace)

    max_marginal_share: float | None = Field(
        default=2.0, gt=0, description="cap of one occupation group / age band, as a multiple of its expected share"
    )

    @property
    def cap(self) -> int:
        """How many personas one bucket may hold."""
        return max(1, math.floor(self.max_share * self.n + 1e-9))

    @property
    def group_cap(self) -> int:
        return self._marginal(len(self.space.occupation_groups))

    @property
    def band_cap(self) -> int:
        return self._marginal(len(self.space.age_bands))

    def _marginal(self, values: int) -> int:
        if self.max_marginal_share is None:
            return self.n
        return max(1, math.ceil(self.max_marginal_share * self.n / values - 1e-9))


class LibraryResult(BaseModel):
    personas: list[Persona]
    rejections: dict[str, int]
    candidates: int
    blueprints: int
    diversity: dict[str, Any]


def rejection_reason(persona: Persona, library: Sequence[Persona], config: LibraryConfig) -> str | None:
    names = {_norm(p.name) for p in library}
    if _norm(persona.name) in names:
        return "duplicate_name"
    if _norm(persona.occupation) in {_norm(p.occupation) for p in library}:
        return "duplicate_occupation"
    if any(p.id == persona.id for p in library):
        return "duplicate_name"
    return cap_reason(bucket_of(persona), Counter(bucket_of(p) for p in library), config)


def cap_reason(bucket: tuple[str, str, str], held: Counter[tuple[str, str, str]], config: LibraryConfig) -> str | None:
    """Why a persona of ``bucket`` would over-represent something, given the buckets ``held`` so far."""
    if held[bucket] >= config.cap:
        return "bucket_full"
    if sum(n for b, n in held.items() if b[0] == bucket[0]) >= config.group_cap:
        return "occupation_group_full"
    if sum(n for b, n in held.items() if b[1] == bucket[1]) >= config.band_cap:
        return "age_band_full"
    return None


async def build_library(
    runner: StepRunner, config: LibraryConfig, ipip: dict[str, list[IpipItem]] | None = None
) -> LibraryResult:
    """Generate up to ``config.n`` personas with rejection sampling (see the module docstring)."""
    rng = random.Random(f"{config.seed}\x1fpersona-blueprints")
    schema = persona_schema(tuple(config.space.occupation_groups))
    max_candidates = config.max_candidates or 3 * config.n + 5
    max_blueprints = config.max_blueprints or 50 * config.n
    library: list[Persona] = []
    rejections: Counter[str] = Counter()
    drawn = candidates = 0
    runner.progress.start(STEP, config.n)
    while len(library) < config.n and candidates < max_candidates and drawn < max_blueprints:
        held = Counter(bucket_of(p) for p in library)
        batch: list[Blueprint] = []
        room = min(config.batch_size, config.n - len(library), max_candidates - candidates)
        while len(batch) < room and drawn < max_blueprints:
            blueprint = sample_blueprint(rng, config.space, drawn)
            drawn += 1
            reason = cap_reason(blueprint.bucket, held, config)
            if reason is not None:
                rejections[f"blueprint_{reason}"] += 1
                continue
            held[blueprint.bucket] += 1
            batch.append(blueprint)
        if not batch:
            break
        candidates += len(batch)
        prompts_ = [
            persona_prompt(
                bp,
                ipip,
                config.seed,
                avoid_occupations=[
                    p.occupation for p in library if p.extra.get("occupation_group") == bp.occupation_group
                ][-15:],
            )
            for bp in batch
        ]
        outcomes = await asyncio.gather(
            *(
                runner.run(
                    STEP, f"blueprint-{bp.index}", text, schema, name="persona", max_tokens=MAX_TOKENS, advance=False
                )
                for bp, text in zip(batch, prompts_, strict=True)
            )
        )
        for bp, outcome in zip(batch, outcomes, strict=True):
            if outcome is None:
                rejections["invalid_output"] += 1
                runner.progress.advance(STEP, 0, failed=1)
                continue
            persona = draft_to_persona(outcome.value, bp, outcome.model)
            reason = rejection_reason(persona, library, config)
            if reason is not None:
                rejections[reason] += 1
                continue
            library.append(persona)
            runner.progress.advance(STEP)
    return LibraryResult(
        personas=library,
        rejections=dict(sorted(rejections.items())),
        candidates=candidates,
        blueprints=drawn,
        diversity=library_diversity(library),
    )


def library_diversity(personas: Sequence[Persona]) -> dict[str, Any]:
    """Distinct buckets, the largest bucket's share, distinct occupations, trait-pattern entropy (bits)."""
    n = len(personas)
    if n == 0:
        return {"n": 0, "distinct_buckets": 0, "max_bucket_share": 0.0, "distinct_occupations": 0}
    buckets = Counter(bucket_of(p) for p in personas)
    patterns = Counter(bucket_of(p)[2] for p in personas)
    entropy = -sum((c / n) * math.log2(c / n) for c in patterns.values())
    return {
        "n": n,
        "distinct_buckets": len(buckets),
        "max_bucket_share": max(buckets.values()) / n,
        "distinct_occupations": len({_norm(p.occupation) for p in personas}),
        "distinct_occupation_groups": len({b[0] for b in buckets}),
        "distinct_trait_patterns": len(patterns),
        "trait_pattern_entropy_bits": round(entropy, 4),
        "max_trait_pattern_entropy_bits": round(math.log2(min(n, 3**5)), 4),
        "age_bands": dict(sorted(Counter(b[1] for b in buckets.elements()).items())),
    }


# ---------------------------------------------------------------------------------------------------------
# Library files
# ---------------------------------------------------------------------------------------------------------


def save_library(path: Path, personas: Sequence[Persona]) -> None:
    """Write personas.jsonl atomically (temp file in the same folder, then ``os.replace``)."""
    atomic_write(Path(path), "".join(p.model_dump_json() + "\n" for p in personas))


def load_library(path: Path) -> list[Persona]:
    """Read a personas.jsonl library; a bad line or a repeated id raises ``UserError`` naming the file."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: persona library not found (expected personas.jsonl)")
    personas = read_jsonl_models(path, Persona)
    seen: dict[str, int] = {}
    for record, persona in enumerate(personas, start=1):
        if persona.id in seen:
            raise UserError(
                f"{path}: id: persona id {persona.id!r} appears twice (records {seen[persona.id]} and {record})"
            )
        seen[persona.id] = record
    if not personas:
        raise UserError(f"{path}: the persona library is empty")
    return personas
