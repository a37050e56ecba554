"""What the RL hubs' adapters share (``env/verifiers.py``, ``env/openenv.py``): what they play (the scenarios of a
benchmark — the packaged demo scenarios when none are given — or, on OpenEnv, the sessions of a session file on
it), the roster built from their options and the ask protocols it may play (both hubs hand over text turns and
tool calls: ``text`` and ``tools``), and the step's ``info`` as plain JSON.

Both adapters are thin: every turn goes to an ``Episode`` (``env/episode.py``) built by the same ``Roster`` the
gymnasium and verl adapters use (``env/roster.py``), so the dialogue's rules, the simulated user, the judge and the
reward are the episode's own.
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.tool import ToolDef

from prefdisco.benchio import packaged_demo_scenarios
from prefdisco.env.roster import Roster
from prefdisco.env.runner import LoopRunner
from prefdisco.env.sources import ScenarioSource, SessionSource
from prefdisco.env.units import Scenarios, Sessions, Unit
from prefdisco.errors import UserError
from prefdisco.results.protocol_record import renamed


def scenario_source(scenarios: ScenarioSource | None) -> ScenarioSource:
    """``scenarios`` as given, or the packaged demo scenarios (``prefdisco demo``'s) when None."""
    if scenarios is not None:
        return scenarios
    return packaged_demo_scenarios()


def hub_unit(
    scenarios: ScenarioSource | None, sessions: SessionSource | None = None, arm: str | None = None
) -> Unit[Any, Any]:
    """What a hub plays: the scenarios (``scenario_source``), or with ``sessions`` the sessions of that session file
    on the benchmark ``scenarios`` in ``arm`` (``env/units.py``)."""
    if sessions is None:
        if arm is not None:
            raise UserError(f"arm: {arm!r} is an arm of a session; give the session file too (sessions, --sessions)")
        return Scenarios(scenario_source(scenarios))
    if scenarios is None:
        raise UserError("sessions: give the benchmark the session file was planned on (scenarios, SCENARIOS) beside it")
    if arm is None:
        raise UserError("arm: a session is played in one arm (arm, --arm): cold, carry_transcript or carry_notes")
    return Sessions(sessions, scenarios, arm)


def hub_roster(
    hub: str,
    unit: Unit[Any, Any],
    user_model: Any,
    judge_model: Any,
    options: dict[str, Any],
    *,
    train_fraction: float | None,
    split_seed: int,
    split: str | None,
    runner: LoopRunner | None = None,
    channels: tuple[str, ...] = ("text",),
) -> Roster[Any, Any]:
    """The roster of a hub's environment: ``unit``'s items (``hub_unit``), the split by problem and its side, the
    two fixed roles and the episode options (every ``Episode`` keyword but ``trial``, ``training``, ``runner``).
    ``channels``: the ask channels the hub's turns can carry (verifiers and OpenEnv both give ``("text",
    "tools")``: their turns carry tool calls; a hub of text turns alone gives ``("text",)`` and any other channel is
    refused in one line). ``ask`` is the option's name (``protocol``, its older name, is read as it)."""
    options = renamed(options)
    ask = options.get("ask", "text")
    if channels == ("text",) and ask != "text":  # the episode itself refuses an unknown channel
        raise UserError(
            f"ask: {hub} hands each assistant turn over as text (QUESTION: / ANSWER:), so only ask "
            f"'text' is played here, got {ask!r}"
        )
    return Roster(
        unit, user_model, judge_model, options, train_fraction=train_fraction, split_seed=split_seed, split=split,
        who="environment", runner=runner,
    )  # fmt: skip


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (what a hub serializes: a step's ``info``); anything else becomes its text."""
    return json.loads(json.dumps(value, default=str))


def added_after_turn(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the engine added after the assistant's last turn (``Episode.messages``): the user's reply (under
    protocol ``tools`` a tool result, and one for every further call), the person's challenge, the ask-again
    instruction."""
    last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
    return messages[last + 1 :]


def tool_json(tool: Any) -> dict[str, Any]:
    """An inspect tool as an OpenAI function definition (what a policy's chat call takes as ``tools``)."""
    definition = ToolDef(tool)
    parameters = definition.parameters.model_dump(exclude_none=True)
    return {
        "type": "function",
        "function": {"name": definition.name, "description": definition.description, "parameters": parameters},
    }
