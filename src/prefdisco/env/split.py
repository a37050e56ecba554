"""Train/eval split of a scenario set by problem, for training on some problems and evaluating on the others.

The split is the policies' split (``policies/split.py``): within each task family the problems are ranked by
``sha256("<seed>\\x1f<benchmark>\\x1f<problem id>")`` and the first ``max(1, floor(fraction · n))`` train, so
every persona of one problem lands on the same side (a policy trained on one persona of a problem has seen the
problem) and a policy fitted with the same fraction and seed splits the same way. ``ScenarioSplit.record``
is what an environment writes down about it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from prefdisco.errors import UserError
from prefdisco.policies.split import problem_of, train_problems
from prefdisco.schema import Scenario

Side = Literal["train", "eval"]
SIDES: tuple[Side, ...] = ("train", "eval")


@dataclass(frozen=True)
class ScenarioSplit:
    """Which side of a seeded split by problem every scenario of a set is on."""

    train_fraction: float
    seed: int
    train: tuple[Scenario, ...]
    eval: tuple[Scenario, ...]
    train_keys: frozenset[tuple[str, str]]
    """(benchmark, problem id) of every training problem."""

    def side(self, scenario: Scenario) -> Side:
        return "train" if problem_of(scenario).key in self.train_keys else "eval"

    def of(self, side: Side) -> tuple[Scenario, ...]:
        return self.train if side == "train" else self.eval

    def record(self) -> dict[str, Any]:
        """The split as data: fraction, seed, counts and the training problems (sorted)."""
        return {
            "train_fraction": self.train_fraction,
            "seed": self.seed,
            "n_train_scenarios": len(self.train),
            "n_eval_scenarios": len(self.eval),
            "train_problems": [f"{b}/{p}" for b, p in sorted(self.train_keys)],
        }


def check_side(value: object, where: str = "split") -> Side | None:
    if value is None or value in SIDES:
        return value
    raise UserError(f"{where}: expected 'train', 'eval' or nothing, got {value!r}")


def split_scenarios(scenarios: Sequence[Scenario], train_fraction: float, seed: int = 0) -> ScenarioSplit:
    """Split ``scenarios`` by problem: ``train_fraction`` (0, 1] of each family's problems train, the rest
    evaluate (1.0: all train). Input order is kept on each side."""
    if not (isinstance(train_fraction, int | float) and 0 < train_fraction <= 1):
        raise UserError(f"train_fraction: expected a fraction in (0, 1], got {train_fraction!r}")
    if not scenarios:
        raise UserError("scenarios: nothing to split (no scenario given)")
    keys = frozenset(p.key for p in train_problems(scenarios, float(train_fraction), int(seed)))
    train = tuple(s for s in scenarios if problem_of(s).key in keys)
    held = tuple(s for s in scenarios if problem_of(s).key not in keys)
    return ScenarioSplit(float(train_fraction), int(seed), train, held, keys)
