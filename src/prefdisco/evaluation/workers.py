"""A large eval split over several processes (``prefdisco eval --workers N``).

One inspect process uses one core, and at high concurrency with short latencies a run becomes CPU-bound (see
``benchmarks/run.py``). ``run_workers`` deals the scenarios round-robin into N shards and runs each shard as an
ordinary eval-set in its own spawned process, with its own log folder ``LOG_DIR/worker-K`` and
``max_connections / N`` connections per provider (and ``user_max_connections / N``, ``judge_max_connections / N``
per role, rounded up). The shared ``LOG_DIR`` is then read by the results reader,
which merges the worker folders. Each worker resumes like any run.
``LOG_DIR/workers.json`` records the split (``evaluation/guard.py``).
"""

from __future__ import annotations

import math
import multiprocessing
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace

from prefdisco.errors import UserError
from prefdisco.evaluation.config import RunConfig
from prefdisco.evaluation.evalset import run_eval_set
from prefdisco.evaluation.guard import prepare_log_dir
from prefdisco.results.logs import Tables, merge_tables, results_from_logs, write_tables
from prefdisco.schema import Scenario


def shards(scenarios: list[Scenario], workers: int) -> list[list[Scenario]]:
    """Round-robin shards (scenario i goes to worker i mod N); empty shards are dropped."""
    return [part for part in (scenarios[i::workers] for i in range(workers)) if part]


def worker_config(config: RunConfig, index: int, n: int) -> RunConfig:
    def share(cap: int | None) -> int | None:
        return math.ceil(cap / n) if cap else None

    return replace(
        config,
        workers=1,
        limit=None,
        log_dir=config.log_dir / f"worker-{index + 1}",
        max_connections=share(config.max_connections),
        user_max_connections=share(config.user_max_connections),
        judge_max_connections=share(config.judge_max_connections),
        display="none",
        write_tables=False,
    )


def _run_one(
    scenarios: list[Scenario], config: RunConfig, decoys: Mapping[str, Scenario] | None = None
) -> tuple[str | None, Tables | None]:
    """In a worker process: one shard's eval-set, read back there (in parallel with the other workers).
    Returns the one-line error or None, and the shard's tables when it finished."""
    try:
        prepare_log_dir(config.log_dir)
        return None, run_eval_set(scenarios, config, decoys)
    except UserError as e:
        return f"{config.log_dir.name}: {e}", None


def run_workers(scenarios: list[Scenario], config: RunConfig, decoys: Mapping[str, Scenario] | None = None) -> Tables:
    """Run ``scenarios`` as ``config.workers`` processes and return the merged tables of ``config.log_dir``.
    ``decoys`` (wrong_persona): chosen before the split, each shard is handed its own scenarios' decoys."""
    parts = shards(scenarios, config.workers)
    configs = [worker_config(config, i, len(parts)) for i in range(len(parts))]
    part_decoys = [None if decoys is None else {s.id: decoys[s.id] for s in part} for part in parts]
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: no inherited event loop or model
    with ProcessPoolExecutor(max_workers=len(parts), mp_context=context) as pool:
        outcomes = list(pool.map(_run_one, parts, configs, part_decoys))
    errors = [e for e, _ in outcomes if e]
    done = [t for _, t in outcomes if t is not None]
    # every worker read its own folder back; a failed one leaves the whole folder to be read here
    tables = merge_tables(done, config.log_dir) if not errors else results_from_logs(config.log_dir, config.prices)
    write_tables(tables, config.log_dir)
    if errors:
        raise UserError(f"{len(errors)} of {len(parts)} worker(s) did not finish; first: {errors[0]}")
    return tables
