"""How busy a run kept its connections: the seconds its model calls took, beside the seconds it ran.

inspect tells every hook each model call it made and how long the call took (``Hooks.on_model_usage``: the
successful attempt's own time, retry waits left out; a cache hit is no call and is not told). While ``prefdisco
eval`` runs its eval-set, ``clocking()`` sums them by model for the calls made inside it (a context variable, so
two runs in one process never mix); ``record`` then adds the invocation to ``LOG_DIR/call_time.json``: when it
started and ended, its calls and their seconds per model, and the ``--max-connections`` it was given. A resumed
run adds one entry per invocation, and a ``--workers``/``--ray`` run one per shard folder.

The report's run time (``results/run_time.py``) reads every such file under a run: calls in flight = the calls'
seconds over the time at least one invocation ran, and over the configured connections, the share kept busy.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from inspect_ai.hooks import Hooks, ModelUsageData, hooks

from prefdisco.atomic import atomic_write
from prefdisco.results.run_time import CALL_TIME_FILE, read_entries


@dataclass
class Clock:
    """The calls made inside one ``clocking()`` block: per model, how many and their seconds."""

    started: float = field(default_factory=time.time)
    ended: float | None = None
    calls: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, model: str, seconds: float) -> None:
        self.calls[model] = self.calls.get(model, 0) + 1
        self.seconds[model] = self.seconds.get(model, 0.0) + seconds


_clock: ContextVar[Clock | None] = ContextVar("prefdisco_call_clock", default=None)


@hooks(name="prefdisco_call_clock", description="PrefDisco: the seconds each model call of a run took")
class CallClock(Hooks):
    """Adds each call's duration to the running block's ``Clock`` (none outside a block)."""

    async def on_model_usage(self, data: ModelUsageData) -> None:
        clock = _clock.get()
        if clock is not None:
            clock.add(data.model_name, float(data.call_duration or 0.0))


@contextmanager
def clocking() -> Iterator[Clock]:
    """A ``Clock`` of the model calls made inside the block (ended when the block is left, even by an error)."""
    clock = Clock()
    token = _clock.set(clock)
    try:
        yield clock
    finally:
        clock.ended = time.time()
        _clock.reset(token)


def record(log_dir: Path, clock: Clock, max_connections: int | None) -> None:
    """Add ``clock``'s invocation to ``LOG_DIR/call_time.json`` (one list of invocations, rewritten whole)."""
    path = Path(log_dir) / CALL_TIME_FILE
    entries = read_entries(path)
    entries.append(
        {
            "started": clock.started,
            "ended": clock.ended if clock.ended is not None else time.time(),
            "calls": clock.calls,
            "call_s": clock.seconds,
            "max_connections": max_connections,
        }
    )
    atomic_write(path, json.dumps(entries, indent=1))
