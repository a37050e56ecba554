"""Sparse profiles (bounds, values, weights) and rubrics (five levels, one criterion per attribute)."""

from __future__ import annotations

import asyncio
import math
import random
from typing import Any

import pytest

from prefdisco.builder import profiles as pf
from prefdisco.builder import rubrics as rb
from prefdisco.builder.catalogue import load_catalogue
from prefdisco.builder.pool import ModelPool, StepRunner
from prefdisco.schema import BIG_FIVE, Persona, PreferenceItem, PreferenceProfile
from test_build_support import FakeBuilder, default_rubric, fake_model, make_problems

CATALOGUE = load_catalogue()
RELEVANT = CATALOGUE[:9]
PERSONA = Persona(
    id="persona-00000001",
    name="Rosa Marin",
    age=52,
    occupation="Ferry engineer",
    summary="Keeps old engines running and distrusts shortcuts.",
    big_five={t: {"level": "medium", "score": 3.0} for t in BIG_FIVE},
)
PROBLEM = make_problems(2)[1]  # multiple choice


def item(i: int, value: Any = None, importance: Any = 3) -> dict[str, Any]:
    a = RELEVANT[i]
    return {
        "attribute": a.name,
        "value": a.value_space[0] if value is None else value,
        "justification": "Fits who she is.",
        "importance": importance,
    }


def _profile(fake: FakeBuilder, config: pf.ProfileConfig) -> tuple[Any, StepRunner]:
    runner = StepRunner(pool=ModelPool([fake_model(fake)], seed=0))
    return asyncio.run(pf.generate_profile(runner, PERSONA, PROBLEM, RELEVANT, config)), runner


def test_schema_constrains_each_item_to_one_attribute_and_its_values() -> None:
    from prefdisco.structured import response_schema

    schema = response_schema(pf.profile_schema(RELEVANT, pf.ProfileConfig())).json_schema
    options = schema.properties["preferences"].items.anyOf  # type: ignore[index,union-attr]
    assert len(options) == len(RELEVANT)
    for option, attr in zip(options, RELEVANT, strict=True):
        assert option.properties["attribute"].enum == [attr.name]
        assert option.properties["value"].enum == attr.value_space
        assert option.properties["importance"].enum == [1, 2, 3, 4, 5]


def test_out_of_range_profiles_are_re_asked_then_accepted() -> None:
    replies = iter(
        [
            {"preferences": [item(0), item(1)]},  # too few
            {"preferences": [item(i) for i in range(8)]},  # too many
            {"preferences": [item(0, "3"), item(1), item(2, importance="5")]},
        ]
    )
    fake = FakeBuilder({"profile": lambda *a: next(replies)})
    outcome, _ = _profile(fake, pf.ProfileConfig(min_attributes=3, max_attributes=7))
    assert outcome.attempts == 3
    assert "at least 3 items" in fake.conversations[1][-1]
    assert "at most 7 items" in fake.conversations[2][-1]
    prefs = outcome.value.preferences
    assert prefs[0].value == "3: comfortable with standard material"  # a bare scale number names its anchor
    assert prefs[2].importance == 5


def test_profiles_that_stay_out_of_range_are_rejected() -> None:
    fake = FakeBuilder({"profile": lambda *a: {"preferences": [item(i) for i in range(6)]}})
    outcome, runner = _profile(fake, pf.ProfileConfig(min_attributes=2, max_attributes=4))
    assert outcome is None
    assert fake.calls["profile"] == 3
    [failure] = runner.failures
    assert failure.step == "profile" and "at most 4 items" in failure.reason


@pytest.mark.parametrize(
    "bad, reason",
    [
        ({"preferences": [item(0), item(0), item(1)]}, "listed twice"),
        ({"preferences": [item(0, "9: beyond"), item(1), item(2)]}, "not an allowed value"),
        ({"preferences": [item(0, importance=0), item(1), item(2)]}, "importance must be an integer 1 to 5"),
        ({"preferences": [{**item(0), "attribute": "Mind reading"}, item(1), item(2)]}, "not a listed attribute"),
    ],
)
def test_invalid_items_give_a_one_line_reason(bad: dict[str, Any], reason: str) -> None:
    import json

    from prefdisco.structured import parse_reply

    with pytest.raises(ValueError, match=reason) as info:
        parse_reply(json.dumps(bad), pf.profile_schema(RELEVANT, pf.ProfileConfig()))
    assert "\n" not in str(info.value)


def test_sparsity_bounds_shrink_to_a_small_f_of_i() -> None:
    assert pf.bounds(RELEVANT[:2], pf.ProfileConfig(min_attributes=3, max_attributes=7)) == (2, 2)
    assert pf.bounds(RELEVANT, pf.ProfileConfig(min_attributes=3, max_attributes=7)) == (3, 7)


def test_weights_come_from_importances_and_sum_to_exactly_one() -> None:
    schema = pf.profile_schema(RELEVANT, pf.ProfileConfig(min_attributes=1, max_attributes=9))
    rng = random.Random(0)
    for _ in range(200):
        k = rng.randint(1, 9)
        chosen = rng.sample(range(9), k)
        importances = [rng.randint(1, 5) for _ in chosen]
        reply = schema.model_validate(
            {"preferences": [item(i, importance=imp) for i, imp in zip(chosen, importances, strict=True)]}
        )
        profile = pf.to_profile(reply, RELEVANT)
        weights = [i.weight for i in profile.items]
        assert math.fsum(weights) == 1.0
        by_attr = {RELEVANT[i].name: imp for i, imp in zip(chosen, importances, strict=True)}
        total = sum(by_attr.values())
        for it in profile.items:
            assert it.weight == pytest.approx(by_attr[it.attribute] / total, abs=1e-12)
            assert it.description == next(a.description for a in RELEVANT if a.name == it.attribute)
    # Items follow F(i) order whatever order the model used.
    reply = schema.model_validate({"preferences": [item(4), item(1)]})
    assert [i.attribute for i in pf.to_profile(reply, RELEVANT).items] == [RELEVANT[1].name, RELEVANT[4].name]


def _sample_profile() -> PreferenceProfile:
    return PreferenceProfile.normalized(
        [PreferenceItem(attribute=a.name, value=a.value_space[-1], weight=0.5, justification="j") for a in RELEVANT[:3]]
    )


def test_rubric_missing_level_is_retried_and_criteria_carry_the_profile_value() -> None:
    def rubric(fake: FakeBuilder, prompt: str, schema: dict[str, Any], n: int) -> Any:
        reply = default_rubric(fake, prompt, schema, n)
        if n == 1:
            del reply["criteria"][1]["levels"]["4"]
        return reply

    fake = FakeBuilder({"rubric": rubric})
    runner = StepRunner(pool=ModelPool([fake_model(fake)], seed=0))
    profile = _sample_profile()
    outcome = asyncio.run(rb.generate_rubric(runner, PERSONA, PROBLEM, profile, 2000))
    assert outcome is not None and outcome.attempts == 2
    assert "criteria.1.levels.4: Field required" in fake.conversations[1][-1]
    criteria = rb.to_criteria(outcome.value, profile)
    assert [c.attribute for c in criteria] == [i.attribute for i in profile.items]
    for c, it in zip(criteria, profile.items, strict=True):
        assert c.preferred_value == it.value
        assert sorted(c.levels) == [1, 2, 3, 4, 5]
    prompt = fake.prompts[0][1]
    assert "Correct answer: B. Kidney" in prompt  # multiple choice: letter and option text
    assert all(f"Preferred: {i.value}." in prompt for i in profile.items)


def test_rubric_without_a_criterion_for_every_attribute_fails_after_retries() -> None:
    def partial(fake: FakeBuilder, prompt: str, schema: dict[str, Any], n: int) -> Any:
        reply = default_rubric(fake, prompt, schema, n)
        return {"criteria": reply["criteria"][:-1]}

    fake = FakeBuilder({"rubric": partial})
    runner = StepRunner(pool=ModelPool([fake_model(fake)], seed=0), retries=1)
    outcome = asyncio.run(rb.generate_rubric(runner, PERSONA, PROBLEM, _sample_profile(), 2000))
    assert outcome is None and fake.calls["rubric"] == 2
    assert f"no criterion for {profile_last()!r}" in runner.failures[0].reason


def profile_last() -> str:
    return _sample_profile().items[-1].attribute
