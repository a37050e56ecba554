"""The paper's grid at one model's size: ``prefdisco eval`` of N scenarios × 3 conditions against the mock. Not a test.

    .venv/bin/python benchmarks/scale.py [--quick] [--sizes 1000 3000 10000] [--latency-s 0.2] [--no-kill]
        [--kill-sizes 3000] [--eval-args "--ray local --workers 2"]

For each N (default 1,000 and 3,000; a full run adds 10,000; ``--quick``: 100 and 300) it runs ``prefdisco eval``
with default settings, as a user would, in its own process against ``tests/mock_openai.py`` (its own process,
``--latency-s`` a call), and prints one ``name: value`` line per figure:

* ``wall_s``, ``calls``, ``cpu_ms_per_call`` (the eval process and every process it waited for, from ``wait4``);
* ``peak_rss_mb`` — the largest sum of resident memory over the eval process and its children, sampled every
  0.2 s; ``peak_vs_first`` — that over the first (smallest) N's peak; ``peak_rss_samples_mb`` and
  ``peak_rss_after_mb`` — the peak while samples ran and after the last one (the results tables);
* ``bytes_per_sample`` — the run folder's bytes over its N × 3 samples;
* ``csv_after_last_sample_s`` — ``results.csv``'s time less the last streamed sample's (the rows file's last write);
* ``report_s`` — ``prefdisco report RUN --out R --no-figures`` and ``report_figures_s`` with its figures;
* with a kill (default on): the same run killed with SIGKILL (its whole process group) once the mock has received
  90% of the uninterrupted run's calls, then the same command again: ``resume_first_call_s`` (from the rerun's
  start to the mock's first request), ``resume_calls``, ``repeated_calls`` (calls of the rerun on samples the
  killed run had finished: every call of a scenario whose every condition had finished, and the judge calls,
  which name their condition, of a finished sample), and ``tables_equal`` (the resumed run's results.csv against
  the uninterrupted run's, on every column but the run's own times and ids).

Run it on an idle machine: a second process on the cores moves every figure.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

from perf_workers import MODEL, REPO, MockProcess, write_set

MODES = ("baseline", "discovery", "oracle")
VOLATILE = {
    "run_id",
    "eval_id",
    "log",
    "sample_uuid",
    "uuid",
    "started_at",
    "completed_at",
    "working_time",
    "total_time",
}
"""results.csv columns that differ between two runs of the same samples (ids, clocks), left out of the comparison."""


class PeakMemory:
    """The largest resident memory of a process and its children together, sampled on a thread."""

    def __init__(self, pid: int, every_s: float = 0.2) -> None:
        self.root = psutil.Process(pid)
        self.peak = 0
        self.timeline: list[tuple[float, int]] = []  # (time.time(), bytes)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(every_s,), daemon=True)
        self._thread.start()

    def _run(self, every_s: float) -> None:
        while not self._stop.is_set():
            total = 0
            try:
                for process in [self.root, *self.root.children(recursive=True)]:
                    try:
                        total += process.memory_info().rss
                    except psutil.Error:
                        continue
            except psutil.Error:
                return
            self.peak = max(self.peak, total)
            self.timeline.append((time.time(), total))
            self._stop.wait(every_s)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


EVAL_ARGS: list[str] = []
"""More ``prefdisco eval`` flags for every run (``--eval-args``, e.g. ``--ray local --workers 2``)."""


def eval_command(bench: Path, run: Path) -> list[str]:
    return [sys.executable, "-m", "prefdisco", "eval", str(bench), "--model", MODEL, "--log-dir", str(run), *EVAL_ARGS]


def run_eval(
    bench: Path, run: Path, env: dict[str, str], kill_at_calls: int | None = None, mock: Any = None
) -> dict[str, Any]:
    """One ``prefdisco eval`` in its own process group: wall, CPU (wait4), peak memory; killed at a call count."""
    started = time.perf_counter()
    process = subprocess.Popen(
        eval_command(bench, run), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    memory = PeakMemory(process.pid)
    killed = False
    if kill_at_calls is not None:
        while process.poll() is None:
            if mock.stats()["received"] >= kill_at_calls:
                os.killpg(process.pid, signal.SIGKILL)
                killed = True
                break
            time.sleep(0.2)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    peak = memory.stop()
    stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
    if not killed and os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"prefdisco eval exited {os.waitstatus_to_exitcode(status)}: {stderr[-2000:]}")
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss": peak,
        "timeline": memory.timeline,
        "killed": killed,
    }


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def streamed(run: Path) -> list[dict[str, Any]]:
    """The result rows streamed so far (a torn last line skipped)."""
    out = []
    for path in sorted(run.rglob("rows/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                out.append(json.loads(line)["result"])
            except (ValueError, KeyError):
                continue
    return out


def last_sample_time(run: Path) -> float:
    return max(p.stat().st_mtime for p in run.rglob("rows/*.jsonl"))


def table(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        rows = [{k: v for k, v in row.items() if k not in VOLATILE} for row in csv.DictReader(f)]
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))


def timed_report(run: Path, out: Path, env: dict[str, str], *flags: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "prefdisco", "report", str(run), "--out", str(out), *flags],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def repeated_calls(by_case_role: dict[str, int], finished: list[dict[str, Any]]) -> int:
    """Calls of the rerun on samples already finished (see the module's docstring)."""
    done: dict[str, set[str]] = {}
    for row in finished:
        case = str(row.get("scenario_id", "")).rsplit("-", 1)[-1]
        done.setdefault(case, set()).add(str(row.get("mode")))
    repeats = 0
    for key, n in by_case_role.items():
        case, mode, _role = key.split("|")
        modes = done.get(case, set())
        if set(MODES) <= modes or (mode not in ("None", "") and mode in modes):
            repeats += n
    return repeats


def measure(n: int, tmp: Path, env: dict[str, str], mock: MockProcess, kill: bool) -> dict[str, Any]:
    bench = write_set(tmp / f"bench-{n}", n)
    run = tmp / f"run-{n}"
    mock.reset()
    figures = run_eval(bench, run, env)
    last = last_sample_time(run)
    stats = mock.stats()
    calls = stats["received"]
    samples = n * len(MODES)
    out: dict[str, Any] = {
        "wall_s": round(figures["wall_s"], 1),
        "calls": calls,
        "cpu_ms_per_call": round(1000 * figures["cpu_s"] / calls, 2),
        "peak_rss_mb": round(figures["peak_rss"] / 2**20),
        # where the peak is: while samples ran, or after the last one (results tables, report inputs)
        "peak_rss_samples_mb": round(max((b for t, b in figures["timeline"] if t <= last), default=0) / 2**20),
        "peak_rss_after_mb": round(max((b for t, b in figures["timeline"] if t > last), default=0) / 2**20),
        "bytes_per_sample": round(folder_bytes(run) / samples),
        "csv_after_last_sample_s": round((run / "results.csv").stat().st_mtime - last, 1),
        "report_s": round(timed_report(run, tmp / f"report-{n}", env, "--no-figures"), 1),
        "report_figures_s": round(timed_report(run, tmp / f"report-fig-{n}", env), 1),
    }
    if kill:
        killed_run = tmp / f"killed-{n}"
        mock.reset()
        run_eval(bench, killed_run, env, kill_at_calls=int(0.9 * calls), mock=mock)
        finished = streamed(killed_run)
        mock.reset()
        started = time.monotonic()
        resumed = run_eval(bench, killed_run, env)
        rerun = mock.stats()
        out |= {
            "finished_at_kill": len(finished),
            "resume_first_call_s": round((rerun["first_at"] or float("nan")) - started, 1),
            "resume_wall_s": round(resumed["wall_s"], 1),
            "resume_calls": rerun["received"],
            "repeated_calls": repeated_calls(rerun["by_case_role"], finished),
            "tables_equal": table(killed_run / "results.csv") == table(run / "results.csv"),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 and 300 scenarios")
    parser.add_argument("--sizes", type=int, nargs="+", help="the N to measure (overrides --quick)")
    parser.add_argument("--latency-s", type=float, default=0.2, help="the mock's latency a call")
    parser.add_argument("--no-kill", action="store_true", help="skip the kill-and-resume measurement")
    parser.add_argument(
        "--kill-sizes", type=int, nargs="+", help="the kill-and-resume measurement at these N only (default: every N)"
    )
    parser.add_argument("--keep", type=Path, help="keep the runs in this folder (default: a temporary one)")
    parser.add_argument("--eval-args", default="", help="more prefdisco eval flags, e.g. '--ray local --workers 2'")
    args = parser.parse_args()
    EVAL_ARGS[:] = args.eval_args.split()
    sizes = args.sizes or ([100, 300] if args.quick else [1000, 3000, 10000])
    mock = MockProcess(latency_s=args.latency_s)
    env = {**os.environ, **mock.env(), "PYTHONPATH": str(REPO / "src")}
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="prefdisco-scale-"))
    print(
        f"cores: {os.cpu_count()}; mock latency {args.latency_s} s; sizes {sizes}; folder {tmp}; flags {EVAL_ARGS}",
        flush=True,
    )
    first_peak = None
    try:
        for n in sizes:
            kill = not args.no_kill and (args.kill_sizes is None or n in args.kill_sizes)
            figures = measure(n, tmp, env, mock, kill=kill)
            first_peak = first_peak or figures["peak_rss_mb"]
            figures["peak_vs_first"] = round(figures["peak_rss_mb"] / first_peak, 2)
            for name, value in figures.items():
                print(f"{name}_{n}: {value}", flush=True)
    finally:
        mock.close()
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
