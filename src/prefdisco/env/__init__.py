"""PrefDisco as an RL environment: one framework-neutral ``Episode`` (one problem) and ``SessionEpisode`` (a
session of K problems with one person), and their gymnasium and verl adapters.

Importing the package registers the gymnasium environments ``PrefDisco-v0`` (``env/gym.py``) and
``PrefDiscoSession-v0`` (``env/gym_session.py``). The verl adapters (``prefdisco.env.verl.PrefDiscoInteraction``,
``prefdisco.env.verl_session.PrefDiscoSessionInteraction``) are imported by verl from its interaction config, never
here.
"""

from __future__ import annotations

from prefdisco.env.episode import Episode, StepResult
from prefdisco.env.gym import ENV_ID, SESSION_ENV_ID, PrefDiscoEnv, register_env
from prefdisco.env.reward import Reward, RewardComponents, RewardConfig
from prefdisco.env.session import ARMS, SessionEpisode
from prefdisco.env.split import ScenarioSplit, split_scenarios

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

register_env()
