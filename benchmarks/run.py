"""PrefDisco performance figures against the mock OpenAI-compatible server (and the embedded model). Not a test.

    .venv/bin/python benchmarks/run.py [--quick] [--skip-embedded]

Prints context lines, then last one ``name: value`` line per figure, all measured in this run:

* ``scheduling_efficiency`` — N scenarios × 3 modes at 1 s server latency and concurrency 64 (N = 1,000; quick:
  100): ideal time / measured wall time, where the ideal is the larger of the dialogue's critical path (the
  deepest chain of sequential calls of one sample × latency) and total calls × latency ÷ 64, from the calls the
  server actually answered. Measured with inspect's ``openai-api`` provider, in one process and with
  ``--workers 2`` (two processes, 32 connections each, the wall time including their start); full runs add
  ``_2_processes`` (the scenarios split over two processes with their own log folders, 32 connections each, read
  back together by the results reader: ``merged_rows_of_2_processes``).
* ``cpu_ms_per_call`` — our process's CPU time per model call against a zero-latency server (``prefdisco eval``
  with ``openai-api``); ``overhead_vs_inspect_floor`` — that over a plain inspect
  solver loop making the same calls per sample with the same settings and provider; ``overhead_vs_bare_sdk`` —
  that over a bare asyncio loop of the ``openai`` SDK (2,000 calls, at most 64 at a time, measured before and after
  in the same process, averaged).
* ``calls_per_scenario`` and ``calls_vs_paper`` — our calls per scenario over the three modes with the assistant
  using all 5 questions, and the ratio to the paper's evaluator (3·C + 21 calls per record, strictly sequential),
  for C = 5 and C = 20 rubric criteria, structured judge (``_per_criterion``: one judge call per criterion).
* ``embedded_tokens_per_s_ratio`` — ``prefdisco/smollm2`` through inspect over llama-cpp-python called directly
  on the same GGUF, prompts and settings (interleaved).

Every measurement runs in a fresh child process (``--worker``) that imports everything and warms up before its
clock starts; CPU is ``time.process_time()`` of that process only (the server runs in its own process).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

CONCURRENCY = 64
MODEL = "openai-api/mock/m"
PAPER_FIXED_CALLS = 21  # per record over the three modes, 5 questions: 3 answers + 2 correctness + 5 × 3 per turn


def paper_calls(criteria: int) -> int:
    return 3 * criteria + PAPER_FIXED_CALLS


# ------------------------------------------------------------------------------------------------------------
# the mock server, in its own process
# ------------------------------------------------------------------------------------------------------------


class MockProcess:
    def __init__(self, **settings: Any) -> None:
        args = [sys.executable, str(REPO / "tests" / "mock_openai.py")]
        for key, value in settings.items():
            args += ["--" + key.replace("_", "-"), str(value)]
        self.process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline().split()
        if line[:1] != ["port"]:
            raise RuntimeError(f"mock server did not start: {line}")
        self.port = int(line[1])
        self.url = f"http://127.0.0.1:{self.port}"

    def _call(self, path: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        data = None if payload is None else json.dumps(payload).encode()
        request = urllib.request.Request(self.url + path, data=data, method="GET" if data is None else "POST")
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def stats(self) -> dict[str, Any]:
        return self._call("/_mock/stats")

    def reset(self, **settings: Any) -> None:
        if settings:
            self._call("/_mock/config", settings)
        self._call("/_mock/reset", {})

    def env(self) -> dict[str, str]:
        return {"MOCK_BASE_URL": f"{self.url}/v1", "MOCK_API_KEY": "sk-bench"}

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


# ------------------------------------------------------------------------------------------------------------
# scenario sets
# ------------------------------------------------------------------------------------------------------------


def scenario_with_criteria(base: Any, criteria: int) -> Any:
    """``base`` with a profile and rubric of exactly ``criteria`` attributes (equal weights)."""
    from prefdisco.schema import PreferenceItem, PreferenceProfile, RubricCriterion

    weights = [round(1 / criteria, 9)] * criteria
    weights[-1] = round(1 - sum(weights[:-1]), 9)
    names = [f"Preference dimension {i + 1:02d}" for i in range(criteria)]
    items = [
        PreferenceItem(
            attribute=n,
            value=f"value {i + 1}",
            weight=w,
            justification="it helps",
            description=f"what {n.lower()} means",
        )
        for i, (n, w) in enumerate(zip(names, weights, strict=True))
    ]
    rubric = [
        RubricCriterion(
            attribute=n,
            preferred_value=f"value {i + 1}",
            description=f"does the response follow {n.lower()}",
            levels={level: f"level {level} of {n.lower()}" for level in range(1, 6)},
        )
        for i, n in enumerate(names)
    ]
    return base.model_copy(update={"profile": PreferenceProfile(items=items), "rubric": rubric})


def write_set(folder: Path, n: int, criteria: int | None = None, prefix: str = "c") -> Path:
    from mock_openai import tagged_scenarios, write_scenarios

    scenarios = tagged_scenarios(n, prefix)
    if criteria is not None:
        scenarios = [scenario_with_criteria(s, criteria) for s in scenarios]
    return write_scenarios(folder / "scenarios.jsonl", scenarios)


# ------------------------------------------------------------------------------------------------------------
# workers (each in a fresh process)
# ------------------------------------------------------------------------------------------------------------


def _prefdisco_eval(bench: Path, log_dir: Path, model: str, *extra: str) -> None:
    from prefdisco.cli import main

    argv = ["eval", str(bench), "--model", model, "--log-dir", str(log_dir), "--display", "none", *extra]
    try:
        main(argv)
    except SystemExit as e:
        if e.code not in (0, None):
            raise RuntimeError(f"prefdisco eval exited {e.code}") from e


def worker_eval(job: dict[str, Any]) -> dict[str, Any]:
    """``prefdisco eval`` (warm-up run first); CPU and wall time of the measured run."""
    tmp = Path(job["tmp"])
    latency = job.get("latency_s", 0.0)
    if job.get("warmup", True):
        _post(job["mock"], "/_mock/config", {"latency_s": 0.0})
        _prefdisco_eval(Path(job["warmup_bench"]), tmp / "warmup", job["model"], *job["extra"])
    _post(job["mock"], "/_mock/config", {"latency_s": latency})
    _post(job["mock"], "/_mock/reset")
    cpu, wall = time.process_time(), time.perf_counter()
    _prefdisco_eval(Path(job["bench"]), tmp / "run", job["model"], *job["extra"])
    return {"cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall}


def worker_floor(job: dict[str, Any]) -> dict[str, Any]:
    """A plain inspect solver loop: the same samples per mode, each making that mode's calls in sequence, with
    the settings ``prefdisco eval`` passes to eval_set."""
    from inspect_ai import Task, eval_set
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, get_model
    from inspect_ai.scorer import Score, Target, mean, scorer
    from inspect_ai.solver import Generate, TaskState, solver

    from prefdisco.evaluation.task import load_scenarios

    @solver
    def loop(calls: int):
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            model = get_model()
            for _ in range(calls):
                output = await model.generate(state.messages)
                state.messages += [ChatMessageAssistant(content=output.completion), ChatMessageUser(content="ok?")]
            return state

        return solve

    @scorer(metrics=[mean()])
    def done():
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=1)

        return score

    def tasks(bench: Path, calls: dict[str, int]) -> list[Task]:
        scenarios = load_scenarios(bench)
        return [
            Task(
                name=f"floor_{mode}",
                dataset=MemoryDataset([Sample(id=s.id, input=s.problem.prompt_text()) for s in scenarios]),
                solver=loop(n),
                scorer=done(),
            )
            for mode, n in calls.items()
        ]

    def run(bench: Path, log_dir: Path) -> None:
        eval_set(
            tasks(bench, job["calls"]),
            log_dir=str(log_dir),
            model=job["model"],
            max_connections=CONCURRENCY,
            fail_on_error=False,
            display="none",
            log_realtime=False,
            log_level="warning",
        )

    tmp = Path(job["tmp"])
    run(Path(job["warmup_bench"]), tmp / "warmup")
    _post(job["mock"], "/_mock/reset")
    cpu, wall = time.process_time(), time.perf_counter()
    run(Path(job["bench"]), tmp / "run")
    return {"cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall}


def worker_cpu(job: dict[str, Any]) -> dict[str, Any]:
    """For each provider: ``prefdisco eval`` on the bench, then the plain inspect loop making the same calls per
    sample; each after its own warm-up, CPU of this process only."""
    out: dict[str, Any] = {"bare_ms": []}

    def bare() -> None:  # the bare SDK loop, before and after (the machine's load drifts)
        _post(job["mock"], "/_mock/reset")
        result = worker_bare({**job, "calls_total": job["bare_calls"]})
        out["bare_ms"].append(1000 * result["cpu_s"] / _get(job["mock"], "/_mock/stats")["completions"])

    bare()
    for provider in job["providers"]:
        model = f"{provider}/mock/m"
        tmp = Path(job["tmp"]) / provider
        ours = worker_eval({**job, "model": model, "tmp": str(tmp / "ours")})
        stats = _get(job["mock"], "/_mock/stats")
        per_mode = calls_by_mode(stats["by_case"])
        floor = worker_floor({**job, "model": model, "tmp": str(tmp / "floor"), "calls": per_mode})
        floor_calls = _get(job["mock"], "/_mock/stats")["completions"]
        out[provider] = {
            "calls": stats["completions"],
            "ours_ms": 1000 * ours["cpu_s"] / stats["completions"],
            "floor_calls": floor_calls,
            "floor_ms": 1000 * floor["cpu_s"] / floor_calls,
            "per_mode": per_mode,
        }
    bare()
    return out


def worker_counts(job: dict[str, Any]) -> dict[str, Any]:
    """Calls per scenario for each (criteria, judge) bench, in one process."""
    out = {}
    for i, (name, bench) in enumerate(job["benches"].items()):
        judge = name.split("_", 1)[1]
        extra = ["--judge", judge, "--max-connections", str(CONCURRENCY)]
        worker_eval({**job, "bench": bench, "tmp": str(Path(job["tmp"]) / name), "extra": extra, "warmup": i == 0})
        out[name] = _get(job["mock"], "/_mock/stats")["completions"] / job["n"]
    return out


def worker_split(job: dict[str, Any]) -> dict[str, Any]:
    """One of several processes sharing a run: warm up, say ready, wait for the go, run its share of scenarios."""
    tmp = Path(job["tmp"])
    _prefdisco_eval(Path(job["warmup_bench"]), tmp / "warmup", job["model"], *job["extra"])
    Path(job["ready"]).touch()
    while not Path(job["go"]).exists():
        time.sleep(0.01)
    cpu, start = time.process_time(), time.time()
    _prefdisco_eval(Path(job["bench"]), Path(job["log_dir"]), job["model"], *job["extra"])
    return {"start": start, "end": time.time(), "cpu_s": time.process_time() - cpu}


def worker_bare(job: dict[str, Any]) -> dict[str, Any]:
    """A bare asyncio loop of the openai SDK: ``calls`` chat completions, at most 64 at a time."""
    from openai import AsyncOpenAI

    from prefdisco.evaluation.task import load_scenarios

    prompts = [s.problem.prompt_text() for s in load_scenarios(Path(job["bench"]))]

    async def run(n: int) -> None:
        client = AsyncOpenAI(base_url=job["mock"] + "/v1", api_key="sk-bench", max_retries=0)
        gate = asyncio.Semaphore(CONCURRENCY)

        async def one(i: int) -> None:
            async with gate:
                messages = [{"role": "user", "content": prompts[i % len(prompts)]}]
                await client.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]

        await asyncio.gather(*(one(i) for i in range(n)))
        await client.close()

    asyncio.run(run(50))
    _post(job["mock"], "/_mock/reset")
    cpu, wall = time.process_time(), time.perf_counter()
    asyncio.run(run(job["calls_total"]))
    return {"cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall}


def worker_embedded(job: dict[str, Any]) -> dict[str, Any]:
    """Tokens/s of prefdisco/smollm2 through inspect and of llama-cpp-python directly, interleaved."""
    from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model
    from llama_cpp import Llama

    from prefdisco.demo import demo_scenarios
    from prefdisco.models.gguf import resolve_gguf

    threads = int(os.environ.get("PREFDISCO_THREADS", os.cpu_count() or 1))
    prompts = [s.problem.prompt_text() for s in demo_scenarios()[: job["prompts"]]]
    max_tokens = job["max_tokens"]
    direct = Llama(model_path=str(resolve_gguf("smollm2")), n_ctx=4096, n_threads=threads, n_threads_batch=threads,
                   seed=0, verbose=False)  # fmt: skip
    provider = get_model("prefdisco/smollm2", memoize=False)
    config = GenerateConfig(max_tokens=max_tokens, temperature=0.0)

    def run_direct(prompt: str) -> tuple[int, float]:
        start = time.perf_counter()
        out = direct.create_chat_completion(
            messages=[{"role": "user", "content": prompt}], max_tokens=max_tokens, temperature=0.0
        )
        return out["usage"]["completion_tokens"], time.perf_counter() - start

    async def run_provider(prompt: str) -> tuple[int, float]:
        start = time.perf_counter()
        out = await provider.generate([ChatMessageUser(content=prompt)], config=config)
        return out.usage.output_tokens if out.usage else 0, time.perf_counter() - start

    async def all_runs() -> dict[str, list[tuple[int, float]]]:
        await run_provider(prompts[0])  # warm-up (loads the model)
        run_direct(prompts[0])
        runs: dict[str, list[tuple[int, float]]] = {"direct": [], "provider": []}
        for round_ in range(job["rounds"]):
            for i, prompt in enumerate(prompts):
                first_direct = (round_ + i) % 2 == 0
                if first_direct:
                    runs["direct"].append(run_direct(prompt))
                runs["provider"].append(await run_provider(prompt))
                if not first_direct:
                    runs["direct"].append(run_direct(prompt))
        return runs

    runs = asyncio.run(all_runs())
    speed = {k: sum(n for n, _ in v) / sum(t for _, t in v) for k, v in runs.items()}
    return {"direct_tok_s": speed["direct"], "provider_tok_s": speed["provider"], "threads": threads}


def _get(base: str, path: str) -> dict[str, Any]:
    with urllib.request.urlopen(base + path, timeout=30) as response:
        return json.loads(response.read())


def _post(base: str, path: str, payload: dict[str, Any] | None = None) -> None:
    data = json.dumps(payload or {}).encode()
    urllib.request.urlopen(urllib.request.Request(base + path, data=data, method="POST"), timeout=30).read()


WORKERS = {
    "eval": worker_eval,
    "cpu": worker_cpu,
    "counts": worker_counts,
    "split": worker_split,
    "bare": worker_bare,
    "embedded": worker_embedded,
}


def in_child(kind: str, job: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--worker", kind, json.dumps(job)],
        capture_output=True,
        text=True,
        env={**os.environ, **env, "INSPECT_DISPLAY": "none"},
        check=False,
    )
    lines = [line for line in out.stdout.splitlines() if line.startswith("RESULT ")]
    if out.returncode != 0 or not lines:
        raise RuntimeError(f"worker {kind} failed ({out.returncode}):\n{out.stderr[-3000:]}\n{out.stdout[-1000:]}")
    return json.loads(lines[-1].removeprefix("RESULT "))


# ------------------------------------------------------------------------------------------------------------
# figures
# ------------------------------------------------------------------------------------------------------------


def in_children_parallel(kind: str, jobs: list[dict[str, Any]], env: dict[str, str]) -> list[subprocess.Popen]:
    return [
        subprocess.Popen(
            [sys.executable, __file__, "--worker", kind, json.dumps(job)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **env, "INSPECT_DISPLAY": "none"},
        )
        for job in jobs
    ]


def split_scheduling(
    tmp: Path, n: int, processes: int, model: str, env: dict[str, str], mock: MockProcess
) -> dict[str, Any]:
    """The scheduling run split over ``processes`` processes (own log folders, concurrency shared equally)."""
    from mock_openai import tagged_scenarios, write_scenarios

    latency = 1.0
    mock.reset(latency_s=0.0, questions=2)
    folder = tmp / f"split{processes}"
    scenarios = tagged_scenarios(n)
    warmup = write_set(folder / "warmup", 2, prefix="w")
    jobs = []
    for i in range(processes):
        part = write_scenarios(folder / f"part{i}" / "scenarios.jsonl", scenarios[i::processes])
        jobs.append(
            {
                "tmp": str(folder / f"part{i}"),
                "bench": str(part),
                "warmup_bench": str(warmup),
                "log_dir": str(folder / "runs" / f"part{i}"),
                "model": model,
                "mock": mock.url,
                "ready": str(folder / f"ready{i}"),
                "go": str(folder / "go"),
                "extra": ["--max-connections", str(CONCURRENCY // processes), "--max-samples", str(n)],
            }
        )
    children = in_children_parallel("split", jobs, env)
    while not all(Path(j["ready"]).exists() for j in jobs):
        if any(c.poll() not in (None, 0) for c in children):
            raise RuntimeError("split worker failed: " + "".join(c.stderr.read()[-2000:] for c in children if c.stderr))
        time.sleep(0.05)
    mock.reset(latency_s=latency)
    (folder / "go").touch()
    results = []
    for child in children:
        out, err = child.communicate()
        lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
        if child.returncode != 0 or not lines:
            raise RuntimeError(f"split worker failed ({child.returncode}):\n{err[-3000:]}")
        results.append(json.loads(lines[-1].removeprefix("RESULT ")))
    wall = max(r["end"] for r in results) - min(r["start"] for r in results)
    stats = mock.stats()
    calls = stats["received"]
    ideal = max(critical_depth(stats["by_case_role"]) * latency, calls * latency / CONCURRENCY)
    from prefdisco.results.logs import results_from_logs

    merged = results_from_logs(folder / "runs").results
    return {
        "efficiency": ideal / wall,
        "wall_s": wall,
        "ideal_s": ideal,
        "calls": calls,
        "cpu_s": sum(r["cpu_s"] for r in results),
        "merged_rows": len(merged),
        "expected_rows": 3 * n,
    }


def critical_depth(by_case_role: dict[str, int]) -> int:
    """The deepest chain of sequential calls of one sample: its assistant and user turns, then one round for all
    judge calls (concurrent), one for the correctness grader and one for the user audit."""
    per_sample: dict[tuple[str, str], Counter[str]] = {}
    for key, n in by_case_role.items():
        case, mode, role = key.split("|")
        per_sample.setdefault((case, mode), Counter())[role] += n
    depth = 0
    for roles in per_sample.values():
        chain = roles["assistant"] + roles["user"] + sum(1 for r in ("judge", "grader", "audit") if roles[r])
        depth = max(depth, chain)
    return depth


def calls_by_mode(by_case: dict[str, int]) -> dict[str, int]:
    """Mean calls per sample for each mode (rounded), from the server's per-(case, mode) counts."""
    totals: Counter[str] = Counter()
    samples: Counter[str] = Counter()
    for key, n in by_case.items():
        _, mode = key.split("|")
        totals[mode] += n
        samples[mode] += 1
    return {mode: max(1, round(totals[mode] / samples[mode])) for mode in totals}


def scheduling(
    tmp: Path, n: int, model: str, env: dict[str, str], mock: MockProcess, workers: int = 1
) -> dict[str, Any]:
    latency = 1.0
    mock.reset(latency_s=latency, questions=2)
    folder = tmp / f"sched-{model.split('/')[0]}-{workers}"
    bench = write_set(folder / "bench", n)
    warmup = write_set(folder / "warmup", 2, prefix="w")
    job = {
        "tmp": str(folder),
        "bench": str(bench),
        "warmup_bench": str(warmup),
        "model": model,
        "mock": mock.url,
        "latency_s": latency,
        "extra": ["--max-connections", str(CONCURRENCY), "--max-samples", str(n), "--workers", str(workers)],
    }
    measured = in_child("eval", job, env)
    stats = mock.stats()
    calls = stats["received"]
    depth = critical_depth(stats["by_case_role"])
    ideal = max(depth * latency, calls * latency / CONCURRENCY)
    return {
        "efficiency": ideal / measured["wall_s"],
        "wall_s": measured["wall_s"],
        "ideal_s": ideal,
        "calls": calls,
        "depth": depth,
        "max_in_flight": stats["max_in_flight"],
        "cpu_s": measured["cpu_s"],
        # the server's busy window (first request to last response) and the rest of the wall time: start-up
        # (loading, task and log creation) plus the results read-back and tables at the end
        "server_window_s": (stats["last_at"] or 0) - (stats["first_at"] or 0),
        "outside_window_s": measured["wall_s"] - ((stats["last_at"] or 0) - (stats["first_at"] or 0)),
    }


def cpu_costs(tmp: Path, n: int, env: dict[str, str], mock: MockProcess) -> dict[str, Any]:
    mock.reset(latency_s=0.0, questions=2)
    bench = write_set(tmp / "cpu" / "bench", n)
    warmup = write_set(tmp / "cpu" / "warmup", 2, prefix="w")
    job = {
        "tmp": str(tmp / "cpu"),
        "bench": str(bench),
        "warmup_bench": str(warmup),
        "mock": mock.url,
        "extra": ["--max-connections", str(CONCURRENCY)],
        "providers": ["openai-api"],
        "bare_calls": 2000,
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
        "model": "openai-api/mock/m",
        "mock": mock.url,
    }
    return in_child("counts", job, env)


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description="PrefDisco performance figures (printed, never asserted).")
    parser.add_argument("--quick", action="store_true", help="100 scenarios for scheduling, fewer elsewhere")
    parser.add_argument("--skip-embedded", action="store_true")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("job", nargs="?", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print("RESULT " + json.dumps(WORKERS[args.worker](json.loads(args.job))), flush=True)
        return

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
            one = scheduling(tmp, n_sched, MODEL, env, mock)
            print(f"scheduling (openai-api): {json.dumps(one)}", flush=True)
            figures["scheduling_efficiency"] = f"{one['efficiency']:.3f}"
            two = scheduling(tmp, n_sched, MODEL, env, mock, workers=2)
            print(f"scheduling (openai-api, prefdisco eval --workers 2): {json.dumps(two)}", flush=True)
            figures["scheduling_efficiency_workers_2"] = f"{two['efficiency']:.3f}"
            if not args.quick:
                split = split_scheduling(tmp, n_sched, 2, MODEL, env, mock)
                print(f"scheduling (openai-api, 2 processes): {json.dumps(split)}", flush=True)
                figures["scheduling_efficiency_2_processes"] = f"{split['efficiency']:.3f}"
                figures["merged_rows_of_2_processes"] = f"{split['merged_rows']} of {split['expected_rows']}"

            cpu = cpu_costs(tmp, n_cpu, env, mock)
            api = cpu["openai-api"]
            print(f"cpu (openai-api): {json.dumps(api)}", flush=True)
            bare = sum(cpu["bare_ms"]) / len(cpu["bare_ms"])
            print(f"cpu (bare openai SDK loop, before/after): {cpu['bare_ms']} ms/call", flush=True)
            figures["cpu_ms_per_call"] = f"{api['ours_ms']:.2f}"
            figures["overhead_vs_inspect_floor"] = f"{api['ours_ms'] / api['floor_ms']:.2f}"
            figures["overhead_vs_bare_sdk"] = f"{api['ours_ms'] / bare:.2f}"

            counts = call_counts(tmp, 2 if args.quick else 5, env, mock)
            print(f"calls per scenario: {json.dumps(counts)}", flush=True)
            for c in (5, 20):
                figures[f"calls_per_scenario_c{c}"] = f"{counts[f'c{c}_structured']:.1f}"
                figures[f"calls_vs_paper_c{c}"] = f"{counts[f'c{c}_structured'] / paper_calls(c):.3f}"
            for c in (5, 20):
                figures[f"calls_per_scenario_c{c}_per_criterion"] = f"{counts[f'c{c}_per_criterion']:.1f}"
                figures[f"calls_vs_paper_c{c}_per_criterion"] = f"{counts[f'c{c}_per_criterion'] / paper_calls(c):.3f}"
        finally:
            mock.close()

        if not args.skip_embedded:
            job = {"prompts": 3 if args.quick else 6, "rounds": 1 if args.quick else 2, "max_tokens": 48}
            emb = in_child("embedded", job, {})
            print(f"embedded: {json.dumps(emb)}", flush=True)
            figures["embedded_tokens_per_s_ratio"] = f"{emb['provider_tok_s'] / emb['direct_tok_s']:.3f}"

    print(f"load average at end: {load()}; total {time.perf_counter() - started:.0f} s", flush=True)
    for name, value in figures.items():
        print(f"{name}: {value}")


if __name__ == "__main__":
    main()
