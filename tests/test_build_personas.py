"""Persona library: blueprints, IPIP grounding, rejection sampling, diversity, ids, library files."""

from __future__ import annotations

import asyncio
import hashlib
import math
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from prefdisco.builder import blueprints as bp_lib
from prefdisco.builder import personas as pl
from prefdisco.builder.ipip import DOMAIN_LETTERS, load_ipip
from prefdisco.builder.pool import Checkpoint, ModelPool, StepRunner
from prefdisco.errors import UserError
from prefdisco.schema import BIG_FIVE, TRAIT_LEVEL_RANGES, Persona, persona_id, trait_level
from test_build_support import FakeBuilder, default_persona, fake_model


def _runner(fake: FakeBuilder, checkpoint: Path | None = None) -> StepRunner:
    return StepRunner(pool=ModelPool([fake_model(fake)], seed=0), checkpoint=Checkpoint(checkpoint))


def _build(fake: FakeBuilder, config: pl.LibraryConfig, checkpoint: Path | None = None) -> pl.LibraryResult:
    return asyncio.run(pl.build_library(_runner(fake, checkpoint), config))


def test_blueprints_are_seeded_and_respect_levels_groups_and_facets() -> None:
    space = bp_lib.BlueprintSpace(facets=True)
    a = [bp_lib.sample_blueprint(random.Random("s"), space, i) for i in range(3)]
    b = [bp_lib.sample_blueprint(random.Random("s"), space, i) for i in range(3)]
    assert a == b
    rng = random.Random(0)
    for i in range(300):
        bp = bp_lib.sample_blueprint(rng, space, i)
        for trait in BIG_FIVE:
            ts = bp.traits[trait]
            lo, hi = TRAIT_LEVEL_RANGES[ts.level]
            assert lo <= ts.score <= hi
            assert trait_level(ts.score) == ts.level  # the ranges and their inverse agree
            assert list(ts.facets) == list(bp_lib.FACETS[trait])
            assert all(1 <= v <= 5 for v in ts.facets.values())
        if bp.occupation_group == "retired":
            assert bp.age_band[0] >= 56
        if bp.occupation_group == "student":
            assert bp.age_band[1] <= 35
        if bp.education == "doctorate or professional degree":
            assert bp.age_band[1] >= 26
        assert len(bp.pattern) == 5 and set(bp.pattern) <= {"L", "M", "H"}


def test_ipip_items_describe_the_trait_levels(shared_dir: Path) -> None:
    path = shared_dir / "data" / "ipip" / "ipip_neo_120_en_questions.json"
    ipip = load_ipip(path)
    assert sum(len(v) for v in ipip.values()) == 120
    texts = {item.text: item for items in ipip.values() for item in items}
    bp = bp_lib.sample_blueprint(random.Random(5), bp_lib.BlueprintSpace(level_weights=(0, 0, 1)), 0)  # all high
    lines = bp_lib.trait_lines(bp, ipip, seed=0).splitlines()
    assert len(lines) == 5
    for trait, line in zip(BIG_FIVE, lines, strict=True):
        assert line.startswith(f"- {trait}: high")
        for verb, text in re.findall(r'(agrees with|disagrees with) "([^"]+)"', line):
            item = texts[text]
            assert DOMAIN_LETTERS[item.domain] == trait
            assert (verb == "agrees with") == (item.keyed == "plus")  # high: agree with plus-keyed items
    assert bp_lib.trait_lines(bp, ipip, seed=0) == bp_lib.trait_lines(bp, ipip, seed=0)
    # Without items, the packaged hints are used: no shared data needed.
    assert "curious and imaginative" in bp_lib.trait_lines(bp, None, seed=0)


def test_bad_ipip_file_is_a_user_error(tmp_path: Path) -> None:
    bad = tmp_path / "items.json"
    bad.write_text('[{"text": "Worry", "keyed": "sideways", "domain": "N"}]')
    with pytest.raises(UserError, match=r"items.json: item 0: keyed"):
        load_ipip(bad)
    with pytest.raises(UserError, match="not found"):
        load_ipip(tmp_path / "missing.json")


def test_library_personas_have_stable_ids_and_a_rerun_makes_no_call(tmp_path: Path) -> None:
    fake = FakeBuilder()
    cp = tmp_path / "cp.jsonl"
    config = pl.LibraryConfig(n=6, seed=1, max_share=0.5, batch_size=4)
    result = _build(fake, config, cp)
    assert len(result.personas) == 6 and fake.calls["persona"] == 6
    for p in result.personas:
        # the paper's id scheme: last name lower-cased, "_", md5("<name>_<summary>")[:8]
        digest = hashlib.md5(f"{p.name}_{p.summary}".encode()).hexdigest()[:8]
        assert p.id == f"{p.name.split()[-1].lower()}_{digest}" == persona_id(p.name, p.summary)
        assert p.extra["built_by"] == "mockllm/model"
        assert p.extra["trait_pattern"] == pl.bucket_of(p)[2]
    again = FakeBuilder()
    rerun = _build(again, config, cp)
    assert again.total == 0
    assert [p.id for p in rerun.personas] == [p.id for p in result.personas]


def test_scripted_model_stuck_on_one_bucket_is_rejected_and_library_stays_within_max_share() -> None:
    """The model ignores the blueprint for its first 10 personas (age 30, same group): only `cap` of them fit."""

    def stuck(fake: FakeBuilder, prompt: str, schema: dict[str, Any], n: int) -> Any:
        reply = default_persona(fake, prompt, schema, n)
        if n <= 10:
            reply.update(age=30, occupation_group="engineering and technology")
        return reply

    fake = FakeBuilder({"persona": stuck})
    space = bp_lib.BlueprintSpace(level_weights=(0, 0, 1))  # one trait pattern, so age + group decide the bucket
    config = pl.LibraryConfig(n=10, seed=0, max_share=0.2, batch_size=5, space=space, max_marginal_share=None)
    assert config.cap == 2
    result = _build(fake, config)
    assert len(result.personas) == 10
    assert result.rejections["bucket_full"] == 8
    assert result.candidates == 18 == fake.calls["persona"]
    assert result.diversity["max_bucket_share"] <= 0.2
    stuck_bucket = ("engineering and technology", "26-35", "HHHHH")
    assert sum(pl.bucket_of(p) == stuck_bucket for p in result.personas) == 2


def test_blueprints_of_a_full_bucket_are_rejected_before_any_call() -> None:
    fake = FakeBuilder()
    space = bp_lib.BlueprintSpace(age_bands=[(36, 45)], occupation_groups=["healthcare"], level_weights=(1, 0, 0))
    config = pl.LibraryConfig(n=5, max_share=0.4, space=space, max_blueprints=40)
    result = _build(fake, config)
    assert len(result.personas) == 2  # the cap; the library cannot grow further in this space
    assert fake.calls["persona"] == 2
    assert result.rejections == {"blueprint_bucket_full": 38}
    assert result.blueprints == 40


def test_duplicate_names_and_occupations_are_rejected_and_counted() -> None:
    def repeat(fake: FakeBuilder, prompt: str, schema: dict[str, Any], n: int) -> Any:
        reply = default_persona(fake, prompt, schema, n)
        if n % 2:
            reply["name"] = "Ada Same"
        else:
            reply["occupation"] = "Lighthouse keeper"
        return reply

    fake = FakeBuilder({"persona": repeat})
    result = _build(fake, pl.LibraryConfig(n=4, max_share=1.0, batch_size=2, max_candidates=8, max_marginal_share=None))
    names = [p.name for p in result.personas]
    assert names.count("Ada Same") == 1
    assert [p.occupation for p in result.personas].count("Lighthouse keeper") == 1
    assert len(result.personas) == 2 and result.candidates == 8
    assert result.rejections == {"duplicate_name": 3, "duplicate_occupation": 3}
    # The prompt tells the model which occupations are taken; names are not listed (small models copy them),
    # each blueprint suggests seeded initials instead.
    later = [p for name, p in fake.prompts if name == "persona"][-1]
    assert "Lighthouse keeper" in later and "Ada Same" not in later
    assert re.search(r"a first name starting with [A-Z] and a last name starting with [A-Z]", later)


def test_a_model_drifting_to_one_occupation_group_is_held_to_the_marginal_cap() -> None:
    """Half the replies ignore the blueprint (a 34-year-old engineer): the bucket rule alone, split by trait
    pattern, lets that group take over; the marginal cap keeps it at 2x its expected share."""

    def drifting(fake: FakeBuilder, prompt: str, schema: dict[str, Any], n: int) -> Any:
        reply = default_persona(fake, prompt, schema, n)
        if n % 2:
            reply.update(age=34, occupation_group="engineering and technology")
        return reply

    def build(marginal: float | None) -> pl.LibraryResult:
        return _build(FakeBuilder({"persona": drifting}), pl.LibraryConfig(n=30, max_marginal_share=marginal))

    def largest_group(result: pl.LibraryResult) -> int:
        return max(Counter(p.extra["occupation_group"] for p in result.personas).values())

    loose, capped = build(None), build(2.0)
    assert len(loose.personas) == len(capped.personas) == 30
    assert largest_group(loose) >= 15  # the drift wins without the cap
    config = pl.LibraryConfig(n=30)
    assert config.group_cap == 4 and config.band_cap == 10
    assert largest_group(capped) <= config.group_cap
    bands = Counter(pl.bucket_of(p)[1] for p in capped.personas)
    assert max(bands.values()) <= config.band_cap
    assert capped.rejections["occupation_group_full"] > 0 and capped.candidates > 30


def test_invalid_persona_replies_are_counted_not_kept() -> None:
    def one_word(fake: FakeBuilder, prompt: str, schema: dict[str, Any], n: int) -> Any:
        return {**default_persona(fake, prompt, schema, n), "name": "Mononym"}

    fake = FakeBuilder({"persona": one_word})
    runner = _runner(fake)
    result = asyncio.run(
        pl.build_library(runner, pl.LibraryConfig(n=2, max_candidates=2, max_share=1.0, max_marginal_share=None))
    )
    assert result.personas == [] and result.rejections == {"invalid_output": 2}
    assert fake.calls["persona"] == 6  # 2 candidates x (1 + 2 retries)
    assert "first and a last name" in runner.failures[0].reason


def _persona(i: int, group: str, age: int, levels: str, occupation: str | None = None) -> Persona:
    level = {"L": ("low", 1.5), "M": ("medium", 3.0), "H": ("high", 4.5)}
    return Persona(
        id=f"p{i}",
        name=f"P {i}",
        age=age,
        occupation=occupation or f"job {i}",
        summary="s",
        big_five={t: {"level": level[c][0], "score": level[c][1]} for t, c in zip(BIG_FIVE, levels, strict=True)},
        extra={"occupation_group": group},
    )


def test_library_diversity_figures() -> None:
    people = [
        _persona(0, "healthcare", 30, "HHHHH"),
        _persona(1, "healthcare", 31, "HHHHH", occupation="Job 0"),  # same bucket, same occupation (case)
        _persona(2, "retired", 70, "LLLLL"),
        _persona(3, "student", 20, "MLHML"),
    ]
    d = pl.library_diversity(people)
    assert d["n"] == 4
    assert d["distinct_buckets"] == 3
    assert d["max_bucket_share"] == 0.5
    assert d["distinct_occupations"] == 3
    assert d["distinct_trait_patterns"] == 3
    expected = -(0.5 * math.log2(0.5) + 2 * 0.25 * math.log2(0.25))
    assert d["trait_pattern_entropy_bits"] == pytest.approx(expected, abs=1e-4)
    assert d["age_bands"] == {"18-25": 1, "26-35": 2, "66-80": 1}


def test_library_file_round_trip_and_errors(tmp_path: Path) -> None:
    people = [_persona(0, "healthcare", 30, "HHHHH"), _persona(1, "retired", 70, "LLLLL")]
    path = tmp_path / "lib" / "personas.jsonl"
    pl.save_library(path, people)
    assert pl.load_library(path) == people
    assert [p.name for p in path.parent.iterdir()] == ["personas.jsonl"]  # no temp file left behind
    lines = path.read_text().splitlines()
    path.write_text(lines[0] + "\n" + lines[1].replace('"age":70', '"age":7') + "\n")
    with pytest.raises(UserError, match=r"personas.jsonl:2: age"):
        pl.load_library(path)
    path.write_text(lines[0] + "\n" + lines[0] + "\n")
    with pytest.raises(UserError, match=r"persona id .p0. appears twice \(records 1 and 2\)"):
        pl.load_library(path)


def test_ipip_items_reach_the_persona_prompts(shared_dir: Path) -> None:
    ipip = load_ipip(shared_dir / "data" / "ipip" / "ipip_neo_50_en_questions.json")
    fake = FakeBuilder()
    result = asyncio.run(pl.build_library(_runner(fake), pl.LibraryConfig(n=3, max_share=1.0), ipip))
    assert len(result.personas) == 3
    texts = {item.text for items in ipip.values() for item in items}
    for _, prompt in fake.prompts:
        quoted = re.findall(r'(?:agrees with|disagrees with|neutral on) "([^"]+)"', prompt)
        assert len(quoted) == 10 and set(quoted) <= texts  # two items for each of the five traits
    assert result.personas[0].expertise["general knowledge"] == "intermediate"
