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
session is trial k of its seeds. One environment, one thread (``env/runner.py``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium

from prefdisco.env.gym import AnyText, finite_reward, scenarios_from
from prefdisco.env.roles import resolve_model
from prefdisco.env.runner import LoopRunner
from prefdisco.env.session import SessionEpisode, chain_of, check_arm, load_sessions, session_side
from prefdisco.env.split import ScenarioSplit, check_side, split_scenarios
from prefdisco.errors import UserError
from prefdisco.schema import Scenario
from prefdisco.sessions.model import Session, SessionSet


class PrefDiscoSessionEnv(gymnasium.Env[str, str]):
    """The gymnasium face of ``SessionEpisode``; every keyword but the split's and ``masked_reward`` goes to each
    session episode (see the module docstring)."""

    def __init__(
        self,
        sessions: str | Path | SessionSet,
        scenarios: str | Path | Sequence[Scenario],
        user_model: Any,
        judge_model: Any,
        *,
        arm: str,
        train_fraction: float | None = None,
        split_seed: int = 0,
        split: str | None = None,
        masked_reward: float = 0.0,
        **episode_options: Any,
    ) -> None:
        self.masked_reward = finite_reward(masked_reward)
        self.arm = check_arm(arm)
        own = sorted({"trial", "training", "runner"} & set(episode_options))
        if own:
            raise UserError(
                f"{own[0]}: set by the environment, not an option (the k-th episode of a session is its trial k, "
                f"split='train' makes a training environment)"
            )
        every = scenarios_from(scenarios)
        self._scenarios = every
        self._sessions = {s.session_id: s for s in load_sessions(sessions, every).sessions}
        side = check_side(split)
        self._split: ScenarioSplit | None = None
        if train_fraction is not None:
            self._split = split_scenarios(every, train_fraction, split_seed)
        elif side is not None:
            raise UserError(f"split: {side!r} needs train_fraction (the split by problem to take a side of)")
        self._side = side
        self._pool = [s for s in self._sessions.values() if self._refusal(s) is None]
        if not self._pool:
            raise UserError(f"split: no session has every problem on the {side} side (train_fraction {train_fraction})")
        self._runner = LoopRunner()
        self._options = dict(episode_options)
        self._user_model = resolve_model(user_model, "user", self._options.pop("user_config", None))
        self._judge_model = resolve_model(judge_model, "grader", self._options.pop("judge_config", None))
        self._trials: Counter[str] = Counter()
        self._episode_for(self._pool[0], trial=1)  # bad options fail here, not at the first reset
        self._episode: SessionEpisode | None = None
        self.observation_space = AnyText()
        self.action_space = AnyText()

    @property
    def episode(self) -> SessionEpisode | None:
        return self._episode

    @property
    def split_record(self) -> dict[str, Any] | None:
        """The split by problem, as data (None without ``train_fraction``)."""
        return None if self._split is None else {**self._split.record(), "side": self._side}

    def _refusal(self, session: Session) -> str | None:
        """Why this environment does not play ``session`` (not wholly on its side of the split), or None."""
        if self._split is None or self._side is None:
            return None
        episode_side = session_side(self._split, self._chain(session))
        if episode_side == self._side:
            return None
        where = "the other side" if episode_side is not None else "both sides"
        return f"session {session.session_id} has problems on {where} of the split; this environment plays {self._side}"

    def _chain(self, session: Session) -> list[Scenario]:
        return chain_of(session, self._scenarios)

    def _episode_for(self, session: Session, trial: int) -> SessionEpisode:
        return SessionEpisode(
            session,
            self._scenarios,
            self._user_model,
            self._judge_model,
            arm=self.arm,
            split=self._split,
            training=self._side == "train",
            trial=trial,
            runner=self._runner,
            **self._options,
        )

    def _choose(self, options: dict[str, Any] | None) -> Session:
        options = dict(options or {})
        wanted = options.pop("session_id", None)
        if options:
            raise UserError(f"reset options: unknown {', '.join(sorted(options))}; expected session_id")
        if wanted is None:
            return self._pool[int(self.np_random.integers(len(self._pool)))]
        if wanted not in self._sessions:
            raise UserError(f"reset options.session_id: no session {wanted!r} in this environment")
        refusal = self._refusal(self._sessions[wanted])
        if refusal:
            raise UserError(refusal)
        return self._sessions[wanted]

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        session = self._choose(options)
        trial = self._trials[session.session_id] + 1
        episode = self._episode_for(session, trial)
        messages = episode.reset()
        self._trials[session.session_id] = trial
        self._episode = episode
        info = {
            "session_id": session.session_id,
            "arm": self.arm,
            "position": 1,
            "length": episode.length,
            "trial": trial,
            "messages": messages,
        }
        return "\n\n".join(m["content"] for m in messages), info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._episode is None:
            raise RuntimeError("call reset() before step()")
        result = self._episode.step(action)
        reward = 0.0
        if result.info.get("problem_done"):  # info["masked"] says whether it is masked_reward
            reward = self.masked_reward if result.reward is None else float(result.reward)
        return result.observation or "", reward, result.done, False, result.info

    def close(self) -> None:
        self._runner.close()
        super().close()
