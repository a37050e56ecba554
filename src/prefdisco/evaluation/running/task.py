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

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.model import GenerateConfig, Model, model_roles
from inspect_ai.model._generate_config import active_generate_config, set_active_generate_config
from inspect_ai.model._model import init_model_roles
from inspect_ai.solver import Generate, Solver, TaskState, chain, solver

from prefdisco.builder.catalogue import load_catalogue
from prefdisco.dialogue.byo import own_discovery, resolve_solver, solver_task_metadata
from prefdisco.dialogue.carry import carry, own_carry
from prefdisco.dialogue.conditions import (
    MAX_DISCOVERY_QUESTIONS,
    SINGLE_TURN_SOLVERS,
    ask_style,
    discovery,
    fixed_k,
    stated_belief,
)
from prefdisco.dialogue.decoys import choose_decoys, decoy_samples
from prefdisco.dialogue.distractors import DISTRACTOR_KEY, choose_distractors
from prefdisco.dialogue.plan import condition_key
from prefdisco.dialogue.scenario import scenario_sample
from prefdisco.dialogue.wrong_answers import WRONG_ANSWER_KEY, wrong_answer, wrong_answer_key
from prefdisco.errors import UserError
from prefdisco.evaluation.protocol.protocols import protocol_id
from prefdisco.evaluation.running.view import viewer_config
from prefdisco.evaluation.settings.batch import BATCHED_KEY, batched_roles, with_batch
from prefdisco.evaluation.settings.config import (
    RunConfig,
    check_max_criteria,
    with_strict_policy,
)
from prefdisco.evaluation.settings.preset_rules import check_ask, preset_settings
from prefdisco.release.convert import load_scenarios as load_scenarios_from
from prefdisco.schema import SESSION_ARMS, Mode, Scenario
from prefdisco.scoring.criterion_order import DEFAULT_MAX_CRITERIA
from prefdisco.scoring.deferred import JUDGE_LATER, prefdisco_dialogue
from prefdisco.scoring.metrics import none_aware_reducer
from prefdisco.scoring.non_answer import check_refusals
from prefdisco.scoring.scorer import prefdisco_scorer
from prefdisco.seeds import SEED_ROLES, TrialSeeds, call_seed, seed_scope, seeded_model


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


def condition_solver(condition: Mode, k: int | None, config: RunConfig, cache_scope: str | None) -> Solver:
    """The assistant side of ``condition`` under the run's preset (prompts, end rule; ``dialogue/conditions.py``),
    protocol and budget; a ``config.solver`` plays discovery (``dialogue/byo.py``)."""
    push, user, retry = config.pushback, config.user_type, config.user_retry
    if condition.value in SINGLE_TURN_SOLVERS:
        single = SINGLE_TURN_SOLVERS[condition.value]
        return single(cache_scope=cache_scope, preset=config.preset, pushback=push, user_type=user)
    if config.solver and condition.value in (Mode.DISCOVERY.value, *SESSION_ARMS):
        context = {
            "max_questions": config.max_questions,
            "user_type": config.user_type,
            "cache_scope": cache_scope,
            "preset": config.preset,
            "user_retry": retry,
        }
        assistant = resolve_solver(config.solver, config.solver_args, context)
        if condition is Mode.DISCOVERY:
            return own_discovery(assistant, config.max_questions, user, cache_scope, config.preset, retry)
        return own_carry(condition.value, assistant, config.max_questions, user, cache_scope, config.preset, retry)
    constrain, preset, ask = config.constrain_ask, config.preset, config.ask
    if condition is Mode.DISCOVERY:
        return discovery(config.max_questions, user, constrain, cache_scope, preset, ask, push, retry)
    if condition is Mode.STATED_BELIEF:
        return stated_belief(config.max_questions, user, constrain, cache_scope, preset, ask, push, retry)
    if condition.value in SESSION_ARMS:
        style = ask_style(preset, ask, constrain)
        return carry(condition.value, config.max_questions, style, user, constrain, cache_scope, ask, push, retry)
    return fixed_k(k, user, constrain, cache_scope, preset, ask, push, retry)


def harm_metadata(scenario: Scenario, condition: Mode, config: RunConfig, scope: str) -> dict[str, Any]:
    """A sample's harm-probe metadata: the scenario's seeded wrong answer (every sample: the one the person insists on
    with ``--pushback`` or states in stated_belief, and elsewhere the mistake ``belief_agreement`` looks for), and
    the distractors of oracle_distractor (``dialogue/wrong_answers.py``, ``distractors.py``)."""
    meta: dict[str, Any] = {WRONG_ANSWER_KEY: wrong_answer(scenario.problem, wrong_answer_key(scope, scenario.id))}
    if condition is Mode.ORACLE_DISTRACTOR:
        chosen = choose_distractors(scenario, load_catalogue(), scope, config.distractors)
        meta[DISTRACTOR_KEY] = [item.model_dump(mode="json") for item in chosen]
    return meta


def build_task(
    scenarios: Sequence[Scenario],
    config: RunConfig | None = None,
    mode: str = "baseline",
    k: int | None = None,
    *,
    cache_scope: str | None = None,
    decoys: Mapping[str, Scenario] | None = None,
    name: str | None = None,
    extra_metadata: Callable[[Scenario], dict[str, Any]] | None = None,
) -> Task:
    """The task of ``scenarios`` in one condition (``mode``, and ``k`` for fixed-K) under the run's settings
    (``config``; None: the defaults): ``config.epochs`` trials per scenario, seeded from ``config.seed``, calls cached
    under ``cache_scope`` (a run's: ``RunConfig.cache_scope``, its ``run_id``; None: no cache). ``decoys``
    (wrong_persona only): scenario id → decoy scenario, chosen from the run's full scenario set
    (``dialogue/decoys.py``); None: chosen from ``scenarios``. The judges (roles ``grader``, ``grader_2``, …: one per
    ``config.judge_models()``) score every criterion ``config.judge_repeats`` times (``scoring/panel.py``), and the
    first judges each response's general quality unless ``config.quality`` is off; ``config.judge`` ``later``: the
    dialogues only, no grader call (``prefdisco judge`` judges them later). ``extra_metadata``: more metadata for each
    scenario's sample (a sessions run's position, and the carried session of a carry arm: ``dialogue/carry.py``)."""
    config = config or RunConfig()
    condition = Mode(mode)
    check_ask(config.ask, config.preset, config.constrain_ask, config.solver)
    if not scenarios:
        raise UserError("no scenarios to evaluate")
    if config.epochs < 1:
        raise UserError(f"--epochs: expected at least 1 trial per scenario, got {config.epochs}")
    ids = [s.id for s in scenarios]
    if len(set(ids)) != len(ids):
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        raise UserError(f"scenario ids must be unique; repeated: {', '.join(dupes[:5])}")
    own = config.solver if condition is Mode.DISCOVERY else None
    judging_now = config.judge != JUDGE_LATER
    benchmarks = sorted({s.problem.benchmark for s in scenarios})
    key = condition_key(condition, k)  # the task's name and its seeds' key (dialogue/plan.py)
    seeds = seed_scope(config.seed)
    if condition is Mode.WRONG_PERSONA:
        samples = decoy_samples(scenarios, choose_decoys(scenarios, seeds) if decoys is None else decoys)
    else:
        samples = [scenario_sample(s) for s in scenarios]
    for sample, scenario in zip(samples, scenarios, strict=True):
        extra = harm_metadata(scenario, condition, config, seeds)
        if extra_metadata is not None:  # a sessions run: the session and position, the carried session (carry arms)
            extra |= extra_metadata(scenario)
        if extra:
            sample.metadata = {**(sample.metadata or {}), **extra}
    batched = batched_roles(condition.value, bool(config.batch), config.pushback)
    batched = [r for r in batched if r != "grader" or judging_now]
    return Task(
        name=name or f"prefdisco_{key}",
        dataset=MemoryDataset(samples, name="+".join(benchmarks)),
        # --batch: the model under test's one answer of a single-turn condition without pushback by batch
        # (evaluation/settings/batch.py)
        config=with_batch(GenerateConfig(), config.batch if "assistant" in batched else None),
        solver=chain(seeded(seeds, key), condition_solver(condition, k, config, cache_scope)),
        scorer=prefdisco_dialogue()  # --judge later: no grader call now (``scoring/deferred.py``)
        if config.judge == JUDGE_LATER
        else prefdisco_scorer(
            judge=config.judge,
            logprobs=config.logprobs,
            audit=config.audit,
            cache_scope=cache_scope,
            judges=len(config.judge_models()),
            judge_repeats=config.judge_repeats,
            seed_scope=seeds,
            quality=config.quality,
            judge_max_criteria=config.judge_max_criteria,
            refusals=config.refusals,
        ),
        epochs=Epochs(config.epochs, none_aware_reducer()),
        viewer=viewer_config(judged=config.judge != JUDGE_LATER),  # inspect view's columns (evaluation/running/view.py)
        metadata={
            "prefdisco_mode": condition.value,
            "prefdisco_fixed_k": k,
            "prefdisco_benchmarks": benchmarks,
            "prefdisco_user_type": config.user_type,
            "prefdisco_judge": config.judge,
            "prefdisco_preset": config.preset,
            "prefdisco_ask": config.ask,
            "prefdisco_protocol_id": protocol_id(config),  # evaluation/protocol/protocols.py
            "prefdisco_solver": own,
            BATCHED_KEY: batched,
            **(solver_task_metadata(own, config.solver_args, scenarios, config.max_questions) if own else {}),
        },
    )


@task
def prefdisco(
    scenarios: str,
    mode: str = "baseline",
    k: int | None = None,
    max_questions: int = MAX_DISCOVERY_QUESTIONS,
    user_type: str | None = None,
    judge: str | None = None,
    logprobs: bool | None = None,
    constrain_ask: bool = False,
    audit: bool = True,
    quality: bool = True,
    epochs: int = 1,
    seed: int = 0,
    preset: str = "default",
    judge_panel: list[str] | None = None,
    judge_repeats: int = 1,
    judge_max_criteria: int = DEFAULT_MAX_CRITERIA,
    skip_invalid: bool = False,
    ask: str = "text",
    solver: str | None = None,
    solver_args: dict[str, Any] | None = None,
    strict_policy: bool = False,
    pushback: int = 0,
    user_retry: int = 0,
    refusals: str = "score",
) -> Task:
    """PrefDisco on a benchmark folder / scenarios file / release file in one condition (inspect CLI entry point).
    The settings are ``prefdisco eval``'s, with the same defaults, the same preset rules and the same seeds (``seed``:
    ``--seed``); ``judge_panel``: the judges after the first (give them as ``--model-role grader_2=…``, …; only
    their number matters to the task); ``quality=false``: no general-quality call (``--no-quality``);
    ``pushback`` and ``user_retry``: ``--pushback N`` and ``--user-retry N``; ``judge_max_criteria``:
    ``--judge-max-criteria N``; ``refusals``: ``--refusals``. Calls are not cached across runs
    (``prefdisco eval`` scopes its cache to its folder)."""
    given = {"user_type": user_type, "judge": judge, "logprobs": logprobs}
    config = RunConfig(
        **preset_settings(preset, given),
        max_questions=max_questions,
        constrain_ask=constrain_ask,
        audit=audit,
        quality=quality,
        epochs=epochs,
        seed=seed,
        judge_panel=list(judge_panel or []),
        judge_repeats=judge_repeats,
        judge_max_criteria=judge_max_criteria,
        ask=ask,
        solver=solver,
        solver_args=with_strict_policy(dict(solver_args or {}), strict_policy),
        pushback=pushback,
        user_retry=user_retry,
        refusals=refusals,
    )
    config.validate_probes()
    check_refusals(config.refusals)
    check_max_criteria(config.judge_max_criteria)
    return build_task(load_scenarios(scenarios, skip_invalid=skip_invalid), config, mode, k)
