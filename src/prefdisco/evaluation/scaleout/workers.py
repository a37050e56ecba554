"""A large eval split into shards: one sharding, one shard runner, two executors.

One inspect process uses one core, and at high concurrency with short latencies a run becomes CPU-bound (see
``benchmarks/run.py``); one machine has only so many cores. A split run deals its scenarios into **shards**, each
an ordinary resumable eval-set in its own folder below the shared ``LOG_DIR`` (``run_shard``), and the parent
reads the whole folder back with the results reader, which merges the shard folders (``merge_shards``).

* The plan is pure and decided by the flags alone, never by how many processes or nodes happen to run it, so a
  rerun maps every shard to the folder it wrote before and resumes there. ``worker_plan`` (``--workers N``, one
  machine): the scenarios round-robin into N shards ``worker-K`` with every model and condition. ``ray_plan``
  (``--ray``, ``evaluation/scaleout/ray_shards.py``): each model × block of at most ``SCENARIOS_PER_SHARD`` scenarios
  (round-robin) is a shard ``shard-<model>-<k>of<n>`` with every condition, so the count does not depend on the
  cluster. Each shard's eval-set starts its longest dialogues first and fills its connections with the one-call
  samples to its end: a shard per condition (before 2026-12-05) ran the conditions in waves, each wave idling the
  connections of its shorter shard and paying an eval-set start.
* The caps (``--max-connections`` per provider, ``--user-max-connections`` and ``--judge-max-connections`` per
  role) are the run's totals in both executors: ``split_caps`` gives each of the P shards running at once
  floor(cap / P), and runs fewer at once when a cap is smaller than P.
* ``run_shard`` is the one runner both executors call, in a worker process (``--workers``, ``START_METHOD``) or a
  Ray worker.
* ``run_workers`` is the process-pool executor; ``ray_shards.run_ray`` the Ray one.

Splitting by condition changes no result: a call's seed comes from the run seed, scenario, condition, trial and
role (``prefdisco.seeds``), and the wrong_persona decoys are chosen before the split and handed to each shard.
``LOG_DIR/workers.json`` records the split (``evaluation/running/guard.py``).
"""

from __future__ import annotations

import math
import multiprocessing
import re
import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from prefdisco.errors import UserError
from prefdisco.evaluation.protocol.effective import settle_protocol
from prefdisco.evaluation.running.evalset import run_eval_set
from prefdisco.evaluation.running.guard import prepare_log_dir
from prefdisco.evaluation.settings.config import RunConfig
from prefdisco.results.logs import Tables, write_results
from prefdisco.schema import Scenario

START_METHOD = "fork" if sys.platform == "linux" else "spawn"
"""How ``--workers`` starts its processes. On Linux a copy of this process (fork): its imports and the one-time
set-up of inspect's providers come with it, and the copy ends without tearing its interpreter down. A fresh
interpreter (spawn) paid both in every worker, 4.5 s of a 47 s run (``benchmarks/run.py``), so two workers were
slower than one process. The copy is made before any event loop runs in the executor's processes, and inspect closes
and forgets a model whose eval ended, so no worker inherits an open client. Elsewhere (macOS: fork is unsafe there)
a fresh interpreter."""

SCENARIOS_PER_SHARD = 50
"""A Ray shard's scenario block holds at most this many scenarios (a constant, so the plan needs no cluster)."""


@dataclass(frozen=True)
class Shard:
    """One part of a split run: ``scenarios`` run with ``config`` (its own ``log_dir``, ``LOG_DIR/<name>``)."""

    name: str
    scenarios: list[Scenario]
    config: RunConfig
    decoys: dict[str, Scenario] | None = None
    """The wrong_persona decoys of this shard's scenarios, chosen from the whole set (``run_conditions``)."""


def shards(scenarios: list[Scenario], workers: int) -> list[list[Scenario]]:
    """Round-robin shards (scenario i goes to worker i mod N); empty shards are dropped."""
    return [part for part in (scenarios[i::workers] for i in range(workers)) if part]


def part_config(config: RunConfig, name: str, **narrowed: Any) -> RunConfig:
    """A shard's settings: the run's, in ``LOG_DIR/<name>``, without a display or tables of its own, and
    ``narrowed`` (e.g. one model, another display)."""
    settings: dict[str, Any] = {"display": "none", **narrowed}
    return replace(config, workers=1, limit=None, log_dir=config.log_dir / name, write_tables=False, **settings)


def decoys_of(part: Sequence[Scenario], decoys: Mapping[str, Scenario] | None) -> dict[str, Scenario] | None:
    return None if decoys is None else {s.id: decoys[s.id] for s in part if s.id in decoys}


def worker_plan(
    scenarios: list[Scenario], config: RunConfig, decoys: Mapping[str, Scenario] | None = None
) -> list[Shard]:
    """``--workers N``: the scenarios round-robin into N shards ``worker-K``, every model and condition in each.
    Caps are the run's totals here, as in ``ray_plan``; ``split_caps`` shares them out."""
    parts = shards(scenarios, config.workers)
    return [
        Shard(f"worker-{i + 1}", part, part_config(config, f"worker-{i + 1}"), decoys_of(part, decoys))
        for i, part in enumerate(parts)
    ]


def _slugs(models: Sequence[str]) -> list[str]:
    """Folder-safe model names (``openai/gpt-4.1`` → ``openai-gpt-4.1``), made unique by position if two clash."""
    slugs = [re.sub(r"[^A-Za-z0-9._]+", "-", m).strip("-") or "model" for m in models]
    return [f"{s}-{i + 1}" if slugs.count(s) > 1 else s for i, s in enumerate(slugs)]


def ray_plan(scenarios: list[Scenario], config: RunConfig, decoys: Mapping[str, Scenario] | None = None) -> list[Shard]:
    """``--ray``: one shard per model × scenario block, every condition in each, named ``shard-<model>-<k>of<n>``;
    blocks are round-robin with at most ``SCENARIOS_PER_SHARD`` each. Caps are the run's totals here;
    ``split_caps`` shares them out. ``log_dir`` is made absolute: a Ray worker's working directory is not the
    driver's."""
    blocks = shards(scenarios, max(1, math.ceil(len(scenarios) / SCENARIOS_PER_SHARD)))
    whole = replace(config, log_dir=config.log_dir.absolute())
    plan = []
    for model, slug in zip(config.models, _slugs(config.models), strict=True):
        for k, block in enumerate(blocks):
            name = f"shard-{slug}-{k + 1}of{len(blocks)}"
            part = part_config(whole, name, models=[model])
            plan.append(Shard(name, block, part, decoys_of(block, decoys)))
    return plan


def split_caps(plan: list[Shard], at_once: int) -> tuple[int, list[Shard]]:
    """How many shards may run at once, and the plan with the run's connection caps shared out among them.

    ``--max-connections``, ``--user-max-connections`` and ``--judge-max-connections`` are totals over the run:
    at most P shards run at once (P = ``at_once``, at most the plan's length, and at most the smallest cap given),
    each with floor(cap / P) of each cap (so at least 1, and never more than the cap in all)."""
    caps = [plan[0].config.max_connections, plan[0].config.user_max_connections, plan[0].config.judge_max_connections]
    p = max(1, min([at_once, len(plan), *(cap for cap in caps if cap)]))

    def share(cap: int | None) -> int | None:
        return cap // p if cap else None

    return p, [
        replace(
            shard,
            config=replace(
                shard.config,
                max_connections=share(shard.config.max_connections),
                user_max_connections=share(shard.config.user_max_connections),
                judge_max_connections=share(shard.config.judge_max_connections),
            ),
        )
        for shard in plan
    ]


def run_shard(shard: Shard) -> str | None:
    """One shard's eval-set in its own folder (no tables written, no display); the one-line error, or None.
    Run again, it resumes like any eval-set: finished samples are reused and cached calls replayed."""
    try:
        prepare_log_dir(shard.config.log_dir)
        run_eval_set(shard.scenarios, shard.config, shard.decoys)
    except UserError as e:
        return f"{shard.name}: {e}"
    return None


def merge_shards(
    config: RunConfig, n_shards: int, errors: Sequence[str], kind: str = "shard", unfinished: int | None = None
) -> Tables:
    """Read every shard folder below ``config.log_dir`` back, write the tables there (``results.logs.write_results``:
    the transcripts written as each log is read, never held whole), and fail (after writing the tables of what
    finished) when a shard did not finish, naming how many (``unfinished``; default: one per error) and the first
    error. ``kind``: what a part is called in that line (``shard``, ``block``)."""
    settle_protocol(config.log_dir)  # the protocol as sent (evaluation/protocol/effective.py)
    tables = write_results(config.log_dir, config.prices)
    if errors:
        count = len(errors) if unfinished is None else unfinished
        raise UserError(f"{count} of {n_shards} {kind}(s) did not finish; first: {errors[0]}")
    return tables


def run_workers(scenarios: list[Scenario], config: RunConfig, decoys: Mapping[str, Scenario] | None = None) -> Tables:
    """Run ``scenarios`` as ``config.workers`` processes and return the merged tables of ``config.log_dir``.
    ``decoys`` (wrong_persona): chosen before the split, each shard is handed its own scenarios' decoys."""
    at_once, plan = split_caps(worker_plan(scenarios, config, decoys), config.workers)
    context = multiprocessing.get_context(START_METHOD)
    with ProcessPoolExecutor(max_workers=at_once, mp_context=context) as pool:
        errors = [e for e in pool.map(run_shard, plan) if e]
    return merge_shards(config, len(plan), errors)
