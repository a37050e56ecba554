"""PrefDisco as a verl multi-turn interaction: the simulated user (and, at the end, the judge) behind verl's
``BaseInteraction`` interface.

verl's multi-turn rollout (its tool agent loop, which the CollabLLM recipe also uses) drives an interaction
through four coroutines, on one instance built per worker from the interaction config file:

* ``__init__(config)`` — ``config`` is the entry's ``config`` mapping, with the entry's ``name`` injected;
* ``start_interaction(instance_id, **interaction_kwargs) -> instance_id`` — once per rollout, with the dataset
  row's ``extra_info.interaction_kwargs``; here ``{"name": "prefdisco", "scenario_id": ...}``, exactly what
  ``prefdisco export-training --format verl`` writes;
* ``generate_response(instance_id, messages, **interaction_kwargs) -> (should_terminate, response, score,
  metadata)`` — after each assistant turn, with the whole chat so far; its last assistant message is the turn
  (read as ``Episode.astep`` reads any turn: visible text, protocol, budget). A question's ``response`` is the
  simulated user's reply with the budget's note and ``score`` None; the final turn's ``score`` is the episode's
  reward, None when it is masked (verl's loop keeps only scores that are not None as ``turn_scores``, which its
  reward manager hands the reward function in ``extra_info``: ``episode_reward`` reads it back). ``metadata``
  is the step's ``info``;
* ``calculate_score(instance_id) -> float | None`` — the finished episode's reward (None while running or when
  masked); ``finalize_interaction(instance_id)`` — forgets the instance. verl's loop does not call the last
  one (and a rollout cut by verl's length or turn limits never reaches its final turn), so a finished episode
  keeps only its result, and at most ``max_instances`` running episodes and as many results are kept, the
  oldest dropped first.

verl is imported here only, and only if it is installed: the class subclasses verl's ``BaseInteraction`` when
it can and is a plain class otherwise, with the same methods either way. Config keys (``InteractionConfig``):
``scenarios``, ``user_model``, ``judge_model`` (``provider/name``), and optionally ``user_config``,
``judge_config`` (generation settings), ``max_questions``, ``user_type``, ``judge``, ``logprobs``, ``audit``,
``preset``, ``reward`` (the weights), ``seed``, ``train_fraction``, ``split_seed``, ``split``
(``train``: refuse evaluation scenarios), ``max_instances``.
"""

from __future__ import annotations

import importlib
from collections import Counter
from typing import Any, Literal, cast
from uuid import uuid4

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from prefdisco.env.episode import Episode, StepResult
from prefdisco.env.gym import scenarios_from
from prefdisco.env.roles import resolve_model
from prefdisco.env.split import ScenarioSplit, split_scenarios
from prefdisco.errors import UserError, describe_validation_error
from prefdisco.schema import Scenario

INTERACTION_NAME = "prefdisco"
"""The interaction's name in verl's config and in every row's ``interaction_kwargs``."""


def _verl_base() -> type:
    try:
        module = importlib.import_module("verl.interactions.base")
    except ImportError:
        return object
    return cast(type, module.BaseInteraction)


_BASE = _verl_base()
"""verl's ``BaseInteraction`` when verl is installed, else ``object``."""


class InteractionConfig(BaseModel):
    """The ``config`` mapping of the interaction's entry in verl's interaction config file."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    name: str = INTERACTION_NAME
    scenarios: Any = Field(description="a benchmark folder, scenarios file or release file (or Scenario objects)")
    user_model: Any = Field(description="provider/name of the simulated user")
    judge_model: Any = Field(description="provider/name of the judge (also correctness and the audit)")
    user_config: dict[str, Any] | None = None
    judge_config: dict[str, Any] | None = None
    max_questions: int = 5
    user_type: str = "passive"
    judge: str = "per_criterion"
    logprobs: bool = False
    audit: bool = True
    preset: str = "default"
    reward: dict[str, float] | None = None
    seed: int | None = None
    train_fraction: float | None = None
    split_seed: int = 0
    split: Literal["train", "eval"] | None = None
    max_instances: int = Field(default=10_000, ge=1)


def _last_assistant_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "assistant":
            content = message.get("content") or ""
            if isinstance(content, list):  # multi-part content: its text parts
                return "".join(p.get("text", "") for p in content if isinstance(p, dict))
            return str(content)
    raise ValueError("generate_response: the messages hold no assistant turn")


def _bound(instances: dict[str, Any], limit: int) -> None:
    """Drop the oldest entries of ``instances`` (insertion order) beyond ``limit``."""
    for key in list(instances)[: max(0, len(instances) - limit)]:
        del instances[key]


def episode_reward(extra_info: dict[str, Any] | None) -> float | None:
    """The episode's reward as verl's reward manager passes it to a custom reward function (the last of
    ``extra_info["turn_scores"]``); None when the episode was masked or never finished. verl cannot mask a sample:
    what a masked episode counts as is the reward function's explicit choice, never made here."""
    scores = list((extra_info or {}).get("turn_scores") or [])
    return None if not scores else float(scores[-1])


class PrefDiscoInteraction(_BASE):  # type: ignore[misc,valid-type]
    """verl's ``BaseInteraction`` over PrefDisco episodes (see the module docstring)."""

    def __init__(self, config: dict[str, Any]) -> None:
        if _BASE is not object:
            super().__init__(config)  # verl's own bookkeeping (config, name)
        try:
            settings = InteractionConfig.model_validate(dict(config))
        except ValidationError as err:
            raise UserError(describe_validation_error(err, "prefdisco interaction config")) from None
        self.config = dict(config)
        self.name: str = settings.name
        self.settings = settings
        scenarios = scenarios_from(settings.scenarios)
        self._by_id = {s.id: s for s in scenarios}
        self._split: ScenarioSplit | None = None
        if settings.train_fraction is not None:
            self._split = split_scenarios(scenarios, settings.train_fraction, settings.split_seed)
        elif settings.split is not None:
            raise UserError(f"split: {settings.split!r} needs train_fraction (the split by problem)")
        self._user_model = resolve_model(settings.user_model, "user", settings.user_config)
        self._judge_model = resolve_model(settings.judge_model, "grader", settings.judge_config)
        self._live: dict[str, Episode] = {}
        self._finished: dict[str, StepResult] = {}
        self._trials: Counter[str] = Counter()
        allowed = [s for s in scenarios if self._refusal(s) is None]
        if not allowed:
            raise UserError(f"split: the {settings.split} side of the split is empty")
        self._episode(allowed[0].id)  # bad settings fail here, not at the first rollout

    def _refusal(self, scenario: Scenario) -> str | None:
        """Why this interaction refuses ``scenario`` (its split side), or None."""
        if self._split is None or self.settings.split is None or self._split.side(scenario) == self.settings.split:
            return None
        where = "evaluation" if self.settings.split == "train" else "training"
        return (
            f"scenario {scenario.id} (problem {scenario.problem.benchmark}/{scenario.problem.id}) is on the {where} "
            f"side of the split (train_fraction {self._split.train_fraction}, seed {self._split.seed}); this "
            f"interaction plays the {self.settings.split} side only"
        )

    def _episode(self, scenario_id: Any) -> Episode:
        if not isinstance(scenario_id, str) or scenario_id not in self._by_id:
            raise UserError(
                f"interaction_kwargs.scenario_id: expected a scenario of {self.settings.scenarios}, got {scenario_id!r}"
            )
        scenario = self._by_id[scenario_id]
        refusal = self._refusal(scenario)
        if refusal:
            raise UserError(refusal)
        s = self.settings
        return Episode(
            scenario,
            self._user_model,
            self._judge_model,
            max_questions=s.max_questions,
            user_type=s.user_type,
            reward=s.reward,
            seed=s.seed,
            trial=self._trials[scenario_id] + 1,
            judge=s.judge,
            logprobs=s.logprobs,
            audit=s.audit,
            preset=s.preset,
            split=self._split,
            training=s.split == "train",
        )

    async def start_interaction(self, instance_id: str | None = None, **kwargs: Any) -> str:
        """Start the episode of ``kwargs["scenario_id"]`` (the row's ``interaction_kwargs``)."""
        if instance_id is None:
            instance_id = str(uuid4())
        episode = self._episode(kwargs.get("scenario_id"))
        await episode.areset()
        self._trials[episode.scenario.id] += 1
        self._finished.pop(instance_id, None)
        self._live[instance_id] = episode
        _bound(self._live, self.settings.max_instances)
        return instance_id

    async def generate_response(
        self, instance_id: str, messages: list[dict[str, Any]], **kwargs: Any
    ) -> tuple[bool, str, float | None, dict[str, Any]]:
        """The simulated user's answer to the last assistant turn, or the end of the episode and its reward."""
        episode = self._live.get(instance_id)
        if episode is None:
            raise KeyError(f"no running prefdisco interaction {instance_id!r} (start_interaction first)")
        first = len(episode.messages) == 2
        result = await episode.astep(_last_assistant_text(messages))
        metadata = dict(result.info)
        if first:  # the rollout's prompt should be the episode's opening (same budget, same preset)
            opening = [(m["role"], m["content"]) for m in episode.opening()]
            metadata["opening_matches"] = [(m.get("role"), m.get("content")) for m in messages[:2]] == opening
        if not result.done:
            return False, result.observation or "", None, metadata
        del self._live[instance_id]
        self._finished[instance_id] = result
        _bound(self._finished, self.settings.max_instances)
        return True, "", result.reward, metadata

    async def calculate_score(self, instance_id: str, **kwargs: Any) -> float | None:
        """The finished episode's reward; None while it runs or when it was masked."""
        result = self._finished.get(instance_id)
        return None if result is None else result.reward

    async def finalize_interaction(self, instance_id: str, **kwargs: Any) -> None:
        """Forget the instance, running or finished."""
        self._live.pop(instance_id, None)
        self._finished.pop(instance_id, None)
