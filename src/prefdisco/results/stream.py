"""Results rows written as samples finish, so a finished run needs no read-back of its samples.

While ``streaming_rows(log_dir)`` is open, an inspect hook (``RowStream``) turns every sample of a PrefDisco task
of an eval-set in ``log_dir`` into its rows (``sample_rows.py``) the moment inspect hands it over
(``on_sample_end``) and appends them as one JSON line to ``log_dir/rows/<eval id>.jsonl``. One ``write`` per line,
flushed at once: a kill loses at most the line being written, and a torn last line is skipped on reading.

The logs stay the source of truth. ``streamed_rows(folder)`` reads every rows file below ``folder``; the results
reader (``logs.py``) uses a streamed line only for a sample the chosen logs hold under the same sample uuid and
with the same score values (so a sample rescored after the run, or one a crash kept out of its log, is read
from the log instead), and reads from the logs whatever no line covers.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any, TextIO

from inspect_ai.hooks import EvalSetStart, Hooks, SampleEnd, TaskEnd, TaskStart, hooks

from prefdisco.results.sample_rows import SampleRows, sample_rows

ROWS_FOLDER = "rows"
_ACTIVE: set[str] = set()
"""The log folders of the eval-sets this process is streaming (``streaming_rows``)."""


def _folder_key(path: str | Path) -> str:
    return os.path.realpath(os.fspath(path))


@contextmanager
def streaming_rows(log_dir: str | Path) -> Iterator[Path]:
    """Stream the rows of the eval-sets run in ``log_dir`` while the block runs; yields the rows folder."""
    folder = Path(log_dir) / ROWS_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    key = _folder_key(log_dir)
    _ACTIVE.add(key)
    try:
        yield folder
    finally:
        _ACTIVE.discard(key)


@hooks(name="prefdisco_rows", description="Writes PrefDisco result rows as samples finish.")
class RowStream(Hooks):
    """The hook: eval-set → its log folder, task → its rows file and spec, sample → one line."""

    def __init__(self) -> None:
        self._sets: dict[str, str] = {}
        self._tasks: dict[str, tuple[Any, TextIO]] = {}

    def enabled(self) -> bool:
        return bool(_ACTIVE)

    async def on_eval_set_start(self, data: EvalSetStart) -> None:
        key = _folder_key(data.log_dir)
        if key in _ACTIVE:
            self._sets[data.eval_set_id] = key

    async def on_task_start(self, data: TaskStart) -> None:
        folder = self._sets.get(data.eval_set_id or "")
        if folder is None or "prefdisco_mode" not in (data.spec.metadata or {}):
            return
        path = Path(folder) / ROWS_FOLDER / f"{data.eval_id}.jsonl"
        self._tasks[data.eval_id] = (data.spec, path.open("a", encoding="utf-8"))

    async def on_sample_end(self, data: SampleEnd) -> None:
        task = self._tasks.get(data.eval_id)
        if task is None:
            return
        spec, out = task
        out.write(json.dumps(asdict(sample_rows(spec, data.sample)), default=str) + "\n")
        out.flush()

    async def on_task_end(self, data: TaskEnd) -> None:
        task = self._tasks.pop(data.eval_id, None)
        if task is not None:
            task[1].close()


class StreamedRows(Mapping[str, SampleRows]):
    """Every streamed sample below a folder by sample uuid, read from its line when asked for: the index holds
    each uuid's file and offset, not its rows, so a run of 10,000 scenarios is not held whole (a torn or foreign line
    is skipped; of two lines with one uuid, the later one counts)."""

    def __init__(self, folder: str | Path) -> None:
        self._at: dict[str, tuple[Path, int]] = {}
        for path in sorted(Path(folder).rglob(f"{ROWS_FOLDER}/*.jsonl")):
            with path.open("rb") as lines:
                offset = 0
                for line in lines:
                    uuid = _uuid(line)
                    if uuid:
                        self._at[uuid] = (path, offset)
                    offset += len(line)

    def __getitem__(self, uuid: str) -> SampleRows:
        path, offset = self._at[uuid]
        with path.open("rb") as lines:
            lines.seek(offset)
            entry = _entry(lines.readline())
        if entry is None:  # a line that named its uuid but does not parse (cut short by a kill)
            raise KeyError(uuid)
        return entry

    def __contains__(self, uuid: object) -> bool:
        return uuid in self._at

    def __iter__(self) -> Iterator[str]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)


_UUID = re.compile(rb'^\{"uuid": "([^"\\]+)"')


def _uuid(line: bytes) -> str | None:
    """The uuid a rows line starts with (``asdict`` keeps ``SampleRows``' field order), or None for a line that is
    not one whole entry (torn by a kill, or foreign)."""
    found = _UUID.match(line)
    if found is None or (not line.endswith(b"\n") and _entry(line) is None):
        return None
    return found.group(1).decode()


def _entry(line: bytes) -> SampleRows | None:
    try:
        entry = SampleRows(**json.loads(line))
    except (ValueError, TypeError):
        return None  # the line a kill cut short
    entry.judge_usage = [tuple(u) for u in entry.judge_usage]
    return entry if entry.uuid else None


def streamed_rows(folder: str | Path) -> StreamedRows:
    """Every streamed sample below ``folder`` by sample uuid (``StreamedRows``)."""
    return StreamedRows(folder)
