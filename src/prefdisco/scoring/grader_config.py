"""The generation settings of every grader-role call (rubric judges, the user audit, the SimpleQA grader).

Deterministic and short: temperature 0 and a small token budget sized for the reply's JSON — unless the grader
role was given its own temperature or max_tokens (``--model-role grader=...``), which are then left alone.
"""

from __future__ import annotations

from inspect_ai.model import GenerateConfig, Model

TOP_LOGPROBS = 5
"""Alternatives per token requested for G-Eval weighting (enough to cover the five score digits)."""


def grader_config(model: Model, max_tokens: int, *, logprobs: bool = False) -> GenerateConfig:
    """Settings for one grader call; ``logprobs`` also asks for token log-probabilities."""
    base = model.config
    return GenerateConfig(
        temperature=0.0 if base.temperature is None else None,
        max_tokens=max_tokens if base.max_tokens is None else None,
        logprobs=True if logprobs else None,
        top_logprobs=TOP_LOGPROBS if logprobs else None,
    )
