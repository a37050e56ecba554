"""Persona blueprints: what code decides about a persona before the LLM writes it.

A *blueprint* is seeded: Big Five levels and 1-5 scores (:data:`prefdisco.schema.TRAIT_LEVEL_RANGES`), optional
IPIP-NEO facet scores, an age band, an occupation group that fits the band, and an education level old enough
for it. A persona's *bucket* is (occupation group, age band, trait pattern of the five levels); the library's
rejection sampling (:mod:`prefdisco.builder.personas`) caps buckets and their marginals.

``trait_lines`` describes a blueprint's traits for the persona prompt, by IPIP items (:mod:`prefdisco.builder.ipip`)
when a file is given, else by the short packaged hints below.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from pydantic import BaseModel, Field

from prefdisco.builder.ipip import IpipItem
from prefdisco.schema import BIG_FIVE, TRAIT_LEVEL_RANGES, TraitScore

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


def trait_pattern(levels: Mapping[str, str]) -> str:
    """Five letters L/M/H in BIG_FIVE order, e.g. ``HMLMH``."""
    return "".join(levels[t][0].upper() for t in BIG_FIVE)


def sample_blueprint(rng: random.Random, space: BlueprintSpace, index: int) -> Blueprint:
    traits: dict[str, TraitScore] = {}
    for trait in BIG_FIVE:
        level = rng.choices(TRAIT_LEVELS, weights=space.level_weights)[0]
        lo, hi = TRAIT_LEVEL_RANGES[level]
        score = round(rng.uniform(lo, hi), 1)
        facets: dict[str, float] = {}
        if space.facets:
            for facet in FACETS[trait]:
                facets[facet] = round(min(5.0, max(1.0, rng.gauss(score, 0.5))), 1)
        traits[trait] = TraitScore(level=level, score=score, facets=facets)
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
