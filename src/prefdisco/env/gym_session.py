"""Sessions as a gymnasium environment: ``PrefDiscoSession-v0``, K problems with one person per episode.

Each episode is a ``SessionEpisode`` (``env/session.py``) of one session of the session file (``prefdisco
sessions``) played on its benchmark, drawn with the environment's seeded ``np_random`` or named by
``options={"session_id": ...}``, in the ``arm`` chosen at construction. Its observations, rewards (per problem;
a masked one ``masked_reward``, never NaN) and split are described once, in docs/agents.md, "Sessions: K problems
with one person". One environment, one thread (``env/runner.py``). The environment is ``PrefDisco-v0``'s own
implementation (``env/gym.UnitEnv``) over sessions (``env/units.Sessions``).
"""

from __future__ import annotations

from typing import Any

from prefdisco.env.gym import UnitEnv
from prefdisco.env.session import SessionEpisode
from prefdisco.env.sources import ScenarioSource, SessionSource
from prefdisco.env.units import Sessions
from prefdisco.sessions.model import Session


class PrefDiscoSessionEnv(UnitEnv[Session, SessionEpisode]):
    """The gymnasium face of ``SessionEpisode``, one session an episode, all in ``arm``; every keyword but
    ``UnitEnv``'s goes to each session episode (see the module docstring)."""

    def __init__(
        self,
        sessions: SessionSource,
        scenarios: ScenarioSource,
        user_model: Any,
        judge_model: Any,
        *,
        arm: str,
        **options: Any,
    ) -> None:
        units = Sessions(sessions, scenarios, arm)
        self.arm = units.arm
        super().__init__(units, user_model, judge_model, **options)
