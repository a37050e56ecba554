"""The PrefDisco inspect task: one sample per scenario, one task per condition.

Run from Python (``build_task(...)``), from ``prefdisco eval``/``prefdisco demo``, or with inspect's own CLI::

    inspect eval prefdisco/prefdisco -T scenarios=BENCH_DIR -T mode=discovery \
        --model openai/gpt-4.1 --model-role user=openai/gpt-4.1 --model-role grader=openai/gpt-4.1

The task composes the condition's solver (``dialogue/conditions.py``) with the PrefDisco scorer. Sample ids are
the scenario ids (``dialogue/scenario.py``), so eval-sets resume and analysis joins the conditions of one scenario.
Each sample makes its own model calls: nothing is shared between two personas of one problem.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.solver import Solver

from prefdisco.dialogue.conditions import MAX_DISCOVERY_QUESTIONS, baseline, condition_label, discovery, fixed_k, oracle
from prefdisco.dialogue.scenario import scenario_sample
from prefdisco.errors import UserError
from prefdisco.release.convert import load_scenarios as load_scenarios_from
from prefdisco.schema import Mode, Scenario
from prefdisco.scoring.metrics import none_aware_reducer
from prefdisco.scoring.scorer import prefdisco_scorer


def load_scenarios(source: str | Path) -> list[Scenario]:
    return load_scenarios_from(Path(source))


def condition_solver(
    condition: Mode,
    k: int | None = None,
    max_questions: int = MAX_DISCOVERY_QUESTIONS,
    user_type: str = "passive",
    constrain_protocol: bool = False,
    cache_scope: str | None = None,
) -> Solver:
    """The assistant side of ``condition`` (see ``dialogue/conditions.py``)."""
    if condition is Mode.BASELINE:
        return baseline(cache_scope=cache_scope)
    if condition is Mode.ORACLE:
        return oracle(cache_scope=cache_scope)
    if condition is Mode.DISCOVERY:
        return discovery(max_questions, user_type, constrain_protocol, cache_scope)
    return fixed_k(k, user_type, constrain_protocol, cache_scope)


def build_task(
    scenarios: Sequence[Scenario],
    mode: str = "baseline",
    k: int | None = None,
    max_questions: int = MAX_DISCOVERY_QUESTIONS,
    user_type: str = "passive",
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
        solver=condition_solver(condition, k, max_questions, user_type, constrain_protocol, cache_scope),
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
        user_type=user_type,
        judge=judge,
        logprobs=logprobs,
        constrain_protocol=constrain_protocol,
        audit=audit,
    )
