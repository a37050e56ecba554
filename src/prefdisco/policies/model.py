"""The policy file: a versioned pydantic model of what ``prefdisco policy fit`` learned, and its reader/writer.

``policy.json`` holds

* ``format`` — ``"prefdisco-policy/1"``;
* ``split`` — how the source was split by problem: the fraction and seed asked for, the source and its content
  hash, and the training problems (benchmark and problem id) the priors were fitted on;
* ``families`` — one prior per task family (a problem's benchmark name): for each attribute seen in a training
  profile of the family its count, its presence probability ``p`` (count / training scenarios of the family)
  and its observed values with their counts and frequencies (most frequent first); and the pairwise
  co-occurrence probabilities ``cooccurrence[a][b]`` = P(a and b in one profile), stored once per pair with
  ``a < b`` (by name) and only for pairs seen together.

The invariants the choice math relies on are checked on load (probabilities in [0, 1], a pair no more likely
than either of its attributes, pairs naming known attributes), so a hand-edited file fails with one line
naming the field instead of giving a silently wrong question.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from prefdisco.atomic import atomic_write
from prefdisco.errors import UserError, describe_validation_error

POLICY_FORMAT: Literal["prefdisco-policy/1"] = "prefdisco-policy/1"
PROBABILITY_TOLERANCE = 1e-9
"""Slack for the pair-vs-attribute check (probabilities are ratios of counts, written as floats)."""

Probability = Annotated[float, Field(ge=0, le=1)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ProblemRef(_Model):
    """One problem: problem ids are unique only within a benchmark, so both name it."""

    benchmark: str = Field(min_length=1)
    id: str = Field(min_length=1)

    @property
    def key(self) -> tuple[str, str]:
        return (self.benchmark, self.id)


class SplitRecord(_Model):
    """The split by problem the policy was fitted on (``policies/split.py``)."""

    train_fraction: float = Field(gt=0, le=1)
    seed: int
    source: str = Field(description="the benchmark folder or scenarios file the policy was fitted from")
    source_hash: str = Field(description="its content hash (a folder's manifest content_hash, else the file's)")
    n_problems: int = Field(ge=1)
    n_scenarios: int = Field(ge=1)
    n_train_scenarios: int = Field(ge=1)
    train_problems: list[ProblemRef] = Field(min_length=1)


class ValueFrequency(_Model):
    value: str
    count: int = Field(ge=1)
    frequency: Probability = Field(description="count / training profiles of the family holding the attribute")


class AttributePrior(_Model):
    count: int = Field(ge=1, description="training scenarios of the family whose profile holds the attribute")
    p: Probability = Field(description="count / training scenarios of the family")
    values: list[ValueFrequency] = Field(min_length=1, description="most frequent first, ties by value")


class FamilyPrior(_Model):
    """The prior of one task family."""

    n_scenarios: int = Field(ge=1, description="training scenarios of the family")
    attributes: dict[str, AttributePrior]
    cooccurrence: dict[str, dict[str, Probability]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _pairs(self) -> FamilyPrior:
        for a, row in self.cooccurrence.items():
            for b, p in row.items():
                unknown = [x for x in (a, b) if x not in self.attributes]
                if unknown:
                    raise ValueError(f"cooccurrence {a!r}/{b!r}: attribute {unknown[0]!r} is not in attributes")
                if not a < b:
                    raise ValueError(f"cooccurrence {a!r}/{b!r}: a pair is stored once, first name < second name")
                bound = min(self.attributes[a].p, self.attributes[b].p)
                if p > bound + PROBABILITY_TOLERANCE:
                    raise ValueError(f"cooccurrence {a!r}/{b!r}: {p:g} exceeds P of an attribute of it ({bound:g})")
        return self

    def p(self, attribute: str) -> float:
        """P(attribute in a profile); 0 for an attribute the family never showed."""
        prior = self.attributes.get(attribute)
        return prior.p if prior is not None else 0.0

    def joint(self, a: str, b: str) -> float:
        """P(a and b in one profile); 0 for a pair never seen together."""
        first, second = sorted((a, b))
        return self.cooccurrence.get(first, {}).get(second, 0.0)

    def most_frequent_value(self, attribute: str) -> str | None:
        prior = self.attributes.get(attribute)
        return prior.values[0].value if prior is not None else None


POOLED = "(pooled)"
"""The family name of the prior pooled over all of a policy's families (``Policy.family(POOLED)``)."""


def prior_from_counts(
    n: int,
    present: Mapping[str, int],
    pairs: Mapping[tuple[str, str], int],
    values: Mapping[str, Mapping[str, int]],
) -> FamilyPrior:
    """The prior of ``n`` training scenarios from its counts: scenarios holding each attribute, each pair (``a < b``)
    and each value of an attribute. Probabilities are the counts over ``n``, values most frequent first."""
    attributes = {
        name: AttributePrior(
            count=count,
            p=count / n,
            values=[
                ValueFrequency(value=value, count=c, frequency=c / count)
                for value, c in sorted(values[name].items(), key=lambda vc: (-vc[1], vc[0]))
            ],
        )
        for name, count in sorted(present.items())
    }
    cooccurrence: dict[str, dict[str, float]] = {}
    for (a, b), count in sorted(pairs.items()):
        cooccurrence.setdefault(a, {})[b] = count / n
    return FamilyPrior(n_scenarios=n, attributes=attributes, cooccurrence=cooccurrence)


def pooled_prior(families: Mapping[str, FamilyPrior]) -> FamilyPrior:
    """One prior over the training scenarios of every family, as if they were one family: attribute, pair and
    value counts added up (a pair's count is its stored probability times its family's scenarios, an integer)."""
    present: Counter[str] = Counter()
    pairs: Counter[tuple[str, str]] = Counter()
    values: dict[str, Counter[str]] = defaultdict(Counter)
    for prior in families.values():
        for name, attribute in prior.attributes.items():
            present[name] += attribute.count
            values[name].update({v.value: v.count for v in attribute.values})
        for a, row in prior.cooccurrence.items():
            pairs.update({(a, b): round(p * prior.n_scenarios) for b, p in row.items()})
    return prior_from_counts(sum(prior.n_scenarios for prior in families.values()), present, pairs, values)


class Policy(_Model):
    """A fitted elicitation policy (the whole ``policy.json``)."""

    format: Literal["prefdisco-policy/1"] = POLICY_FORMAT
    split: SplitRecord
    families: dict[str, FamilyPrior] = Field(min_length=1)

    def family(self, name: str) -> FamilyPrior:
        """The prior of family ``name``; ``POOLED``: the prior pooled over all families."""
        if name == POOLED:
            return pooled_prior(self.families)
        prior = self.families.get(name)
        if prior is None:
            raise UserError(f"policy: no task family {name!r} (it has {', '.join(sorted(self.families))})")
        return prior

    def train_keys(self) -> set[tuple[str, str]]:
        return {p.key for p in self.split.train_problems}


def write_policy(policy: Policy, path: Path) -> None:
    atomic_write(Path(path), json.dumps(policy.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n")


def read_policy(path: Path) -> Policy:
    """Read and check ``policy.json``; every problem is a one-line ``UserError`` naming the file and field."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: no such policy file (write one with prefdisco policy fit)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"{path}: cannot read ({e})") from None
    except json.JSONDecodeError as e:
        raise UserError(f"{path}:{e.lineno}: invalid JSON ({e.msg})") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a JSON object (a policy written by prefdisco policy fit)")
    if data.get("format") != POLICY_FORMAT:
        raise UserError(f"{path}: field format: expected {POLICY_FORMAT!r}, got {data.get('format')!r}")
    try:
        return Policy.model_validate(data)
    except ValidationError as e:
        raise UserError(describe_validation_error(e, str(path))) from None
