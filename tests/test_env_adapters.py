"""The gymnasium and verl adapters written once over the unit they play (``env/units.py``, ``env/roster.py``):
what the scenario adapters now share with the session ones — one refusal of the options an environment sets
itself, one check of the benchmark, one wording of a refusal across the split, ``row`` — on scripted models."""

from __future__ import annotations

import asyncio

import gymnasium
import pytest

from prefdisco.env import Episode
from prefdisco.env.verl import PrefDiscoInteraction
from prefdisco.errors import UserError
from scripted import Scripted, constant, make_scenario
from test_env import four_problems, grading, hand_train_problems, models


def test_prefdisco_v0_refuses_an_option_it_sets_itself_in_one_line():
    user, grader = models()
    for option in ("trial", "training", "runner"):  # was a TypeError: Episode got the keyword twice
        with pytest.raises(
            UserError,
            match=rf"^{option}: set by the environment, not an option \(the k-th episode of a scenario is its trial "
            r"k, split='train' makes a training environment\)$",
        ):
            gymnasium.make(
                "PrefDisco-v0", scenarios=[make_scenario()], user_model=user.model, judge_model=grader.model,
                **{option: 3},
            )  # fmt: skip


def test_the_verl_interaction_checks_its_scenarios_as_the_environment_does():
    user, grader = models()
    base = {"user_model": user.model, "judge_model": grader.model}
    with pytest.raises(UserError, match=r"^scenarios: scenario ids must be unique$"):  # was kept, one silently lost
        PrefDiscoInteraction({**base, "scenarios": [make_scenario(), make_scenario()]})
    with pytest.raises(UserError, match=r"^scenarios: no scenario to play$"):  # was "the None side ... is empty"
        PrefDiscoInteraction({**base, "scenarios": []})


def test_a_refusal_across_the_split_reads_the_same_in_both_adapters():
    scenarios = four_problems()
    trained = sorted(hand_train_problems(3, [f"prob-{p}" for p in range(4)], 2))[0]
    asked = next(s for s in scenarios if s.problem.id == trained)
    user, grader = Scripted(constant("Short.")), Scripted(grading)
    line = (
        f"scenario {asked.id} (problem demo/{trained}) is on the training side of the split (train_fraction 0.5, "
        f"seed 3); this {{}} plays the eval side only"
    )
    env = gymnasium.make(
        "PrefDisco-v0", scenarios=scenarios, user_model=user.model, judge_model=grader.model, train_fraction=0.5,
        split_seed=3, split="eval",
    )  # fmt: skip
    with pytest.raises(UserError) as refused:
        env.reset(options={"scenario_id": asked.id})
    assert str(refused.value) == line.format("environment")
    env.close()
    interaction = PrefDiscoInteraction(
        {
            "scenarios": scenarios, "user_model": user.model, "judge_model": grader.model, "train_fraction": 0.5,
            "split_seed": 3, "split": "eval",
        }
    )  # fmt: skip
    with pytest.raises(UserError) as refused:
        asyncio.run(interaction.start_interaction("r", scenario_id=asked.id))
    assert str(refused.value) == line.format("interaction")


def test_a_scenario_row_is_the_episodes_opening_and_the_kwargs_export_training_writes():
    scenario = make_scenario()
    user, grader = models()
    interaction = PrefDiscoInteraction({"scenarios": [scenario], "user_model": user.model, "judge_model": grader.model})
    row = interaction.row(scenario.id)
    kwargs = {"name": "prefdisco", "scenario_id": scenario.id}
    assert row == {
        "prompt": Episode(scenario, user.model, grader.model).opening(),
        "extra_info": {"scenario_id": scenario.id, "interaction_kwargs": kwargs},
    }

    async def first_turn() -> dict:
        instance = await interaction.start_interaction("req", **kwargs)
        messages = [*row["prompt"], {"role": "assistant", "content": "QUESTION: Steps?"}]
        return (await interaction.generate_response(instance, messages, **kwargs))[3]

    assert asyncio.run(first_turn())["opening_matches"] is True
    assert [c.messages[-1].text for c in user.calls] == ["Steps?"]  # row() asked no model
