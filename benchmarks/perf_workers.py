"""The measurements behind ``benchmarks/run.py``: the mock server in its own process, scenario sets, and the
workers, each run in a fresh child process (``python benchmarks/perf_workers.py KIND JOB``) that imports
everything and warms up before its clock starts; CPU is ``time.process_time()`` of that child only.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

CONCURRENCY = 64
MODEL = "openai-api/mock/m"

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
    cpu, wall, started = time.process_time(), time.perf_counter(), time.monotonic()
    _prefdisco_eval(Path(job["bench"]), tmp / "run", job["model"], *job["extra"])
    return {"cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall, "started_monotonic": started}


def worker_floor(job: dict[str, Any]) -> dict[str, Any]:
    """A plain inspect solver loop: the same samples per mode, each making that mode's calls in sequence, with
    the settings ``prefdisco eval`` passes to eval_set. ``job["cache"]``: every call through inspect's response
    cache, scoped to this run and sample as ``prefdisco eval`` scopes its calls (so nothing is a hit)."""
    from inspect_ai import Task, eval_set
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import CachePolicy, ChatMessageAssistant, ChatMessageUser, get_model
    from inspect_ai.scorer import Score, Target, mean, scorer
    from inspect_ai.solver import Generate, TaskState, solver

    from prefdisco.evaluation.running.task import load_scenarios

    @solver
    def loop(calls: int):
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            model = get_model()
            cache: CachePolicy | bool = False
            if job.get("cache"):
                cache = CachePolicy(
                    expiry=None, per_epoch=True, scopes={"run": job["tmp"], "sample": str(state.sample_id)}
                )
            for _ in range(calls):
                output = await model.generate(state.messages, cache=cache)
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
    if job.get("warmup", True):
        run(Path(job["warmup_bench"]), tmp / "warmup")
    _post(job["mock"], "/_mock/reset")
    cpu, wall = time.process_time(), time.perf_counter()
    run(Path(job["bench"]), tmp / "run")
    return {"cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall}


def worker_cpu(job: dict[str, Any]) -> dict[str, Any]:
    """``repeats`` rounds, each measuring ``prefdisco eval`` on the bench ("ours"), the plain inspect loop making
    the same calls per sample ("floor"), the same loop through inspect's response cache ("floor_cached": ``prefdisco
    eval`` caches every call, so that a rerun repeats none) and the bare SDK loop ("bare"), in an order rotating each
    round (ours first in round 1: it tells the floor its calls per sample), so a drifting load falls on all alike.
    Each after a warm-up in round 1; CPU of this process per call answered."""
    model = "openai-api/mock/m"
    tmp = Path(job["tmp"])
    kinds = ["ours", "floor", "floor_cached", "bare"]
    per_mode: dict[str, int] = {}
    rounds = []
    for r in range(job["repeats"]):
        measured: dict[str, float] = {}
        for kind in kinds[r % len(kinds) :] + kinds[: r % len(kinds)]:
            _post(job["mock"], "/_mock/reset")
            warm = r == 0
            if kind == "ours":
                result = worker_eval({**job, "model": model, "tmp": str(tmp / f"ours{r}"), "warmup": warm})
                per_mode = per_mode or calls_by_mode(_get(job["mock"], "/_mock/stats")["by_case"])
            elif kind in ("floor", "floor_cached"):
                floor_job = {**job, "model": model, "tmp": str(tmp / f"{kind}{r}"), "calls": per_mode, "warmup": warm}
                result = worker_floor({**floor_job, "cache": kind == "floor_cached"})
            else:
                result = worker_bare({**job, "calls_total": job["bare_calls"]})
            measured[f"{kind}_ms"] = 1000 * result["cpu_s"] / _get(job["mock"], "/_mock/stats")["completions"]
        rounds.append(measured)
    return {"rounds": rounds, "per_mode": per_mode}


def worker_counts(job: dict[str, Any]) -> dict[str, Any]:
    """Calls per scenario for each (criteria, judge) bench, in one process."""
    out = {}
    for i, (name, bench) in enumerate(job["benches"].items()):
        judge = name.split("_", 1)[1]
        extra = ["--judge", judge, "--max-connections", str(CONCURRENCY)]
        worker_eval({**job, "bench": bench, "tmp": str(Path(job["tmp"]) / name), "extra": extra, "warmup": i == 0})
        out[name] = _get(job["mock"], "/_mock/stats")["completions"] / job["n"]
    return out


def worker_bare(job: dict[str, Any]) -> dict[str, Any]:
    """A bare asyncio loop of the openai SDK: ``calls`` chat completions, at most 64 at a time."""
    from openai import AsyncOpenAI

    from prefdisco.evaluation.running.task import load_scenarios

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
    "bare": worker_bare,
    "embedded": worker_embedded,
}


def in_child(kind: str, job: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, kind, json.dumps(job)],
        capture_output=True,
        text=True,
        env={**os.environ, **env, "INSPECT_DISPLAY": "none"},
        check=False,
    )
    lines = [line for line in out.stdout.splitlines() if line.startswith("RESULT ")]
    if out.returncode != 0 or not lines:
        raise RuntimeError(f"worker {kind} failed ({out.returncode}):\n{out.stderr[-3000:]}\n{out.stdout[-1000:]}")
    return json.loads(lines[-1].removeprefix("RESULT "))


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


if __name__ == "__main__":
    print("RESULT " + json.dumps(WORKERS[sys.argv[1]](json.loads(sys.argv[2]))), flush=True)
