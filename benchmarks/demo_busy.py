"""``prefdisco demo`` on an idle machine and beside a busy core, side by side in one run. Not a test.

    .venv/bin/python benchmarks/demo_busy.py [--limit N] [--threads T ...]

A laptop always has something else running: this measures what one busy core costs the demo. Each demo runs in a
fresh process, a fresh folder and a fresh inspect cache (so no call is answered from an earlier run), first on the
idle machine, then with a CPU-bound process pinned to core 0 beside it (``taskset -c 0``, a Python loop that never
sleeps). For each thread count (``--threads``; ``default`` is the embedded model's own choice,
``models/threads.py``, and a number sets ``PREFDISCO_THREADS``) it prints::

    demo_idle_s[threads=default]: 131.2
    demo_busy_s[threads=default]: 150.4
    demo_busy_over_idle[threads=default]: 1.15

Run it on an otherwise idle machine; the numbers of one run are comparable with each other only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PREFDISCO = REPO / ".venv" / "bin" / "prefdisco"


def busy_core() -> subprocess.Popen[bytes]:
    """A CPU-bound process pinned to core 0 (``taskset`` from util-linux; else unpinned)."""
    loop = [sys.executable, "-c", "while True: pass"]
    pinned = ["taskset", "-c", "0", *loop] if shutil.which("taskset") else loop
    return subprocess.Popen(pinned)


def demo_seconds(limit: int | None, threads: str) -> float:
    """Wall seconds of one ``prefdisco demo`` in a fresh folder and inspect cache."""
    with tempfile.TemporaryDirectory(prefix="prefdisco-demo-busy-") as tmp:
        env = {**os.environ, "INSPECT_CACHE_DIR": str(Path(tmp) / "cache"), "PREFDISCO_PROGRESS_SECONDS": "0"}
        env.pop("PREFDISCO_THREADS", None)
        if threads != "default":
            env["PREFDISCO_THREADS"] = threads
        command = [str(PREFDISCO), "demo", "--out", str(Path(tmp) / "demo"), "--display", "none"]
        command += ["--limit", str(limit)] if limit else []
        started = time.perf_counter()
        done = subprocess.run(command, env=env, cwd=tmp, capture_output=True, text=True)
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"demo failed ({done.returncode}): {done.stdout[-2000:]}{done.stderr[-2000:]}")
        return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="demo scenarios (default: the whole demo)")
    parser.add_argument("--threads", nargs="+", default=["default"], help="'default' or llama.cpp thread counts")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "src"))
    from prefdisco.models.gguf import resolve_gguf
    from prefdisco.models.threads import default_threads, usable_cores

    resolve_gguf("smollm2")  # the Q8_0 copy is made once, before any clock starts
    print(f"cores: {usable_cores()}; default threads: {default_threads()}; demo limit: {args.limit or 'all'}")
    for threads in args.threads:
        idle = demo_seconds(args.limit, threads)
        load = busy_core()
        try:
            time.sleep(1)  # the loop is running before the demo starts
            busy = demo_seconds(args.limit, threads)
        finally:
            load.kill()
            load.wait()
        print(f"demo_idle_s[threads={threads}]: {idle:.1f}")
        print(f"demo_busy_s[threads={threads}]: {busy:.1f}")
        print(f"demo_busy_over_idle[threads={threads}]: {busy / idle:.2f}", flush=True)


if __name__ == "__main__":
    main()
