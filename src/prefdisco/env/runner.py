"""A private event loop that runs an environment's coroutines for synchronous callers.

inspect models are async, so an episode is async inside (``Episode.areset`` / ``astep``); its synchronous
``reset`` / ``step`` hand those coroutines to a ``LoopRunner``. The runner keeps ONE event loop for its whole
life rather than ``asyncio.run`` per call: a model's HTTP client binds its connections to the loop it first ran
on, so every call of an episode (and of the next episode of the same gymnasium environment, which shares the
runner) must run on the same loop.

Thread-safety: a runner is not thread-safe. It belongs to the thread that uses it; run one environment per
thread (or process). Calling it from inside a running event loop (a notebook cell, an async trainer) is refused
with a pointer to the async API, since a loop cannot be nested in its own thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopRunner:
    """Runs coroutines to completion on one private event loop, created on first use."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            coroutine.close()
            raise RuntimeError(
                "the synchronous environment API cannot run inside a running event loop: await areset()/astep() instead"
            )
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(coroutine)

    def close(self) -> None:
        """Close the loop (a later ``run`` opens a new one)."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()
        self._loop = None
