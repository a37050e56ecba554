"""A few llama.cpp context states kept in memory, so a prompt that starts like an earlier one skips that part.

On two CPU cores reading a prompt is the embedded model's largest cost (a 1,200-token judge prompt takes several
seconds, its 30-token reply under one), and PrefDisco's prompts share long beginnings: the judge prompt of one
scenario is the same instructions, task and rubric in every condition, only the response at its end differs;
the assistant's system prompt is the same across scenarios of a condition. llama-cpp-python reuses a shared
beginning only with the call just before (one context); with a cache of states (its ``BaseLlamaCache``
interface) it restores the state whose tokens share the longest beginning with the new prompt and reads only
the rest. This is the provider-side prompt caching API providers do, not a cache of answers: every call still
generates, and inspect's own cache stays the only cache of model outputs.

``PrefixStates`` keeps the ``max_states`` most recently used states (each the KV cells of one call's prompt and
reply: about 23 KB a token for SmolLM2-135M, 30 MB for a judge call). The next-token scores llama-cpp-python
copies into every state (its batch × vocabulary buffer, 100 MB, rewritten by the next evaluation anyway: and
read only for ``logits_all`` log-probabilities, which the provider does not use) are kept as one row of zeros,
which restoring broadcasts.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np
from llama_cpp.llama_cache import BaseLlamaCache

DEFAULT_STATES = 16


def shared_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens ``a`` and ``b`` have in common."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class PrefixStates(BaseLlamaCache):
    """The ``max_states`` most recently used context states, looked up by longest shared beginning."""

    def __init__(self, max_states: int = DEFAULT_STATES) -> None:
        super().__init__(capacity_bytes=0)
        if max_states < 1:
            raise ValueError(f"prompt_cache must be >= 1 state (0 turns it off), got {max_states}")
        self.max_states = max_states
        self.states: OrderedDict[tuple[int, ...], Any] = OrderedDict()
        self.hits = 0
        self.tokens_skipped = 0

    @property
    def cache_size(self) -> int:
        return sum(int(state.llama_state_size) for state in self.states.values())

    def _longest(self, key: Sequence[int]) -> tuple[tuple[int, ...] | None, int]:
        best, best_len = None, 0
        for tokens in self.states:
            n = shared_prefix(tokens, key)
            if n > best_len:
                best, best_len = tokens, n
        return best, best_len

    def __getitem__(self, key: Sequence[int]) -> Any:
        tokens, n = self._longest(key)
        if tokens is None:
            raise KeyError("no cached state shares a beginning with this prompt")
        self.states.move_to_end(tokens)
        self.hits += 1
        self.tokens_skipped += n
        return self.states[tokens]

    def __contains__(self, key: Sequence[int]) -> bool:
        return self._longest(key)[0] is not None

    def __setitem__(self, key: Sequence[int], value: Any) -> None:
        value.scores = np.zeros((1, *value.scores.shape[1:]), dtype=value.scores.dtype)  # a fresh state: ours
        tokens = tuple(key)
        self.states.pop(tokens, None)
        self.states[tokens] = value
        while len(self.states) > self.max_states:
            self.states.popitem(last=False)
