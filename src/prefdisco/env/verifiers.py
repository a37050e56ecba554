"""PrefDisco as a verifiers environment (the ``verifiers`` extra): ``load_environment(**kwargs)``, the hub entry point.

``load_environment`` returns ``PrefDiscoVerifiersEnv``, a subclass of verifiers' ``MultiTurnEnv`` whose every turn
goes to PrefDisco's own ``Episode`` (``env/episode.py``), as the tau2-bench port plays tau2's own user simulator:
a dataset row is a scenario, ``setup_state`` starts its episode, ``env_response`` hands the policy's turn to
``Episode.astep``, and the rubric's ``prefdisco_reward`` is the episode's reward. The options (``PrefDisco-v0``'s),
the dataset, the tool ask channel, the reward, the metrics and ``state["prefdisco"]`` are described once, in
docs/agents.md, "verifiers".

``pref_align`` is missing (None) when not measured: vf-eval averages the values present, so an unmeasured rollout
is never a 0 on a 1-5 scale. The episodes run on the caller's event loop (verifiers' own); the inspect models of
the two roles bind their connections to the loop they first run on, so run one environment's rollouts under one
loop.
"""

from __future__ import annotations

import json
from typing import Any

import verifiers as vf
from datasets import Dataset
from inspect_ai.model import ChatMessageAssistant
from inspect_ai.tool import ToolCall

from prefdisco.dialogue import tool_protocol
from prefdisco.dialogue.engine import Turn
from prefdisco.env.episode import Episode
from prefdisco.env.gym import finite_reward
from prefdisco.env.hubs import added_after_turn, hub_roster, hub_unit, jsonable, tool_json
from prefdisco.env.sources import ScenarioSource
from prefdisco.errors import UserError
from prefdisco.results.protocol_record import renamed
from prefdisco.schema import Scenario

ENV_ID = "prefdisco"
EPISODE_KEY = "prefdisco_episode"
"""The running ``Episode`` in a rollout's state (removed when the rollout ends)."""
RECORD_KEY = "prefdisco"
"""The episode's record in a rollout's state (JSON)."""


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:  # multi-part content: its text parts
        text = part.get("text") if isinstance(part, dict) else getattr(part, "text", None)
        if isinstance(text, str):
            parts.append(text)
    return "".join(parts)


def last_assistant_text(messages: list[Any]) -> str:
    """The visible text of the last assistant message (verifiers keeps reasoning in ``reasoning_content``)."""
    for message in reversed(messages):
        role = message.get("role") if isinstance(message, dict) else getattr(message, "role", None)
        if role == "assistant":
            content = message.get("content") if isinstance(message, dict) else getattr(message, "content", None)
            return _content_text(content)
    raise UserError("env_response: the messages hold no assistant turn")


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def last_turn(messages: list[Any]) -> Turn:
    """The last assistant message as the engine reads a turn: its visible text, or (with tool calls) an assistant
    message with them (arguments that are not a JSON object are read as none: the tool protocol then asks the
    turn's text and counts a violation)."""
    text = last_assistant_text(messages)
    message = next(m for m in reversed(messages) if _field(m, "role") == "assistant")
    calls = []
    for call in _field(message, "tool_calls") or []:
        function = _field(call, "function")  # OpenAI's nesting, when a dict comes in that shape
        name = _field(function, "name") if function is not None else _field(call, "name")
        arguments = _field(function, "arguments") if function is not None else _field(call, "arguments")
        try:
            parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
        except json.JSONDecodeError:
            parsed = None
        calls.append(
            ToolCall(
                id=str(_field(call, "id")), function=str(name), arguments=parsed if isinstance(parsed, dict) else {}
            )
        )
    return ChatMessageAssistant(content=text, tool_calls=calls) if calls else text


def _vf_tool(tool: Any) -> vf.Tool:
    function = tool_json(tool)["function"]
    return vf.Tool(name=function["name"], description=function["description"], parameters=function["parameters"])


def _vf_message(message: dict[str, Any]) -> Any:
    """A message the engine added, as verifiers' own type (a tool result keeps its call id)."""
    if message["role"] == "tool":
        return vf.ToolMessage(content=message["content"], tool_call_id=message.get("tool_call_id", ""))
    return vf.UserMessage(content=message["content"])


def _record(state: Any) -> dict[str, Any]:
    record = state.get(RECORD_KEY)
    return record if isinstance(record, dict) else {}


def _measured_pref_align(state: Any) -> float | None:
    value = (_record(state).get("reward_components") or {}).get("pref_align")
    return None if value is None else float(value)


def _unmeasured(states: list[Any]) -> None:
    """A rollout whose PrefAlign was not measured has ``pref_align`` None in its metrics: missing, never 0."""
    for state in states:
        metrics = state.get("metrics")
        if isinstance(metrics, dict) and "pref_align" in metrics and _measured_pref_align(state) is None:
            metrics["pref_align"] = None


class PrefDiscoRubric(vf.Rubric):
    """PrefDisco's reward as a verifiers rubric: the finished episode's reward, read from the rollout's state."""

    def __init__(self, masked_reward: float = 0.0) -> None:
        self.masked_reward = finite_reward(masked_reward)
        super().__init__(funcs=[self.prefdisco_reward], weights=[1.0])
        self.add_metric(self.prefdisco_masked)
        self.add_metric(self.pref_align)
        self.add_metric(self.n_questions)

    def prefdisco_reward(self, state: Any) -> float:
        """The episode's reward (``env/reward.py``); ``masked_reward`` when masked or unfinished."""
        reward = _record(state).get("reward")
        return self.masked_reward if reward is None else float(reward)

    def prefdisco_masked(self, state: Any) -> float:
        """1.0 when the episode gave no reward (masked, or the rollout stopped before it finished)."""
        return 0.0 if _record(state).get("reward") is not None else 1.0

    def pref_align(self, state: Any) -> float:
        """The judge's PrefAlign (1-5). verifiers weighs every metric into the reward (weight 0), so a function must
        give a number: 0.0 when not measured, which ``cleanup`` then replaces with None in the rollout's metrics."""
        value = _measured_pref_align(state)
        return 0.0 if value is None else value

    async def cleanup(self, state: Any) -> None:
        """After the rollout is scored (verifiers calls every rubric's cleanup then, its rubric group summed):
        an unmeasured PrefAlign is missing from what vf-eval averages."""
        await super().cleanup(state)
        _unmeasured([state])

    def n_questions(self, state: Any) -> float:
        """The questions the simulated user was asked."""
        return float(_record(state).get("n_questions") or 0)


class PrefDiscoVerifiersEnv(vf.MultiTurnEnv):
    """verifiers' ``MultiTurnEnv`` over PrefDisco episodes (see the module docstring)."""

    def __init__(
        self,
        scenarios: ScenarioSource | None = None,
        user_model: Any = None,
        judge_model: Any = None,
        *,
        train_fraction: float | None = None,
        split_seed: int = 0,
        split: str | None = None,
        masked_reward: float = 0.0,
        max_turns: int = -1,
        **episode_options: Any,
    ) -> None:
        for option in ("sessions", "arm"):
            if option in episode_options:
                raise UserError(
                    f"{option}: a verifiers rollout is one chat and each problem of a session opens a new one, so "
                    "this environment plays one scenario a rollout; play sessions on OpenEnv (prefdisco env serve "
                    "--sessions FILE --arm ARM) or gymnasium (PrefDiscoSession-v0)"
                )
        self._roster = hub_roster(
            "verifiers", hub_unit(scenarios), user_model, judge_model, episode_options,
            train_fraction=train_fraction, split_seed=split_seed, split=split, channels=("text", "tools"),
        )  # fmt: skip
        self.tools_protocol = renamed(episode_options).get("ask", "text") == "tools"
        roster = self._roster
        sides: dict[str | None, list[Scenario]] = {}
        for scenario in roster.pool:
            side = None if roster.split is None else roster.split.side(scenario)
            sides.setdefault(side, []).append(scenario)
        if roster.split is None:
            train, evaluation = roster.pool, []
        else:
            train, evaluation = sides.get("train", []), sides.get("eval", [])
        super().__init__(
            dataset=self._rows_of(train) if train else None,
            eval_dataset=self._rows_of(evaluation) if evaluation else None,
            rubric=PrefDiscoRubric(masked_reward),
            max_turns=max_turns,
            env_id=ENV_ID,
            tool_defs=[_vf_tool(t) for t in tool_protocol.hints("free").tools] if self.tools_protocol else None,
        )

    def _rows_of(self, scenarios: list[Scenario]) -> Any:
        """A dataset builder (verifiers builds it when asked): one row per scenario."""

        def build() -> Dataset:
            rows = []
            for scenario in scenarios:
                episode = self._roster.episode(scenario)
                rows.append(
                    {
                        "prompt": episode.opening(),
                        "info": {"scenario_id": scenario.id, "split": episode.side or ""},
                    }
                )
            return Dataset.from_list(rows)

        return build

    @property
    def split_record(self) -> dict[str, Any] | None:
        """The split by problem, as data (None without ``train_fraction``)."""
        return self._roster.split_record

    async def setup_state(self, state: Any) -> Any:
        """Start the row's episode (its next trial) with the environment's simulated user and judge."""
        info = state.get("info") or {}
        scenario_id = info.get("scenario_id") if isinstance(info, dict) else None
        scenario = self._roster.find(scenario_id)
        if scenario is None:
            raise UserError(f"info.scenario_id: expected a scenario of this environment, got {scenario_id!r}")
        episode: Episode = self._roster.episode(scenario)  # refused when it is on the other side of the split
        opening = await episode.areset()
        trial = self._roster.started(scenario)
        prompt = [(m.get("role"), _content_text(m.get("content"))) for m in state["prompt"]]
        state[EPISODE_KEY] = episode
        state[RECORD_KEY] = {
            "scenario_id": scenario.id,
            "split": episode.side,
            "trial": trial,
            "opening_matches": prompt == [(m["role"], m["content"]) for m in opening],
            "steps": [],
            "reward": None,
            "masked": True,
            "mask_reason": "the rollout ended before the episode did",
        }
        return state

    async def env_response(self, messages: Any, state: Any, **kwargs: Any) -> Any:
        """The episode's answer to the policy's last turn: the simulated user's reply (or, with pushback, the
        person's challenge) as the next user message; nothing, and the end of the rollout, once the episode is
        over (then scored)."""
        episode: Episode = state[EPISODE_KEY]
        result = await episode.astep(last_turn(list(messages)))
        record = state[RECORD_KEY]
        info = jsonable(result.info)
        record["steps"].append(info)
        if not result.done:
            if self.tools_protocol and episode.dialogue.hints().tool_choice == "none":
                state["tool_defs"] = []  # the budget is spent: the tool is withdrawn, the next turn is the answer
            return [_vf_message(m) for m in added_after_turn(episode.messages)]
        record.update(
            reward=result.reward,
            masked=info["masked"],
            mask_reason=info["mask_reason"],
            n_questions=info["n_questions"],
            reward_components=info["reward_components"],
            final_response=info["final_response"],
            score=info["score"],
        )
        state["final_env_response"] = []
        return []

    @vf.cleanup
    async def drop_episode(self, state: Any) -> None:
        """The episode object never leaves the rollout (its record stays)."""
        state.pop(EPISODE_KEY, None)


def load_environment(**kwargs: Any) -> PrefDiscoVerifiersEnv:
    """The hub entry point (``vf-eval prefdisco.env.verifiers -a '{...}'``): a ``PrefDiscoVerifiersEnv`` built with
    ``kwargs`` (the options: docs/agents.md, "verifiers")."""
    return PrefDiscoVerifiersEnv(**kwargs)
