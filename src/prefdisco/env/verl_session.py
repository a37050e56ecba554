"""Sessions as a verl multi-turn interaction: one rollout is one session of K problems with one person.

The same four coroutines as ``PrefDiscoInteraction`` (``env/verl.py``), over ``SessionEpisode`` (``env/session.py``)
instead of ``Episode``; the dataset row, the config and what each turn returns are described once, in
docs/agents.md, "Sessions: K problems with one person" (verl).

verl's agent loop keeps one chat per rollout, so under verl the earlier positions stay in the model's context
whatever the arm: the arms differ only in what each opening adds. The framework-neutral episode and gymnasium
start each position as a fresh chat, which is what ``prefdisco eval`` measures. The interaction is
``PrefDiscoInteraction`` itself over sessions (``env/units.Sessions``): this module sets only its config, its name
in messages and its unit.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from prefdisco.env.units import Sessions, Unit
from prefdisco.env.verl import InteractionConfig, PrefDiscoInteraction

SESSION_INTERACTION_NAME = "prefdisco_sessions"
"""The session interaction's name in verl's config and in every session row's ``interaction_kwargs``."""


class SessionInteractionConfig(InteractionConfig):
    """The ``config`` mapping of the session interaction's entry in verl's interaction config file."""

    name: str = SESSION_INTERACTION_NAME
    sessions: Any = Field(description="a session file (prefdisco sessions) planned on `scenarios`")
    arm: Literal["cold", "carry_transcript", "carry_notes"]


def session_rewards(extra_info: dict[str, Any] | None, length: int) -> list[float] | None:
    """The per-problem rewards of a session of ``length`` problems as verl's reward manager passes them
    (``extra_info["turn_scores"]``); None unless all ``length`` are there (a masked or unplayed problem has no
    score, so the scores could not be matched to their problems)."""
    scores = [float(s) for s in (extra_info or {}).get("turn_scores") or []]
    return scores if len(scores) == length else None


class PrefDiscoSessionInteraction(PrefDiscoInteraction):
    """verl's ``BaseInteraction`` over PrefDisco sessions (see the module docstring)."""

    config_model: ClassVar[type[InteractionConfig]] = SessionInteractionConfig
    label: ClassVar[str] = "prefdisco session interaction"

    def _unit(self, settings: InteractionConfig) -> Unit[Any, Any]:
        """What one rollout plays: one session of ``settings.sessions`` in ``settings.arm``."""
        assert isinstance(settings, SessionInteractionConfig)
        return Sessions(settings.sessions, settings.scenarios, settings.arm)
