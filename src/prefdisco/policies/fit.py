"""Fit a policy: per task family, how often each attribute, each pair of attributes and each value occurs.

Only the training problems' scenarios count (``split.py``). For a family with n training scenarios:

* P(a) = (scenarios whose profile holds a) / n;
* P(a, b) = (scenarios whose profile holds both) / n, for every pair seen together;
* a's values: each value a's profile items took, with its count and its frequency among those items.

Counting is exact (integers), so the probabilities are ratios a hand count reproduces.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

from prefdisco.benchio import source_hash
from prefdisco.errors import UserError
from prefdisco.policies.model import FamilyPrior, Policy, SplitRecord, prior_from_counts
from prefdisco.policies.split import problem_of, train_problems
from prefdisco.release.convert import load_scenarios
from prefdisco.schema import Scenario


def fit_family(scenarios: Sequence[Scenario]) -> FamilyPrior:
    """The prior of one family from its training scenarios (at least one)."""
    n = len(scenarios)
    present: Counter[str] = Counter()
    pairs: Counter[tuple[str, str]] = Counter()
    values: dict[str, Counter[str]] = defaultdict(Counter)
    for scenario in scenarios:
        names = sorted({item.attribute for item in scenario.profile.items})
        present.update(names)
        pairs.update(combinations(names, 2))
        for item in scenario.profile.items:
            values[item.attribute][item.value] += 1
    return prior_from_counts(n, present, pairs, values)


def fit_policy(scenarios: Sequence[Scenario], *, fraction: float, seed: int, source: str, hash_: str) -> Policy:
    """Split ``scenarios`` by problem and fit one prior per family on the training side."""
    if not scenarios:
        raise UserError(f"{source}: no scenarios to fit a policy on")
    train = train_problems(scenarios, fraction, seed)
    keys = {p.key for p in train}
    by_family: dict[str, list[Scenario]] = defaultdict(list)
    for scenario in scenarios:
        if problem_of(scenario).key in keys:
            by_family[scenario.problem.benchmark].append(scenario)
    split = SplitRecord(
        train_fraction=fraction,
        seed=seed,
        source=source,
        source_hash=hash_,
        n_problems=len({problem_of(s).key for s in scenarios}),
        n_scenarios=len(scenarios),
        n_train_scenarios=sum(len(v) for v in by_family.values()),
        train_problems=train,
    )
    families = {name: fit_family(group) for name, group in sorted(by_family.items())}
    return Policy(split=split, families=families)


def fit_source(path: Path, fraction: float = 0.9, seed: int = 0) -> Policy:
    """Fit a policy on a benchmark folder, a scenarios.jsonl file or a prefq-bench release file."""
    scenarios = load_scenarios(path)
    return fit_policy(scenarios, fraction=fraction, seed=seed, source=str(path), hash_=source_hash(path))
