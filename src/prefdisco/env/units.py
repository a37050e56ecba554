"""What an adapter plays as one episode: a scenario (``Episode``) or a session (``SessionEpisode``).

The gymnasium adapter (``env/gym.py``) and the verl one (``env/verl.py``) are each written once, over a ``Unit``:
the strategy that knows the unit's name and key, where its items come from, which side of the split by problem an
item is on, how to build its episode, what a reset tells, which step ends a problem (and so is rewarded) and what
a finished episode scores. ``Scenarios`` plays a benchmark's scenarios, one problem an episode; ``Sessions`` plays
the sessions of a session file on that benchmark in one arm, K problems an episode.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Generic, TypeVar

from inspect_ai.model import Model

from prefdisco.env.episode import Episode, StepResult
from prefdisco.env.runner import SyncAPI
from prefdisco.env.session import SessionEpisode, check_arm, session_side
from prefdisco.env.sources import ScenarioSource, SessionSource, chain_of, load_sessions, scenarios_from
from prefdisco.env.split import ScenarioSplit, Side
from prefdisco.errors import UserError
from prefdisco.schema import Scenario
from prefdisco.sessions.model import Session

ItemT = TypeVar("ItemT")
"""What is played: a ``Scenario`` or a ``Session``."""
EpisodeT = TypeVar("EpisodeT", bound=SyncAPI[StepResult])
"""Its episode: an ``Episode`` or a ``SessionEpisode``."""


class Unit(ABC, Generic[ItemT, EpisodeT]):
    """The items an adapter plays (by id) and what differs between playing a scenario and playing a session."""

    noun: ClassVar[str]
    """What one item is called in messages (``scenario``, ``session``)."""
    key: ClassVar[str]
    """The option naming an item (``reset(options={key: ...})``, verl's ``interaction_kwargs``)."""

    scenarios: list[Scenario]
    """The benchmark: what the split by problem is made of."""
    items: dict[str, ItemT]
    """Every item, by id, in the source's order."""
    source: object
    """What the items were read from, as given (named in messages)."""

    @abstractmethod
    def id_of(self, item: ItemT) -> str:
        """The item's id (its key in ``items``)."""

    @abstractmethod
    def side(self, item: ItemT, split: ScenarioSplit) -> Side | None:
        """The side of ``split`` the item is on; None when it is on both."""

    @abstractmethod
    def off_side(self, item: ItemT, side: Side | None) -> str:
        """The start of the line refusing ``item``, which is on ``side`` (None: both)."""

    @abstractmethod
    def empty(self, side: Side | None) -> str:
        """Why no item is on ``side``."""

    @abstractmethod
    def make(self, item: ItemT, user_model: Model, judge_model: Model, **options: Any) -> EpisodeT:
        """The item's episode, built with the episode options."""

    @abstractmethod
    def reset_info(self, episode: EpisodeT) -> dict[str, Any]:
        """What a reset tells about the episode (before its trial and messages)."""

    @abstractmethod
    def ends_problem(self, result: StepResult) -> bool:
        """Whether the step ended a problem, and so carries that problem's reward."""

    @abstractmethod
    def at_opening(self, episode: EpisodeT) -> bool:
        """Whether the next turn is the episode's first (its chat is the first opening)."""

    @abstractmethod
    def score(self, episode: EpisodeT) -> float | None:
        """The finished episode's return; None when a reward was masked."""


class Scenarios(Unit[Scenario, Episode]):
    """A benchmark's scenarios, one ``Episode`` each."""

    noun, key = "scenario", "scenario_id"

    def __init__(self, scenarios: ScenarioSource) -> None:
        every = scenarios_from(scenarios)
        if not every:
            raise UserError("scenarios: no scenario to play")
        self.items = {s.id: s for s in every}
        if len(self.items) != len(every):
            raise UserError("scenarios: scenario ids must be unique")
        self.scenarios, self.source = every, scenarios

    def id_of(self, item: Scenario) -> str:
        return item.id

    def side(self, item: Scenario, split: ScenarioSplit) -> Side:
        return split.side(item)

    def off_side(self, item: Scenario, side: Side | None) -> str:
        where = "evaluation" if side == "eval" else "training"
        problem = f"{item.problem.benchmark}/{item.problem.id}"
        return f"scenario {item.id} (problem {problem}) is on the {where} side of the split"

    def empty(self, side: Side | None) -> str:
        return f"the {side} side of the split is empty"

    def make(self, item: Scenario, user_model: Model, judge_model: Model, **options: Any) -> Episode:
        return Episode(item, user_model, judge_model, **options)

    def reset_info(self, episode: Episode) -> dict[str, Any]:
        return {"scenario_id": episode.scenario.id, "split": episode.side}

    def ends_problem(self, result: StepResult) -> bool:
        return result.done

    def at_opening(self, episode: Episode) -> bool:
        return len(episode.messages) == 2

    def score(self, episode: Episode) -> float | None:
        return None if episode.result is None else episode.result.reward


class Sessions(Unit[Session, SessionEpisode]):
    """The sessions of a session file on their benchmark, one ``SessionEpisode`` each, all in ``arm``."""

    noun, key = "session", "session_id"

    def __init__(self, sessions: SessionSource, scenarios: ScenarioSource, arm: object) -> None:
        self.arm = check_arm(arm)
        self.scenarios = scenarios_from(scenarios)
        self.items = {s.session_id: s for s in load_sessions(sessions, self.scenarios).sessions}
        self.source = sessions

    def id_of(self, item: Session) -> str:
        return item.session_id

    def side(self, item: Session, split: ScenarioSplit) -> Side | None:
        return session_side(split, chain_of(item, self.scenarios))

    def off_side(self, item: Session, side: Side | None) -> str:
        where = "the other side" if side is not None else "both sides"
        return f"session {item.session_id} has problems on {where} of the split"

    def empty(self, side: Side | None) -> str:
        return f"no session has every problem on the {side} side"

    def make(self, item: Session, user_model: Model, judge_model: Model, **options: Any) -> SessionEpisode:
        return SessionEpisode(item, self.scenarios, user_model, judge_model, arm=self.arm, **options)

    def reset_info(self, episode: SessionEpisode) -> dict[str, Any]:
        return {"session_id": episode.session.session_id, "arm": self.arm, "position": 1, "length": episode.length}

    def ends_problem(self, result: StepResult) -> bool:
        return bool(result.info.get("problem_done"))

    def at_opening(self, episode: SessionEpisode) -> bool:
        return episode.position == 1 and len(episode.messages) == 2

    def score(self, episode: SessionEpisode) -> float | None:
        """The sum of the per-problem rewards."""
        rewards = episode.rewards
        if len(rewards) < episode.length or any(r is None for r in rewards):
            return None
        return float(sum(r for r in rewards if r is not None))
