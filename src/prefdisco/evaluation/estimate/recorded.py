"""A run's own estimate: planned once before its first call and written to ``estimate.json``, read back by a
rerun of the same run (``run_estimate``), set beside what was measured by the report's Cost section
(``analysis/cost/measures.py``)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from prefdisco.atomic import atomic_write
from prefdisco.builder.estimate import ESTIMATE_METHOD
from prefdisco.evaluation.estimate.plan import RunEstimate, estimate_run
from prefdisco.evaluation.settings.config import RunConfig, scenario_set_hash, selected_scenarios
from prefdisco.schema import Scenario

ESTIMATE_FILE = "estimate.json"
"""The run's own estimate, written before its first call (``write_estimate``): the report's Cost section sets it
beside the measured tokens and USD (``analysis/cost/measures.py``)."""


def write_estimate(log_dir: Path, estimate: RunEstimate) -> None:
    atomic_write(log_dir / ESTIMATE_FILE, estimate.model_dump_json(indent=2))


def estimate_key(scenarios: Sequence[Scenario], config: RunConfig) -> str | None:
    """What an estimate of ``config`` on ``scenarios`` is made of: the run's fingerprint (every setting its results
    depend on, ``run.json``'s, over the selected scenarios) and the prices; None for a sessions run (its parts are
    planned from the session file)."""
    if config.sessions is not None:
        return None
    selected = selected_scenarios(scenarios, config)
    made_of = [config.fingerprint(scenario_set_hash(selected), len(selected)), config.prices, ESTIMATE_METHOD]
    return hashlib.sha256(json.dumps(made_of, sort_keys=True, default=str).encode()).hexdigest()[:16]


def run_estimate(log_dir: Path, scenarios: Sequence[Scenario], config: RunConfig) -> RunEstimate:
    """The run's estimate, written to ``log_dir`` before its first call: the one ``log_dir`` holds when it was made
    of the same run (``estimate_key``: a rerun that resumes it), else planned now (``estimate_run``). Planning
    every call of 10,000 scenarios × 3 conditions takes about 40 s on this machine, which a resumed run would
    otherwise spend before its first new call (``docs/scale.md``)."""
    key = estimate_key(scenarios, config)
    path = log_dir / ESTIMATE_FILE
    if key is not None and path.is_file():
        try:
            recorded = RunEstimate.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            recorded = None
        if recorded is not None and recorded.made_for == key:
            return recorded
    estimate = estimate_run(scenarios, config).model_copy(update={"made_for": key})
    write_estimate(log_dir, estimate)
    return estimate
