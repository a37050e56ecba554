"""G-Eval probability weighting: a judge score as the expected rubric level under the judge's token probabilities.

At the position where a score digit was generated, the score is Σ k·p(k) / Σ p(k) over the digits 1..5 among the
generated token and its top alternatives. Read from the accepted attempt's ``ModelOutput``; None when the
provider returned no usable log-probabilities (callers then keep the hard score and say so).
"""

from __future__ import annotations

import math
import re

from inspect_ai.model import Logprob, ModelOutput

from prefdisco.schema import SCORE_LEVELS

SCORE_DIGITS = frozenset(str(s) for s in SCORE_LEVELS)


def score_digit(token: str) -> str | None:
    """The score digit a token spells (``"4"``, `` 4``, ``"4``), or None."""
    digit = token.strip().strip('"')
    return digit if digit in SCORE_DIGITS else None


def digit_expectation(entry: Logprob) -> float | None:
    """Σ k·p(k) / Σ p(k) over the score digits among a generated token and its top alternatives."""
    candidates: dict[str, float] = {}
    for token, logprob in [(entry.token, entry.logprob), *((t.token, t.logprob) for t in entry.top_logprobs or [])]:
        digit = score_digit(token)
        if digit is not None and digit not in candidates:
            candidates[digit] = logprob
    weights = {int(d): math.exp(lp) for d, lp in candidates.items()}
    total = sum(weights.values())
    return sum(k * w for k, w in weights.items()) / total if total > 0 else None


def logprob_weighted_score(output: ModelOutput) -> float | None:
    """G-Eval score from the first generated token that is a score digit, or None when unavailable."""
    choice = output.choices[0] if output.choices else None
    if choice is None or choice.logprobs is None:
        return None
    for entry in choice.logprobs.content:
        if score_digit(entry.token) is not None:
            return digit_expectation(entry)
    return None


_KEY_BEFORE = re.compile(r'"(c\d+)"\s*:\s*"?$')


def weighted_scores(output: ModelOutput, keys: list[str]) -> dict[str, float]:
    """G-Eval score per key of a ``{"c1": N, ...}`` reply, from the digit token that follows ``"key":``."""
    choice = output.choices[0] if output.choices else None
    if choice is None or choice.logprobs is None:
        return {}
    text = ""
    result: dict[str, float] = {}
    for entry in choice.logprobs.content:
        match = _KEY_BEFORE.search(text)
        if score_digit(entry.token) and match and match.group(1) in keys and match.group(1) not in result:
            expected = digit_expectation(entry)
            if expected is not None:
                result[match.group(1)] = expected
        text += entry.token
    return result
