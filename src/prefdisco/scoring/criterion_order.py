"""The order and split of a rubric's criteria over the structured judge's calls (``judge_structured.py``).

Judges drift with the order of a list: the last-listed criterion of a one-call judge scores lower, and a long
rubric truncates the judge's reply. So the structured judge never lists a rubric in its own order, and never lists
more than ``max_criteria`` criteria in one call:

* **Shuffled, seeded.** The criteria are put in a random order drawn from ``order_seed``: the sha256 of the
  judging's grader seed (``GenerateConfig.seed`` of the model the call goes to: the trial's ``grader`` seed, or a
  panel judging's own, ``prefdisco.seeds``), the scenario id and the condition. A rerun draws the same order (its
  prompts are the same, so the cache replays them); two trials, two repeats or two judges of one response draw
  their own orders. A judge without a seed (the RL environment) draws from the scenario and condition alone.
* **Split.** A rubric of k criteria is split over ``ceil(k / max_criteria)`` calls (``--judge-max-criteria``,
  ``DEFAULT_MAX_CRITERIA``); the shuffled order is cut into that many consecutive parts whose sizes differ by at
  most one, the larger first (k = 7, N = 3: 3, 2, 2), so no call is left with a lone criterion while another has N.
* **Recorded.** Every judgement records its call (``judge_call``, 1-based, within its judging) and its position
  in that call's list (``judge_position``, 1-based), so the report can measure the position effect
  (``analysis/validity/position.py``).
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass

DEFAULT_MAX_CRITERIA = 10
"""Criteria one structured call lists at most (``--judge-max-criteria``): long rubrics (30 and more criteria)
have been seen to truncate a judge's reply, and ten keeps a call's reply short."""


def order_seed(grader_seed: int | None, scenario_id: str, condition: str) -> int:
    """The seed of a judging's criterion order: the first 8 bytes of the sha256 of the judging's grader seed
    (``none`` without one), the scenario id and the condition, big-endian."""
    text = "\x1f".join(
        ("criterion-order", "none" if grader_seed is None else str(int(grader_seed)), scenario_id, condition)
    )
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


@dataclass(frozen=True)
class CriterionCall:
    """One structured call: the rubric indices (0-based) of the criteria it lists, in the order listed."""

    number: int
    """1-based, within the judging."""
    criteria: tuple[int, ...]


def criterion_calls(n_criteria: int, max_criteria: int, seed: int | None) -> list[CriterionCall]:
    """The calls judging a rubric of ``n_criteria`` criteria: a permutation drawn from ``seed`` (None: rubric
    order) cut into ``ceil(n_criteria / max_criteria)`` parts of near-equal size, the larger first."""
    if max_criteria < 1:
        raise ValueError(f"max_criteria: expected at least 1, got {max_criteria}")
    order = list(range(n_criteria))
    if seed is not None:
        random.Random(seed).shuffle(order)
    if not order:
        return []
    n_calls = math.ceil(n_criteria / max_criteria)
    small, extra = divmod(n_criteria, n_calls)
    calls, start = [], 0
    for number in range(1, n_calls + 1):
        size = small + (1 if number <= extra else 0)
        calls.append(CriterionCall(number, tuple(order[start : start + size])))
        start += size
    return calls
