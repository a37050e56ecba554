"""How long a run took against how long it had to take: its wall time beside its critical path, read from its logs.

A run is many dialogues at once; no schedule finishes before its longest dialogue does (each turn waits for the one
before), and none does better than keeping every allowed sample busy. From each sample the logs record — when it
started, how long it took from start to end (inspect's ``started_at`` and ``total_time``) and how long of that it was
working (``working_time``: the total less the time it waited for a connection, a rate limit's back-off or a retry) —
over the samples of the run's chosen logs (``logs.select_logs``; a resumed run's earlier samples included):

* ``busy_s`` — the time at least one sample was running (the union of the samples' start-to-end intervals: the pause
  between a killed run and its rerun is not counted);
* ``critical_path_s`` — the longest sample's *working* time: a lower bound on any schedule's wall time (its total
  time is not: with fewer connections than samples it includes the time it queued for one, which a schedule with
  more connections would not spend);
* ``longest_sample_s`` — the longest sample from start to end, queueing and back-off included;
* ``samples_in_flight`` — the samples running at once, on average (the samples' time over ``busy_s``);
* ``critical_share`` — ``critical_path_s`` over ``busy_s``: 1 when the run took no longer than its longest dialogue
  needed.

and from the run's ``call_time.json`` files (``evaluation/running/call_clock.py``: each invocation of ``prefdisco
eval``,
each shard's, with the seconds its model calls took as inspect timed them; absent for a run made before them, then
these are None):

* ``wall_s`` — the time at least one invocation ran (the union of their intervals, as ``busy_s``);
* ``calls``, ``call_s`` — the model calls made (cache hits are none) and their seconds, summed;
* ``calls_in_flight`` — ``call_s`` over ``wall_s``: the calls running at once, on average;
* ``max_connections`` — the ``--max-connections`` given: the most configured at once (the shards of a ``--workers``
  or ``--ray`` run, each with its share, summed while they run together; None: not given, inspect's provider default
  or its adaptive concurrency);
* ``connection_share`` — ``calls_in_flight`` over ``max_connections``: the share of the configured connections kept
  busy (every role on one provider shares that pool; roles on other providers have pools of their own, so it can
  pass 1).

``summary.json``'s ``run_time`` (None for a results file without its logs, or a folder with a log that cannot be
read: the results may come from its tables, the run time cannot).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

CALL_TIME_FILE = "call_time.json"
"""A run folder's record of its invocations' model-call time (``evaluation/running/call_clock.py`` writes it)."""


def read_entries(path: Path) -> list[dict[str, Any]]:
    """The invocations a ``call_time.json`` holds; none when it is absent or unreadable (the figures are then not
    measured; the run itself is not affected)."""
    try:
        entries = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def configured_connections(entries: Sequence[dict[str, Any]]) -> int | None:
    """The most connections configured at once: at each invocation's start, the ``max_connections`` of every
    invocation running then, summed (the shards of one ``--workers``/``--ray`` run each hold a share of the run's);
    None when none was given."""
    timed = (int, float)
    given = [
        e
        for e in entries
        if e.get("max_connections") and all(isinstance(e.get(k), timed) for k in ("started", "ended"))
    ]
    if not given:
        return None
    at_once = [
        sum(int(o["max_connections"]) for o in given if o["started"] <= e["started"] < o["ended"]) for e in given
    ]
    return max(at_once)


def call_time(roots: Sequence[Path]) -> dict[str, Any]:
    """The call-time figures (module docstring) over every ``call_time.json`` under ``roots``."""
    entries = [e for root in roots for path in sorted(root.rglob(CALL_TIME_FILE)) for e in read_entries(path)]
    spans: list[tuple[datetime, datetime]] = []
    for e in entries:
        try:
            spans.append(
                (datetime.fromtimestamp(float(e["started"]), UTC), datetime.fromtimestamp(float(e["ended"]), UTC))
            )
        except (KeyError, TypeError, ValueError):
            continue
    wall = busy_seconds(spans) if spans else 0.0
    if not wall:
        return dict.fromkeys(("wall_s", "calls", "call_s", "calls_in_flight", "max_connections", "connection_share"))
    calls = sum(int(n) for e in entries for n in (e.get("calls") or {}).values())
    seconds = sum(float(s) for e in entries for s in (e.get("call_s") or {}).values())
    in_flight = seconds / wall
    most = configured_connections(entries)
    return {
        "wall_s": wall,
        "calls": calls,
        "call_s": seconds,
        "calls_in_flight": in_flight,
        "max_connections": most,
        "connection_share": in_flight / most if most else None,
    }


Timed = tuple[datetime, datetime, float]
"""A sample's start, end and working seconds."""


def _intervals(folder: Path) -> list[Timed]:
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
            total = float(s.total_time)
            working = total if s.working_time is None else min(float(s.working_time), total)
            out.append((start, start + timedelta(seconds=total), working))
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
    folders = [root for root in map(Path, roots) if root.is_dir()]
    timed = [i for root in folders for i in _intervals(root)]
    if not timed:
        return None
    busy = busy_seconds([(start, end) for start, end, _ in timed])
    lengths = [(end - start).total_seconds() for start, end, _ in timed]
    critical = max(working for _, _, working in timed)
    return {
        "n_samples": len(timed),
        "busy_s": busy,
        "critical_path_s": critical,
        "longest_sample_s": max(lengths),
        "samples_in_flight": sum(lengths) / busy if busy else None,
        "critical_share": critical / busy if busy else None,
        **call_time(folders),
    }
