"""How far a run is, for ``eval``'s and ``demo``'s progress lines (``prefdisco.progress.Ticker``).

Every finished sample is one line of a rows file below the run folder (``results/stream.py``), whatever runs it:
this process, ``--workers`` processes or Ray shards. :class:`RunProgress` reads only what was appended since it
last looked, and counts each trial (model, condition, scenario, epoch) once, by its latest line: done, and failed
when that line says so (a sample retried after a failure counts once, as its retry ended).

A sample is many calls, so the line also counts the model calls this process has finished (an inspect hook,
``CallCounter``: the calls that reached a provider, and those answered from the cache, apart) and names the
condition of the latest finished sample: the line changes whenever any call finishes, so a run that waits on slow
calls is told from one that hangs (``samples 18/24 done, 0 failed; 412 model calls made, 30 from the cache; latest:
discovery``). Calls made in ``--workers`` processes or Ray shards are theirs: there the samples count alone.

The calls still running are counted too (begun, not yet answered: a slow first call reads ``1 model call running``
instead of a count that sits still), and once a call has been answered the line estimates what remains: the run's
planned calls (the dry run's estimate, ``evaluation/estimate/plan.py``; a discovery dialogue planned at its whole
question budget, so the estimate errs long) at the pace of the calls so far, or, where this process does not see
the calls (``--workers``, Ray), the samples left at the pace of the samples so far (``about 1 min 20 s left``).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from inspect_ai.hooks import BeforeModelGenerate, Hooks, ModelCacheUsageData, ModelUsageData, hooks

from prefdisco.progress import Tally, elapsed
from prefdisco.results.sample_rows import interrupted
from prefdisco.results.stream import ROWS_FOLDER


class _Calls:
    """The model calls made while counting (``counting``), across every task and sample of this process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active = 0
        self.begun = 0
        """Calls begun (each attempt of a retried call once): answered ones are ``made`` or ``cached``."""
        self.made = 0
        self.cached = 0

    def begin(self) -> None:
        with self.lock:
            if self.active:
                self.begun += 1

    def add(self, cached: bool = False) -> None:
        with self.lock:
            if self.active and cached:
                self.cached += 1
            elif self.active:
                self.made += 1


CALLS = _Calls()


@hooks(name="prefdisco_call_counter", description="Counts model calls for prefdisco's progress line.")
class CallCounter(Hooks):
    """inspect's model-usage hook: one call counted each time a generate reaches the provider."""

    def enabled(self) -> bool:
        return CALLS.active > 0

    async def on_before_model_generate(self, data: BeforeModelGenerate) -> None:
        CALLS.begin()

    async def on_model_usage(self, data: ModelUsageData) -> None:
        CALLS.add()

    async def on_model_cache_usage(self, data: ModelCacheUsageData) -> None:
        CALLS.add(cached=True)


class RunProgress:
    """The samples finished of ``total`` below ``folder``; ``text()`` for a progress line. ``planned_calls``: the
    run's planned model calls (the dry run's estimate), for the estimate of what remains."""

    def __init__(self, folder: Path, total: int, planned_calls: int | None = None) -> None:
        self.folder = Path(folder)
        self.total = total
        self.planned_calls = planned_calls
        self._read: dict[Path, int] = {}
        self._failed: dict[tuple[object, ...], bool] = {}
        self._latest: str | None = None
        self._at_start = (CALLS.begun, CALLS.made, CALLS.cached)
        self._started = time.monotonic()

    def __enter__(self) -> RunProgress:
        with CALLS.lock:
            CALLS.active += 1
            self._at_start = (CALLS.begun, CALLS.made, CALLS.cached)
        self._started = time.monotonic()
        return self

    def __exit__(self, *exc: object) -> None:
        with CALLS.lock:
            CALLS.active -= 1

    @property
    def calls(self) -> tuple[int, int]:
        """The model calls this process made since the run began, and those the cache answered."""
        return CALLS.made - self._at_start[1], CALLS.cached - self._at_start[2]

    @property
    def running(self) -> int:
        """The calls begun since the run began and not answered (a failed attempt that inspect retries is one
        begun twice and answered once, so the count errs high while it retries)."""
        made, cached = self.calls
        return max(0, CALLS.begun - self._at_start[0] - made - cached)

    def remaining(self, now: float | None = None) -> float | None:
        """Seconds the run has left at its pace so far: the planned calls not yet answered at the seconds per call
        made (calls the cache answers cost nothing), else the samples left at the seconds per sample; None before
        the first of them is done."""
        spent = (time.monotonic() if now is None else now) - self._started
        made, cached = self.calls
        if self.planned_calls is not None and made:
            return max(0, self.planned_calls - made - cached) * spent / made
        tally = self.tally()
        if tally.done:
            return (tally.total - tally.done) * spent / tally.done
        return None

    def _poll(self) -> None:
        for path in sorted(self.folder.rglob(f"{ROWS_FOLDER}/*.jsonl")):
            start = self._read.get(path, 0)
            try:
                with path.open("rb") as f:
                    f.seek(start)
                    chunk = f.read()
            except OSError:
                continue
            end = chunk.rfind(b"\n") + 1  # a line still being written is read next time
            for line in chunk[:end].splitlines():
                try:
                    row = json.loads(line)["result"]
                    key = (row["model"], row["mode"], row.get("fixed_k"), row["scenario_id"], row.get("epoch"))
                except (ValueError, KeyError, TypeError):
                    continue
                if interrupted(row.get("error")):  # cancelled by Ctrl-C: not finished (a rerun runs it)
                    self._failed.pop(key, None)
                    continue
                self._failed[key] = bool(row.get("failed"))
                self._latest = str(row["mode"]) + (f" {row['fixed_k']}" if row.get("fixed_k") else "")
            self._read[path] = start + end

    def tally(self) -> Tally:
        self._poll()
        failed = sum(self._failed.values())
        return Tally("samples", self.total, len(self._failed), failed)

    def text(self) -> str:
        tally = self.tally()
        line = tally.text()
        made, cached = self.calls
        if made or cached:
            line += f"; {made} model calls made" + (f", {cached} from the cache" if cached else "")
            line += f" (of about {self.planned_calls})" if self.planned_calls is not None else ""
        running = self.running
        if running:
            line += ("," if made or cached else ";") + f" {running} model call{'' if running == 1 else 's'} running"
        left = self.remaining() if tally.done < tally.total else None
        if left is not None:
            line += f"; about {elapsed(left)} left"
        return line + (f"; latest: {self._latest}" if self._latest else "")
