"""PrefDisco as a verl multi-turn interaction: the simulated user (and, at the end, the judge) behind verl's
``BaseInteraction`` interface (``start_interaction``, ``generate_response``, ``calculate_score``,
``finalize_interaction``), one instance built per worker from the interaction config file. The dataset rows, an
example config, the trainer's settings and what each turn returns are described once, in docs/agents.md, "verl".

A final turn's ``score`` is the episode's reward, None when it is masked: verl's loop keeps only scores that are
not None as ``turn_scores``, which its reward manager hands the reward function in ``extra_info``
(``episode_reward`` reads it back). verl's loop does not call ``finalize_interaction`` (and a rollout cut by verl's
length or turn limits never reaches its final turn), so a finished episode keeps only its result, and at most
``max_instances`` running episodes and as many results are kept, the oldest dropped first.

verl is imported here only, and only if it is installed: the class subclasses verl's ``BaseInteraction`` when
it can and is a plain class otherwise, with the same methods either way. Config keys (``InteractionConfig``):
``scenarios``, ``user_model``, ``judge_model`` (``provider/name``), and optionally ``user_config``,
``judge_config`` (generation settings), ``max_questions``, ``user_type``, ``judge``, ``logprobs``, ``audit``,
``preset``, ``pushback``, ``reward`` (the weights), ``seed``, ``train_fraction``, ``split_seed``, ``split``
(``train``: refuse evaluation scenarios), ``max_instances``.

``PrefDiscoInteraction`` is the one implementation of both interactions, over a ``Unit`` (``env/units.py``):
scenarios here, sessions in ``PrefDiscoSessionInteraction`` (``env/verl_session.py``), which changes only its
config, its name in messages and its unit; what they share with the gymnasium adapters (the split, the roles,
the trials) is ``env/roster.Roster``. ``row(id)`` gives what a dataset row of one item needs.
"""

from __future__ import annotations

import importlib
from typing import Any, ClassVar, Literal, cast
from uuid import uuid4

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from prefdisco.env.episode import Episode
from prefdisco.env.roster import Roster
from prefdisco.env.session import SessionEpisode
from prefdisco.env.units import Scenarios, Unit
from prefdisco.errors import UserError, describe_validation_error

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
    pushback: int = 0
    reward: dict[str, float] | None = None
    seed: int | None = None
    train_fraction: float | None = None
    split_seed: int = 0
    split: Literal["train", "eval"] | None = None
    max_instances: int = Field(default=10_000, ge=1)


EPISODE_SETTINGS = (
    "user_config", "judge_config", "max_questions", "user_type", "judge", "logprobs", "audit", "preset", "pushback",
    "reward", "seed",
)  # fmt: skip
"""The config keys that are episode options (the roles' generation settings among them)."""


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
    """verl's ``BaseInteraction`` over PrefDisco episodes (see the module docstring); a subclass plays another
    ``Unit`` by setting ``config_model``, ``label`` and ``_unit``."""

    config_model: ClassVar[type[InteractionConfig]] = InteractionConfig
    label: ClassVar[str] = "prefdisco interaction"
    """What messages call this interaction (its config, a missing instance)."""

    def __init__(self, config: dict[str, Any]) -> None:
        if _BASE is not object:
            super().__init__(config)  # verl's own bookkeeping (config, name)
        try:
            settings = self.config_model.model_validate(dict(config))
        except ValidationError as err:
            raise UserError(describe_validation_error(err, f"{self.label} config")) from None
        self.config = dict(config)
        self.name: str = settings.name
        self.settings = settings
        self._roster: Roster[Any, Any] = Roster(
            self._unit(settings),
            settings.user_model,
            settings.judge_model,
            {key: getattr(settings, key) for key in EPISODE_SETTINGS},
            train_fraction=settings.train_fraction,
            split_seed=settings.split_seed,
            split=settings.split,
            who="interaction",
        )
        self._live: dict[str, Episode | SessionEpisode] = {}
        self._finished: dict[str, float | None] = {}
        """The return of each finished instance (None: masked)."""

    def _unit(self, settings: InteractionConfig) -> Unit[Any, Any]:
        """What one rollout plays: one scenario of ``settings.scenarios``."""
        return Scenarios(settings.scenarios)

    def _item(self, item_id: Any) -> Any:
        """The scenario (session) of the row's ``interaction_kwargs``."""
        item = self._roster.find(item_id)
        if item is None:
            unit = self._roster.unit
            raise UserError(f"interaction_kwargs.{unit.key}: expected a {unit.noun} of {unit.source}, got {item_id!r}")
        return item

    def row(self, item_id: str) -> dict[str, Any]:
        """What a dataset row of ``item_id`` needs: ``prompt`` (the episode's opening) and
        ``extra_info.interaction_kwargs``; the rest of verl's row layout is the trainer's."""
        prompt = self._roster.episode(self._item(item_id)).opening()
        key = self._roster.unit.key
        kwargs = {"name": self.name, key: item_id}
        return {"prompt": prompt, "extra_info": {key: item_id, "interaction_kwargs": kwargs}}

    async def start_interaction(self, instance_id: str | None = None, **kwargs: Any) -> str:
        """Start the episode of ``kwargs["scenario_id"]`` (a session's: ``session_id``), the row's
        ``interaction_kwargs``."""
        if instance_id is None:
            instance_id = str(uuid4())
        item = self._item(kwargs.get(self._roster.unit.key))
        episode = self._roster.episode(item)  # refused when it is on the other side of the split
        await episode.areset()
        self._roster.started(item)
        self._finished.pop(instance_id, None)
        self._live[instance_id] = episode
        _bound(self._live, self.settings.max_instances)
        return instance_id

    async def generate_response(
        self, instance_id: str, messages: list[dict[str, Any]], **kwargs: Any
    ) -> tuple[bool, str, float | None, dict[str, Any]]:
        """What answers the last assistant turn (the user's reply; in a session, the next opening or the notes
        prompt); a problem's reward when the turn ends it; the end of the episode after its last problem."""
        episode = self._live.get(instance_id)
        if episode is None:
            raise KeyError(f"no running {self.label} {instance_id!r} (start_interaction first)")
        first = self._roster.unit.at_opening(episode)
        result = await episode.astep(_last_assistant_text(messages))
        metadata = dict(result.info)
        if first:  # the rollout's prompt should be the episode's opening (same budget, same preset)
            opening = [(m["role"], m["content"]) for m in episode.opening()]
            metadata["opening_matches"] = [(m.get("role"), m.get("content")) for m in messages[:2]] == opening
        if not result.done:
            return False, result.observation or "", result.reward, metadata
        del self._live[instance_id]
        self._finished[instance_id] = self._roster.unit.score(episode)
        _bound(self._finished, self.settings.max_instances)
        return True, "", result.reward, metadata

    async def calculate_score(self, instance_id: str, **kwargs: Any) -> float | None:
        """The finished episode's return (a session's: the sum of its per-problem rewards); None while it runs or
        when a reward was masked."""
        return self._finished.get(instance_id)

    async def finalize_interaction(self, instance_id: str, **kwargs: Any) -> None:
        """Forget the instance, running or finished."""
        self._live.pop(instance_id, None)
        self._finished.pop(instance_id, None)
