"""F(i) selection: names constrained to Θ, bounds re-asked, new attributes deduplicated across problems."""

from __future__ import annotations

import asyncio
from typing import Any

from prefdisco.builder.catalogue import load_catalogue
from prefdisco.builder.pool import ModelPool, StepRunner
from prefdisco.builder.relevance import RelevanceConfig, assign, propose, relevance_schema, resolve, select_relevant
from test_build_support import FakeBuilder, fake_model, make_problems

CATALOGUE = load_catalogue()
NAMES = [a.name for a in CATALOGUE]


def _select(fake: FakeBuilder, config: RelevanceConfig) -> tuple[Any, StepRunner]:
    runner = StepRunner(pool=ModelPool([fake_model(fake)], seed=0))
    problem = make_problems(1)[0]
    return asyncio.run(select_relevant(runner, problem, CATALOGUE, config)), runner


def test_schema_limits_names_to_the_catalogue() -> None:
    fake = FakeBuilder()
    outcome, _ = _select(fake, RelevanceConfig(min_relevant=4, max_relevant=6))
    assert outcome.value.relevant == NAMES[:4]
    (_, prompt) = fake.prompts[0]
    assert "Select the 4 to 6 catalogue attributes" in prompt
    assert all(f"- {a.name}: {a.description}" in prompt for a in CATALOGUE)


def test_unknown_names_and_too_few_names_are_re_asked_then_rejected() -> None:
    replies = iter(
        [
            {"relevant": ["Telepathy", *NAMES[:4]], "new_attributes": []},
            {"relevant": NAMES[:2], "new_attributes": []},
            {"relevant": [n.upper() for n in NAMES[:5]], "new_attributes": []},  # case is forgiven
        ]
    )
    fake = FakeBuilder({"relevance": lambda *a: next(replies)})
    outcome, _ = _select(fake, RelevanceConfig(min_relevant=4, max_relevant=6))
    assert outcome.value.relevant == NAMES[:5] and outcome.attempts == 3
    feedback = fake.conversations[1][-1]
    assert "'Telepathy' is not a catalogue attribute name" in feedback
    assert "at least 4 items" in fake.conversations[2][-1]

    fake = FakeBuilder({"relevance": lambda *a: {"relevant": NAMES[:9], "new_attributes": []}})
    outcome, runner = _select(fake, RelevanceConfig(min_relevant=4, max_relevant=6))
    assert outcome is None and fake.calls["relevance"] == 3
    assert "at most 6 items" in runner.failures[0].reason


def test_repeated_names_count_once() -> None:
    schema = relevance_schema(tuple(NAMES), 2, 3, 0)
    value = schema.model_validate({"relevant": [NAMES[0], NAMES[0], NAMES[1]]})
    assert value.relevant == NAMES[:2]
    assert "new_attributes" not in schema.model_fields


def test_new_attributes_are_deduplicated_against_theta_and_each_other() -> None:
    schema = relevance_schema(tuple(NAMES), 1, 5, 3)

    def draft(name: str) -> dict[str, Any]:
        return {
            "name": name,
            "category": "communication",
            "description": "How much the answer uses diagrams with labelled parts.",
            "values": ["none", "some", "many"],
        }

    answers = {
        "p1": schema.model_validate(
            {"relevant": [NAMES[0]], "new_attributes": [draft("Humour"), draft("Labelled diagrams")]}
        ),
        "p2": schema.model_validate({"relevant": [NAMES[1]], "new_attributes": [draft("Labeled diagram")]}),
        "p3": schema.model_validate({"relevant": [NAMES[2]], "new_attributes": []}),
    }
    relevant, new = resolve(answers, CATALOGUE)
    assert [a.name for a in new] == ["Labeled diagram"] or [a.name for a in new] == ["Labelled diagrams"]
    [diagrams] = new
    assert diagrams.value_space == ["none", "some", "many"]
    assert set(diagrams.aliases) == {"Labeled diagram", "Labelled diagrams"} - {diagrams.name}
    humor = next(a.name for a in CATALOGUE if a.name == "Use of humor")
    assert relevant["p1"] == [NAMES[0], humor, diagrams.name]  # "Humour" became Θ's "Use of humor"
    assert relevant["p2"] == [NAMES[1], diagrams.name]
    assert relevant["p3"] == [NAMES[2]]


def test_new_attributes_do_not_depend_on_the_order_of_the_problems() -> None:
    schema = relevance_schema(tuple(NAMES), 1, 5, 3)

    def draft(name: str, description: str) -> dict[str, Any]:
        return {"name": name, "category": "cognitive", "description": description, "values": ["low", "high"]}

    proposals = {
        "p1": [
            draft("Sourdough timing", "Zeta: how long the dough rests."),
            draft("Kitchen vocabulary", "Words of the kitchen."),
        ],
        "p2": [
            draft("Sourdough timing", "Alpha: how long the dough rests."),
            draft("Sourdough timings", "Other words on timing."),
        ],
        "p3": [draft("Humour", "Jokes in the answer.")],
    }
    results = []
    for order in (["p1", "p2", "p3"], ["p3", "p2", "p1"], ["p2", "p3", "p1"]):
        answers = {
            pid: schema.model_validate({"relevant": [NAMES[0]], "new_attributes": proposals[pid]}) for pid in order
        }
        proposed = propose(answers, CATALOGUE)
        results.append(([a.model_dump() for a in proposed.new], proposed.mapping, assign(answers, CATALOGUE, proposed)))
    assert all(r == results[0] for r in results)
    new, mapping, relevant = results[0]
    assert [a["name"] for a in new] == ["Kitchen vocabulary", "Sourdough timing"]  # sorted by name
    # the description comes from the draft spelled like the canonical name with the smallest description
    assert new[1]["description"].startswith("Alpha") and new[1]["aliases"] == ["Sourdough timings"]
    assert mapping["Humour"] == "Use of humor"
    assert relevant["p2"] == [NAMES[0], "Sourdough timing"]
