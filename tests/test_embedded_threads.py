"""The embedded model's threads (issue 49, finding 2): before, llama.cpp took every core, and the demo took 1,295 s
with one core busy against 114 s idle (its threads spin at a barrier after every operation, so one thread sharing
its core holds all of them up). Now it runs on the cores idle when it loads (``models/threads.py``);
``benchmarks/demo_busy.py`` measures the demo idle and beside a busy core."""

from __future__ import annotations

from pathlib import Path

import pytest

from prefdisco.models import threads


@pytest.mark.parametrize(
    ("idle", "usable", "expected"),
    [
        (2.0, 2, 2),  # an idle 2-core machine: both
        (1.0, 2, 1),  # one core busy: the other one
        (1.2, 2, 1),  # a core 20 % free is not a core
        (1.8, 2, 2),  # a core 80 % free is (a few percent of background work)
        (0.1, 2, 1),  # every core busy: still one thread
        (7.9, 8, 4),  # at most MAX_THREADS
        (3.0, 8, 3),
        (5.0, 4, 4),  # never more than the usable cores
        (None, 8, 4),  # no /proc/stat: half the usable cores
        (None, 2, 1),
        (None, 1, 1),
    ],
)
def test_the_threads_are_the_idle_cores(idle: float | None, usable: int, expected: int) -> None:
    assert threads.threads_for(idle, usable) == expected


def test_a_busy_share_is_read_from_proc_stat_less_this_process(tmp_path: Path, monkeypatch) -> None:
    """Two reads of a planted ``/proc/stat`` 1,000 jiffies apart on 2 cores, 500 of them busy, while this process
    used no CPU: 2 × 500/1000 = 1 core busy, so 1 idle (by hand)."""
    stat = tmp_path / "stat"
    reads = iter(["cpu 1000 0 0 1000 0 0 0 0\n", "cpu 1400 0 100 1500 0 0 0 0\n"])
    monkeypatch.setattr(threads, "_cpu_times", lambda path: threads._parse(next(reads)))
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    monkeypatch.setattr(threads.time, "process_time", lambda: 0.0)
    assert threads.idle_cores(window_s=0.01, stat=stat) == pytest.approx(1.0)


def test_unreadable_cpu_times_fall_back_to_half_the_cores(tmp_path: Path) -> None:
    assert threads.idle_cores(window_s=0.01, stat=tmp_path / "missing") is None
    (tmp_path / "stat").write_text("not a cpu line\n")
    assert threads.idle_cores(window_s=0.01, stat=tmp_path / "stat") is None


def test_the_setting_wins_and_the_choice_is_made_once(monkeypatch) -> None:
    monkeypatch.setenv(threads.THREADS_ENV, "3")
    assert threads.default_threads() == 3
    monkeypatch.delenv(threads.THREADS_ENV)
    threads._chosen.cache_clear()
    seen = iter([2.0, 1.0])
    monkeypatch.setattr(threads, "idle_cores", lambda: next(seen))
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    assert [threads.default_threads(), threads.default_threads()] == [2, 2]  # one loaded model for every role
    threads._chosen.cache_clear()
