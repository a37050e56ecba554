"""The persona library: Big-Five-grounded simulated users, generated from seeded blueprints with rejection
sampling against over-represented combinations.

Code samples a *blueprint* (Big Five levels and 1-5 scores, optional facet scores, an age band, an occupation
group, an education level); the LLM (temperature 0.7 by default) fills in a coherent person. Trait levels are
described in the prompt either by IPIP-NEO items from a file the user gives (``load_ipip``) or by the short
packaged descriptions below, so the default needs no shared data.

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
import hashlib
import json
import math
import random
from collections import Counter
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator

from prefdisco import prompts
from prefdisco.atomic import atomic_write
from prefdisco.builder.pool import StepRunner
from prefdisco.errors import UserError, describe_validation_error
from prefdisco.schema import BIG_FIVE, Persona, TraitScore

STEP = "persona"
MAX_TOKENS = 640

AGE_BANDS: tuple[tuple[int, int], ...] = ((18, 25), (26, 35), (36, 45), (46, 55), (56, 65), (66, 80))

OCCUPATION_GROUPS: dict[str, tuple[int, int]] = {
    # group -> the ages it is plausible for (a blueprint never pairs a group with a band outside this range)
    "skilled trades and construction": (18, 80),
    "healthcare": (18, 80),
    "education and childcare": (18, 80),
    "arts, design and media": (18, 80),
    "science and research": (18, 80),
    "engineering and technology": (18, 80),
    "business, finance and sales": (18, 80),
    "law, government and public safety": (18, 80),
    "hospitality, food and retail": (18, 80),
    "agriculture, fishing and outdoor work": (18, 80),
    "transport and logistics": (18, 80),
    "care work and community service": (18, 80),
    "student": (18, 35),
    "homemaker or not in paid work": (18, 80),
    "retired": (56, 80),
}

EDUCATION_LEVELS: tuple[str, ...] = (
    "left school early",
    "secondary school",
    "vocational or trade qualification",
    "some college",
    "bachelor's degree",
    "master's degree",
    "doctorate or professional degree",
)
_MIN_AGE_FOR_EDUCATION = {"master's degree": 23, "doctorate or professional degree": 26}

TRAIT_LEVELS: tuple[str, ...] = ("low", "medium", "high")
LEVEL_RANGES = {"low": (1.0, 2.4), "medium": (2.5, 3.5), "high": (3.6, 5.0)}

FACETS: dict[str, tuple[str, ...]] = {  # the six IPIP-NEO facets of each domain, in facet-number order
    "neuroticism": ("anxiety", "anger", "depression", "self-consciousness", "immoderation", "vulnerability"),
    "extraversion": (
        "friendliness",
        "gregariousness",
        "assertiveness",
        "activity level",
        "excitement-seeking",
        "cheerfulness",
    ),
    "openness": (
        "imagination",
        "artistic interests",
        "emotionality",
        "adventurousness",
        "intellect",
        "liberalism",
    ),
    "agreeableness": ("trust", "morality", "altruism", "cooperation", "modesty", "sympathy"),
    "conscientiousness": (
        "self-efficacy",
        "orderliness",
        "dutifulness",
        "achievement-striving",
        "self-discipline",
        "cautiousness",
    ),
}

TRAIT_HINTS: dict[str, dict[str, str]] = {  # used when no IPIP item file is given
    "openness": {
        "low": "prefers the familiar and concrete, wary of abstract ideas",
        "medium": "open to new ideas when they are useful",
        "high": "curious and imaginative, enjoys new and abstract ideas",
    },
    "conscientiousness": {
        "low": "spontaneous, dislikes plans and detail",
        "medium": "organised when it matters",
        "high": "careful, orderly and thorough",
    },
    "extraversion": {
        "low": "reserved and quiet, prefers working alone",
        "medium": "sociable in moderation",
        "high": "outgoing, talkative and energetic",
    },
    "agreeableness": {
        "low": "blunt and sceptical of others",
        "medium": "cooperative but stands their ground",
        "high": "warm, trusting and eager to help",
    },
    "neuroticism": {
        "low": "calm and rarely worried",
        "medium": "sometimes stressed under pressure",
        "high": "worries easily and is quick to feel stressed",
    },
}

_DOMAIN_LETTERS = {
    "O": "openness",
    "C": "conscientiousness",
    "E": "extraversion",
    "A": "agreeableness",
    "N": "neuroticism",
}


# ---------------------------------------------------------------------------------------------------------
# IPIP items
# ---------------------------------------------------------------------------------------------------------


class IpipItem(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str = Field(min_length=1)
    keyed: Literal["plus", "minus"]
    domain: Literal["O", "C", "E", "A", "N"]
    facet: int | None = None


def load_ipip(path: Path) -> dict[str, list[IpipItem]]:
    """IPIP-NEO items (a JSON list of ``{text, keyed, domain[, facet]}``) grouped by Big Five trait."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: IPIP item file not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise UserError(f"{path}: cannot read IPIP items as JSON ({err})") from None
    if not isinstance(data, list) or not data:
        raise UserError(f"{path}: expected a non-empty JSON list of IPIP items")
    grouped: dict[str, list[IpipItem]] = {t: [] for t in BIG_FIVE}
    for row, entry in enumerate(data):
        try:
            item = IpipItem.model_validate(entry)
        except ValidationError as err:
            raise UserError(describe_validation_error(err, f"{path}: item {row}")) from None
        grouped[_DOMAIN_LETTERS[item.domain]].append(item)
    empty = [t for t, items in grouped.items() if not items]
    if empty:
        raise UserError(f"{path}: no IPIP items for trait(s) {', '.join(empty)}")
    return grouped


# ---------------------------------------------------------------------------------------------------------
# Blueprints
# ---------------------------------------------------------------------------------------------------------


class BlueprintSpace(BaseModel):
    """What blueprints are drawn from. Narrow it to steer a library (or, in tests, to force collisions)."""

    age_bands: list[tuple[int, int]] = Field(default_factory=lambda: list(AGE_BANDS), min_length=1)
    occupation_groups: list[str] = Field(default_factory=lambda: list(OCCUPATION_GROUPS), min_length=1)
    education_levels: list[str] = Field(default_factory=lambda: list(EDUCATION_LEVELS), min_length=1)
    level_weights: tuple[float, float, float] = (1.0, 1.0, 1.0)
    """Sampling weights of the trait levels low, medium, high."""
    facets: bool = False


class Blueprint(BaseModel):
    index: int
    traits: dict[str, TraitScore]
    age_band: tuple[int, int]
    occupation_group: str
    education: str

    @property
    def pattern(self) -> str:
        return trait_pattern({t: s.level for t, s in self.traits.items()})

    @property
    def bucket(self) -> tuple[str, str, str]:
        return (self.occupation_group, age_band_of(self.age_band[0]), self.pattern)


def band_label(band: tuple[int, int]) -> str:
    return f"{band[0]}-{band[1]}"


def age_band_of(age: int) -> str:
    for lo, hi in AGE_BANDS:
        if lo <= age <= hi:
            return band_label((lo, hi))
    return "under-18" if age < AGE_BANDS[0][0] else f"over-{AGE_BANDS[-1][1]}"


def trait_pattern(levels: dict[str, str]) -> str:
    """Five letters L/M/H in BIG_FIVE order, e.g. ``HMLMH``."""
    return "".join(levels[t][0].upper() for t in BIG_FIVE)


def sample_blueprint(rng: random.Random, space: BlueprintSpace, index: int) -> Blueprint:
    traits: dict[str, TraitScore] = {}
    for trait in BIG_FIVE:
        level = rng.choices(TRAIT_LEVELS, weights=space.level_weights)[0]
        lo, hi = LEVEL_RANGES[level]
        score = round(rng.uniform(lo, hi), 1)
        facets: dict[str, float] = {}
        if space.facets:
            for facet in FACETS[trait]:
                facets[facet] = round(min(5.0, max(1.0, rng.gauss(score, 0.5))), 1)
        traits[trait] = TraitScore(level=level, score=score, facets=facets)  # type: ignore[arg-type]
    band = rng.choice(space.age_bands)
    groups = [g for g in space.occupation_groups if _group_fits(g, band)] or space.occupation_groups
    group = rng.choice(groups)
    levels = [e for e in space.education_levels if _MIN_AGE_FOR_EDUCATION.get(e, 0) <= band[1]]
    education = rng.choice(levels or space.education_levels)
    return Blueprint(index=index, traits=traits, age_band=band, occupation_group=group, education=education)


def _group_fits(group: str, band: tuple[int, int]) -> bool:
    lo, hi = OCCUPATION_GROUPS.get(group, (0, 200))
    return band[0] >= lo and band[1] <= hi


def trait_lines(blueprint: Blueprint, ipip: dict[str, list[IpipItem]] | None, seed: int) -> str:
    """One line per trait: level, score, and what it means (two IPIP items, or the packaged hint)."""
    rng = random.Random(f"{seed}\x1fipip\x1f{blueprint.index}")
    lines = []
    for trait in BIG_FIVE:
        ts = blueprint.traits[trait]
        head = f"- {trait}: {ts.level} ({ts.score:.1f}/5)"
        if ipip is None:
            lines.append(f"{head}: {TRAIT_HINTS[trait][ts.level]}")
            continue
        items = rng.sample(ipip[trait], k=min(2, len(ipip[trait])))
        parts = []
        for item in items:
            agrees = (item.keyed == "plus") == (ts.level == "high")
            verb = "neutral on" if ts.level == "medium" else ("agrees with" if agrees else "disagrees with")
            parts.append(f'{verb} "{item.text}"')
        lines.append(f"{head}; {'; '.join(parts)}")
    return "\n".join(lines)


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

    @field_validator("name")
    @classmethod
    def _full_name(cls, v: str) -> str:
        if len(v.split()) < 2:
            raise ValueError("name must be a first and a last name")
        return " ".join(v.split())


@cache
def persona_schema(groups: tuple[str, ...]) -> type[BaseModel]:
    """The reply schema: the person's fields plus the occupation group (one of ``groups``)."""
    group_type: Any = Literal[groups]  # type: ignore[valid-type]
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


def persona_id(name: str, occupation: str, age: int) -> str:
    digest = hashlib.sha1(f"{name}|{occupation}|{age}".encode()).hexdigest()[:8]
    return f"persona-{digest}"


def draft_to_persona(draft: BaseModel, blueprint: Blueprint, built_by: str) -> Persona:
    d = draft.model_dump()
    levels = {t: blueprint.traits[t].level for t in BIG_FIVE}
    return Persona(
        id=persona_id(d["name"], d["occupation"], d["age"]),
        name=d["name"],
        age=d["age"],
        occupation=d["occupation"],
        location=d["location"],
        education=d["education"],
        summary=d["summary"],
        big_five={t: blueprint.traits[t].model_copy() for t in BIG_FIVE},  # type: ignore[misc]
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
    """Read a personas.jsonl library; a bad line raises ``UserError`` naming the file and line."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: persona library not found (expected personas.jsonl)")
    personas: list[Persona] = []
    seen: set[str] = set()
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            persona = Persona.model_validate_json(line)
        except ValidationError as err:
            raise UserError(describe_validation_error(err, f"{path}:{lineno}")) from None
        if persona.id in seen:
            raise UserError(f"{path}:{lineno}: id: persona id {persona.id!r} appears twice")
        seen.add(persona.id)
        personas.append(persona)
    if not personas:
        raise UserError(f"{path}: the persona library is empty")
    return personas
