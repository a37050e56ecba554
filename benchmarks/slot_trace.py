"""Where a connection slot's time goes in ``prefdisco eval`` at 1 s latency and 64 connections. Not a test.

    .venv/bin/python benchmarks/slot_trace.py [--n 1000] [--workers 1] [--latency 1.0]

Runs the scheduling measurement of ``benchmarks/run.py`` (N scenarios x 3 modes against the mock server, 64
connections) in this process with light instruments, and prints where the wall time went:

* every model call's timeline: asked for a slot, got it, the provider's request began and ended, gave the slot back
  (inspect's ``Model._connection_concurrency`` and the provider API's ``generate``, wrapped);
* the event loop's lag: a task asks to wake every 20 ms and records how late it woke (time the loop spent on
  other work first);
* from those: slots held on average over the server's busy window, requests in flight on average, and each slot
  second split into the request itself (the server's latency and the HTTP round trip), the time inside the slot
  before the request (cache lookup, event recording) and after it (response parsing, cache store, hooks), and the
  time no call held a slot while calls were waiting (never, if the semaphore is the only gate) or while none was
  waiting (the samples could not feed the slots).

The figures are measured, never assumed: compare ``slots_held_mean`` (at most 64) and ``in_flight_mean`` with the
ideal of 64 in flight.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from perf_workers import CONCURRENCY, MODEL, MockProcess, _post, _prefdisco_eval, critical_depth, write_set

CALLS: list[dict[str, float]] = []
LAGS: list[float] = []
GC_PAUSES: dict[int, list[float]] = {0: [], 1: [], 2: []}
_GC_START: list[float] = []


def _gc_callback(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        _GC_START[:] = [time.perf_counter()]
    elif _GC_START:
        GC_PAUSES[info["generation"]].append(time.perf_counter() - _GC_START[0])


def instrument() -> None:
    """Wrap inspect's connection slot and every provider's generate with timestamps; start the lag monitor on the
    first slot request (the eval-set's event loop)."""
    from inspect_ai.model._model import Model

    original = Model._connection_concurrency
    patched_apis: set[type] = set()
    monitor: list[asyncio.Task[None]] = []

    def wrap_api(api_type: type) -> None:
        generate = api_type.generate

        async def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
            call = _CURRENT.get(None)
            if call is not None:
                call["http_start"] = time.perf_counter()
            try:
                return await generate(self, *args, **kwargs)
            finally:
                if call is not None:
                    call["http_end"] = time.perf_counter()

        api_type.generate = timed  # type: ignore[method-assign]
        patched_apis.add(api_type)

    @contextlib.asynccontextmanager
    async def concurrency(self: Any, config: Any) -> AsyncIterator[Any]:
        if not monitor:
            monitor.append(asyncio.get_running_loop().create_task(_lag_monitor()))
        if type(self.api) not in patched_apis:
            wrap_api(type(self.api))
        call = {"asked": time.perf_counter()}
        async with original(self, config) as connection:
            call["acquired"] = time.perf_counter()
            token = _CURRENT.set(call)
            try:
                yield connection
            finally:
                _CURRENT.reset(token)
                call["released"] = time.perf_counter()
                CALLS.append(call)

    Model._connection_concurrency = concurrency  # type: ignore[method-assign,assignment]


import contextvars  # noqa: E402

_CURRENT: contextvars.ContextVar[dict[str, float] | None] = contextvars.ContextVar("slot_call", default=None)


async def _lag_monitor(period: float = 0.02) -> None:
    while True:
        start = time.perf_counter()
        await asyncio.sleep(period)
        LAGS.append(time.perf_counter() - start - period)


def occupancy(intervals: list[tuple[float, float]], start: float, end: float) -> float:
    """The mean number of the intervals open over [start, end]."""
    total = sum(max(0.0, min(b, end) - max(a, start)) for a, b in intervals)
    return total / (end - start)


def idle_while_waiting(calls: list[dict[str, float]], start: float, end: float, capacity: int) -> dict[str, float]:
    """Seconds (of [start, end]) during which fewer than ``capacity`` slots were held, split by whether some call
    was waiting for a slot at the time."""
    events: list[tuple[float, int, int]] = []  # time, change of held, change of waiting
    for c in calls:
        events += [(c["asked"], 0, 1), (c["acquired"], 1, -1), (c["released"], -1, 0)]
    events.sort()
    held = waiting = 0
    free_waiting = free_none_waiting = 0.0
    last = start
    for t, d_held, d_wait in events:
        t_clip = min(max(t, start), end)
        if held < capacity and t_clip > last:
            if waiting:
                free_waiting += t_clip - last
            else:
                free_none_waiting += t_clip - last
        last = max(last, t_clip)
        held += d_held
        waiting += d_wait
    return {"free_slot_with_waiters_s": free_waiting, "free_slot_no_waiter_s": free_none_waiting}


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux ``/proc``)."""
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def summarize(
    wall: float, cpu: float, stats: dict[str, Any], latency: float, run_start: float, connections: int = CONCURRENCY
) -> dict[str, Any]:
    calls = [c for c in CALLS if "http_start" in c and "http_end" in c]
    first = min(c["asked"] for c in calls)
    last = max(c["released"] for c in calls)
    window = last - first
    holds = [c["released"] - c["acquired"] for c in calls]
    http = [c["http_end"] - c["http_start"] for c in calls]
    before = [c["http_start"] - c["acquired"] for c in calls]
    after = [c["released"] - c["http_end"] for c in calls]
    waits = [c["acquired"] - c["asked"] for c in calls]
    n = stats["received"]
    ideal = max(critical_depth(stats["by_case_role"]) * latency, n * latency / connections)
    lags = sorted(LAGS)

    def pct(values: list[float], q: float) -> float:
        return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")

    return {
        "calls": n,
        "wall_s": round(wall, 1),
        "ideal_s": round(ideal, 1),
        "efficiency": round(ideal / wall, 3),
        "cpu_s": round(cpu, 1),
        "cpu_ms_per_call": round(1000 * cpu / n, 2),
        "before_first_call_s": round(first - run_start, 1),
        "slot_window_s": round(window, 1),
        "after_last_call_s": round(wall - (last - run_start), 1),
        "slots_held_mean": round(occupancy([(c["acquired"], c["released"]) for c in calls], first, last), 1),
        "in_flight_mean": round(occupancy([(c["http_start"], c["http_end"]) for c in calls], first, last), 1),
        "slot_hold_mean_s": round(statistics.fmean(holds), 3),
        "http_mean_s": round(statistics.fmean(http), 3),
        "in_slot_before_http_mean_ms": round(1000 * statistics.fmean(before), 1),
        "in_slot_after_http_mean_ms": round(1000 * statistics.fmean(after), 1),
        "server_handler_mean_s": round(stats["handled_s"] / max(1, n), 3),
        "wait_for_slot_mean_s": round(statistics.fmean(waits), 2),
        **{k: round(v, 1) for k, v in idle_while_waiting(calls, first, last, connections).items()},
        "gc_pause_s": {
            f"gen{g}": {"n": len(p), "total": round(sum(p), 2), "max": round(max(p, default=0.0), 3)}
            for g, p in GC_PAUSES.items()
        },
        "loop_lag_ms": {
            "mean": round(1000 * statistics.fmean(lags), 1) if lags else None,
            "p50": round(1000 * pct(lags, 0.5), 1),
            "p90": round(1000 * pct(lags, 0.9), 1),
            "p99": round(1000 * pct(lags, 0.99), 1),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--connections", type=int, default=CONCURRENCY)
    parser.add_argument("--gc", default="", help="before the measured run: freeze, or freeze,T0 (gc threshold 0)")
    parser.add_argument("--extra", default="", help="further prefdisco eval flags, space separated")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="prefdisco-slots-") as folder:
        tmp = Path(folder)
        mock = MockProcess()
        import os

        os.environ.update({**mock.env(), "INSPECT_CACHE_DIR": str(tmp / "cache"), "XDG_DATA_HOME": str(tmp / "d")})
        try:
            extra = ["--max-connections", str(args.connections), "--max-samples", str(args.n), *args.extra.split()]
            mock.reset(latency_s=0.0, questions=2)
            _prefdisco_eval(write_set(tmp / "warm", 2, prefix="w"), tmp / "warmup", MODEL, *extra)
            instrument()
            import gc

            gc.callbacks.append(_gc_callback)
            if args.gc:
                mode, _, t0 = args.gc.partition(",")
                if mode == "freeze":
                    gc.collect()
                    gc.freeze()
                if t0:
                    gc.set_threshold(int(t0), *gc.get_threshold()[1:])
                print(f"gc: frozen {gc.get_freeze_count()} objects, thresholds {gc.get_threshold()}", flush=True)
            _post(mock.url, "/_mock/config", {"latency_s": args.latency})
            _post(mock.url, "/_mock/reset")
            bench = write_set(tmp / "bench", args.n)
            server_cpu = process_cpu_s(mock.process.pid)
            cpu, start = time.process_time(), time.perf_counter()
            _prefdisco_eval(bench, tmp / "run", MODEL, *extra)
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu
            server_cpu = process_cpu_s(mock.process.pid) - server_cpu
            figures = summarize(wall, cpu, mock.stats(), args.latency, start, args.connections)
            figures["server_cpu_s"] = round(server_cpu, 1)
            figures["cores_busy_mean"] = round((cpu + server_cpu) / wall, 2)
            print(json.dumps(figures, indent=2))
        finally:
            mock.close()


if __name__ == "__main__":
    main()
