"""A large single-process run as blocks of bounded size, run one after another.

inspect holds what a task has finished until the task ends: each sample's score (with our judgements) for the
task's metrics, and the log recorder's summary of it. A resumed eval-set reads every finished sample of an
unfinished log before its first new call. Both grow with the task, so a run of 10,000 scenarios as one eval-set of
three 10,000-sample tasks peaks far above a run of 1,000 and resumes in minutes (``docs/scale.md``).

So a single-process run of more than ``SCENARIOS_PER_BLOCK`` scenario trials (scenarios × ``--epochs``) is cut
into blocks: the scenarios dealt round-robin (``workers.shards``) into ``LOG_DIR/block-<k>of<n>``, each an ordinary
resumable eval-set with every model and condition, run one after another in this process. A finished block's
eval-set ends and frees what its tasks held; a rerun finds its logs complete and makes no call, so the rerun's
first new call waits only for the one unfinished block's logs. The tables are read back from every block folder
at the end, as a split run's are (``workers.merge_shards``). A run of at most ``SCENARIOS_PER_BLOCK`` trials is one
eval-set in ``LOG_DIR`` itself, as before.

Blocks change no result, for the reasons a split run changes none (``workers.py``): seeds come from the run seed,
scenario, condition, trial and role, and the decoys are chosen from the whole set first. The plan depends only on
the scenario count and ``--epochs``; ``LOG_DIR/workers.json`` records the block names, so a rerun that would cut the
run another way is refused in one line (``guard.check_split``). A folder an earlier version started as one
eval-set (its ``run.json`` in ``LOG_DIR``) is finished as one.

The price: the connections idle while a block's last dialogues finish before the next block starts (a few calls'
latency per block; with 1,000-scenario blocks, one tail per 3,000 samples).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from prefdisco.errors import UserError
from prefdisco.evaluation.running.collector import release_memory, tuned_collector
from prefdisco.evaluation.running.evalset import run_block, run_eval_set
from prefdisco.evaluation.running.guard import RUN_FILE, check_split, prepare_log_dir
from prefdisco.evaluation.scaleout.workers import Shard, decoys_of, merge_shards, part_config, shards
from prefdisco.evaluation.settings.config import RunConfig, scenario_set_hash
from prefdisco.results.logs import Tables
from prefdisco.schema import Scenario

SCENARIOS_PER_BLOCK = 1_000
"""A block's scenario trials (scenarios × ``--epochs``) at most: inspect's own size of a high-throughput task
(``evalset.HIGH_THROUGHPUT_SAMPLES``), at which the run's peak memory, its log and its resume were measured flat
(``docs/scale.md``)."""


def block_plan(
    scenarios: list[Scenario], config: RunConfig, decoys: Mapping[str, Scenario] | None = None
) -> list[Shard]:
    """The blocks of a single-process run: ``block-<k>of<n>`` with n = ceil(trials / ``SCENARIOS_PER_BLOCK``), the
    scenarios round-robin; one block (n = 1) when the run is small enough to be one eval-set."""
    n = max(1, math.ceil(len(scenarios) * config.epochs / SCENARIOS_PER_BLOCK))
    parts = shards(scenarios, n)
    names = [f"block-{k + 1}of{len(parts)}" for k in range(len(parts))]
    return [
        Shard(name, part, part_config(config, name, display=config.display), decoys_of(part, decoys))
        for name, part in zip(names, parts, strict=True)
    ]


def blocks_of(
    scenarios: list[Scenario], config: RunConfig, decoys: Mapping[str, Scenario] | None = None
) -> list[Shard] | None:
    """The blocks this single-process run is cut into, or None: one eval-set in ``config.log_dir`` (one block holds
    the run, or the folder holds a run an earlier version started as one eval-set: its ``run.json`` there)."""
    plan = block_plan(scenarios, config, decoys)
    return None if len(plan) == 1 or (config.log_dir / RUN_FILE).exists() else plan


def block_names(plan: list[Shard] | None) -> list[str] | None:
    """What ``workers.json`` records of a run cut into blocks (None: not cut)."""
    return None if plan is None else [shard.name for shard in plan]


def run_blocks(scenarios: list[Scenario], config: RunConfig, decoys: Mapping[str, Scenario] | None = None) -> Tables:
    """Run ``scenarios`` in this process: as one eval-set in ``config.log_dir`` when one block holds them (or the
    folder holds a run an earlier version started as one), else block by block (``block_plan``), stopping at the
    first block that does not finish; then the tables of every block, written in ``config.log_dir``."""
    plan = blocks_of(scenarios, config, decoys)
    check_split(config.log_dir, config.workers, scenario_set_hash(scenarios), blocks=block_names(plan))
    if plan is None:
        return run_eval_set(scenarios, config, decoys)
    for k, shard in enumerate(plan):
        try:
            prepare_log_dir(shard.config.log_dir)
            run_block(shard.scenarios, shard.config, shard.decoys)
        except UserError as e:  # a failed sample or Ctrl-C: the blocks after it would not fare better
            return merge_shards(config, len(plan), [f"{shard.name}: {e}"], kind="block", unfinished=len(plan) - k)
        finally:
            release_memory()  # what the block's eval-set held, before the next one freezes the heap (collector.py)
    with tuned_collector():  # the rows read back without full collections over the heap (collector.py)
        return merge_shards(config, len(plan), [], kind="block")
