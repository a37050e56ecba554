"""Refuse to evaluate a policy on the problems it was fitted on: its priors have seen their profiles."""

from __future__ import annotations

from collections.abc import Iterable

from prefdisco.errors import UserError
from prefdisco.policies.model import Policy
from prefdisco.policies.split import problem_of
from prefdisco.schema import Scenario


def training_scenarios(policy: Policy, scenarios: Iterable[Scenario]) -> list[Scenario]:
    """The scenarios of ``scenarios`` whose problem is one of the policy's training problems, in input order."""
    train = policy.train_keys()
    return [s for s in scenarios if problem_of(s).key in train]


def check_not_trained_on(policy: Policy, scenarios: Iterable[Scenario]) -> None:
    """A one-line ``UserError`` naming the first scenario of the policy's training split, if any."""
    seen = training_scenarios(policy, scenarios)
    if seen:
        first = seen[0]
        more = f" (and {len(seen) - 1} more)" if len(seen) > 1 else ""
        raise UserError(
            f"scenario {first.id} (problem {first.problem.benchmark}/{first.problem.id}) is in the policy's "
            f"training split{more}, fitted on {policy.split.source}; evaluate the policy on held-out problems "
            f"only (fit with --train-split below 1.0)"
        )
