"""Greedy decoding under a grammar without checking the whole vocabulary at every step.

llama-cpp-python puts a grammar sampler in its chain, and llama.cpp's grammar sampler matches every one of the
vocabulary's 49,152 tokens against the grammar at every step: on two cores that costs more than the model's own
step (about 30 ms a token for the structured judge's JSON). Under greedy decoding only the best valid token
matters, so ``GreedyGrammar`` (a llama-cpp-python logits processor, used in place of the chain's grammar) first
asks the grammar about the single best token (the check llama.cpp's own ``common_sampler`` makes), then about the
256 best, and checks the whole vocabulary only when none of them is valid. The choice is the same token either way:
the grammar only sets invalid tokens to minus infinity, so the best valid token of a best-first shortlist is the best
valid token of the vocabulary.

Only exact under greedy decoding (temperature 0) with no repetition penalties (which llama-cpp-python applies
after the logits processors); ``applies`` says when, and the provider keeps the chain's grammar otherwise.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

SHORTLIST = 256
"""Tokens checked, best first, when the grammar rejects the best one; the whole vocabulary only if none is valid."""
_TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)], align=True)


def applies(request: dict[str, Any]) -> bool:
    """Whether a llama-cpp-python chat request decodes greedily with nothing between the processors and the choice."""
    return (
        request.get("temperature") == 0
        and not request.get("frequency_penalty")
        and not request.get("presence_penalty")
        and request.get("repeat_penalty", 1.0) == 1.0
    )


class GreedyGrammar:
    """A logits processor for one completion: leaves only the grammar's best token.

        The token chosen at step t is seen at step t+1 (the last of ``input_ids``) and fed to the grammar then; the
        first call's context is the prompt. ``shortlist_checks`` and ``full_checks`` count the steps that needed the
    shortlist and the whole vocabulary.
    """

    def __init__(self, llama: Any, grammar: Any) -> None:
        import llama_cpp

        self._lib = llama_cpp
        vocab = llama_cpp.llama_model_get_vocab(llama.model)
        self._sampler = llama_cpp.llama_sampler_init_grammar(
            vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
        )
        if not self._sampler:
            raise ValueError("llama.cpp could not parse the grammar")
        self._one = np.zeros(1, dtype=_TOKEN_DATA)
        self._all: np.ndarray | None = None
        self._prompt_tokens: int | None = None
        self.steps = 0
        self.shortlist_checks = 0
        self.full_checks = 0

    def __call__(self, input_ids: np.ndarray, scores: np.ndarray) -> np.ndarray:
        if self._prompt_tokens is None:
            self._prompt_tokens = len(input_ids)
        else:
            self._lib.llama_sampler_accept(self._sampler, int(input_ids[-1]))
        self.steps += 1
        best = int(np.argmax(scores))
        self._one["id"][0] = best
        self._one["logit"][0] = scores[best]
        self._apply(self._one)
        if np.isfinite(self._one["logit"][0]):
            return self._only(scores, best)
        # The best valid token among the SHORTLIST best is the best valid token overall.
        top = np.argpartition(scores, -SHORTLIST)[-SHORTLIST:]
        shortlist = np.zeros(SHORTLIST, dtype=_TOKEN_DATA)
        shortlist["id"] = top
        shortlist["logit"] = scores[top]
        self._apply(shortlist)
        valid = np.isfinite(shortlist["logit"])
        if valid.any():
            self.shortlist_checks += 1
            return self._only(scores, int(top[valid][np.argmax(shortlist["logit"][valid])]))
        self.full_checks += 1
        if self._all is None or len(self._all) != len(scores):
            self._all = np.zeros(len(scores), dtype=_TOKEN_DATA)
        self._all["id"] = np.arange(len(scores), dtype=np.int32)
        self._all["logit"] = scores
        self._apply(self._all)
        return self._all["logit"].astype(scores.dtype, copy=True)

    @staticmethod
    def _only(scores: np.ndarray, token: int) -> np.ndarray:
        kept = np.full_like(scores, -np.inf)
        kept[token] = scores[token]
        return kept

    def _apply(self, data: np.ndarray) -> None:
        lib = self._lib
        array = lib.llama_token_data_array(
            data=data.ctypes.data_as(ctypes.POINTER(lib.llama_token_data)),
            size=len(data),
            selected=-1,
            sorted=False,
        )
        lib.llama_sampler_apply(self._sampler, ctypes.byref(array))

    def close(self) -> None:
        if self._sampler:
            self._lib.llama_sampler_free(self._sampler)
            self._sampler = None
