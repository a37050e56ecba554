"""Run a scenario set in several conditions as one resumable inspect eval-set, then tabulate it.

``run_conditions`` builds one task per condition (baseline, discovery, oracle, fixed-K for each K), runs them as
an inspect eval-set in ``log_dir`` (so a rerun after a crash only runs what is missing, and a rerun of a
finished run makes no model calls), and returns the results tables read back from the logs.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefdisco.analysis.results import Tables, read_header, results_from_logs, write_tables
from prefdisco.atomic import atomic_write
from prefdisco.dialogue.task import build_task
from prefdisco.dialogue.user import USER_TYPES
from prefdisco.dialogue.workers import check_split, run_workers
from prefdisco.errors import UserError
from prefdisco.schema import Mode, Scenario
from prefdisco.scoring.scorer import JUDGES

CONDITIONS = ("baseline", "discovery", "oracle")


@dataclass
class RunConfig:
    models: list[str]
    user_model: str
    grader_model: str
    log_dir: Path
    modes: list[str] = field(default_factory=lambda: list(CONDITIONS))
    fixed_k: list[int] = field(default_factory=list)
    user_type: str = "passive"
    judge: str = "per_criterion"
    audit: bool = True
    cache: bool = True
    logprobs: bool = False
    constrain_protocol: bool = False
    max_questions: int = 5
    limit: int | None = None
    temperature: float | None = 0.7
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    user_temperature: float | None = 0.7
    user_max_tokens: int | None = None
    user_reasoning_effort: str | None = None
    grader_max_tokens: int | None = None
    grader_reasoning_effort: str | None = None
    prices: dict[str, dict[str, float]] = field(default_factory=dict)
    max_connections: int | None = None
    max_samples: int | None = None
    max_tasks: int | None = None
    workers: int = 1
    """Processes the scenarios are split over (``dialogue/workers.py``)."""
    write_tables: bool = True
    """Write results/attributes/transcripts into ``log_dir`` (a worker of a split run leaves that to the parent)."""
    """Tasks (condition × model) run at once; default all of them, so the conditions share the connections
    (inspect's eval-set default is one task per model at a time, which leaves connections idle while the
    slowest samples of one condition finish)."""
    max_retries: int | None = None
    timeout: int | None = None
    attempt_timeout: int | None = None
    retry_attempts: int = 1
    retry_wait: float = 5.0
    display: str | None = None
    model_args: dict[str, Any] = field(default_factory=dict)

    def validate(self) -> None:
        unknown = [m for m in self.modes if m not in CONDITIONS]
        if unknown:
            raise UserError(f"--modes: unknown mode(s) {', '.join(unknown)}; expected {', '.join(CONDITIONS)}")
        if any(k < 1 for k in self.fixed_k):
            raise UserError("--fixed-k: every K must be >= 1")
        if not self.modes and not self.fixed_k:
            raise UserError("nothing to run: give --modes and/or --fixed-k")
        if self.user_type not in USER_TYPES:
            raise UserError(f"--user-type: unknown {self.user_type!r}; expected one of {', '.join(USER_TYPES)}")
        if not self.models:
            raise UserError("--model: give at least one model to evaluate")
        if self.workers < 1:
            raise UserError(f"--workers: expected at least 1, got {self.workers}")
        if self.judge not in JUDGES:
            raise UserError(f"--judge: unknown {self.judge!r}; expected one of {', '.join(JUDGES)}")
        efforts = ("minimal", "low", "medium", "high", "xhigh", "none")
        for flag, value in (
            ("--reasoning-effort", self.reasoning_effort),
            ("--user-reasoning-effort", self.user_reasoning_effort),
            ("--judge-reasoning-effort", self.grader_reasoning_effort),
        ):
            if value is not None and value not in efforts:
                raise UserError(f"{flag}: unknown {value!r}; expected one of {', '.join(efforts)}")


def scenario_set_hash(scenarios: Sequence[Scenario]) -> str:
    digest = hashlib.sha256()
    for s in scenarios:
        digest.update(s.model_dump_json().encode())
    return digest.hexdigest()[:16]


def run_scope(log_dir: Path, scenario_set: str) -> str:
    """The cache scope of a run: its folder and scenario set (a new folder never replays an old run)."""
    return hashlib.sha256(f"{log_dir.resolve()}|{scenario_set}".encode()).hexdigest()[:16]


def build_tasks(scenarios: Sequence[Scenario], config: RunConfig) -> list[Any]:
    selected = list(scenarios[: config.limit] if config.limit else scenarios)
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


def _guard_log_dir(log_dir: Path, fingerprint: dict[str, Any]) -> None:
    """Refuse to mix two different scenario sets or settings in one log folder (resume needs the same run)."""
    run_file = log_dir / "run.json"
    if run_file.exists():
        try:
            previous = json.loads(run_file.read_text())
        except json.JSONDecodeError as e:
            raise UserError(f"{run_file}: not valid JSON ({e.msg}); delete it or use a new --log-dir") from e
        if previous.get("scenario_set") != fingerprint["scenario_set"]:
            raise UserError(
                f"{log_dir} holds a run of a different scenario set; use a new --log-dir to start another run"
            )
    atomic_write(run_file, json.dumps(fingerprint, indent=2))


def _check_logs(log_dir: Path) -> None:
    """A damaged log (e.g. truncated by a full disk) would stop the eval-set: name it instead."""
    from inspect_ai.log import list_eval_logs

    for info in list_eval_logs(str(log_dir), recursive=True):
        read_header(info)


def run_conditions(scenarios: Sequence[Scenario], config: RunConfig) -> Tables:
    from inspect_ai import eval_set
    from inspect_ai.model import GenerateConfig, get_model

    config.validate()
    try:
        config.log_dir.mkdir(parents=True, exist_ok=True)
        probe = config.log_dir / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise UserError(f"--log-dir {config.log_dir}: cannot write there ({e.strerror})") from e
    _check_logs(config.log_dir)

    selected = list(scenarios[: config.limit] if config.limit else scenarios)
    check_split(config.log_dir, config.workers, scenario_set_hash(selected))
    if config.workers > 1:
        return run_workers(selected, config)
    fingerprint = {
        "scenario_set": scenario_set_hash(selected),
        "n_scenarios": len(selected),
        "models": config.models,
        "user_model": config.user_model,
        "grader_model": config.grader_model,
        "modes": config.modes,
        "fixed_k": config.fixed_k,
        "user_type": config.user_type,
        "judge": config.judge,
        "audit": config.audit,
        "cache": config.cache,
        "logprobs": config.logprobs,
        "temperature": config.temperature,
        "max_tokens": config.max_tokens,
        "reasoning_effort": config.reasoning_effort,
        "user_temperature": config.user_temperature,
        "user_max_tokens": config.user_max_tokens,
        "user_reasoning_effort": config.user_reasoning_effort,
        "grader_max_tokens": config.grader_max_tokens,
        "grader_reasoning_effort": config.grader_reasoning_effort,
    }
    _guard_log_dir(config.log_dir, fingerprint)

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
