"""What a strategy solver (``strategies.py``) records per sample beside the ``DialogueRecord``: which policy chose
the questions, what it learned and what it then believed.

Its own light module (a store model and two metadata keys, no solver) so the results reader can read it from a log
without importing the solvers. Fields, under ``StrategyRecord:<field>`` in the store:

* ``strategy`` — ``checklist`` or ``infogain`` ("" in a sample no strategy solver ran);
* ``k`` — the question budget K; ``policy`` — the policy file; ``family`` — the task family asked about;
* ``prior`` — ``family`` (the family's own prior chose the questions) or ``pooled`` (the policy had no prior for
  the family: the prior pooled over all its families);
* ``asked`` — the attribute each question was about, in asking order;
* ``answers`` — attribute → present, in the order they became known (the presence rule of ``strategies.py``);
* ``inferred`` — the inferred profile after the K answers (``policies.choice.inferred_profile``);
* ``precision`` / ``recall`` — P@K and R@K of the inferred attribute set against the scenario's true profile
  (recorded for analysis only: nothing the model under test or the simulated user sees depends on them).

The task of a strategy run also carries ``prefdisco_strategy`` and ``prefdisco_strategy_k`` in its metadata, so a
sample that failed before its solver wrote the record is still labelled (``results/strategy_columns.py``).
"""

from __future__ import annotations

from inspect_ai.util import StoreModel
from pydantic import BaseModel, Field

STRATEGY_METADATA = "prefdisco_strategy"
"""Task metadata key: the strategy's name."""
STRATEGY_K_METADATA = "prefdisco_strategy_k"
"""Task metadata key: the strategy's question budget K."""


class InferredItem(BaseModel):
    """One attribute of the inferred profile: its most frequent value in the prior (None: the prior never saw it),
    the belief that the person has it, and whether an answer confirmed it (a belief of 1.0 alone may be a prior
    settled by other answers)."""

    attribute: str
    value: str | None = None  # a None value is left out of the stored JSON: read back as None
    probability: float
    confirmed: bool = False


class StrategyRecord(StoreModel):
    strategy: str = ""
    k: int | None = None
    policy: str = ""
    family: str = ""
    prior: str = ""
    asked: list[str] = Field(default_factory=list)
    answers: dict[str, bool] = Field(default_factory=dict)
    inferred: list[InferredItem] = Field(default_factory=list)
    precision: float | None = None
    recall: float | None = None


def strategy_task_metadata(strategy: str, k: int) -> dict[str, object]:
    """The task metadata of a run of ``strategy`` with budget ``k`` (merged into the task's own metadata)."""
    return {STRATEGY_METADATA: strategy, STRATEGY_K_METADATA: k}
