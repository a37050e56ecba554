"""What a ``prefdisco eval`` keeps in memory per finished sample while its samples run. Not a test.

    .venv/bin/python benchmarks/memory_probe.py [--sizes 100 400] [--latency-s 0.05] [--at 0.9]

For each N it runs ``prefdisco eval`` of N scenarios × 3 conditions with default settings against
``tests/mock_openai.py`` (its own process) in a fresh child process, and once ``--at`` of the N × 3 samples have
streamed their rows it collects garbage and prints one ``name: value`` line per figure:

* ``rss_mb`` — the child's resident memory then;
* ``sample_scores`` and ``sample_scores_kb`` — the ``SampleScore`` objects alive (inspect keeps each finished
  sample's until its task ends) and the bytes reachable from them (their scores, not the samples' metadata, which
  the dataset holds anyway);
* ``model_events`` and ``model_outputs`` — the model events and outputs alive;
* ``summaries`` — the log recorder's per-sample summaries alive;
* ``buffered_samples`` and ``buffered_kb`` — the finished samples the log recorders hold until their next write
  (``log_buffer``) and their bytes;
* ``pymalloc_blocks_mb``, ``pymalloc_arenas_mb`` and ``malloc_in_use_mb`` — Python's small-object allocator's live
  blocks and the arenas it holds, and the C allocator's bytes in use.

The last lines give each figure's growth a finished sample between the first and the last N
(``*_per_sample``). Memory does not depend on the machine's load; wall time does, and is not reported.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from perf_workers import MODEL, REPO, MockProcess, write_set

CONDITIONS = 3
GROWTH = ("rss_mb", "pymalloc_blocks_mb", "pymalloc_arenas_mb", "malloc_in_use_mb", "sample_scores_kb", "summaries")
"""The figures whose growth a finished sample the probe prints."""


def deep_size(root: Any) -> int:
    """The bytes of ``root`` and everything it reaches through containers, dataclasses and pydantic models (each
    object once)."""
    seen: set[int] = set()
    stack = [root]
    total = 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, type):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, list | tuple | set | frozenset):
            stack.extend(obj)
        elif hasattr(obj, "__dict__"):
            stack.append(vars(obj))
    return total


def rows_so_far(run: Path) -> int:
    return sum(len(p.read_bytes().splitlines()) for p in run.rglob("rows/*.jsonl"))


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def allocators() -> dict[str, float]:
    """Python's small-object allocator: the bytes in its live blocks and in its arenas (what it holds of the
    process); and the C allocator's bytes in use (larger objects, C extensions), in MB."""
    with tempfile.TemporaryFile(mode="w+") as f:
        saved = os.dup(2)
        os.dup2(f.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        text = f.read()

    def field(name: str) -> int:
        line = next(line for line in text.splitlines() if line.startswith(name))
        return int(line.split("=")[1].replace(",", ""))

    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _MallInfo2
    info = libc.mallinfo2()
    return {
        "pymalloc_blocks_mb": round(field("# bytes in allocated blocks") / 2**20, 1),
        "pymalloc_arenas_mb": float(field("# arenas allocated current")),  # 1 MiB each (Python 3.10 on)
        "malloc_in_use_mb": round((info.uordblks + info.hblkhd) / 2**20, 1),
    }


def measure() -> dict[str, Any]:
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import EvalSampleSummary
    from inspect_ai.log._recorders.eval import ZipLogFile
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import SampleScore

    gc.collect()
    counts = {"sample_scores": 0, "model_events": 0, "model_outputs": 0, "summaries": 0, "buffered_samples": 0}
    score_bytes = buffered_bytes = 0
    for obj in gc.get_objects():
        if isinstance(obj, SampleScore):
            counts["sample_scores"] += 1
            score_bytes += deep_size(obj.score)
        elif isinstance(obj, ModelEvent):
            counts["model_events"] += 1
        elif isinstance(obj, ModelOutput):
            counts["model_outputs"] += 1
        elif isinstance(obj, EvalSampleSummary):
            counts["summaries"] += 1
        elif isinstance(obj, ZipLogFile):
            counts["buffered_samples"] += len(obj._samples)
            buffered_bytes += sum(deep_size(buffered.sample) for buffered in obj._samples)
    with open("/proc/self/statm") as f:
        rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    return {
        "rss_mb": round(rss / 2**20, 1),
        **allocators(),
        **counts,
        "sample_scores_kb": round(score_bytes / 1024),
        "buffered_kb": round(buffered_bytes / 1024),
    }


def child(bench: Path, run: Path, at: int) -> None:
    """In the child: the eval, and a thread that measures once ``at`` rows have streamed."""
    from prefdisco.cli import main

    figures: dict[str, Any] = {}

    def watch() -> None:
        while not figures:
            if run.exists() and rows_so_far(run) >= at:
                figures.update(measure(), finished=rows_so_far(run))
                print("probe: " + json.dumps(figures), flush=True)
                return
            time.sleep(0.2)

    threading.Thread(target=watch, daemon=True).start()
    try:
        main(["eval", str(bench), "--model", MODEL, "--log-dir", str(run), "--display", "none"])
    except SystemExit as e:
        if e.code not in (0, None):
            raise
    if not figures:
        raise RuntimeError("the run ended before the probe measured")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 400])
    parser.add_argument("--latency-s", type=float, default=0.05, help="the mock's latency a call")
    parser.add_argument("--at", type=float, default=0.9, help="measure once this share of the samples finished")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), Path(args.child[1]), int(args.child[2]))
        return
    mock = MockProcess(latency_s=args.latency_s)
    env = {**os.environ, **mock.env(), "PYTHONPATH": str(REPO / "src")}
    results: dict[int, dict[str, Any]] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="prefdisco-memory-") as tmp:
            for n in args.sizes:
                bench = write_set(Path(tmp) / f"bench-{n}", n)
                at = int(args.at * n * CONDITIONS)
                mock.reset()
                command = [sys.executable, __file__, "--child", str(bench), str(Path(tmp) / f"run-{n}"), str(at)]
                out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
                results[n] = json.loads(next(line for line in out.splitlines() if line.startswith("probe: "))[7:])
                for name, value in results[n].items():
                    print(f"{name}_{n}: {value}", flush=True)
    finally:
        mock.close()
    first, last = results[args.sizes[0]], results[args.sizes[-1]]
    finished = last["finished"] - first["finished"]
    for name in GROWTH:
        scale, label = (1024, name[:-3] + "_kb") if name.endswith("_mb") else (1, name)
        print(f"{label}_per_sample: {round((last[name] - first[name]) * scale / finished, 2)}", flush=True)


if __name__ == "__main__":
    main()
