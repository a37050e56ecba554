"""How long a run took against how long it had to take: its wall time beside its critical path, read from its logs.

A run is many dialogues at once; no schedule finishes before its longest dialogue does (each turn waits for the one
before), and none does better than keeping every allowed sample busy. From each sample the logs record — when it
started and how long it took (inspect's ``started_at`` and ``total_time``) — over the samples of the run's chosen
logs (``logs.select_logs``; a resumed run's earlier samples included):

* ``busy_s`` — the time at least one sample was running (the union of the samples' intervals: the pause between a
  killed run and its rerun is not counted);
* ``critical_path_s`` — the longest sample: a lower bound on any schedule's wall time;
* ``samples_in_flight`` — the samples running at once, on average (the samples' time over ``busy_s``);
* ``critical_share`` — ``critical_path_s`` over ``busy_s``: 1 when the run took no longer than its longest dialogue.

``summary.json``'s ``run_time`` (None for a results file without its logs, or a folder with a log that cannot be
read: the results may come from its tables, the run time cannot).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any


def _intervals(folder: Path) -> list[tuple[datetime, datetime]]:
    from inspect_ai.log import read_eval_log_sample_summaries

    from prefdisco.errors import UserError
    from prefdisco.results.logs import select_logs

    try:
        chosen = select_logs(folder)
    except UserError:  # a log that cannot be read (a crash's half-written one): the run time is not measured
        return []
    out = []
    for info, _ in chosen:
        try:
            summaries = read_eval_log_sample_summaries(info)
        except Exception:  # a log without a summary index (a crashed run's): its samples have no times to read
            continue
        for s in summaries:
            if s.started_at is None or s.total_time is None or s.error:
                continue
            start = datetime.fromisoformat(str(s.started_at))
            out.append((start, start + timedelta(seconds=float(s.total_time))))
    return out


def busy_seconds(intervals: Sequence[tuple[datetime, datetime]]) -> float:
    """The length of the union of ``intervals``."""
    total, end = 0.0, None
    for start, stop in sorted(intervals):
        if end is None or start > end:
            total += (stop - start).total_seconds()
            end = stop
        elif stop > end:
            total += (stop - end).total_seconds()
            end = stop
    return total


def run_time(runs: Path | Sequence[Path] | None) -> dict[str, Any] | None:
    """The module docstring's figures over every run folder of ``runs``; None without a sample that has its times."""
    roots = [] if runs is None else [runs] if isinstance(runs, (str, Path)) else list(runs)
    intervals = [i for root in map(Path, roots) if root.is_dir() for i in _intervals(root)]
    if not intervals:
        return None
    busy = busy_seconds(intervals)
    lengths = [(stop - start).total_seconds() for start, stop in intervals]
    critical = max(lengths)
    return {
        "n_samples": len(intervals),
        "busy_s": busy,
        "critical_path_s": critical,
        "samples_in_flight": sum(lengths) / busy if busy else None,
        "critical_share": critical / busy if busy else None,
    }
