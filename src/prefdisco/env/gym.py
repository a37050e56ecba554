"""PrefDisco as a gymnasium environment: ``PrefDisco-v0``, text observations and text actions.

``import prefdisco.env`` registers it. Each episode is an ``Episode`` (``env/episode.py``) of one scenario, drawn
with the environment's seeded ``np_random`` (``reset(seed=...)``) or named by ``options={"scenario_id": ...}``;
its observations, ``terminated`` / ``truncated``, the split and the options are described once, in
docs/agents.md, "gymnasium". The reward is 0.0 until the end, then the episode's reward, always a finite float: a
masked episode gets ``masked_reward`` (default 0.0) with ``info["masked"] = True`` and ``info["mask_reason"]``,
so a trainer can drop it or count it as it chooses, and never meets a NaN.

One environment runs its episodes on one private event loop (``env/runner.py``): use it from one thread.

``UnitEnv`` is the one implementation of both environments, over a ``Unit`` (``env/units.py``): ``PrefDiscoEnv``
plays scenarios, ``PrefDiscoSessionEnv`` (``env/gym_session.py``) sessions; what they share with the verl adapters
(the split, the roles, the trials) is ``env/roster.Roster``.
"""

from __future__ import annotations

import math
import string
from typing import Any, Generic

import gymnasium
from gymnasium.spaces import Text

from prefdisco.env.episode import Episode, StepResult
from prefdisco.env.roster import Roster
from prefdisco.env.runner import LoopRunner
from prefdisco.env.sources import ScenarioSource
from prefdisco.env.sources import scenarios_from as scenarios_from  # its name here before env/sources.py
from prefdisco.env.units import EpisodeT, ItemT, Scenarios, Unit
from prefdisco.errors import UserError
from prefdisco.schema import Scenario

MAX_TEXT = 1_000_000
"""The longest observation or action, in characters (a bound gymnasium's Text space needs)."""


class AnyText(Text):
    """Any string of at most ``max_length`` characters. gymnasium's ``Text`` holds only strings of its charset;
    dialogue text is any Unicode, so membership checks the type and length only (samples stay printable)."""

    def __init__(self, max_length: int = MAX_TEXT) -> None:
        super().__init__(max_length, min_length=0, charset=string.printable)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length


def finite_reward(masked_reward: object) -> float:
    """``masked_reward`` checked: what a masked episode's reward becomes (a finite number)."""
    if (
        isinstance(masked_reward, bool)
        or not isinstance(masked_reward, int | float)
        or not math.isfinite(masked_reward)
    ):
        raise UserError(f"masked_reward: expected a finite number, got {masked_reward!r}")
    return float(masked_reward)


def step_reward(unit: Unit[Any, Any], result: StepResult, masked_reward: float) -> tuple[float, bool]:
    """A step's reward as every adapter gives it, and whether it was masked: 0.0 but on a step that ends a problem,
    which gets that problem's reward, ``masked_reward`` when it is masked (not measured)."""
    if not unit.ends_problem(result):
        return 0.0, False
    if result.reward is None:
        return masked_reward, True
    return float(result.reward), False


class UnitEnv(gymnasium.Env[str, str], Generic[ItemT, EpisodeT]):
    """A gymnasium environment whose episodes are the items of ``unit`` (a scenario or a session). Every keyword
    but the split's (``train_fraction``, ``split_seed``, ``split``) and ``masked_reward`` goes to each episode."""

    def __init__(
        self,
        unit: Unit[ItemT, EpisodeT],
        user_model: Any,
        judge_model: Any,
        *,
        train_fraction: float | None = None,
        split_seed: int = 0,
        split: str | None = None,
        masked_reward: float = 0.0,
        **episode_options: Any,
    ) -> None:
        self.masked_reward = finite_reward(masked_reward)
        self.unit = unit
        self._runner = LoopRunner()
        self._roster = Roster(
            unit, user_model, judge_model, episode_options, train_fraction=train_fraction, split_seed=split_seed,
            split=split, who="environment", runner=self._runner,
        )  # fmt: skip
        self._episode: EpisodeT | None = None
        self.observation_space = AnyText()
        self.action_space = AnyText()

    @property
    def split_record(self) -> dict[str, Any] | None:
        """The split by problem, as data (None without ``train_fraction``)."""
        return self._roster.split_record

    @property
    def episode(self) -> EpisodeT | None:
        return self._episode

    def _choose(self, options: dict[str, Any] | None) -> ItemT:
        key, options = self.unit.key, dict(options or {})
        wanted = options.pop(key, None)
        if options:
            raise UserError(f"reset options: unknown {', '.join(sorted(options))}; expected {key}")
        if wanted is None:
            pool = self._roster.pool
            return pool[int(self.np_random.integers(len(pool)))]
        item = self._roster.find(wanted)
        if item is None:
            raise UserError(f"reset options.{key}: no {self.unit.noun} {wanted!r} in this environment")
        return item  # the roster refuses it if it is on the other side of the split

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        item = self._choose(options)
        episode = self._roster.episode(item)
        messages = episode.reset()
        trial = self._roster.started(item)
        self._episode = episode
        info = {**self.unit.reset_info(episode), "trial": trial, "messages": messages}
        return "\n\n".join(m["content"] for m in messages), info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """The reward is 0.0 but on a step that ends a problem: that problem's reward, ``masked_reward`` when it is
        masked (``info["masked"]`` says which)."""
        if self._episode is None:
            raise RuntimeError("call reset() before step()")
        result = self._episode.step(action)
        reward, _ = step_reward(self.unit, result, self.masked_reward)
        return result.observation or "", reward, result.done, False, result.info

    def close(self) -> None:
        self._runner.close()
        super().close()


class PrefDiscoEnv(UnitEnv[Scenario, Episode]):
    """The gymnasium face of ``Episode``, one scenario an episode; every keyword but ``UnitEnv``'s goes to each
    episode (see the module docstring)."""

    def __init__(self, scenarios: ScenarioSource, user_model: Any, judge_model: Any, **options: Any) -> None:
        super().__init__(Scenarios(scenarios), user_model, judge_model, **options)
