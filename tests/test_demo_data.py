"""The packaged demo scenario set: valid, varied, and consistent with the attribute catalogue."""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from importlib.resources import files

import pytest

from prefdisco.schema import ATTRIBUTE_CATEGORIES, BIG_FIVE, SCORE_LEVELS, AnswerType, Scenario

DOMAINS = ("math", "science", "medicine", "social")


def _level_for(score: float) -> str:
    if score < 2.5:
        return "low"
    if score <= 3.5:
        return "medium"
    return "high"


def _profile_key(s: Scenario) -> set[tuple[str, str]]:
    return {(i.attribute, i.value) for i in s.profile.items}


@pytest.fixture(scope="module")
def lines() -> list[str]:
    text = files("prefdisco").joinpath("data/demo_scenarios.jsonl").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def scenarios(lines: list[str]) -> list[Scenario]:
    return [Scenario.model_validate_json(line) for line in lines]


def test_every_line_is_a_valid_scenario(lines: list[str], scenarios: list[Scenario]) -> None:
    assert len(scenarios) == len(lines) >= 12
    for line, scenario in zip(lines, scenarios, strict=True):
        # A round trip loses nothing: the file holds exactly what the model dumps.
        assert json.loads(scenario.model_dump_json()) == json.loads(line)


def test_ids_are_unique_and_named_after_problem(scenarios: list[Scenario]) -> None:
    ids = [s.id for s in scenarios]
    assert len(set(ids)) == len(ids)
    for s in scenarios:
        assert s.id.startswith(s.problem.id + "-p")
        assert s.problem.id.startswith(f"demo-{s.problem.domain}-")
        assert s.problem.benchmark == "demo"
        assert s.provenance == {"source": "prefdisco demo set (hand-written)"}


def test_shared_problems_and_personas_are_identical_everywhere(scenarios: list[Scenario]) -> None:
    problems: dict[str, set[str]] = defaultdict(set)
    personas: dict[str, set[str]] = defaultdict(set)
    for s in scenarios:
        problems[s.problem.id].add(s.problem.model_dump_json())
        personas[s.persona.id].add(s.persona.model_dump_json())
    assert all(len(v) == 1 for v in problems.values())
    assert all(len(v) == 1 for v in personas.values())


def test_all_four_domains_with_at_least_three_scenarios(scenarios: list[Scenario]) -> None:
    counts = Counter(s.problem.domain for s in scenarios)
    assert set(counts) == set(DOMAINS)
    assert all(counts[d] >= 3 for d in DOMAINS), counts


def test_answer_types_and_gold_letters(scenarios: list[Scenario]) -> None:
    types = {s.problem.answer_type for s in scenarios}
    assert {AnswerType.LETTER, AnswerType.INTEGER} <= types
    letters = set()
    for s in scenarios:
        p = s.problem
        if p.answer_type is AnswerType.LETTER:
            assert len(p.choices) == 4
            letters.add(p.answer)
        elif p.answer_type is AnswerType.INTEGER:
            assert not p.choices
            int(p.answer)  # a plain integer gold
        # Short enough for the demo's small embedded model.
        assert len(p.prompt_text().split()) < 80, p.id
    assert len(letters) >= 3, letters


def test_profiles_are_sparse_and_weights_sum_to_one(scenarios: list[Scenario]) -> None:
    sizes = set()
    for s in scenarios:
        n = len(s.profile.items)
        assert 3 <= n <= 6, s.id
        sizes.add(n)
        assert abs(math.fsum(i.weight for i in s.profile.items) - 1.0) <= 1e-9, s.id
        for item in s.profile.items:
            assert item.weight >= 0
            assert item.justification and item.description
            assert item.category in ATTRIBUTE_CATEGORIES
    assert len(sizes) >= 3  # profile sizes vary


def test_one_rubric_criterion_per_attribute_with_five_levels(scenarios: list[Scenario]) -> None:
    for s in scenarios:
        assert [c.attribute for c in s.rubric] == [i.attribute for i in s.profile.items]
        for item in s.profile.items:
            criterion = s.criterion(item.attribute)
            assert criterion.preferred_value == item.value
            assert tuple(criterion.levels) == SCORE_LEVELS
            assert all(text.strip() for text in criterion.levels.values())
            assert len(set(criterion.levels.values())) == len(SCORE_LEVELS), (s.id, item.attribute)


def test_relevant_attributes_cover_the_profile(scenarios: list[Scenario]) -> None:
    for s in scenarios:
        relevant = s.relevant_attributes
        assert 6 <= len(relevant) <= 10, s.id
        assert len(set(relevant)) == len(relevant)
        assert {i.attribute for i in s.profile.items} <= set(relevant), s.id


def test_attributes_come_from_the_packaged_catalogue(scenarios: list[Scenario]) -> None:
    raw = files("prefdisco").joinpath("data/attributes.json").read_text(encoding="utf-8")
    catalogue = {a["name"]: a for a in json.loads(raw)}
    for s in scenarios:
        assert set(s.relevant_attributes) <= set(catalogue), s.id
        for item in s.profile.items:
            entry = catalogue[item.attribute]
            assert item.category == entry["category"], (s.id, item.attribute)
            assert item.description == entry["description"], (s.id, item.attribute)
            assert item.value in entry["value_space"], (s.id, item.attribute, item.value)


def test_personas_are_distinct_and_complete(scenarios: list[Scenario]) -> None:
    personas = {s.persona.id: s.persona for s in scenarios}
    assert len(personas) >= 6
    assert len({p.name for p in personas.values()}) == len(personas)
    assert len({p.occupation for p in personas.values()}) == len(personas)
    for p in (s.persona for s in scenarios):
        assert p.location and p.education and p.backstory and p.expertise
        assert set(p.big_five) == set(BIG_FIVE)
        for trait, ts in p.big_five.items():
            assert ts.level == _level_for(ts.score), (p.id, trait, ts)


def test_some_problems_have_two_personas_with_different_profiles(scenarios: list[Scenario]) -> None:
    by_problem: dict[str, list[Scenario]] = defaultdict(list)
    for s in scenarios:
        by_problem[s.problem.id].append(s)
    contrasted = 0
    for group in by_problem.values():
        pairs = [(a, b) for i, a in enumerate(group) for b in group[i + 1 :] if a.persona.id != b.persona.id]
        if any(_profile_key(a) != _profile_key(b) for a, b in pairs):
            contrasted += 1
    assert contrasted >= 2
