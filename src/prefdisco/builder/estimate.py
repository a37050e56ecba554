"""``prefdisco build --dry-run``: model calls and tokens per step, estimated without any model call.

Prompt sizes come from the real prompts where they are known (the problems, the catalogue, a sample of
blueprints), a typical persona and profile stand in for what is not generated yet; tokens are chars/4 of prompt
plus response schema. Replies are estimated from typical lengths per persona, name, profile item and criterion.
"""

from __future__ import annotations

import math
import random

from pydantic import BaseModel

from prefdisco.builder import personas as persona_lib
from prefdisco.builder import profiles as profile_lib
from prefdisco.builder import relevance as relevance_lib
from prefdisco.builder import rubrics as rubric_lib
from prefdisco.builder import sessions as session_lib
from prefdisco.builder.blueprints import sample_blueprint
from prefdisco.builder.catalogue import load_catalogue
from prefdisco.builder.config import BuildConfig
from prefdisco.builder.library import ipip_items, library_config
from prefdisco.builder.setup import load_build_problems
from prefdisco.schema import BIG_FIVE, Attribute, Persona, PreferenceItem, PreferenceProfile, Problem
from prefdisco.structured import response_schema

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
    session_personas: int | None = None
    """A ``--session-length`` build: how many personas share its problems."""

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
    problems = problems if problems is not None else load_build_problems(config)
    if config.session_length is not None:
        session_lib.check_session_length(len(problems), config.session_length)
    catalogue = catalogue if catalogue is not None else load_catalogue(config.catalogue)
    library = persona_lib.load_library(config.persona_library) if config.persona_library else None
    ipip = ipip_items(config)
    steps: dict[str, StepEstimate] = {}

    if library is None:
        lcfg = library_config(config, config.library_n)
        rng = random.Random(f"{config.seed}\x1fpersona-blueprints")
        schema_chars = _schema_chars(persona_lib.persona_schema(tuple(lcfg.space.occupation_groups)))
        chars = [
            len(persona_lib.persona_prompt(sample_blueprint(rng, lcfg.space, i), ipip, config.seed)) + schema_chars
            for i in range(min(config.library_n, 20))
        ]
        per_call = sum(chars) / len(chars)
        n = config.library_n
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
    prof_in *= k
    prof_note = f"F(i) assumed to hold {len(relevant)} attributes; profiles of {plo}-{phi} items"
    personas: int | None = None
    if config.session_length is not None:  # every profile but a persona's first shows its earlier values
        size = len(library) if library is not None else config.library_n
        personas = session_lib.session_persona_count(size, len(problems), k, config.session_length)
        earlier = {a.name: a.value_space[-1] for a in relevant[: max(1, round(items))]}
        prof_in += len(session_lib.core_note(earlier, relevant)) * (len(problems) * k - personas)
        prof_note += f"; sessions: {personas} personas, each on {config.session_length}+ problems"
    steps[profile_lib.STEP] = StepEstimate(
        calls=len(problems) * k,
        input_tokens=_tokens(prof_in),
        output_tokens=_tokens(int(EXPECTED_OUTPUT_CHARS["profile_per_item"] * items * len(problems) * k)),
        note=prof_note,
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
    return BuildEstimate(steps=steps, models=list(config.models), session_personas=personas)


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
