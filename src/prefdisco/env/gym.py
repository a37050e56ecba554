"""PrefDisco as a gymnasium environment: ``PrefDisco-v0``, text observations and text actions.

``import prefdisco.env`` registers it::

    import gymnasium, prefdisco.env
    env = gymnasium.make("PrefDisco-v0", scenarios="bench/", user_model="openai/gpt-4.1-mini",
                         judge_model="openai/gpt-4.1", max_questions=5)
    obs, info = env.reset(seed=0)            # the discovery system prompt and the problem
    obs, reward, terminated, truncated, info = env.step("QUESTION: How much detail do you want?")

Each episode is an ``Episode`` (``env/episode.py``) of one scenario, drawn with the environment's seeded
``np_random`` (``reset(seed=...)``) or named by ``options={"scenario_id": ...}``. The first observation is the
opening as one text (system prompt, a blank line, the problem; ``info["messages"]`` has it as chat messages);
each later one is the simulated user's reply with the budget's note, and ``""`` once the episode is over.
``terminated`` is True when the assistant answers or the budget is spent; ``truncated`` is always False (only the
protocol or the budget ends an episode). The reward is 0.0 until the end, then the episode's reward, always a
finite float: a masked episode (PrefAlign, or a weighted part, not measured) gets ``masked_reward`` (default 0.0, a
constructor argument) with ``info["masked"] = True`` and ``info["mask_reason"]``, so a trainer can drop it or
count it as it chooses, and never meets a NaN.

With ``train_fraction`` the scenarios are split by problem (``env/split.py``, seed ``split_seed``) and
``info["split"]`` records each episode's side; ``split="train"`` draws training scenarios only and refuses an
evaluation scenario asked for by id, ``split="eval"`` the reverse. ``seed`` gives the user's and the judge's calls
the seeds ``prefdisco eval --seed SEED`` sends, the k-th episode of a scenario being trial k.

One environment runs its episodes on one private event loop (``env/runner.py``): use it from one thread.
"""

from __future__ import annotations

import math
import string
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium
from gymnasium.spaces import Text

from prefdisco.env.episode import Episode, StepResult
from prefdisco.env.roles import resolve_model
from prefdisco.env.runner import LoopRunner
from prefdisco.env.split import ScenarioSplit, check_side, split_scenarios
from prefdisco.errors import UserError
from prefdisco.release.convert import load_scenarios
from prefdisco.schema import Scenario

ENV_ID = "PrefDisco-v0"
SESSION_ENV_ID = "PrefDiscoSession-v0"
"""A session of K problems with one person (``env/gym_session.py``)."""
MAX_TEXT = 1_000_000
"""The longest observation or action, in characters (a bound gymnasium's Text space needs)."""


class AnyText(Text):
    """Any string of at most ``max_length`` characters. gymnasium's ``Text`` holds only strings of its charset;
    dialogue text is any Unicode, so membership checks the type and length only (samples stay printable)."""

    def __init__(self, max_length: int = MAX_TEXT) -> None:
        super().__init__(max_length, min_length=0, charset=string.printable)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length


def scenarios_from(source: str | Path | Sequence[Scenario]) -> list[Scenario]:
    """Scenarios from a benchmark folder, scenarios file or release file, or as given."""
    if isinstance(source, str | Path):
        return load_scenarios(Path(source))
    scenarios = list(source)
    if not all(isinstance(s, Scenario) for s in scenarios):
        raise UserError("scenarios: expected a path or a list of Scenario objects")
    return scenarios


def finite_reward(masked_reward: object) -> float:
    """``masked_reward`` checked: what a masked episode's reward becomes (a finite number)."""
    if (
        isinstance(masked_reward, bool)
        or not isinstance(masked_reward, int | float)
        or not math.isfinite(masked_reward)
    ):
        raise UserError(f"masked_reward: expected a finite number, got {masked_reward!r}")
    return float(masked_reward)


class PrefDiscoEnv(gymnasium.Env[str, str]):
    """The gymnasium face of ``Episode``; every keyword but the split's and ``masked_reward`` goes to each episode
    (see the module docstring)."""

    def __init__(
        self,
        scenarios: str | Path | Sequence[Scenario],
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
        every = scenarios_from(scenarios)
        if not every:
            raise UserError("scenarios: no scenario to play")
        self._by_id = {s.id: s for s in every}
        if len(self._by_id) != len(every):
            raise UserError("scenarios: scenario ids must be unique")
        side = check_side(split)
        self._split: ScenarioSplit | None = None
        if train_fraction is not None:
            self._split = split_scenarios(every, train_fraction, split_seed)
        elif side is not None:
            raise UserError(f"split: {side!r} needs train_fraction (the split by problem to take a side of)")
        self._side = side
        self._pool = list(self._split.of(side)) if self._split is not None and side is not None else every
        if not self._pool:
            raise UserError(f"split: the {side} side of the split is empty (train_fraction {train_fraction})")
        self._runner = LoopRunner()
        self._options = dict(episode_options)
        self._user_model = resolve_model(user_model, "user", self._options.pop("user_config", None))
        self._judge_model = resolve_model(judge_model, "grader", self._options.pop("judge_config", None))
        self._trials: Counter[str] = Counter()
        self._episode_for(self._pool[0], trial=1)  # bad options fail here, not at the first reset
        self._episode: Episode | None = None
        self.observation_space = AnyText()
        self.action_space = AnyText()

    @property
    def split_record(self) -> dict[str, Any] | None:
        """The split by problem, as data (None without ``train_fraction``)."""
        return None if self._split is None else {**self._split.record(), "side": self._side}

    @property
    def episode(self) -> Episode | None:
        return self._episode

    def _episode_for(self, scenario: Scenario, trial: int) -> Episode:
        return Episode(
            scenario,
            self._user_model,
            self._judge_model,
            split=self._split,
            training=self._side == "train",
            trial=trial,
            runner=self._runner,
            **self._options,
        )

    def _choose(self, options: dict[str, Any] | None) -> Scenario:
        options = dict(options or {})
        wanted = options.pop("scenario_id", None)
        if options:
            raise UserError(f"reset options: unknown {', '.join(sorted(options))}; expected scenario_id")
        if wanted is None:
            return self._pool[int(self.np_random.integers(len(self._pool)))]
        if wanted not in self._by_id:
            raise UserError(f"reset options.scenario_id: no scenario {wanted!r} in this environment")
        scenario = self._by_id[wanted]
        if self._split is not None and self._side == "eval" and self._split.side(scenario) == "train":
            raise UserError(f"scenario {wanted} is on the training side of the split; this environment evaluates")
        return scenario  # a training environment's Episode refuses an evaluation scenario itself

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        scenario = self._choose(options)
        trial = self._trials[scenario.id] + 1
        episode = self._episode_for(scenario, trial)
        messages = episode.reset()
        self._trials[scenario.id] = trial
        self._episode = episode
        info = {"scenario_id": scenario.id, "split": episode.side, "trial": trial, "messages": messages}
        return "\n\n".join(m["content"] for m in messages), info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._episode is None:
            raise RuntimeError("call reset() before step()")
        result: StepResult = self._episode.step(action)
        final = self.masked_reward if result.reward is None else float(result.reward)  # info["masked"] says which
        reward = final if result.done else 0.0
        return result.observation or "", reward, result.done, False, result.info

    def close(self) -> None:
        self._runner.close()
        super().close()


def register_env() -> None:
    """Register ``PrefDisco-v0`` and ``PrefDiscoSession-v0`` with gymnasium (once)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="prefdisco.env.gym:PrefDiscoEnv")
    if SESSION_ENV_ID not in gymnasium.registry:
        gymnasium.register(id=SESSION_ENV_ID, entry_point="prefdisco.env.gym_session:PrefDiscoSessionEnv")
