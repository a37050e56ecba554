"""What the gymnasium and verl adapters share, written once: the items of a ``Unit`` (``env/units.py``) an
adapter plays, the split by problem and the side it plays, the fixed roles, the episode options, and how often
each item was played (the k-th episode of an item is trial k of its seeds).

With ``train_fraction`` the benchmark is split by problem (``env/split.py``, seed ``split_seed``); with a side
(``split="train"`` or ``"eval"``) only the items wholly on that side are played and another one asked for is
refused in one line. Bad options fail when the roster is made: it builds the first item's episode once.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Generic

from prefdisco.env.roles import resolve_model
from prefdisco.env.runner import LoopRunner
from prefdisco.env.split import ScenarioSplit, check_side, split_scenarios
from prefdisco.env.units import EpisodeT, ItemT, Unit
from prefdisco.errors import UserError
from prefdisco.results.protocol_record import renamed

OWN_OPTIONS = frozenset({"trial", "training", "runner"})
"""Episode options the roster sets itself."""


class Roster(Generic[ItemT, EpisodeT]):
    """The items of ``unit`` an adapter (``who``: ``environment``, ``interaction``) plays, and their episodes."""

    def __init__(
        self,
        unit: Unit[ItemT, EpisodeT],
        user_model: Any,
        judge_model: Any,
        options: dict[str, Any],
        *,
        train_fraction: float | None,
        split_seed: int,
        split: str | None,
        who: str,
        runner: LoopRunner | None = None,
    ) -> None:
        own = sorted(OWN_OPTIONS & set(options))
        if own:
            raise UserError(
                f"{own[0]}: set by the {who}, not an option (the k-th episode of a {unit.noun} is its trial k, "
                f"split='train' makes a training {who})"
            )
        self.unit, self.who, self.runner = unit, who, runner
        self.side = check_side(split)
        self.split: ScenarioSplit | None = None
        if train_fraction is not None:
            self.split = split_scenarios(unit.scenarios, train_fraction, split_seed)
        elif self.side is not None:
            raise UserError(f"split: {self.side!r} needs train_fraction (the split by problem to take a side of)")
        self.pool = [item for item in unit.items.values() if self.refusal(item) is None]
        """The items this adapter plays, in the source's order."""
        if not self.pool:
            raise UserError(f"split: {unit.empty(self.side)} (train_fraction {train_fraction})")
        self.options = renamed(options)  # an option under its older name (``protocol``) read as its new one
        self.user_model = resolve_model(user_model, "user", self.options.pop("user_config", None))
        self.judge_model = resolve_model(judge_model, "grader", self.options.pop("judge_config", None))
        self.trials: Counter[str] = Counter()
        """How many episodes of each item have started."""
        self.episode(self.pool[0])  # bad options fail here, not at the first episode

    @property
    def split_record(self) -> dict[str, Any] | None:
        """The split by problem, as data (None without ``train_fraction``)."""
        return None if self.split is None else {**self.split.record(), "side": self.side}

    def refusal(self, item: ItemT) -> str | None:
        """Why this adapter does not play ``item`` (not wholly on its side of the split), or None."""
        if self.split is None or self.side is None:
            return None
        side = self.unit.side(item, self.split)
        if side == self.side:
            return None
        return (
            f"{self.unit.off_side(item, side)} (train_fraction {self.split.train_fraction}, seed {self.split.seed}); "
            f"this {self.who} plays the {self.side} side only"
        )

    def find(self, item_id: object) -> ItemT | None:
        """The item of id ``item_id``; None when there is none."""
        return self.unit.items.get(item_id) if isinstance(item_id, str) else None

    def episode(self, item: ItemT) -> EpisodeT:
        """A new episode of ``item``, its next trial (``started`` counts it once it has started)."""
        refusal = self.refusal(item)
        if refusal:
            raise UserError(refusal)
        return self.unit.make(
            item,
            self.user_model,
            self.judge_model,
            split=self.split,
            training=self.side == "train",
            trial=self.trials[self.unit.id_of(item)] + 1,
            runner=self.runner,
            **self.options,
        )

    def started(self, item: ItemT) -> int:
        """Count an episode of ``item`` as started; its trial."""
        key = self.unit.id_of(item)
        self.trials[key] += 1
        return self.trials[key]
