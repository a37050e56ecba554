"""Response rating, one study of the one app: what an item is, and which items are drawn from a run.

A *rating item* is one judged criterion of one response of an evaluation run: the problem, the response, and one
rubric criterion with its five level anchors; the annotator gives a score 1–5. ``RatingItem`` — what the store
keeps and the pages show — has no field for the judge's score: it cannot be shown.

Sampling (``sample_ratings``), from every validly judged criterion of every scored response that has a final
response and a rubric criterion in the benchmark:

* strata are (mode, judge level): the mode (``fixed_k=K`` for a fixed-K condition) and the judge score rounded half
  up to a level 1–5 (the score is the mean over judges × repeats when the run has several);
* ``n`` items are allocated round-robin over the strata (their order shuffled, seeded), one at a time, skipping
  strata that are used up: every stratum gets ⌊n / strata⌋ or one more while it has items, and what a small
  stratum cannot fill goes to the others;
* within a stratum the items are drawn in a seeded shuffle of their key order; the drawn items are then shown in
  a seeded shuffle (so a session does not run through one mode or level at a time).

Every draw has its own ``random.Random`` seeded by a string: the sample depends only on the seed and the run.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import dataclass

from prefdisco.analysis.validity.human_ratings import NO_K, mode_label

DEFAULT_ITEMS = 60
DEFAULT_SEED = 0
ItemKey = tuple[str, str, str, str, int, int, str]
"""(model, task, scenario_id, mode, fixed_k (``NO_K`` when none), epoch, attribute): ``ITEM_KEY``'s order."""


@dataclass(frozen=True)
class RatingItem:
    """One criterion of one response to rate, as stored and shown. Never holds the judge's score."""

    position: int  # 1-based place in the rating sequence
    model: str
    task: str
    scenario_id: str
    mode: str
    fixed_k: int | None
    epoch: int
    attribute: str
    problem_text: str
    response: str
    description: str  # what the criterion checks on this problem
    preferred_value: str
    levels: tuple[str, str, str, str, str]  # the anchors of scores 1..5

    @property
    def key(self) -> ItemKey:
        k = NO_K if self.fixed_k is None else self.fixed_k
        return (self.model, self.task, self.scenario_id, self.mode, k, self.epoch, self.attribute)


@dataclass(frozen=True)
class Judged:
    """A criterion that may be drawn, with the judge's score that places it in a stratum."""

    key: ItemKey
    judge: float

    @property
    def stratum(self) -> tuple[str, int]:
        return mode_label(self.key[3], self.key[4]), judge_level(self.judge)


def judge_level(score: float) -> int:
    """The judge score rounded half up (⌊x + 0.5⌋) to a level 1–5."""
    return min(5, max(1, math.floor(score + 0.5)))


def sample_ratings(population: list[Judged], n: int = DEFAULT_ITEMS, seed: int = DEFAULT_SEED) -> list[Judged]:
    """``n`` items (or all there are) stratified by mode and judge level, in their seeded showing order."""
    if n < 1:
        raise ValueError("n must be >= 1")
    strata: dict[tuple[str, int], list[Judged]] = defaultdict(list)
    for judged in sorted(population, key=lambda j: j.key):
        strata[judged.stratum].append(judged)
    queues = {}
    for stratum, members in strata.items():
        random.Random(f"prefdisco-ratings:{seed}:stratum:{stratum[0]}:{stratum[1]}").shuffle(members)
        queues[stratum] = members
    order = sorted(queues)
    random.Random(f"prefdisco-ratings:{seed}:strata").shuffle(order)
    chosen: list[Judged] = []
    depth = 0
    while len(chosen) < n and any(depth < len(queues[s]) for s in order):
        for stratum in order:
            if len(chosen) < n and depth < len(queues[stratum]):
                chosen.append(queues[stratum][depth])
        depth += 1
    random.Random(f"prefdisco-ratings:{seed}:order").shuffle(chosen)
    return chosen
