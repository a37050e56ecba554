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
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from inspect_ai.hooks import Hooks, ModelCacheUsageData, ModelUsageData, hooks

from prefdisco.progress import Tally
from prefdisco.results.stream import ROWS_FOLDER


class _Calls:
    """The model calls made while counting (``counting``), across every task and sample of this process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active = 0
        self.made = 0
        self.cached = 0

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

    async def on_model_usage(self, data: ModelUsageData) -> None:
        CALLS.add()

    async def on_model_cache_usage(self, data: ModelCacheUsageData) -> None:
        CALLS.add(cached=True)


class RunProgress:
    """The samples finished of ``total`` below ``folder``; ``text()`` for a progress line."""

    def __init__(self, folder: Path, total: int) -> None:
        self.folder = Path(folder)
        self.total = total
        self._read: dict[Path, int] = {}
        self._failed: dict[tuple[object, ...], bool] = {}
        self._latest: str | None = None
        self._at_start = (CALLS.made, CALLS.cached)

    def __enter__(self) -> RunProgress:
        with CALLS.lock:
            CALLS.active += 1
            self._at_start = (CALLS.made, CALLS.cached)
        return self

    def __exit__(self, *exc: object) -> None:
        with CALLS.lock:
            CALLS.active -= 1

    @property
    def calls(self) -> tuple[int, int]:
        """The model calls this process made since the run began, and those the cache answered."""
        return CALLS.made - self._at_start[0], CALLS.cached - self._at_start[1]

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
                self._failed[key] = bool(row.get("failed"))
                self._latest = str(row["mode"]) + (f" {row['fixed_k']}" if row.get("fixed_k") else "")
            self._read[path] = start + end

    def tally(self) -> Tally:
        self._poll()
        failed = sum(self._failed.values())
        return Tally("samples", self.total, len(self._failed), failed)

    def text(self) -> str:
        line = self.tally().text()
        made, cached = self.calls
        if made or cached:
            line += f"; {made} model calls made" + (f", {cached} from the cache" if cached else "")
        return line + (f"; latest: {self._latest}" if self._latest else "")
