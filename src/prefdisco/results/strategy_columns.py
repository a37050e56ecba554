"""The strategy columns of a results row (``contract.STRATEGY_COLUMNS``), read from one logged sample.

A row is a strategy row when its sample's ``StrategyRecord`` names a strategy (``dialogue/strategy_record.py``,
written by the ``prefdisco/checklist`` and ``prefdisco/infogain`` solvers), or, for a sample that failed before
its solver wrote it, when the task's metadata does (``prefdisco_strategy``, ``prefdisco_strategy_k``). Then:

* ``strategy`` — the strategy's name; ``strategy_k`` — its question budget K;
* ``strategy_prior`` — ``family`` (the task family's prior chose the questions) or ``pooled`` (the policy had no
  prior for the family: its prior pooled over all families; empty in logs written before it was recorded);
* ``strategy_asked`` — the attributes asked about, in order, as a JSON list;
* ``inferred_attributes`` — the inferred profile's attribute names, most probable first, as a JSON list;
* ``inferred_precision`` / ``inferred_recall`` — P@K and R@K of that set against the scenario's true profile.

Every other row (the model's own discovery, fixed-K, baseline, oracle) leaves all seven empty; so does a failed
strategy sample for what it never reached (asked, inferred, P@K, R@K).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from prefdisco.dialogue.strategy_record import STRATEGY_K_METADATA, STRATEGY_METADATA, StrategyRecord
from prefdisco.results.contract import STRATEGY_COLUMNS


def strategy_columns(sample: Any, task_metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The seven strategy columns of one logged sample (an ``EvalSample``) of a task with ``task_metadata``."""
    record = sample.store_as(StrategyRecord)
    name = record.strategy or task_metadata.get(STRATEGY_METADATA) or None
    if name is None:
        return dict.fromkeys(STRATEGY_COLUMNS)
    k = record.k if record.k is not None else task_metadata.get(STRATEGY_K_METADATA)
    reached = record.precision is not None
    return {
        "strategy": name,
        "strategy_k": k,
        "strategy_prior": record.prior or None,
        "strategy_asked": json.dumps(record.asked, ensure_ascii=False) if reached else None,
        "inferred_attributes": json.dumps([i.attribute for i in record.inferred], ensure_ascii=False)
        if reached
        else None,
        "inferred_precision": record.precision,
        "inferred_recall": record.recall,
    }
