"""A call answered from the run's own cache keeps its tokens in its sample's usage.

inspect adds a call's usage to its sample's ``model_usage`` and ``role_usage`` only when a provider answers it; a call
answered from inspect's cache is told to hooks (``Hooks.on_model_cache_usage``) and counted nowhere. PrefDisco's cache
is the run's own (keyed by scenario, condition, role and run: ``evaluation/running/task.py``), so a hit is a call this
run made and paid for in an earlier attempt that a crash or a kill cut short. Without it, a resumed run's results gave
the samples it finished from the cache fewer tokens (and a lower cost) than an uninterrupted run of the same calls, and
the report's cost per scenario fell with every resume.

While ``counting_cached()`` is open (around ``prefdisco eval``'s eval-set), the hook adds each cache hit's usage to
the sample it was made in, by model and by the role the call was made under (the call's own ``ModelEvent``, found
by its output's usage object), exactly as inspect adds a provider's answer; so a sample's tokens are those of its
calls whether the provider or the run's cache answered them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from inspect_ai.event import ModelEvent
from inspect_ai.hooks import Hooks, ModelCacheUsageData, hooks
from inspect_ai.log import transcript
from inspect_ai.model._model import sample_model_usage_context_var, sample_role_usage_context_var, set_model_usage

_counting: ContextVar[bool] = ContextVar("prefdisco_cached_usage", default=False)


def _role_of(data: ModelCacheUsageData) -> str | None:
    """The role of the cached call ``data`` tells of: its ``ModelEvent``, the newest whose output is ``data``'s."""
    for event in reversed(transcript().events):
        if isinstance(event, ModelEvent) and event.cache == "read" and event.output.usage is data.usage:
            return event.role
    return None


@hooks(name="prefdisco_cached_usage", description="PrefDisco: a cached call's tokens count in its sample's usage")
class CachedUsage(Hooks):
    """Adds a cache hit's usage to the running sample's usage by model and role (inside ``counting_cached()``)."""

    async def on_model_cache_usage(self, data: ModelCacheUsageData) -> None:
        by_model = sample_model_usage_context_var.get(None)
        if not _counting.get() or by_model is None:
            return  # outside a PrefDisco run, or outside a sample
        usage = data.usage.model_copy()
        set_model_usage(data.model_name, usage, by_model)
        role = _role_of(data)
        if role is not None:
            set_model_usage(role, usage, sample_role_usage_context_var.get(None))


@contextmanager
def counting_cached() -> Iterator[None]:
    """Inside the block, a call answered from the cache counts in its sample's usage."""
    token = _counting.set(True)
    try:
        yield
    finally:
        _counting.reset(token)
