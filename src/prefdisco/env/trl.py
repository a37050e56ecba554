"""PrefDisco as a TRL environment (``GRPOTrainer(environment_factory=...)``, the ``trl`` extra; docs/training.md).

TRL (1.16) plays a multi-turn rollout as one completion: the policy writes, each tool call in what it wrote runs an
environment method, the method's return comes back as a tool message, and the policy writes again, until a turn
calls no tool. The tool messages are kept out of the loss by TRL's tool mask. ``PrefDiscoTRL`` fits PrefDisco's
discovery episode (``env/episode.py``, the one episode every adapter steps) to that shape; what its dataset rows,
``reset``, ``ask_user`` and reward function do is described once, in docs/agents.md, "TRL".

* ``PrefDiscoTRL(scenarios, user_model, judge_model, **options)`` holds the roster (``env/roster.py``, as every hub
  builds it); called with no argument it is TRL's ``environment_factory`` and returns a new ``PrefDiscoTRLEnv``;
* ``PrefDiscoTRLEnv.reset(**row)``: with a ``prompt`` (the builder's rows) the opening is the prompt already and
  reset returns None (a prompt that is not the episode's opening is refused in one line); without one, TRL's prompt
  is an empty user message and reset returns the opening's text, which TRL appends to it;
* ``ask_user(question)``: each call is one turn (TRL runs the calls of a message one by one); a call past the
  budget is, by the engine's rule, the answer, and the tool then says the dialogue is over;
* TRL's ``get_reward`` takes no argument, so the plain-text answer never reaches the environment through it: the
  reward function ``PrefDiscoTRL.prefdisco_reward`` reads the environments TRL hands reward functions
  (``environments=``), steps each episode with its completion's last message and returns the episode's reward; the
  finished episode's ``info`` stays on the environment (``result``).

The environment imports neither torch nor TRL: it is plain Python that TRL drives. Episodes run on TRL's own event
loop (``ask_user`` and ``reward`` are coroutines, which TRL runs on its one daemon loop), where the two roles' inspect
models bind their connections.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from datasets import Dataset
from inspect_ai.model import ChatMessageAssistant
from inspect_ai.tool import ToolCall

from prefdisco.dialogue import tool_protocol
from prefdisco.env.episode import Episode, StepResult
from prefdisco.env.hubs import added_after_turn, hub_roster, hub_unit, jsonable
from prefdisco.env.sources import ScenarioSource
from prefdisco.errors import UserError
from prefdisco.results.protocol_record import renamed
from prefdisco.schema import Scenario

OVER = "The conversation is over: no more questions can be asked. Your answer has been recorded."
"""The tool's result once the episode has ended (a call past the budget was the answer)."""


def _checked_masked_reward(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise UserError(f"masked_reward: expected a finite number or None, got {value!r}")
    return float(value)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks: their text parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def final_answer(completion: Any) -> str | None:
    """The answer of a TRL completion: its last message when that is the policy's, without a tool call (a plain-text
    completion is its own answer); None when the rollout stopped on a tool call or a tool result."""
    if isinstance(completion, str):
        return completion
    if not completion:
        return None
    last = completion[-1]
    if not isinstance(last, dict) or last.get("role") != "assistant" or last.get("tool_calls"):
        return None
    return _text(last.get("content"))


class PrefDiscoTRLEnv:
    """One rollout's environment (TRL makes one per rollout and reuses it through ``reset``). Its public methods are
    the policy's tools: ``ask_user`` only."""

    def __init__(self, world: PrefDiscoTRL) -> None:
        self._world = world
        self._episode: Episode | None = None
        self._started = False
        self._calls = 0
        self.result: StepResult | None = None
        """The episode's last step once it has ended (its reward and ``info``)."""

    def reset(self, **row: Any) -> str | None:
        """Start the episode of the row's scenario (``scenario_id``, or ``scenario``); the opening's text when the
        row has no ``prompt`` (TRL appends it to its empty user message), else None."""
        world = self._world
        scenario = world.scenario_of(row)
        episode = world.roster.episode(scenario)  # refused when on the other side of the split
        world.roster.started(scenario)
        opening = episode.opening()
        prompt = row.get("prompt")
        if prompt is not None:
            given = [(m.get("role"), _text(m.get("content"))) for m in prompt] if isinstance(prompt, list) else None
            if given != [(m["role"], m["content"]) for m in opening]:
                raise UserError(
                    f"prompt: the row's prompt is not the opening of scenario {scenario.id} under this environment's "
                    "options (build the rows with PrefDiscoTRL.dataset() of the same environment)"
                )
        self._episode, self._started, self._calls, self.result = episode, False, 0, None
        return None if prompt is not None else "\n\n".join(m["content"] for m in opening)

    @property
    def episode(self) -> Episode:
        if self._episode is None:
            raise RuntimeError("the environment has no episode: TRL calls reset(**row) first")
        return self._episode

    async def _start(self) -> Episode:
        episode = self.episode
        if not self._started:
            await episode.areset()
            self._started = True
        return episode

    async def ask_user(self, question: str) -> str:
        """Ask the person you are helping one question about their preferences and needs.

        Args:
            question: One single question for the person.

        Returns:
            The person's reply.
        """
        episode = await self._start()
        if episode.done:
            return OVER
        self._calls += 1
        call = ToolCall(id=f"call_{self._calls}", function=tool_protocol.TOOL_NAME, arguments={"question": question})
        result = await episode.astep(ChatMessageAssistant(content="", tool_calls=[call]))
        if result.done:
            self.result = result
            return OVER
        return "\n\n".join(m["content"] for m in added_after_turn(episode.messages))

    async def _finish(self, answer: str | None) -> StepResult | None:
        """The episode ended with ``answer`` (None: the rollout stopped before answering); its last step, or None."""
        episode = await self._start()
        if not episode.done and answer is not None:
            self.result = await episode.astep(answer)
        return self.result


class PrefDiscoTRL:
    """The scenarios, roles and options of TRL rollouts (module docstring): ``dataset()`` the rows, the instance itself
    the ``environment_factory``, ``prefdisco_reward`` the reward function."""

    def __init__(
        self,
        scenarios: ScenarioSource | None = None,
        user_model: Any = None,
        judge_model: Any = None,
        *,
        train_fraction: float | None = None,
        split_seed: int = 0,
        split: str | None = None,
        masked_reward: float | None = None,
        **episode_options: Any,
    ) -> None:
        options = renamed(episode_options)
        ask = options.setdefault("ask", "tools")
        if ask != "tools":
            raise UserError(
                f"ask: a TRL rollout asks through a tool (its result, the user's reply, is kept out of the loss by "
                f"TRL's tool mask), so only ask 'tools' is played here, got {ask!r}"
            )
        self.masked_reward = _checked_masked_reward(masked_reward)
        self.roster = hub_roster(
            "TRL", hub_unit(scenarios), user_model, judge_model, options,
            train_fraction=train_fraction, split_seed=split_seed, split=split, channels=("text", "tools"),
        )  # fmt: skip

    def __call__(self) -> PrefDiscoTRLEnv:
        """A new environment (TRL's ``environment_factory``)."""
        return PrefDiscoTRLEnv(self)

    @property
    def scenarios(self) -> list[Scenario]:
        """The scenarios played (the side played, with ``train_fraction``), in the source's order."""
        return list(self.roster.pool)

    def dataset(self, scenarios: Sequence[Scenario] | None = None) -> Dataset:
        """TRL's rows: one per scenario played (or of ``scenarios``), ``prompt`` the opening and ``scenario_id``."""
        rows = []
        for scenario in self.scenarios if scenarios is None else scenarios:
            rows.append({"prompt": self.roster.episode(scenario).opening(), "scenario_id": scenario.id})
        return Dataset.from_list(rows)

    def scenario_of(self, row: dict[str, Any]) -> Scenario:
        """The scenario a row names (``scenario_id``) or carries (``scenario``); one line when it has neither."""
        given = row.get("scenario")
        if given is not None:
            scenario = given if isinstance(given, Scenario) else Scenario.model_validate(given)
            if self.roster.find(scenario.id) is None:
                raise UserError(f"scenario: {scenario.id!r} is not a scenario this environment plays")
            return scenario
        found = self.roster.find(row.get("scenario_id"))
        if found is None:
            raise UserError(f"scenario_id: expected a scenario of this environment, got {row.get('scenario_id')!r}")
        return found

    async def prefdisco_reward(
        self, completions: list[Any], environments: list[PrefDiscoTRLEnv] | None = None, **kwargs: Any
    ) -> list[float | None]:
        """TRL's reward function: each rollout's episode ended with its completion's answer and scored; its reward
        (``masked_reward`` when there is none). The components go to TRL's metrics (``log_metric``)."""
        if environments is None:
            raise UserError("reward: TRL passes the rollouts' environments only with environment_factory=PrefDiscoTRL")
        rewards: list[float | None] = []
        parts: dict[str, list[float]] = {"pref_align": [], "correct": [], "n_questions": [], "masked": []}
        for completion, environment in zip(completions, environments, strict=True):
            result = await environment._finish(final_answer(completion))
            reward = None if result is None else result.reward
            rewards.append(self.masked_reward if reward is None else float(reward))
            components = {} if result is None else jsonable(result.info.get("reward_components") or {})
            parts["masked"].append(float(reward is None))
            for name in ("pref_align", "correct", "n_questions"):
                if components.get(name) is not None:
                    parts[name].append(float(components[name]))
        log_metric = kwargs.get("log_metric")
        if callable(log_metric):
            for name, values in parts.items():
                if values:
                    log_metric(f"prefdisco/{name}", sum(values) / len(values))
        return rewards
