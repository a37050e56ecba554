"""Sessions as a verl multi-turn interaction: one rollout is one session of K problems with one person.

The same four coroutines as ``PrefDiscoInteraction`` (``env/verl.py``), over ``SessionEpisode`` (``env/session.py``)
instead of ``Episode``:

* a dataset row is a session: its ``prompt`` is position 1's opening (``row``) and its
  ``extra_info.interaction_kwargs`` are ``{"name": "prefdisco_sessions", "session_id": ...}``;
* ``generate_response`` reads the last assistant message as the session episode's next turn. Within a problem the
  ``response`` is the user's reply and ``score`` None; the turn that ends a problem gets that problem's reward as
  its ``score`` (None when masked) and, as its ``response``, what comes next: the next position's opening (its
  system prompt and problem joined by a blank line, sent as the user's message) or, in ``carry_notes``, the notes
  prompt (the agent's next turn is its notes, ``metadata["kind"] == "notes"``, score None). After the last problem
  ``should_terminate`` is True. verl keeps the scores that are not None as ``turn_scores``: one per problem,
  less the masked ones (``session_rewards`` reads them back);
* ``calculate_score`` — the finished session's return, the sum of its per-problem rewards (None while it runs or
  when a problem was masked).

verl's agent loop keeps one chat per rollout, so under verl the earlier positions stay in the model's context
whatever the arm: the arms differ only in what each opening adds. The framework-neutral episode and gymnasium
start each position as a fresh chat, which is what ``prefdisco eval`` measures.

Config keys: those of ``PrefDiscoInteraction`` (``scenarios`` is the benchmark the sessions were planned on),
plus ``sessions`` (the session file) and ``arm`` (``cold``, ``carry_transcript``, ``carry_notes``); ``split``
plays only the sessions whose every problem is on that side. The interaction is ``PrefDiscoInteraction`` itself
over sessions (``env/units.Sessions``): this module sets only its config, its name in messages and its unit.
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
