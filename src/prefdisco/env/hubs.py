"""What the RL hubs' adapters share (``env/verifiers.py``, ``env/openenv.py``): the scenarios they play (the packaged
demo scenarios when none are given), the roster built from their options, the text protocol they hand over, and
the step's ``info`` as plain JSON.

Both adapters are thin: every turn goes to an ``Episode`` (``env/episode.py``) built by the same ``Roster`` the
gymnasium and verl adapters use (``env/roster.py``), so the dialogue's rules, the simulated user, the judge and the
reward are the episode's own.
"""

from __future__ import annotations

import json
from typing import Any

from prefdisco.benchio import packaged_demo_scenarios
from prefdisco.env.roster import Roster
from prefdisco.env.runner import LoopRunner
from prefdisco.env.sources import ScenarioSource
from prefdisco.env.units import Scenarios
from prefdisco.errors import UserError
from prefdisco.schema import Scenario


def scenario_source(scenarios: ScenarioSource | None) -> ScenarioSource:
    """``scenarios`` as given, or the packaged demo scenarios (``prefdisco demo``'s) when None."""
    if scenarios is not None:
        return scenarios
    return packaged_demo_scenarios()


def hub_roster(
    hub: str,
    scenarios: ScenarioSource | None,
    user_model: Any,
    judge_model: Any,
    options: dict[str, Any],
    *,
    train_fraction: float | None,
    split_seed: int,
    split: str | None,
    runner: LoopRunner | None = None,
) -> Roster[Scenario, Any]:
    """The roster of a hub's environment: the scenarios (one ``Episode`` each), the split by problem and its side,
    the two fixed roles and the episode options (every ``Episode`` keyword but ``trial``, ``training``, ``runner``).
    The hubs hand the episode text, so only the text protocol is played (refused in one line otherwise)."""
    protocol = options.get("protocol", "text")
    if protocol != "text":
        raise UserError(
            f"protocol: {hub} hands each assistant turn over as text (QUESTION: / ANSWER:), so only protocol "
            f"'text' is played here, got {protocol!r}"
        )
    return Roster(
        Scenarios(scenario_source(scenarios)), user_model, judge_model, options, train_fraction=train_fraction,
        split_seed=split_seed, split=split, who="environment", runner=runner,
    )  # fmt: skip


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (what a hub serializes: a step's ``info``); anything else becomes its text."""
    return json.loads(json.dumps(value, default=str))
