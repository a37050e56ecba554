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
plays only the sessions whose every problem is on that side.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal
from uuid import uuid4

from pydantic import Field, ValidationError

from prefdisco.env.gym import scenarios_from
from prefdisco.env.roles import resolve_model
from prefdisco.env.session import SessionEpisode, chain_of, load_sessions, session_side
from prefdisco.env.split import ScenarioSplit, split_scenarios
from prefdisco.env.verl import _BASE, InteractionConfig, _bound, _last_assistant_text
from prefdisco.errors import UserError, describe_validation_error
from prefdisco.sessions.model import Session

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


class PrefDiscoSessionInteraction(_BASE):
    """verl's ``BaseInteraction`` over PrefDisco sessions (see the module docstring)."""

    def __init__(self, config: dict[str, Any]) -> None:
        if _BASE is not object:
            super().__init__(config)
        try:
            settings = SessionInteractionConfig.model_validate(dict(config))
        except ValidationError as err:
            raise UserError(describe_validation_error(err, "prefdisco session interaction config")) from None
        self.config = dict(config)
        self.name: str = settings.name
        self.settings = settings
        self._scenarios = scenarios_from(settings.scenarios)
        self._sessions = {s.session_id: s for s in load_sessions(settings.sessions, self._scenarios).sessions}
        self._split: ScenarioSplit | None = None
        if settings.train_fraction is not None:
            self._split = split_scenarios(self._scenarios, settings.train_fraction, settings.split_seed)
        elif settings.split is not None:
            raise UserError(f"split: {settings.split!r} needs train_fraction (the split by problem)")
        self._user_model = resolve_model(settings.user_model, "user", settings.user_config)
        self._judge_model = resolve_model(settings.judge_model, "grader", settings.judge_config)
        self._live: dict[str, SessionEpisode] = {}
        self._finished: dict[str, list[float | None]] = {}
        self._trials: Counter[str] = Counter()
        allowed = [s for s in self._sessions.values() if self._refusal(s) is None]
        if not allowed:
            raise UserError(f"split: no session has every problem on the {settings.split} side")
        self._episode(allowed[0].session_id)  # bad settings fail here, not at the first rollout

    def _refusal(self, session: Session) -> str | None:
        if self._split is None or self.settings.split is None:
            return None
        side = session_side(self._split, chain_of(session, self._scenarios))
        if side == self.settings.split:
            return None
        where = "the other side" if side is not None else "both sides"
        return (
            f"session {session.session_id} has problems on {where} of the split (train_fraction "
            f"{self._split.train_fraction}, seed {self._split.seed}); this interaction plays the "
            f"{self.settings.split} side only"
        )

    def _episode(self, session_id: Any) -> SessionEpisode:
        if not isinstance(session_id, str) or session_id not in self._sessions:
            raise UserError(
                f"interaction_kwargs.session_id: expected a session of {self.settings.sessions}, got {session_id!r}"
            )
        session = self._sessions[session_id]
        refusal = self._refusal(session)
        if refusal:
            raise UserError(refusal)
        s = self.settings
        return SessionEpisode(
            session,
            self._scenarios,
            self._user_model,
            self._judge_model,
            arm=s.arm,
            max_questions=s.max_questions,
            user_type=s.user_type,
            reward=s.reward,
            seed=s.seed,
            trial=self._trials[session_id] + 1,
            judge=s.judge,
            logprobs=s.logprobs,
            audit=s.audit,
            preset=s.preset,
            split=self._split,
            training=s.split == "train",
        )

    def row(self, session_id: str) -> dict[str, Any]:
        """What a dataset row of ``session_id`` needs: ``prompt`` (position 1's opening) and
        ``extra_info.interaction_kwargs``; the rest of verl's row layout is the trainer's."""
        prompt = self._episode(session_id).opening()
        kwargs = {"name": self.name, "session_id": session_id}
        return {"prompt": prompt, "extra_info": {"session_id": session_id, "interaction_kwargs": kwargs}}

    async def start_interaction(self, instance_id: str | None = None, **kwargs: Any) -> str:
        """Start the session of ``kwargs["session_id"]`` (the row's ``interaction_kwargs``)."""
        if instance_id is None:
            instance_id = str(uuid4())
        episode = self._episode(kwargs.get("session_id"))
        await episode.areset()
        self._trials[episode.session.session_id] += 1
        self._finished.pop(instance_id, None)
        self._live[instance_id] = episode
        _bound(self._live, self.settings.max_instances)
        return instance_id

    async def generate_response(
        self, instance_id: str, messages: list[dict[str, Any]], **kwargs: Any
    ) -> tuple[bool, str, float | None, dict[str, Any]]:
        """The user's reply, the next opening or the notes prompt after the last assistant turn; a problem's
        reward when the turn ends it; the end of the session after its last problem."""
        episode = self._live.get(instance_id)
        if episode is None:
            raise KeyError(f"no running prefdisco session interaction {instance_id!r} (start_interaction first)")
        first = episode.position == 1 and len(episode.messages) == 2
        result = await episode.astep(_last_assistant_text(messages))
        metadata = dict(result.info)
        if first:  # the rollout's prompt should be position 1's opening (same budget, same preset)
            opening = [(m["role"], m["content"]) for m in episode.opening()]
            metadata["opening_matches"] = [(m.get("role"), m.get("content")) for m in messages[:2]] == opening
        if not result.done:
            return False, result.observation or "", result.reward, metadata
        del self._live[instance_id]
        self._finished[instance_id] = list(episode.rewards)
        _bound(self._finished, self.settings.max_instances)
        return True, "", result.reward, metadata

    async def calculate_score(self, instance_id: str, **kwargs: Any) -> float | None:
        """The finished session's return (the sum of its per-problem rewards); None while it runs or when a
        problem was masked."""
        rewards = self._finished.get(instance_id)
        if rewards is None or any(r is None for r in rewards):
            return None
        return float(sum(r for r in rewards if r is not None))

    async def finalize_interaction(self, instance_id: str, **kwargs: Any) -> None:
        """Forget the instance, running or finished."""
        self._live.pop(instance_id, None)
        self._finished.pop(instance_id, None)
