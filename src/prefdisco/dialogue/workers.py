"""A large eval split over several processes (``prefdisco eval --workers N``).

One inspect process uses one core, and at high concurrency with short latencies a run becomes CPU-bound (see
``benchmarks/run.py``). ``run_workers`` deals the scenarios round-robin into N shards and runs each shard as an
ordinary eval-set in its own spawned process, with its own log folder ``LOG_DIR/worker-K`` and
``max_connections / N`` connections per provider. The shared ``LOG_DIR`` is then read by the results reader,
which merges the worker folders. Each worker resumes like any run.
``LOG_DIR/workers.json`` records the split: a rerun with another worker count, or a single-process run in the
same folder, is refused rather than mixed.
"""

from __future__ import annotations

import json
import math
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from prefdisco.atomic import atomic_write
from prefdisco.errors import UserError
from prefdisco.schema import Scenario

if TYPE_CHECKING:
    from prefdisco.analysis.results import Tables
    from prefdisco.dialogue.run import RunConfig

SPLIT_FILE = "workers.json"


def shards(scenarios: list[Scenario], workers: int) -> list[list[Scenario]]:
    """Round-robin shards (scenario i goes to worker i mod N); empty shards are dropped."""
    return [part for part in (scenarios[i::workers] for i in range(workers)) if part]


def worker_config(config: RunConfig, index: int, n: int) -> RunConfig:
    connections = math.ceil(config.max_connections / n) if config.max_connections else None
    return replace(
        config,
        workers=1,
        limit=None,
        log_dir=config.log_dir / f"worker-{index + 1}",
        max_connections=connections,
        display="none",
        write_tables=False,
    )


def check_split(log_dir: Path, workers: int, scenario_set: str) -> None:
    """Refuse a folder holding a single-process run, or a split with another worker count or scenario set."""
    split_file = log_dir / SPLIT_FILE
    wanted = {"workers": workers, "scenario_set": scenario_set}
    if workers > 1 and (log_dir / "run.json").exists():
        raise UserError(f"{log_dir} holds a single-process run; use a new --log-dir for --workers {workers}")
    if split_file.exists():
        try:
            previous = json.loads(split_file.read_text())
        except json.JSONDecodeError as e:
            raise UserError(f"{split_file}: not valid JSON ({e.msg}); delete it or use a new --log-dir") from e
        if previous != wanted:
            same_set = previous.get("scenario_set") == scenario_set
            raise UserError(
                f"{log_dir} holds a run split over {previous.get('workers')} worker(s)"
                + ("" if same_set else " of another scenario set")
                + "; rerun with the same --workers and scenarios, or use a new --log-dir"
            )
    if workers > 1:
        atomic_write(split_file, json.dumps(wanted, indent=2))


def _run_one(scenarios: list[Scenario], config: RunConfig) -> tuple[str | None, Tables | None]:
    """In a worker process: one shard's eval-set, read back there (in parallel with the other workers).
    Returns the one-line error or None, and the shard's tables when it finished."""
    from prefdisco.dialogue.run import run_conditions

    try:
        return None, run_conditions(scenarios, config)
    except UserError as e:
        return f"{config.log_dir.name}: {e}", None


def run_workers(scenarios: list[Scenario], config: RunConfig) -> Tables:
    """Run ``scenarios`` as ``config.workers`` processes and return the merged tables of ``config.log_dir``."""
    from prefdisco.analysis.results import merge_tables, results_from_logs, write_tables

    parts = shards(scenarios, config.workers)
    configs = [worker_config(config, i, len(parts)) for i in range(len(parts))]
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: no inherited event loop or model
    with ProcessPoolExecutor(max_workers=len(parts), mp_context=context) as pool:
        outcomes = list(pool.map(_run_one, parts, configs))
    errors = [e for e, _ in outcomes if e]
    done = [t for _, t in outcomes if t is not None]
    # every worker read its own folder back; a failed one leaves the whole folder to be read here
    tables = merge_tables(done, config.log_dir) if not errors else results_from_logs(config.log_dir, config.prices)
    write_tables(tables, config.log_dir)
    if errors:
        raise UserError(f"{len(errors)} of {len(parts)} worker(s) did not finish; first: {errors[0]}")
    return tables
