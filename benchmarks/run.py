"""PrefDisco performance figures against the mock OpenAI-compatible server (and the embedded model). Not a test.

    .venv/bin/python benchmarks/run.py [--quick] [--skip-embedded] [--repeats 5] [--only PART ...]

Prints context lines, then one ``name: value`` line per figure, all measured in this run (the measurements
themselves are in ``perf_workers.py``, each in a fresh child process):

* ``scheduling_efficiency`` — N scenarios × 3 modes at 1 s server latency and concurrency 64 (N = 1,000; quick:
  100; a full run reports the quick size too, ``scheduling_efficiency_100``): ideal time / measured wall time,
  where the ideal is the larger of the dialogue's critical path (the deepest chain of sequential calls of one
  sample × latency) and total calls × latency ÷ 64, from the calls the server actually answered. Measured with
  inspect's ``openai-api`` provider in one process, with ``--workers 2`` (``_workers_2``: two processes, 32
  connections each, their start included) and with ``--ray local --workers 2`` (``ray_efficiency``: two Ray
  workers on this machine, the Ray start included; needs the ``ray`` extra).
* ``cpu_ms_per_call`` — our process's CPU time per model call against a zero-latency server (``prefdisco eval``);
  ``overhead_vs_inspect_floor`` — that over a plain inspect solver loop making the same calls per sample with the
  same settings and provider; ``overhead_vs_cached_floor`` — that over the same loop with every call through
  inspect's response cache, as ``prefdisco eval`` makes them (a rerun after a crash repeats no call);
  ``overhead_vs_bare_sdk`` — that over a bare asyncio loop of the ``openai`` SDK (at most 64 calls at a time). Each
  is the median of ``--repeats`` interleaved rounds (ours, the two floors and bare in a rotating order), printed
  with the rounds' range.
* ``calls_per_scenario`` and ``calls_vs_paper`` — our calls per scenario over the three modes with the assistant
  using all 5 questions, and the ratio to the paper's evaluator (3·C + 21 calls per record, strictly sequential),
  for C = 5 and C = 20 rubric criteria, structured judge (``_per_criterion``: one judge call per criterion).
* ``embedded_tokens_per_s_ratio`` — ``prefdisco/smollm2`` through inspect over llama-cpp-python called directly
  on the same GGUF, prompts and settings (interleaved); ``demo_seconds`` — ``prefdisco demo`` from start to its
  report, in a fresh process (the embedded model in every role; run it on an idle machine).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from perf_workers import (
    CONCURRENCY,
    MODEL,
    REPO,
    MockProcess,
    critical_depth,
    in_child,
    write_set,
)
from prefdisco.results.run_time import call_time

PARTS = ("scheduling", "cpu", "counts", "embedded")
PAPER_FIXED_CALLS = 21  # per record over the three modes, 5 questions: 3 answers + 2 correctness + 5 × 3 per turn


def paper_calls(criteria: int) -> int:
    return 3 * criteria + PAPER_FIXED_CALLS


def scheduling(tmp: Path, n: int, env: dict[str, str], mock: MockProcess, name: str, *flags: str) -> dict[str, Any]:
    """One ``prefdisco eval`` of ``n`` scenarios at 1 s latency and 64 connections, with ``flags``."""
    latency = 1.0
    mock.reset(latency_s=latency, questions=2)
    folder = tmp / f"sched-{name}-{n}"
    job = {
        "tmp": str(folder),
        "bench": str(write_set(folder / "bench", n)),
        "warmup_bench": str(write_set(folder / "warmup", 2, prefix="w")),
        "model": MODEL,
        "mock": mock.url,
        "latency_s": latency,
        "extra": ["--max-connections", str(CONCURRENCY), "--max-samples", str(n), *flags],
    }
    measured = in_child("eval", job, env)
    stats = mock.stats()
    calls = stats["received"]
    depth = critical_depth(stats["by_case_role"])
    ideal = max(depth * latency, calls * latency / CONCURRENCY)
    window = (stats["last_at"] or 0) - (stats["first_at"] or 0)
    return {
        "efficiency": ideal / measured["wall_s"],
        "wall_s": measured["wall_s"],
        "ideal_s": ideal,
        "calls": calls,
        "depth": depth,
        "max_in_flight": stats["max_in_flight"],
        "cpu_s": measured["cpu_s"],
        # the server's busy window (first request to last response) and the rest of the wall time: start-up
        # (loading, task and log creation, processes or Ray) and the tables at the end
        "server_window_s": window,
        "outside_window_s": measured["wall_s"] - window,
        # inside the window: the requests the server held at once on average (of the 64), and its seconds per
        # request (the 1 s latency and its own handling): the window is ideal ÷ (in flight ÷ 64) × s per call
        "server_in_flight_mean": stats["handled_s"] / window if window else None,
        "server_s_per_call": stats["handled_s"] / calls if calls else None,
        # what the run's own summary.json reports (results/run_time.py): calls in flight over the connections
        "summary_connection_share": call_time([folder / "run"])["connection_share"],
    }


def cpu_costs(tmp: Path, n: int, repeats: int, env: dict[str, str], mock: MockProcess) -> dict[str, Any]:
    mock.reset(latency_s=0.0, questions=2)
    job = {
        "tmp": str(tmp / "cpu"),
        "bench": str(write_set(tmp / "cpu" / "bench", n)),
        "warmup_bench": str(write_set(tmp / "cpu" / "warmup", 2, prefix="w")),
        "mock": mock.url,
        "extra": ["--max-connections", str(CONCURRENCY)],
        "bare_calls": 2000,
        "repeats": repeats,
    }
    return in_child("cpu", job, env)


def call_counts(tmp: Path, n: int, env: dict[str, str], mock: MockProcess) -> dict[str, float]:
    """Calls per scenario over the three modes with 5 questions, for C = 5 and 20, both judges."""
    mock.reset(latency_s=0.0, questions=5)
    benches = {}
    for criteria in (5, 20):
        bench = write_set(tmp / f"calls-c{criteria}", n, criteria=criteria)
        for judge in ("structured", "per_criterion"):
            benches[f"c{criteria}_{judge}"] = str(bench)
    job = {
        "tmp": str(tmp / "calls"),
        "benches": benches,
        "n": n,
        "warmup_bench": str(write_set(tmp / "calls-warmup", 1, prefix="w")),
        "model": MODEL,
        "mock": mock.url,
    }
    return in_child("counts", job, env)


def cpu_figures(cpu: dict[str, Any]) -> dict[str, str]:
    print(f"cpu rounds (ms per call): {json.dumps(cpu['rounds'])}", flush=True)
    rounds = cpu["rounds"]
    return {
        "cpu_ms_per_call": median_with_range([r["ours_ms"] for r in rounds]),
        "overhead_vs_inspect_floor": median_with_range([r["ours_ms"] / r["floor_ms"] for r in rounds]),
        "overhead_vs_cached_floor": median_with_range([r["ours_ms"] / r["floor_cached_ms"] for r in rounds]),
        "overhead_vs_bare_sdk": median_with_range([r["ours_ms"] / r["bare_ms"] for r in rounds]),
    }


def median_with_range(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} (range {min(values):.2f}-{max(values):.2f}, {len(values)} rounds)"


def demo_seconds(tmp: Path) -> float:
    """Wall time of ``prefdisco demo`` in a fresh process, start to report."""
    start = time.perf_counter()
    subprocess.run(
        [str(Path(sys.executable).parent / "prefdisco"), "demo", "--out", str(tmp / "demo"), "--display", "none"],
        check=True,
        capture_output=True,
        cwd=REPO,
    )
    return time.perf_counter() - start


def has_ray() -> bool:
    import importlib.util

    return importlib.util.find_spec("ray") is not None


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description="PrefDisco performance figures (printed, never asserted).")
    parser.add_argument("--quick", action="store_true", help="100 scenarios for scheduling, fewer elsewhere")
    parser.add_argument("--skip-embedded", action="store_true", help="no embedded-model figure (nor the demo)")
    parser.add_argument("--repeats", type=int, default=5, help="interleaved rounds of the CPU ratios (>= 1)")
    parser.add_argument(
        "--only",
        action="append",
        choices=PARTS,
        help="measure this part only (repeatable; default: every part)",
    )
    args = parser.parse_args()
    parts = set(args.only or PARTS)

    started = time.perf_counter()
    n_sched = 100 if args.quick else 1000
    n_cpu = 20 if args.quick else 100
    figures: dict[str, str] = {}
    print(f"load average at start: {load()} ({os.cpu_count()} cores)", flush=True)
    with tempfile.TemporaryDirectory(prefix="prefdisco-bench-") as folder:
        tmp = Path(folder)
        mock = MockProcess()
        env = {**mock.env(), "INSPECT_CACHE_DIR": str(tmp / "inspect-cache"), "XDG_DATA_HOME": str(tmp / "data")}
        try:
            runs = {"scheduling_efficiency": ("one", n_sched), "scheduling_efficiency_workers_2": ("w2", n_sched)}
            if not args.quick:
                runs["scheduling_efficiency_100"] = ("one", 100)
            flags = {"one": (), "w2": ("--workers", "2"), "ray": ("--ray", "local", "--workers", "2")}
            if has_ray():
                runs["ray_efficiency"] = ("ray", n_sched)
            else:
                print("ray_efficiency: not measured (Ray is not installed: pip install -e '.[ray]')", flush=True)
            for figure, (name, n) in runs.items() if "scheduling" in parts else ():
                result = scheduling(tmp, n, env, mock, name, *flags[name])
                print(f"scheduling ({n} scenarios, {' '.join(flags[name]) or '1 process'}): {json.dumps(result)}")
                figures[figure] = f"{result['efficiency']:.3f}"

            if "cpu" in parts:
                figures |= cpu_figures(cpu_costs(tmp, n_cpu, max(1, args.repeats), env, mock))
            if "counts" in parts:
                counts = call_counts(tmp, 2 if args.quick else 5, env, mock)
                print(f"calls per scenario: {json.dumps(counts)}", flush=True)
                for judge, suffix in (("structured", ""), ("per_criterion", "_per_criterion")):
                    for c in (5, 20):
                        figures[f"calls_per_scenario_c{c}{suffix}"] = f"{counts[f'c{c}_{judge}']:.1f}"
                        figures[f"calls_vs_paper_c{c}{suffix}"] = f"{counts[f'c{c}_{judge}'] / paper_calls(c):.3f}"
        finally:
            mock.close()

        if not args.skip_embedded and "embedded" in parts:
            job = {"prompts": 3 if args.quick else 6, "rounds": 1 if args.quick else 2, "max_tokens": 48}
            emb = in_child("embedded", job, {})
            print(f"embedded: {json.dumps(emb)}", flush=True)
            figures["embedded_tokens_per_s_ratio"] = f"{emb['provider_tok_s'] / emb['direct_tok_s']:.3f}"
            print(f"load average before the demo: {load()}", flush=True)
            figures["demo_seconds"] = f"{demo_seconds(tmp):.0f}"

    print(f"load average at end: {load()}; total {time.perf_counter() - started:.0f} s", flush=True)
    for name, value in figures.items():
        print(f"{name}: {value}")


if __name__ == "__main__":
    main()
