"""The PrefDisco inspect task: one sample per scenario, one task per condition.

Run from Python (``build_task(...)``), from ``prefdisco eval``/``prefdisco demo``, or with inspect's own CLI::

    inspect eval prefdisco/prefdisco -T scenarios=BENCH_DIR -T mode=discovery \
        --model openai/gpt-4.1 --model-role user=openai/gpt-4.1 --model-role grader=openai/gpt-4.1

The task composes the condition's solver (``dialogue/conditions.py``) with the PrefDisco scorer. Sample ids are
the scenario ids (``dialogue/scenario.py``), so eval-sets resume and analysis joins the conditions of one scenario.
Each sample makes its own model calls: nothing is shared between two personas of one problem.

``epochs`` runs each sample that many times (trials, inspect's ``sample.epoch``). The first solver step, ``seeded``,
gives every trial its own seeds (``prefdisco.seeds``): the assistant's calls carry one (through the sample's active
generate config, which inspect merges into every call of the model under test) and the simulated user's another
(through a copy of the ``user`` role model with that seed in its config, set for this sample only). Both are
inspect context variables set inside the sample's own solver task, so no other sample sees them; the seeds are
recorded in the sample's store (``TrialSeeds``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.model import GenerateConfig, Model, model_roles
from inspect_ai.model._generate_config import active_generate_config, set_active_generate_config
from inspect_ai.model._model import init_model_roles
from inspect_ai.solver import Generate, Solver, TaskState, chain, solver

from prefdisco.dialogue.byo import own_discovery, resolve_solver, solver_task_metadata
from prefdisco.dialogue.conditions import (
    MAX_DISCOVERY_QUESTIONS,
    baseline,
    condition_label,
    discovery,
    fixed_k,
    oracle,
    wrong_persona,
)
from prefdisco.dialogue.decoys import choose_decoys, decoy_samples
from prefdisco.dialogue.scenario import scenario_sample
from prefdisco.errors import UserError
from prefdisco.evaluation.config import check_protocol, scenario_set_hash
from prefdisco.release.convert import load_scenarios as load_scenarios_from
from prefdisco.schema import Mode, Scenario
from prefdisco.scoring.deferred import JUDGE_LATER, prefdisco_dialogue
from prefdisco.scoring.metrics import none_aware_reducer
from prefdisco.scoring.scorer import prefdisco_scorer
from prefdisco.seeds import SEED_ROLES, TrialSeeds, call_seed, seeded_model


def load_scenarios(source: str | Path, skip_invalid: bool = False) -> list[Scenario]:
    """Scenarios from a benchmark folder, scenarios file or release file (``skip_invalid``: a release file's lines
    nothing can score are left out and listed, instead of refusing the file)."""
    return load_scenarios_from(Path(source), skip_invalid=skip_invalid)


def _seed_calls(assistant: int, user: int) -> None:
    """Send ``assistant`` with every call of the model under test and ``user`` with every call of the ``user`` role
    for the rest of this sample (context variables of the sample's solver task; the scorer seeds the grader from
    the store, ``TrialSeeds.grader``)."""
    set_active_generate_config(active_generate_config().merge(GenerateConfig(seed=assistant)))
    roles = dict(model_roles())
    model = roles.get("user")
    if isinstance(model, Model):
        init_model_roles({**roles, "user": seeded_model(model, user)})


@solver
def seeded(scope: str, condition: str) -> Solver:
    """Derive this trial's seeds from (``scope``, scenario, ``condition``, epoch, role), record them in the store
    and send them with the trial's assistant and simulated-user calls."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        record = state.store_as(TrialSeeds)
        record.epoch = state.epoch
        record.assistant, record.user, record.grader = (
            call_seed(scope, str(state.sample_id), condition, state.epoch, role) for role in SEED_ROLES
        )
        _seed_calls(record.assistant, record.user)
        return state

    return solve


def condition_solver(
    condition: Mode,
    k: int | None = None,
    max_questions: int = MAX_DISCOVERY_QUESTIONS,
    user_type: str = "passive",
    constrain_protocol: bool = False,
    cache_scope: str | None = None,
    preset: str = "default",
    protocol: str = "text",
    assistant: Solver | None = None,
) -> Solver:
    """The assistant side of ``condition`` under ``preset``'s prompts and end rule (see ``dialogue/conditions.py``)
    and ``protocol`` (discovery, fixed-K); ``assistant``: a solver of the user's that plays discovery
    (``dialogue/byo.py``)."""
    if condition is Mode.BASELINE:
        return baseline(cache_scope=cache_scope, preset=preset)
    if condition is Mode.ORACLE:
        return oracle(cache_scope=cache_scope, preset=preset)
    if condition is Mode.WRONG_PERSONA:
        return wrong_persona(cache_scope=cache_scope, preset=preset)
    if condition is Mode.DISCOVERY and assistant is not None:
        return own_discovery(assistant, max_questions, user_type, cache_scope, preset)
    if condition is Mode.DISCOVERY:
        return discovery(max_questions, user_type, constrain_protocol, cache_scope, preset=preset, protocol=protocol)
    return fixed_k(k, user_type, constrain_protocol, cache_scope, preset=preset, protocol=protocol)


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
    epochs: int = 1,
    seed_scope: str | None = None,
    preset: str = "default",
    decoys: Mapping[str, Scenario] | None = None,
    judges: int = 1,
    judge_repeats: int = 1,
    protocol: str = "text",
    solver: str | None = None,
    solver_args: Mapping[str, Any] | None = None,
) -> Task:
    """The task of ``scenarios`` in one condition, ``epochs`` trials per scenario, seeded from ``seed_scope`` (the
    run; None: the scenario set's hash). ``decoys`` (wrong_persona only): scenario id → decoy scenario, chosen
    from the run's full scenario set (``dialogue/decoys.py``); None: chosen from ``scenarios``. ``judges`` judges
    (roles ``grader``, ``grader_2``, …) score every criterion ``judge_repeats`` times (``scoring/panel.py``).
    ``protocol``: ``text`` or ``tools`` (``dialogue/tool_protocol.py``); ``solver``: a solver or agent that plays
    discovery, created with ``solver_args`` (``dialogue/byo.py``; other conditions run the model as usual).
    ``judge`` ``later``: the dialogues only, no grader call; ``prefdisco judge`` judges them later."""
    condition = Mode(mode)
    check_protocol(protocol, preset, constrain_protocol, solver)
    own = solver if condition is Mode.DISCOVERY else None
    run_context = {"max_questions": max_questions, "user_type": user_type, "cache_scope": cache_scope, "preset": preset}
    assistant = resolve_solver(own, solver_args, run_context) if own else None
    if not scenarios:
        raise UserError("no scenarios to evaluate")
    if epochs < 1:
        raise UserError(f"--epochs: expected at least 1 trial per scenario, got {epochs}")
    ids = [s.id for s in scenarios]
    if len(set(ids)) != len(ids):
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        raise UserError(f"scenario ids must be unique; repeated: {', '.join(dupes[:5])}")
    benchmarks = sorted({s.problem.benchmark for s in scenarios})
    label = condition_label(condition, k)
    if seed_scope is None:
        seed_scope = scenario_set_hash(scenarios)
    if condition is Mode.WRONG_PERSONA:
        samples = decoy_samples(scenarios, choose_decoys(scenarios, seed_scope) if decoys is None else decoys)
    else:
        samples = [scenario_sample(s) for s in scenarios]
    return Task(
        name=name or f"prefdisco_{label}",
        dataset=MemoryDataset(samples, name="+".join(benchmarks)),
        solver=chain(
            seeded(seed_scope, label),
            condition_solver(
                condition, k, max_questions, user_type, constrain_protocol, cache_scope, preset, protocol, assistant
            ),
        ),
        scorer=prefdisco_dialogue()  # --judge later: no grader call now (``scoring/deferred.py``)
        if judge == JUDGE_LATER
        else prefdisco_scorer(
            judge=judge,
            logprobs=logprobs,
            audit=audit,
            cache_scope=cache_scope,
            judges=judges,
            judge_repeats=judge_repeats,
            seed_scope=seed_scope,
        ),
        epochs=Epochs(epochs, none_aware_reducer()),
        metadata={
            "prefdisco_mode": condition.value,
            "prefdisco_fixed_k": k,
            "prefdisco_benchmarks": benchmarks,
            "prefdisco_user_type": user_type,
            "prefdisco_judge": judge,
            "prefdisco_preset": preset,
            "prefdisco_protocol": protocol,
            "prefdisco_solver": own,
            **(solver_task_metadata(own, solver_args or {}, scenarios, max_questions) if own else {}),
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
    epochs: int = 1,
    preset: str = "default",
    skip_invalid: bool = False,
    protocol: str = "text",
    solver: str | None = None,
    solver_args: dict[str, Any] | None = None,
) -> Task:
    """PrefDisco on a benchmark folder / scenarios file / release file in one condition (inspect CLI entry point)."""
    return build_task(
        load_scenarios(scenarios, skip_invalid=skip_invalid),
        mode=mode,
        k=k,
        max_questions=max_questions,
        user_type=user_type,
        judge=judge,
        logprobs=logprobs,
        constrain_protocol=constrain_protocol,
        audit=audit,
        epochs=epochs,
        preset=preset,
        protocol=protocol,
        solver=solver,
        solver_args=solver_args,
    )
