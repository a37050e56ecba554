"""Plain progress lines while a long command's output is not a terminal (a file, ``tee``, CI, ``nohup``).

A terminal shows rich's bars (``build``, ``personas``) or inspect's display (``eval``, ``judge``, ``demo``); output
sent elsewhere would show nothing for minutes. While such a command runs, :class:`Ticker` prints a first line after
2 s, then one every ``PREFDISCO_PROGRESS_SECONDS`` seconds (default 8, so never 10 s without a line) to standard
output: what is done of how many, how many failed, and the time since the start::

    build: rubric 12/40 done, 1 failed; 1 min 04 s elapsed

A terminal gets no such lines (its own display shows the same), and neither does ``--display none``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TextIO

INTERVAL_ENV = "PREFDISCO_PROGRESS_SECONDS"
DEFAULT_INTERVAL = 8.0
FIRST_LINE = 2.0
"""Seconds to the first line: the command's start-up before the ticker counts against the 10 s too, and a
command that fails at once prints none."""


def interval() -> float:
    """Seconds between two lines (``PREFDISCO_PROGRESS_SECONDS``, else 8); 0 or less: no lines."""
    try:
        return float(os.environ.get(INTERVAL_ENV, DEFAULT_INTERVAL))
    except ValueError:
        return DEFAULT_INTERVAL


def elapsed(seconds: float) -> str:
    """``42 s``, ``1 min 04 s``, ``2 h 05 min``."""
    s = int(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


@dataclass
class Tally:
    """Counts a command updates as it goes; ``text`` is what a progress line says of them."""

    what: str = ""
    """What is counted now (a build step, "samples")."""
    total: int = 0
    done: int = 0
    failed: int = 0

    def text(self) -> str:
        what = f"{self.what} " if self.what else ""
        return f"{what}{self.done}/{self.total} done, {self.failed} failed"


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Ticker:
    """``with Ticker("build", tally.text):`` prints ``build: <status>; <elapsed> elapsed`` every ``interval()``
    seconds from a daemon thread, unless ``stream`` (default: standard output) is a terminal or ``quiet``."""

    def __init__(
        self, label: str, status: Callable[[], str], *, stream: TextIO | None = None, quiet: bool = False
    ) -> None:
        self.label = label
        self.status = status
        self.stream = stream or sys.stdout
        self.every = interval()
        self.active = not quiet and self.every > 0 and not is_terminal(self.stream)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = time.monotonic()

    def line(self) -> str:
        try:
            status = self.status()
        except Exception as e:  # a status that cannot be read this time must not stop the command
            status = f"progress unknown ({type(e).__name__})"
        return f"{self.label}: {status}; {elapsed(time.monotonic() - self._started)} elapsed"

    def _run(self) -> None:
        wait = min(self.every, FIRST_LINE)  # the start-up before the ticker counts too
        while not self._stop.wait(wait):
            wait = self.every
            try:
                print(self.line(), file=self.stream, flush=True)
            except (OSError, ValueError):  # the stream was closed under us
                return

    def __enter__(self) -> Ticker:
        self._started = time.monotonic()
        if self.active:
            self._thread = threading.Thread(target=self._run, name=f"prefdisco-progress-{self.label}", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
