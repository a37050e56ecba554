"""How far a run is, for ``eval``'s and ``demo``'s progress lines (``prefdisco.progress.Ticker``).

Every finished sample is one line of a rows file below the run folder (``results/stream.py``), whatever runs it:
this process, ``--workers`` processes or Ray shards. :class:`RunProgress` reads only what was appended since it
last looked, and counts each trial (model, condition, scenario, epoch) once, by its latest line: done, and failed
when that line says so (a sample retried after a failure counts once, as its retry ended).
"""

from __future__ import annotations

import json
from pathlib import Path

from prefdisco.progress import Tally
from prefdisco.results.stream import ROWS_FOLDER


class RunProgress:
    """The samples finished of ``total`` below ``folder``; ``text()`` for a progress line."""

    def __init__(self, folder: Path, total: int) -> None:
        self.folder = Path(folder)
        self.total = total
        self._read: dict[Path, int] = {}
        self._failed: dict[tuple[object, ...], bool] = {}

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
            self._read[path] = start + end

    def tally(self) -> Tally:
        self._poll()
        failed = sum(self._failed.values())
        return Tally("samples", self.total, len(self._failed), failed)

    def text(self) -> str:
        return self.tally().text()
