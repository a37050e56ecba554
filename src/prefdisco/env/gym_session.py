"""Sessions as a gymnasium environment: ``PrefDiscoSession-v0``, K problems with one person per episode.

``import prefdisco.env`` registers it::

    import gymnasium, prefdisco.env
    env = gymnasium.make("PrefDiscoSession-v0", sessions="sessions.jsonl", scenarios="bench/",
                         user_model="openai/gpt-4.1-mini", judge_model="openai/gpt-4.1", arm="carry_notes")
    obs, info = env.reset(seed=0)            # position 1's opening: the discovery prompt and the problem
    obs, reward, terminated, truncated, info = env.step("QUESTION: How much detail do you want?")

Each episode is a ``SessionEpisode`` (``env/session.py``) of one session of the session file (``prefdisco
sessions``) played on its benchmark, drawn with the environment's seeded ``np_random`` or named by
``options={"session_id": ...}``, in the ``arm`` chosen at construction (``cold``, ``carry_transcript``,
``carry_notes``). Observations and actions are text: an opening is its system prompt and problem joined by a
blank line (``info["messages"]`` has the chat, which starts afresh at each position), then the user's replies,
the notes prompt between problems in ``carry_notes`` (the action is the notes, ``info["kind"] == "notes"``), and
``""`` at the end; ``info["next"]`` says which the observation is.

The reward is per problem: 0.0 on every step but the one that ends a problem, which gets that problem's reward
(``Episode``'s), a masked one ``masked_reward`` with ``info["masked"]`` (never NaN); the notes turn gets 0.0.
``terminated`` is True after the last problem; ``truncated`` is always False. With ``train_fraction`` the
benchmark is split by problem as ``PrefDisco-v0`` splits it; ``split="train"`` (``"eval"``) plays only the
sessions whose every problem is on that side and refuses another one asked for by id. The k-th episode of a
session is trial k of its seeds. One environment, one thread (``env/runner.py``). The environment is
``PrefDisco-v0``'s own implementation (``env/gym.UnitEnv``) over sessions (``env/units.Sessions``).
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
