"""PrefDisco as an RL environment: one framework-neutral ``Episode`` and its gymnasium and verl adapters.

Importing the package registers the gymnasium environment ``PrefDisco-v0`` (``env/gym.py``). The verl adapter
(``prefdisco.env.verl.PrefDiscoInteraction``) is imported by verl from its interaction config, never here.
"""

from __future__ import annotations

from prefdisco.env.episode import Episode, StepResult
from prefdisco.env.gym import ENV_ID, PrefDiscoEnv, register_env
from prefdisco.env.reward import Reward, RewardComponents, RewardConfig
from prefdisco.env.split import ScenarioSplit, split_scenarios

__all__ = [
    "ENV_ID",
    "Episode",
    "PrefDiscoEnv",
    "Reward",
    "RewardComponents",
    "RewardConfig",
    "ScenarioSplit",
    "StepResult",
    "split_scenarios",
]

register_env()
