"""A private event loop that runs an environment's coroutines for synchronous callers.

inspect models are async, so an episode is async inside (``Episode.areset`` / ``astep``); its synchronous
``reset`` / ``step`` hand those coroutines to a ``LoopRunner``. The runner keeps ONE event loop for its whole
life rather than ``asyncio.run`` per call: a model's HTTP client binds its connections to the loop it first ran
on, so every call of an episode (and of the next episode of the same gymnasium environment, which shares the
runner) must run on the same loop.

Thread-safety: a runner is not thread-safe. It belongs to the thread that uses it; run one environment per
thread (or process). Calling it from inside a running event loop (a notebook cell, an async trainer) is refused
with a pointer to the async API, since a loop cannot be nested in its own thread.

``SyncAPI`` is that synchronous API, once for every episode (``Episode``, ``SessionEpisode``).
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Coroutine
from typing import Any, Generic, TypeVar

from prefdisco.dialogue.engine import Turn

T = TypeVar("T")
R = TypeVar("R")


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


class SyncAPI(ABC, Generic[R]):
    """The synchronous API of an episode, written once: ``reset`` / ``step`` run the episode's ``areset`` /
    ``astep`` on its runner, ``close`` closes the runner when the episode owns it (``Episode``, ``SessionEpisode``).
    """

    _runner: LoopRunner
    _own_runner: bool

    def _use_runner(self, runner: LoopRunner | None) -> None:
        """Run on ``runner`` (an environment's, shared by its episodes), or on a runner of one's own."""
        self._runner = runner or LoopRunner()
        self._own_runner = runner is None

    @abstractmethod
    async def areset(self) -> list[dict[str, Any]]: ...

    @abstractmethod
    async def astep(self, assistant_turn: Turn) -> R: ...

    def reset(self) -> list[dict[str, Any]]:
        """``areset`` on the private event loop."""
        return self._runner.run(self.areset())

    def step(self, assistant_turn: Turn) -> R:
        """``astep`` on the private event loop."""
        return self._runner.run(self.astep(assistant_turn))

    def close(self) -> None:
        """Close the private event loop (when the episode owns it)."""
        if self._own_runner:
            self._runner.close()
