"""The PrefDisco inspect task: one sample per scenario, one task per condition.

Run from Python (``prefdisco_task(...)``), from ``prefdisco eval``/``prefdisco demo``, or with inspect's own CLI::

    inspect eval prefdisco/prefdisco -T scenarios=BENCH_DIR -T mode=discovery \
        --model openai/gpt-4.1 --model-role user=openai/gpt-4.1 --model-role grader=openai/gpt-4.1

Sample ids are the scenario ids, so eval-sets resume and analysis joins the conditions of one scenario.
Each sample makes its own model calls: nothing is shared between two personas of one problem.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample

from prefdisco.dialogue.solver import (
    MAX_DISCOVERY_QUESTIONS,
    SCENARIO_KEY,
    condition_label,
    personalized_dialogue,
)
from prefdisco.dialogue.user import UserType
from prefdisco.errors import UserError
from prefdisco.release.convert import load_scenarios as load_scenarios_from
from prefdisco.schema import Mode, Scenario
from prefdisco.scoring.scorer import none_aware_reducer, prefdisco_scorer


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


def load_scenarios(source: str | Path) -> list[Scenario]:
    return load_scenarios_from(Path(source))


def build_task(
    scenarios: Sequence[Scenario],
    mode: str = "baseline",
    k: int | None = None,
    max_questions: int = MAX_DISCOVERY_QUESTIONS,
    user_type: UserType = "passive",
    judge: str = "per_criterion",
    logprobs: bool = False,
    constrain_protocol: bool = False,
    audit: bool = True,
    cache_scope: str | None = None,
    name: str | None = None,
) -> Task:
    condition = Mode(mode)
    if not scenarios:
        raise UserError("no scenarios to evaluate")
    ids = [s.id for s in scenarios]
    if len(set(ids)) != len(ids):
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        raise UserError(f"scenario ids must be unique; repeated: {', '.join(dupes[:5])}")
    benchmarks = sorted({s.problem.benchmark for s in scenarios})
    return Task(
        name=name or f"prefdisco_{condition_label(condition, k)}",
        dataset=MemoryDataset([scenario_sample(s) for s in scenarios], name="+".join(benchmarks)),
        solver=personalized_dialogue(
            mode=condition.value,
            max_questions=max_questions,
            k=k,
            user_type=user_type,
            constrain_protocol=constrain_protocol,
            cache_scope=cache_scope,
        ),
        scorer=prefdisco_scorer(judge=judge, logprobs=logprobs, audit=audit, cache_scope=cache_scope),
        epochs=Epochs(1, none_aware_reducer()),
        metadata={
            "prefdisco_mode": condition.value,
            "prefdisco_fixed_k": k,
            "prefdisco_benchmarks": benchmarks,
            "prefdisco_user_type": user_type,
            "prefdisco_judge": judge,
        },
    )


@task
def prefdisco(
    scenarios: str,
    mode: str = "baseline",
    k: int | None = None,
    max_questions: int = MAX_DISCOVERY_QUESTIONS,
    user_type: str = "passive",
    judge: str = "per_criterion",
    logprobs: bool = False,
    constrain_protocol: bool = False,
    audit: bool = True,
) -> Task:
    """PrefDisco on a benchmark folder / scenarios file in one condition (inspect CLI entry point)."""
    return build_task(
        load_scenarios(scenarios),
        mode=mode,
        k=k,
        max_questions=max_questions,
        user_type=user_type,  # type: ignore[arg-type]
        judge=judge,
        logprobs=logprobs,
        constrain_protocol=constrain_protocol,
        audit=audit,
    )
