"""The train/held-out split of a scenario set by problem: seeded, sha256-based, deterministic.

Every scenario of a problem lands on the same side (the personas of one problem share its relevant attributes,
so a policy fitted on one of them has seen the others' question). A problem is named by its benchmark and id.

The split is taken within each task family (benchmark), so every family keeps training problems: a family's
problems are ranked by the first 8 bytes, big-endian, of ``sha256("<seed>\\x1f<benchmark>\\x1f<problem id>")``
(ties, which need a hash collision, by id) and the first ``max(1, floor(fraction · n))`` go to training;
``fraction`` 1.0 takes all, and a fraction under 1 that would hold no problem out at all (one problem per family,
or a fraction close to 1 on a few) is refused. Nothing depends on the order of the input or on global random
state.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Iterable

from prefdisco.errors import UserError
from prefdisco.policies.model import ProblemRef
from prefdisco.schema import Scenario


def problem_of(scenario: Scenario) -> ProblemRef:
    return ProblemRef(benchmark=scenario.problem.benchmark, id=scenario.problem.id)


def problem_rank(seed: int, problem: ProblemRef) -> int:
    """Where a problem falls in its family's seeded order (smaller goes to training first)."""
    text = "\x1f".join((str(seed), problem.benchmark, problem.id))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def n_train(n_problems: int, fraction: float) -> int:
    """Training problems out of ``n_problems`` (at least one; a hair of slack so 0.7 · 10 is 7, not 6)."""
    if fraction >= 1:
        return n_problems
    return max(1, min(n_problems, math.floor(fraction * n_problems + 1e-9)))


def check_fraction(fraction: float) -> None:
    if not (isinstance(fraction, int | float) and 0 < fraction <= 1):
        raise UserError(f"--train-split: expected a fraction in (0, 1], got {fraction}")


def train_problems(scenarios: Iterable[Scenario], fraction: float, seed: int) -> list[ProblemRef]:
    """The training problems of ``scenarios``, sorted by (benchmark, id)."""
    check_fraction(fraction)
    by_family: dict[str, set[ProblemRef]] = defaultdict(set)
    for scenario in scenarios:
        problem = problem_of(scenario)
        by_family[problem.benchmark].add(problem)
    chosen: list[ProblemRef] = []
    for problems in by_family.values():
        ranked = sorted(problems, key=lambda p: (problem_rank(seed, p), p.id))
        chosen.extend(ranked[: n_train(len(ranked), fraction)])
    total = sum(len(problems) for problems in by_family.values())
    if fraction < 1 and len(chosen) == total:  # a held-out split that holds nothing out
        families = ", ".join(f"{name} {len(problems)}" for name, problems in sorted(by_family.items()))
        raise UserError(
            f"--train-split {fraction:g}: every problem would be fitted on and none held out (a family keeps at least "
            f"one training problem; problems: {families}); give --train-split 1.0 to fit on all of them knowingly, "
            "or a benchmark with more problems"
        )
    return sorted(chosen, key=lambda p: p.key)
