"""One process's evaluation: a scenario set in several conditions as one resumable inspect eval-set.

``run_eval_set`` builds one task per condition (baseline, discovery, oracle, fixed-K for each K), runs them as an
inspect eval-set in ``log_dir`` (so a rerun after a crash only runs what is missing, and a rerun of a finished run
makes no model calls), and returns the results tables read back from the logs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from prefdisco.errors import UserError
from prefdisco.evaluation.config import RunConfig, run_scope, scenario_set_hash
from prefdisco.evaluation.guard import guard_run
from prefdisco.evaluation.task import build_task
from prefdisco.results.logs import Tables, results_from_logs, write_tables
from prefdisco.schema import Mode, Scenario


def build_tasks(scenarios: Sequence[Scenario], config: RunConfig) -> list[Any]:
    selected = list(scenarios)
    common = dict(
        user_type=config.user_type,
        judge=config.judge,
        audit=config.audit,
        logprobs=config.logprobs,
        constrain_protocol=config.constrain_protocol,
        max_questions=config.max_questions,
        cache_scope=run_scope(config.log_dir, scenario_set_hash(selected)) if config.cache else None,
    )
    tasks = [build_task(selected, mode=m, **common) for m in config.modes]
    tasks += [build_task(selected, mode=Mode.FIXED_K.value, k=k, **common) for k in config.fixed_k]
    return tasks


def run_eval_set(selected: list[Scenario], config: RunConfig) -> Tables:
    """Run ``selected`` (already limited) in ``config.log_dir``; raise when a sample failed or is missing."""
    from inspect_ai import eval_set
    from inspect_ai.model import GenerateConfig, get_model

    guard_run(config.log_dir, config.fingerprint(scenario_set_hash(selected), len(selected)))
    limits = dict(max_retries=config.max_retries, timeout=config.timeout, attempt_timeout=config.attempt_timeout)
    roles = {
        "user": get_model(
            config.user_model,
            config=GenerateConfig(
                temperature=config.user_temperature,
                max_tokens=config.user_max_tokens,
                reasoning_effort=config.user_reasoning_effort,
                **limits,
            ),
        ),
        # the judge and the correctness grader are deterministic where the provider allows
        "grader": get_model(
            config.grader_model,
            config=GenerateConfig(
                temperature=0.0,
                max_tokens=config.grader_max_tokens,
                reasoning_effort=config.grader_reasoning_effort,
                **limits,
            ),
        ),
    }
    tasks = build_tasks(selected, config)
    os.environ.setdefault("INSPECT_EVAL_LOG_FILE_PATTERN", "{task}_{model}_{id}")
    success, _logs = eval_set(
        tasks,
        log_dir=str(config.log_dir),
        model=config.models,
        model_args=config.model_args,
        model_roles=roles,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        reasoning_effort=config.reasoning_effort,
        max_connections=config.max_connections,
        max_samples=config.max_samples,
        max_tasks=config.max_tasks or len(tasks) * len(config.models),
        **limits,
        # A sample whose calls still fail after inspect's own retries marks its task failed (the other samples
        # keep running); eval-set then retries the task, reusing every finished sample, and a rerun of the
        # command does the same. A failed sample is never dropped or scored.
        retry_attempts=config.retry_attempts,
        retry_wait=config.retry_wait,
        fail_on_error=True,
        continue_on_fail=True,
        display=config.display,
        log_realtime=False,
        log_level="warning",
    )
    tables = results_from_logs(config.log_dir, prices=config.prices)
    if config.write_tables:
        write_tables(tables, config.log_dir)
    failed = int(tables.results["failed"].sum()) if len(tables.results) else 0
    if not success or failed:
        raise UserError(
            f"the eval-set did not finish: {failed} failed sample(s) recorded in {config.log_dir}/results.csv; "
            "rerun the same command to retry only what failed or is missing"
        )
    return tables
