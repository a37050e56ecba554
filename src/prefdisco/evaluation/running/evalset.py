"""One process's evaluation: a scenario set in several conditions as one resumable inspect eval-set.

``run_eval_set`` builds one task per condition (baseline, discovery, oracle, fixed-K for each K), runs them as an
inspect eval-set in ``log_dir`` (so a rerun after a crash only runs what is missing, and a rerun of a finished run
makes no model calls), and returns the results tables: the rows written as the samples finished
(``results/stream.py``), checked against the logs.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from inspect_ai import Task
from inspect_ai.util import DisplayType

from prefdisco.dialogue.plan import ASKING
from prefdisco.errors import UserError
from prefdisco.evaluation.protocol.effective import settle_protocol
from prefdisco.evaluation.running.cached_usage import counting_cached
from prefdisco.evaluation.running.call_clock import clocking, record
from prefdisco.evaluation.running.collector import tuned_collector
from prefdisco.evaluation.running.guard import guard_run
from prefdisco.evaluation.running.task import build_task
from prefdisco.evaluation.settings.batch import with_batch
from prefdisco.evaluation.settings.config import (
    PANEL_DEFAULTS,
    PROTOCOL_DEFAULTS,
    UNCOMPARED_SETTINGS,
    RunConfig,
    scenario_set_hash,
)
from prefdisco.evaluation.settings.limits import limit_roles
from prefdisco.results.logs import Tables, results_from_logs, write_results
from prefdisco.results.stream import streaming_rows
from prefdisco.schema import Mode, Scenario
from prefdisco.scoring.panel import panel_roles

HIGH_THROUGHPUT_SAMPLES = 1_000
"""inspect's size of a high-throughput task (samples, epochs included: ``_eval/task/log.py``), from which its log
recorder buffers ``samples // 20`` finished samples, each whole with its events, before writing them out."""
LOG_BUFFER = 50
"""The finished samples a task's log recorder holds before a write, from ``HIGH_THROUGHPUT_SAMPLES`` samples a task
on: what inspect buffers at 1,000 (``log_buffer``). Left to inspect, the buffer grew with the run (500 samples of
about 190 KB each a task at 10,000 scenarios: about 285 MB over three conditions just before a write; 28 MB at
1,000); capped, a larger run writes its log more often (the temporary log copied whole each time: ``docs/scale.md``)
and holds no more than a run of 1,000."""


def log_buffer(tasks: Sequence[Task], epochs: int) -> int | None:
    """The eval-set's ``log_buffer``: ``LOG_BUFFER`` for a task of ``HIGH_THROUGHPUT_SAMPLES`` samples or more,
    None (inspect's own choice, at most 10) for smaller ones."""
    samples = max((len(task.dataset) for task in tasks), default=0) * epochs
    return LOG_BUFFER if samples >= HIGH_THROUGHPUT_SAMPLES else None


SampleMetadata = Callable[[str, Scenario], dict[str, Any]]
"""More metadata for the sample of a scenario in a condition (mode): a sessions run's (``sessions_run.py``)."""


def build_tasks(
    scenarios: Sequence[Scenario],
    config: RunConfig,
    decoys: Mapping[str, Scenario] | None = None,
    sample_metadata: SampleMetadata | None = None,
) -> list[Task]:
    """One task per asked condition and one per fixed-K value, over the same scenarios, ``config.epochs`` trials
    each, seeded from the run's ``config.seed``. ``decoys``: the wrong_persona decoys, chosen from the run's full
    scenario set (``run_conditions``); None: chosen from ``scenarios``."""
    selected = list(scenarios)
    scope = config.cache_scope(selected)

    def task(mode: Mode, k: int | None = None) -> Task:
        chosen = decoys if mode is Mode.WRONG_PERSONA else None
        extra = None if sample_metadata is None else (lambda s: sample_metadata(mode.value, s))
        return build_task(selected, config, mode.value, k, cache_scope=scope, decoys=chosen, extra_metadata=extra)

    planned: list[tuple[Mode, int | None]] = [(Mode(m), None) for m in config.modes]
    planned += [(Mode.FIXED_K, k) for k in config.fixed_k]
    return [task(mode, k) for mode, k in longest_first(planned, config.max_questions)]


def longest_first(planned: list[tuple[Mode, int | None]], max_questions: int) -> list[tuple[Mode, int | None]]:
    """The run's tasks, those with the longest dialogues first (a discovery dialogue asks up to ``max_questions``
    questions, a fixed-K one K, a single-turn condition none; ties keep their order): inspect starts the tasks of an
    eval-set in order, so the long dialogues queue for connections first and the one-call samples fill the
    connections around them, instead of the run ending on a few long dialogues started last."""

    def questions(item: tuple[Mode, int | None]) -> int:
        mode, k = item
        return k or 0 if mode is Mode.FIXED_K else max_questions if mode.value in ASKING else 0

    return sorted(planned, key=questions, reverse=True)


def decoys_hash(selected: Sequence[Scenario], decoys: Mapping[str, Scenario]) -> str:
    """sha256 of what each selected scenario's wrong_persona prompt shows: its decoy's id, persona and profile."""
    digest = hashlib.sha256()
    for scenario in sorted(selected, key=lambda s: s.id):
        decoy = decoys.get(scenario.id)
        if decoy is not None:
            parts = (scenario.id, decoy.id, decoy.persona.model_dump_json(), decoy.profile.model_dump_json())
            digest.update("\x1f".join(parts).encode() + b"\0")
    return digest.hexdigest()[:16]


def guard_folder(
    selected: list[Scenario], config: RunConfig, decoys: Mapping[str, Scenario] | None = None, record: bool = True
) -> str:
    """Refuse a ``config.log_dir`` holding a run of other settings (``guard.guard_run``), then record this run's
    (unless not ``record``: the dry run checks the same); the run's identity (``guard.run_identity``)."""
    fingerprint = config.fingerprint(scenario_set_hash(selected), len(selected))
    if decoys is not None and Mode.WRONG_PERSONA.value in config.modes:
        fingerprint["decoys"] = decoys_hash(selected, decoys)  # decoys may come from beyond --limit
    defaults = {**PANEL_DEFAULTS, **PROTOCOL_DEFAULTS}
    return guard_run(config.log_dir, fingerprint, UNCOMPARED_SETTINGS, defaults, record)


def run_eval_set(
    selected: list[Scenario],
    config: RunConfig,
    decoys: Mapping[str, Scenario] | None = None,
    sample_metadata: SampleMetadata | None = None,
) -> Tables:
    """Run ``selected`` (already limited) in ``config.log_dir``; raise when a sample failed or is missing.
    ``decoys``, ``sample_metadata``: see ``build_tasks``. With ``config.write_tables`` the tables are written there
    (``results.logs.write_results``: the transcripts written as they are read, not returned)."""
    # through the reading after the run too: the run's objects are still alive, and a full collection over them for
    # every few thousand rows read doubled the time from the last call to the tables
    with tuned_collector():
        success, interrupted = _execute(selected, config, decoys, sample_metadata)
        if config.write_tables:  # the protocol as sent: each role's requests read back (effective_protocol.py)
            settle_protocol(config.log_dir)
            tables = write_results(config.log_dir, config.prices)  # the streamed rows, checked against the logs
        else:
            tables = results_from_logs(config.log_dir, prices=config.prices)
    _check_finished(tables, success, interrupted, len(selected) * len(config.models) * config.epochs, config)
    return tables


def run_block(selected: list[Scenario], config: RunConfig, decoys: Mapping[str, Scenario] | None = None) -> None:
    """``run_eval_set`` for a part of a larger run whose tables are read once every part is done (no tables of its
    own): the tables are read here only when the eval-set did not finish, to say how many samples failed."""
    with tuned_collector():
        success, interrupted = _execute(selected, config, decoys)
    if not success or interrupted:
        tables = results_from_logs(config.log_dir, prices=config.prices)
        _check_finished(tables, success, interrupted, len(selected) * len(config.models) * config.epochs, config)


def _execute(
    selected: list[Scenario],
    config: RunConfig,
    decoys: Mapping[str, Scenario] | None = None,
    sample_metadata: SampleMetadata | None = None,
) -> tuple[bool, bool]:
    """The eval-set of ``selected`` in ``config.log_dir``, its rows streamed: whether every task succeeded, and
    whether one was interrupted (``_run``)."""
    from inspect_ai.model import get_model

    # the run's identity, recorded in its folder (never its path): the cache scope of its calls, so a copied or
    # moved folder builds the same tasks and inspect's eval-set finds its finished logs there
    config = replace(config, run_id=guard_folder(selected, config, decoys))
    judges = config.judge_models()
    named = [("user", config.user_model), *zip(panel_roles(len(judges)), judges, strict=True)]
    # every judge call by batch; the targeted user's mapping, which a turn waits for, is a real-time copy of the
    # grader (dialogue/targeted.mapping_model)
    batch = {role: config.batch if role != "user" else None for role, _ in named}
    roles = {role: get_model(name, config=with_batch(config.role_config(role), batch[role])) for role, name in named}
    caps = {"user": config.user_max_connections, "judge": config.judge_max_connections}  # across the whole run
    roles = limit_roles(roles, caps)  # by pool (evaluation/settings/limits.py)
    tasks = build_tasks(selected, config, decoys, sample_metadata)
    os.environ.setdefault("INSPECT_EVAL_LOG_FILE_PATTERN", "{task}_{model}_{id}")
    # each sample's rows written as it finishes (results/stream.py); the collector's pauses kept short (collector.py)
    with streaming_rows(config.log_dir):
        success, interrupted = _run(tasks, roles, config)
    return success, interrupted


def _check_finished(tables: Tables, success: bool, interrupted: bool, scenario_trials: int, config: RunConfig) -> None:
    """Raise when the eval-set was interrupted or did not finish (a failed or missing sample)."""
    failed = int(tables.results["failed"].sum()) if len(tables.results) else 0
    # a sample Ctrl-C cancelled is in no table (results/logs.py); a task's log may still say it failed rather than
    # that it was cancelled, when the cancellation reached a sample first
    if interrupted or tables.interrupted:  # inspect has just printed "Completed all tasks … successfully"
        trials = scenario_trials * (len(config.modes) + len(config.fixed_k))
        raise UserError(
            f"interrupted (Ctrl-C) with {len(tables.results) - failed} of {trials} samples finished: "
            "rerun the same command to finish the rest (no finished sample is repeated; the 'Completed all tasks' "
            "line above is inspect's, which counts an interrupted task as complete)"
        )
    if not success or failed:
        # a shard writes no tables of its own: the run's merged results.csv, one folder up, holds its rows
        where = f" recorded in {config.log_dir}/results.csv" if config.write_tables else ""
        raise UserError(
            f"the eval-set did not finish: {failed} failed sample(s){where}; "
            "rerun the same command to retry only what failed or is missing"
        )


def _run(tasks: list[Task], roles: dict[str, Any], config: RunConfig) -> tuple[bool, bool]:
    """inspect's eval-set over ``tasks`` in ``config.log_dir``: whether every task succeeded, and whether one was
    interrupted (Ctrl-C: inspect ends the tasks as cancelled and still reports success)."""
    from inspect_ai import eval_set

    # the seconds its model calls take (call_clock.py), recorded even when it fails; a call the run's cache answers
    # keeps its tokens in its sample (cached_usage.py)
    with clocking() as clock, counting_cached():
        try:
            success, logs = _eval_set(eval_set, tasks, roles, config)
        finally:
            record(config.log_dir, clock, config.max_connections)
    # interrupted: inspect returns no log (and success) after a Ctrl-C, or a task's log says cancelled
    return bool(success), bool(tasks) and (not logs or any(log.status == "cancelled" for log in logs))


def _eval_set(eval_set: Any, tasks: list[Task], roles: dict[str, Any], config: RunConfig) -> tuple[bool, Any]:
    return eval_set(
        tasks,
        log_dir=str(config.log_dir),
        model=config.models,
        model_args=config.model_args,
        model_roles=roles,
        max_connections=config.max_connections,
        max_samples=config.max_samples,
        max_tasks=config.max_tasks or len(tasks) * len(config.models),
        log_buffer=log_buffer(tasks, config.epochs),  # finished samples held in memory: flat as the run grows
        **config.role_config("assistant").model_dump(exclude_none=True),
        # A sample whose calls still fail after inspect's own retries marks its task failed (the other samples
        # keep running); eval-set then retries the task, reusing every finished sample, and a rerun of the
        # command does the same. A failed sample is never dropped or scored.
        retry_attempts=config.retry_attempts,
        retry_wait=config.retry_wait,
        fail_on_error=True,
        continue_on_fail=True,
        display=cast(DisplayType | None, config.display),  # checked by RunConfig.validate
        log_realtime=False,
        log_level="warning",
    )
