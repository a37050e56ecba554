"""Sample ↔ Scenario: one inspect sample per scenario, the scenario itself carried in the sample's metadata.

The sample id is the scenario id (eval-sets resume and analysis joins the conditions of one scenario), the input
is the problem as the assistant sees it, the target the problem's answer. Every solver and scorer reads the
scenario back with ``scenario_of`` — never from the input text.
"""

from __future__ import annotations

from inspect_ai.dataset import Sample
from inspect_ai.solver import TaskState

from prefdisco.schema import Scenario

SCENARIO_KEY = "scenario"


def scenario_sample(scenario: Scenario) -> Sample:
    return Sample(
        id=scenario.id,
        input=scenario.problem.prompt_text(),
        target=scenario.problem.answer,
        metadata={
            SCENARIO_KEY: scenario.model_dump(mode="json"),
            "benchmark": scenario.problem.benchmark,
            "problem_id": scenario.problem.id,
            "persona_id": scenario.persona.id,
        },
    )


def scenario_of(state: TaskState) -> Scenario:
    return Scenario.model_validate(state.metadata[SCENARIO_KEY])
