"""The tokens of the model calls made inside a block, outside an eval.

Inside an eval, inspect counts every call's usage in the running sample's counters (``EvalSample.model_usage``),
which the sample starts itself. A dialogue played outside an eval (the play-the-user study's model under test and
its judge) has no sample, so ``counting()`` gives the block fresh counters of its own — inspect's per-sample ones,
set for the block's context and put back afterwards — and hands them over: model name → ``ModelUsage``. As in an
eval, a cache hit counts nothing and a call that failed counts nothing.

inspect has no public way to start these counters outside a sample; ``evaluation/later/judge_log.py`` starts them for a
log's sample with the same private functions, so a change there shows in both.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from inspect_ai.model import ModelUsage


@contextmanager
def counting() -> Iterator[dict[str, ModelUsage]]:
    """Counters for the calls made inside the block (in this task's context), by model; filled as calls finish,
    so they hold what was spent even when the block raises."""
    from inspect_ai.model._model import sample_model_usage_context_var

    counted: dict[str, ModelUsage] = {}
    token = sample_model_usage_context_var.set(counted)
    try:
        yield counted
    finally:
        sample_model_usage_context_var.reset(token)


def tokens(counted: Mapping[str, ModelUsage]) -> tuple[int, int]:
    """(input, output) tokens over every model of ``counted``."""
    return sum(u.input_tokens for u in counted.values()), sum(u.output_tokens for u in counted.values())
