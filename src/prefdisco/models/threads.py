"""How many threads the embedded model runs llama.cpp on when ``-M n_threads`` is not given.

llama.cpp's threads meet at a barrier after every operation and spin while they wait, so a thread that shares its
core with another busy process holds every other thread up: on 2 cores the demo took 114 s idle and 1,295 s with
one core busy at 2 threads (11×). A laptop always has something else running. So the threads are the cores that
are idle when the model loads, not every core: the busy share of every core over a quarter of a second
(``/proc/stat``), less this process's own CPU in that window, leaves the idle cores; the model runs on that many
threads (at least 1, at most ``MAX_THREADS``: more gain little on the small models this runs, and each is another a
busy core can stall). Decided once per process, so every role that names the model shares one loaded copy.

``$PREFDISCO_THREADS`` (or ``-M n_threads=N``) sets the number; without ``/proc/stat`` (macOS, Windows) half the
usable cores are taken. ``benchmarks/demo_busy.py`` measures the demo idle and beside a busy core.
"""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path

MAX_THREADS = 4
THREADS_ENV = "PREFDISCO_THREADS"
WINDOW_S = 0.25
"""Seconds the cores are watched for before the model loads."""


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system says, else every core)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # no affinity on this system
        return os.cpu_count() or 1


def _cpu_times(stat: Path) -> tuple[int, int] | None:
    """(busy, total) jiffies of all cores from ``/proc/stat``, or None where it cannot be read."""
    try:
        return _parse(stat.read_text())
    except OSError:
        return None


def _parse(text: str) -> tuple[int, int] | None:
    """(busy, total) jiffies of ``/proc/stat``'s first line (``cpu user nice system idle iowait irq softirq steal``;
    idle and iowait are not busy), or None when it is no such line."""
    fields = text.split("\n", 1)[0].split()
    if len(fields) < 5 or fields[0] != "cpu" or not all(f.isdigit() for f in fields[1:9]):
        return None
    ticks = [int(v) for v in fields[1:9]]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
    return sum(ticks) - idle, sum(ticks)


def idle_cores(window_s: float = WINDOW_S, stat: Path = Path("/proc/stat")) -> float | None:
    """The cores other processes left idle over ``window_s`` (this process's own CPU is not counted as busy), or
    None where the system's CPU times cannot be read."""
    first = _cpu_times(stat)
    if first is None:
        return None
    started, own = time.monotonic(), time.process_time()
    time.sleep(window_s)
    second = _cpu_times(stat)
    spent, own = time.monotonic() - started, time.process_time() - own
    if second is None or second[1] <= first[1] or spent <= 0:
        return None
    cores = os.cpu_count() or 1  # /proc/stat's first line sums every core of the machine
    busy = cores * (second[0] - first[0]) / (second[1] - first[1]) - own / spent
    return max(0.0, usable_cores() - max(0.0, busy))


def threads_for(idle: float | None, usable: int) -> int:
    """The thread count for ``idle`` idle cores of ``usable``: the idle cores, a core counted as idle when at least
    three quarters of it is (so a core a few percent busy still counts); half the usable cores when ``idle`` is
    unknown; at least 1 and at most ``MAX_THREADS``."""
    wanted = usable // 2 if idle is None else int(min(idle, usable) + 0.25)
    return max(1, min(MAX_THREADS, wanted))


@functools.cache
def _chosen() -> int:
    return threads_for(idle_cores(), usable_cores())


def default_threads() -> int:
    """llama.cpp's threads when ``-M n_threads`` is not given: ``$PREFDISCO_THREADS``, else the idle cores when
    first asked in this process (module docstring)."""
    given = os.environ.get(THREADS_ENV)
    if given:
        return int(given)
    return _chosen()
