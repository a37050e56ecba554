"""PrefDisco as an OpenEnv environment (the ``openenv`` extra: ``openenv-core``): typed action, observation and
state on the library's base types, the environment on its ``Environment`` interface, the server its
``create_fastapi_app`` builds (``prefdisco env serve``), and a client on its ``EnvClient``.

The action, the observation's and the state's fields, the reward, ``reset`` and an episode that is a session
(``make_app(..., sessions=FILE, arm=ARM)``, ``prefdisco env serve BENCH --sessions FILE --arm ARM``) are described
once, in docs/agents.md, "OpenEnv". The rewards are the gymnasium environments' (``PrefDisco-v0``,
``PrefDiscoSession-v0``); the state's ``reward`` is the finished episode's return by the one rule of every adapter
(``Unit.score``: None when a problem was masked, never ``masked_reward``, which only the step carries).

Every session (one WebSocket connection of an ``EnvClient``) gets its own environment, all sharing one roster
(``env/roster.py``: the scenarios, the split, the two fixed roles, the episode options) and the server's event
loop. OpenEnv's HTTP ``/reset`` and ``/step`` build a fresh environment per request, so a dialogue (several
steps) needs the WebSocket session, which the client holds.
"""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np
from fastapi import FastAPI
from inspect_ai.model import ChatMessageAssistant
from inspect_ai.tool import ToolCall
from openenv.core import EnvClient
from openenv.core.client_types import StepResult as OpenEnvStepResult
from openenv.core.env_server.http_server import create_fastapi_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import BaseModel, Field

from prefdisco.dialogue.engine import Turn
from prefdisco.env.disconnects import LeftClients
from prefdisco.env.gym import finite_reward, step_reward
from prefdisco.env.hubs import added_after_turn, hub_roster, hub_unit, jsonable, tool_json
from prefdisco.env.roster import Roster
from prefdisco.env.runner import LoopRunner
from prefdisco.env.sources import ScenarioSource, SessionSource
from prefdisco.env.units import Sessions
from prefdisco.errors import UserError

DEFAULT_MAX_SESSIONS = 64
"""Concurrent WebSocket sessions a server accepts by default (``prefdisco env serve --max-sessions``)."""


class PrefDiscoToolCall(BaseModel):
    """One tool call of an assistant turn (protocol ``tools``: ``ask_user`` with ``{"question": ...}``)."""

    id: str = Field(..., description="the call's id (the tool result's tool_call_id)")
    name: str = Field(..., description="the tool called: ask_user")
    arguments: dict[str, Any] = Field(default_factory=dict, description='its arguments: {"question": "..."}')


class PrefDiscoAction(Action):
    """One assistant turn: its text and, under protocol ``tools``, its tool calls."""

    text: str = Field(
        default="", description="the turn's text: 'QUESTION: ...' or 'ANSWER: ...' (protocol text), the answer (tools)"
    )
    tool_calls: list[PrefDiscoToolCall] = Field(
        default_factory=list, description="protocol tools: the turn's calls (ask_user asks a question)"
    )

    def turn(self) -> Turn:
        """The turn as the engine reads it: the text, or an assistant message with the calls."""
        if not self.tool_calls:
            return self.text
        calls = [ToolCall(id=c.id, function=c.name, arguments=c.arguments) for c in self.tool_calls]
        return ChatMessageAssistant(content=self.text, tool_calls=calls)


class PrefDiscoObservation(Observation):
    """What the assistant sees next (``reward`` and ``done`` are OpenEnv's own fields)."""

    text: str = Field(default="", description="the opening, the user's reply (or challenge), '' at the end")
    messages: list[dict[str, str]] = Field(default_factory=list, description="the chat messages of text")
    scenario_id: str = Field(default="", description="the episode's scenario")
    trial: int = Field(default=0, description="the episode's trial of its scenario (1-based)")
    kind: str | None = Field(default=None, description="the step's kind: question, answer, pushback, reply")
    masked: bool = Field(default=False, description="the finished problem was masked (no reward measured)")
    info: dict[str, Any] = Field(default_factory=dict, description="the step's info (as gymnasium's)")
    session_id: str | None = Field(default=None, description="sessions: the episode's session")
    position: int | None = Field(default=None, description="sessions: the problem's position (1-based)")
    arm: str | None = Field(default=None, description="sessions: what is carried (cold, carry_transcript, carry_notes)")
    tools: list[dict[str, Any]] = Field(
        default_factory=list, description="protocol tools: the tools the next turn may call (OpenAI function format)"
    )
    tool_choice: str | None = Field(default=None, description="protocol tools: auto, or none once the budget is spent")
    next: str | None = Field(default=None, description="sessions: what text is: reply, opening, notes; None: over")


class PrefDiscoState(State):
    """The session's episode."""

    scenario_id: str | None = None
    trial: int = 0
    split: str | None = None
    done: bool = False
    n_questions: int = 0
    reward: float | None = None
    masked: bool = False
    session_id: str | None = None
    position: int | None = None
    arm: str | None = None
    rewards: list[float | None] = Field(default_factory=list)
    masked_positions: list[int] = Field(default_factory=list)


def _chat(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Chat messages as plain dicts: role and text, and a tool result's ``tool_call_id``."""
    keep = ("role", "content", "tool_call_id")
    return [{k: str(m[k]) for k in keep if m.get(k) is not None} for m in messages]


class PrefDiscoOpenEnv(Environment):
    """One session's environment over the shared ``roster`` of scenarios or sessions (module docstring)."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, roster: Roster[Any, Any], masked_reward: float = 0.0) -> None:
        super().__init__()
        self.roster = roster
        self.unit = roster.unit
        self.sessions = isinstance(self.unit, Sessions)
        self.masked_reward = finite_reward(masked_reward)
        self._rng = np.random.default_rng()
        self._episode: Any = None
        self._state = PrefDiscoState()
        self._runner: LoopRunner | None = None

    # -- the async API (what the server calls) ---------------------------------------------------------------

    async def reset_async(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        scenario_id: str | None = None,
        session_id: str | None = None,
        **kwargs: Any,
    ) -> PrefDiscoObservation:
        key = self.unit.key
        if kwargs:
            raise UserError(f"reset: unknown {', '.join(sorted(kwargs))}; expected seed, episode_id, {key}")
        other, wanted = (scenario_id, session_id) if self.sessions else (session_id, scenario_id)
        if other is not None:
            plays = f"{self.unit.noun}s" + (f" in the arm {self.unit.arm}" if isinstance(self.unit, Sessions) else "")
            raise UserError(f"reset: this server plays {plays}; name one with {key}")
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        item = self._choose(wanted)
        episode = self.roster.episode(item)  # refused when it is on the other side of the split
        messages = await episode.areset()
        trial = self.roster.started(item)
        self._episode = episode
        info = jsonable({**self.unit.reset_info(episode), "trial": trial})
        scenario = self._scenario_id()
        self._state = PrefDiscoState(
            episode_id=episode_id or str(uuid.uuid4()), step_count=0, scenario_id=scenario, trial=trial,
            split=info.get("split"), **self._where(),
        )  # fmt: skip
        return PrefDiscoObservation(
            text="\n\n".join(m["content"] for m in messages),
            messages=_chat(messages),
            scenario_id=scenario,
            trial=trial,
            info=info,
            done=False,
            reward=None,
            **self._offered(),
            **({**self._where(), "next": "opening"} if self.sessions else {}),
        )

    def _offered(self) -> dict[str, Any]:
        """Protocol ``tools``: the tools the next turn may call and the tool choice (``none`` once the budget is
        spent: the next turn is the answer), as the engine sends them to a model under ``prefdisco eval``."""
        if self.roster.options.get("ask", "text") != "tools" or self._episode.done:
            return {}
        episode = self._episode.episode if self.sessions else self._episode
        if episode.done:  # a session between problems: the notes turn is text
            return {}
        hints = episode.dialogue.hints()
        choice = hints.tool_choice if isinstance(hints.tool_choice, str) else None
        return {"tools": [tool_json(t) for t in hints.tools], "tool_choice": choice}

    def _scenario_id(self) -> str:
        """The scenario being played (a session's: its current position's)."""
        episode = self._episode.episode if self.sessions else self._episode
        return str(episode.scenario.id)

    def _where(self) -> dict[str, Any]:
        """A session's id, position and arm (nothing for a scenario)."""
        if not self.sessions:
            return {}
        episode = self._episode
        return {"session_id": episode.session.session_id, "position": episode.position, "arm": episode.arm}

    async def step_async(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> PrefDiscoObservation:
        episode = self._episode
        if episode is None:
            raise UserError("step: no episode in this session; reset first (a dialogue needs the WebSocket session)")
        if episode.done:
            raise UserError("step: the episode is over; reset to start another")
        turn = (action if isinstance(action, PrefDiscoAction) else PrefDiscoAction.model_validate(action)).turn()
        scenario = self._scenario_id()  # where the turn was played (a session moves on to its next problem)
        result = await episode.astep(turn)
        info = jsonable(result.info)
        reward, masked = step_reward(self.unit, result, self.masked_reward)
        state = self._state
        state.step_count += 1
        state.done = result.done
        if info.get("n_questions") is not None:
            state.n_questions = int(info["n_questions"])
        if self.unit.ends_problem(result):  # a scenario's last step; a session's step that ends a problem
            state.rewards.append(None if masked else reward)
            if masked:
                state.masked_positions.append(len(state.rewards))
            state.masked = state.masked or masked
        if result.done:
            state.reward = self.unit.score(episode)  # every adapter's return (verl's calculate_score too)
        if self.sessions:  # where the session is now (its next problem, once one ends)
            state.position, state.scenario_id = episode.position, self._scenario_id()
        observation = result.observation or ""
        if result.done:
            messages: list[dict[str, str]] = []
        elif "messages" in info:  # a session's next problem, or its notes prompt: a new chat
            messages = _chat(info["messages"])
        else:
            messages = _chat(added_after_turn(episode.messages))
        return PrefDiscoObservation(
            text=observation,
            messages=messages,
            scenario_id=scenario,
            trial=state.trial,
            kind=info.get("kind"),
            masked=masked,
            info=info,
            done=result.done,
            reward=reward,
            **self._offered(),
            **({**self._where(), "position": info.get("position"), "next": info.get("next")} if self.sessions else {}),
        )

    def _choose(self, item_id: str | None) -> Any:
        if item_id is None:
            pool = self.roster.pool
            return pool[int(self._rng.integers(len(pool)))]
        item = self.roster.find(item_id)
        if item is None:
            raise UserError(f"reset {self.unit.key}: no {self.unit.noun} {item_id!r} in this environment")
        return item

    # -- the sync API (OpenEnv's abstract methods; a private event loop) ------------------------------------

    def _run(self, coroutine: Any) -> Any:
        if self._runner is None:
            self._runner = LoopRunner()
        return self._runner.run(coroutine)

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        scenario_id: str | None = None,
        session_id: str | None = None,
        **kwargs: Any,
    ) -> PrefDiscoObservation:
        return self._run(
            self.reset_async(seed=seed, episode_id=episode_id, scenario_id=scenario_id, session_id=session_id, **kwargs)
        )

    def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> PrefDiscoObservation:
        return self._run(self.step_async(action, timeout_s=timeout_s, **kwargs))

    @property
    def state(self) -> PrefDiscoState:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        from prefdisco.version import __version__

        return EnvironmentMetadata(
            name="PrefDisco",
            description=(
                "Preference discovery: ask the simulated person questions (QUESTION: ...), then answer the problem "
                "for them (ANSWER: ...); the reward is PrefDisco's (the judge's PrefAlign and correctness)."
            ),
            version=__version__,
        )

    def close(self) -> None:
        self._episode = None
        if self._runner is not None:
            self._runner.close()
            self._runner = None


def make_app(
    scenarios: ScenarioSource | None = None,
    user_model: Any = None,
    judge_model: Any = None,
    *,
    sessions: SessionSource | None = None,
    arm: str | None = None,
    train_fraction: float | None = None,
    split_seed: int = 0,
    split: str | None = None,
    masked_reward: float = 0.0,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    **episode_options: Any,
) -> FastAPI:
    """The OpenEnv server's app (reset / step / state over HTTP and the WebSocket ``/ws``, ``/schema``,
    ``/health``): every session a ``PrefDiscoOpenEnv`` over one roster. The options are the gymnasium
    environment's (``PrefDisco-v0``; with ``sessions`` and ``arm``, ``PrefDiscoSession-v0``'s: an episode is a
    session); bad options fail here, before anything is served."""
    masked = finite_reward(masked_reward)
    if isinstance(max_sessions, bool) or not isinstance(max_sessions, int) or max_sessions < 1:
        raise UserError(f"max_sessions: expected a number of sessions, 1 or more, got {max_sessions!r}")
    roster = hub_roster(
        "OpenEnv", hub_unit(scenarios, sessions, arm), user_model, judge_model, episode_options,
        train_fraction=train_fraction, split_seed=split_seed, split=split, channels=("text", "tools"),
    )  # fmt: skip

    def factory() -> PrefDiscoOpenEnv:
        return PrefDiscoOpenEnv(roster, masked)

    app: FastAPI = create_fastapi_app(factory, PrefDiscoAction, PrefDiscoObservation, max_concurrent_envs=max_sessions)
    app.add_middleware(LeftClients)  # a client gone mid-step: one line, not tracebacks (env/disconnects.py)
    return app


def serve(app: FastAPI, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve ``app`` with uvicorn until interrupted."""
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level="warning")


class PrefDiscoEnvClient(EnvClient):
    """OpenEnv's ``EnvClient`` for a PrefDisco server (async, as openenv-core 0.3's clients are): ``async with
    PrefDiscoEnvClient(base_url=URL) as env: await env.reset(scenario_id=...)``, ``await env.step(PrefDiscoAction(
    text=...))``, ``await env.state()``; ``with PrefDiscoEnvClient(base_url=URL).sync() as env:`` the same, sync."""

    def _step_payload(self, action: PrefDiscoAction) -> dict[str, Any]:
        payload: dict[str, Any] = {"text": action.text}
        if action.tool_calls:
            payload["tool_calls"] = [call.model_dump() for call in action.tool_calls]
        return payload

    def _parse_result(self, payload: dict[str, Any]) -> OpenEnvStepResult[PrefDiscoObservation]:
        observation = PrefDiscoObservation(
            **payload.get("observation", {}), done=payload.get("done", False), reward=payload.get("reward")
        )
        return OpenEnvStepResult(observation=observation, reward=payload.get("reward"), done=payload.get("done", False))

    def _parse_state(self, payload: dict[str, Any]) -> PrefDiscoState:
        return PrefDiscoState.model_validate(payload)
