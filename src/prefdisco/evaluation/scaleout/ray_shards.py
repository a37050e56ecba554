"""The shards of a run on Ray: ``prefdisco eval ... --ray local|auto|ADDRESS`` (``docs/scale.md``).

The plan is ``workers.ray_plan`` (model × scenario block, every condition in each shard, an ordinary resumable
eval-set in ``LOG_DIR/shard-…``), recorded in ``LOG_DIR/workers.json`` so a rerun with other flags is refused rather
than mixed. Each shard is one Ray task (``num_cpus=1``) running ``workers.run_shard``; a task whose worker process
or node dies is retried by Ray (``MAX_RETRIES``), and the retry resumes the shard's eval-set: inspect reuses every
sample its log holds, and the run's call cache replays the calls of samples that finished but were not yet flushed
to the log, so only the calls in flight when the worker died are made again. The parent then reads every shard
folder back and writes the tables (``workers.merge_shards``), also when a shard failed.

* ``--ray local`` starts a Ray instance on this machine bound to 127.0.0.1 (Ray would otherwise resolve the
  loopback address to the machine's public one and listen there), with ``--workers N`` CPUs (default: all);
  the driver's environment is the workers' environment.
* ``--ray auto`` / ``--ray HOST:PORT`` connects to a running cluster; every node needs the same prefdisco
  installed, the provider keys in its environment and ``LOG_DIR`` on a filesystem all nodes share. A loopback
  address (``127.0.0.1:PORT``) stays one: the cluster of one machine that ``ray start --head --node-ip-address
  127.0.0.1`` started.

**Per-role limits, cluster-wide: a static split.** ``--max-connections``, ``--user-max-connections`` and
``--judge-max-connections`` are totals over the whole run. A limiter actor handing out slots would leak the
slots a killed worker held (nothing returns them), and hold up every call behind one more network round trip,
so the split is static instead (``workers.split_caps``): at most P shards run at once (``--workers N``, else the
cluster's CPUs; never more than the smallest cap given), each with floor(cap / P) of every cap, enforced inside
the shard by inspect's per-provider pool and ``evaluation/settings/limits.py``. The driver keeps P in flight itself
(``ray.wait`` windows), so the totals hold on a cluster of any size; a killed shard's slots end with its
process. The price: a shard near its end, with fewer samples left than connections, leaves part of its
share idle.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from prefdisco.errors import UserError
from prefdisco.evaluation.running.guard import check_split
from prefdisco.evaluation.scaleout.workers import Shard, merge_shards, ray_plan, run_shard, split_caps
from prefdisco.evaluation.settings.config import RunConfig, scenario_set_hash
from prefdisco.results.logs import Tables
from prefdisco.schema import Scenario

NO_RAY = "--ray needs Ray: pip install 'prefdisco[ray]'"
MAX_RETRIES = 3
"""Times Ray reruns a shard whose worker process (or node) died; each rerun resumes the shard's eval-set."""
LOOPBACK_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Ray's switch that keeps a single-machine instance on 127.0.0.1 (read when ray is imported)."""


def on_loopback(address: str) -> bool:
    """Whether ``--ray ADDRESS`` means this machine's loopback interface: ``local``, or a 127.x/localhost/::1 host
    (Ray would otherwise rewrite 127.0.0.1 to the machine's network address before connecting)."""
    if address == "local":
        return True
    host = address.split("://", 1)[-1].rsplit(":", 1)[0].strip("[]")
    return host in ("localhost", "::1") or host.startswith("127.")


def check_ray_address(value: str | None) -> str:
    """``--ray``'s value, stripped: ``local``, ``auto``, or a cluster address ``[ray://]HOST:PORT``; anything else
    is a one-line error (before any folder is written, and in the dry run too)."""
    address = (value or "").strip()
    if address in ("local", "auto"):
        return address
    host, colon, port = address.split("://", 1)[-1].rpartition(":")
    if not colon or not host.strip("[]") or not port.isdigit() or not 0 < int(port) < 65536:
        raise UserError(f"--ray {value!r}: expected local, auto or the ADDRESS of a Ray cluster (HOST:PORT)")
    return address


def ray_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("ray") is not None


def import_ray(loopback: bool) -> ModuleType:
    """``ray``, or the one-line hint to install it; ``loopback``: Ray keeps to 127.0.0.1 (``on_loopback``)."""
    if loopback:  # for this process (read when ray is imported) and every process it starts
        os.environ.setdefault(LOOPBACK_ONLY, "0")
    try:
        import ray
    except ImportError as e:
        raise UserError(NO_RAY) from e
    if loopback and os.environ[LOOPBACK_ONLY] == "0":  # ray imported before: set where Ray reads it
        constants: Any = getattr(getattr(ray, "_private", None), "ray_constants", None)
        if constants is not None and hasattr(constants, "ENABLE_RAY_CLUSTER"):
            constants.ENABLE_RAY_CLUSTER = False
    return ray


def connect(ray: Any, address: str, cpus: int | None) -> None:
    """Start a local instance (``local``: 127.0.0.1, ``cpus`` CPUs) or join the cluster at ``address``."""
    try:
        if address == "local":
            ray.init(
                address="local",
                _node_ip_address="127.0.0.1",
                include_dashboard=False,
                num_cpus=cpus,
                logging_level=logging.ERROR,
            )
        else:
            ray.init(address=address, logging_level=logging.ERROR)
    except (ConnectionError, RuntimeError, ValueError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UserError(f"--ray {address}: cannot start or reach a Ray cluster ({first})") from e


def _failure(shard: Shard, error: BaseException) -> str:
    """One line for a shard whose task raised or whose retries ran out: the original exception where Ray has it."""
    cause = getattr(error, "cause", None) or error
    text = str(cause).strip().splitlines()
    return f"{shard.name}: {type(cause).__name__}" + (f": {text[0]}" if text else "")


def run_plan(ray: Any, plan: list[Shard], at_once: int) -> list[str]:
    """Run ``plan`` as Ray tasks, at most ``at_once`` at a time; the one-line errors of the shards that failed."""
    task = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(run_shard)
    waiting, errors = list(plan), []
    running: dict[Any, Shard] = {}  # task reference → its shard
    while waiting or running:
        while waiting and len(running) < at_once:
            shard = waiting.pop(0)
            running[task.options(name=shard.name).remote(shard)] = shard  # the name is the worker's process title
        done, _ = ray.wait(list(running), num_returns=1)
        for ref in done:
            shard = running.pop(ref)
            try:
                error = ray.get(ref)
            except ray.exceptions.RayError as e:
                error = _failure(shard, e)
            if error:
                errors.append(error)
    return errors


def run_ray(scenarios: list[Scenario], config: RunConfig, decoys: Mapping[str, Scenario] | None = None) -> Tables:
    """Run ``scenarios`` as the Ray shards of ``config`` (``config.ray``: ``local``, ``auto`` or an address) and
    return the merged tables of ``config.log_dir``."""
    address = check_ray_address(config.ray)
    ray = import_ray(on_loopback(address))
    plan = ray_plan(scenarios, config, decoys)
    check_split(config.log_dir, config.workers, scenario_set_hash(scenarios), shards=[s.name for s in plan])
    connect(ray, address, (config.workers if config.workers > 1 else os.cpu_count()) if address == "local" else None)
    try:
        cpus = int(ray.cluster_resources().get("CPU", 1))
        at_once, capped = split_caps(plan, config.workers if config.workers > 1 else max(cpus, 1))
        errors = run_plan(ray, capped, at_once)
    finally:
        ray.shutdown()
    return merge_shards(config, len(plan), errors)
