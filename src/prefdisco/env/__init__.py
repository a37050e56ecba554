"""PrefDisco as an RL environment: one framework-neutral ``Episode`` (one problem) and ``SessionEpisode`` (a
session of K problems with one person), and their gymnasium and verl adapters.

Importing the package registers the gymnasium environments ``PrefDisco-v0`` (``env/gym.py``) and
``PrefDiscoSession-v0`` (``env/gym_session.py``) by name (``env/registration.py``) and nothing more: the names below
are imported when first used (``from prefdisco.env import Episode``), so a module of the package that does not need
inspect — ``prefdisco env serve``'s command line — does not load it. The verl adapters
(``prefdisco.env.verl.PrefDiscoInteraction``, ``prefdisco.env.verl_session.PrefDiscoSessionInteraction``) are imported
by verl from its interaction config, never here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from prefdisco.env.registration import ENV_ID, SESSION_ENV_ID, register_env

if TYPE_CHECKING:
    from prefdisco.env.episode import Episode, StepResult
    from prefdisco.env.gym import PrefDiscoEnv
    from prefdisco.env.reward import Reward, RewardComponents, RewardConfig
    from prefdisco.env.session import ARMS, SessionEpisode
    from prefdisco.env.split import ScenarioSplit, split_scenarios

_HOMES = {
    "ARMS": "session",
    "Episode": "episode",
    "PrefDiscoEnv": "gym",
    "Reward": "reward",
    "RewardComponents": "reward",
    "RewardConfig": "reward",
    "ScenarioSplit": "split",
    "SessionEpisode": "session",
    "StepResult": "episode",
    "split_scenarios": "split",
}
"""Each lazily exported name → the module of the package that defines it."""

__all__ = [
    "ARMS",
    "ENV_ID",
    "SESSION_ENV_ID",
    "Episode",
    "PrefDiscoEnv",
    "Reward",
    "RewardComponents",
    "RewardConfig",
    "ScenarioSplit",
    "SessionEpisode",
    "StepResult",
    "split_scenarios",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # the next use is an ordinary attribute
    return value


register_env()
