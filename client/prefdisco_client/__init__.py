"""A thin client of PrefDisco's environment server (``prefdisco env serve``): one episode over OpenEnv's WebSocket
session, from a process that has neither PrefDisco, inspect nor a provider SDK installed.

The server (``prefdisco.env.openenv``) runs PrefDisco's one episode (``prefdisco.env.episode``): the simulated user
and the judge live in its process, the trainer's process sends the policy's turns and reads back the observations
and the reward. The client speaks OpenEnv's session protocol (a JSON message per request on ``/ws``: ``reset``,
``step``, ``state``, ``close``) with the ``websockets`` library, so the trainer's environment needs nothing else::

    async with PrefDiscoClient("http://127.0.0.1:8000") as env:
        first = await env.reset(scenario_id="...")     # first.messages: the system prompt and the problem
        step = await env.step("QUESTION: ...")          # step.text: the simulated user's reply
        step = await env.step("ANSWER: ...")            # step.done, step.reward: the episode's reward

A step's fields are the server's observation (``PrefDiscoObservation``): ``text``, ``messages`` (the chat messages
the text is made of, each with its role: ``system`` and ``user`` after reset, then ``user``, or ``tool`` under the
tool protocol), ``reward``, ``done``, ``kind``, ``masked``, ``scenario_id``, ``trial``, ``info``, ``tools`` and
``tool_choice``. A server's error (a turn after the end, an unknown scenario) raises ``ServerError`` with its
message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

__all__ = ["PrefDiscoClient", "ServerError", "Step"]

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""The largest message read from the server (a step's ``info`` carries the judge's findings)."""


class ServerError(RuntimeError):
    """The server refused a request (its message and code)."""


@dataclass(frozen=True)
class Step:
    """One observation of the server: after ``reset`` the opening, after ``step`` what answers the turn."""

    text: str
    messages: list[dict[str, Any]]
    reward: float | None
    done: bool
    kind: str | None = None
    masked: bool = False
    scenario_id: str = ""
    trial: int = 0
    info: dict[str, Any] = field(default_factory=dict)
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    """The observation's other fields (a session's ``session_id``, ``position``, ``arm``, ``next``)."""

    @classmethod
    def of(cls, payload: dict[str, Any]) -> Step:
        """A step from the server's ``data`` (``{"observation": {...}, "reward": ..., "done": ...}``)."""
        observation = dict(payload.get("observation") or {})
        known = {name: observation.pop(name) for name in list(observation) if name in _OBSERVATION_FIELDS}
        reward = payload.get("reward")
        return cls(
            reward=None if reward is None else float(reward),
            done=bool(payload.get("done", False)),
            text=str(known.pop("text", "")),
            messages=list(known.pop("messages", [])),
            **known,
            extra=observation,
        )


_OBSERVATION_FIELDS = ("text", "messages", "kind", "masked", "scenario_id", "trial", "info", "tools", "tool_choice")


def ws_url(base_url: str) -> str:
    """The session endpoint of a server's base URL (``http://host:port`` -> ``ws://host:port/ws``)."""
    url = base_url.rstrip("/")
    for plain, secure in (("http://", "ws://"), ("https://", "wss://")):
        if url.startswith(plain):
            url = secure + url[len(plain) :]
    if not url.startswith(("ws://", "wss://")):
        raise ValueError(f"base_url: expected http(s)://HOST:PORT of a prefdisco env serve, got {base_url!r}")
    return url if url.endswith("/ws") else f"{url}/ws"


class PrefDiscoClient:
    """One WebSocket session of a PrefDisco server: a dialogue at a time (``reset``, then ``step`` until ``done``)."""

    def __init__(self, base_url: str, *, open_timeout: float = 30.0) -> None:
        self.url = ws_url(base_url)
        self.open_timeout = open_timeout
        self._ws: ClientConnection | None = None

    async def __aenter__(self) -> PrefDiscoClient:
        self._ws = await connect(self.url, open_timeout=self.open_timeout, max_size=MAX_MESSAGE_BYTES)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """End the session (the server drops its episode) and the connection."""
        if self._ws is None:
            return
        ws, self._ws = self._ws, None
        try:
            await ws.send(json.dumps({"type": "close"}))
        finally:
            await ws.close()

    async def _ask(self, message: dict[str, Any]) -> dict[str, Any]:
        if self._ws is None:
            raise RuntimeError("the client is not connected: use `async with PrefDiscoClient(url) as env:`")
        await self._ws.send(json.dumps(message))
        answer = json.loads(await self._ws.recv())
        if answer.get("type") == "error":
            data = answer.get("data") or {}
            raise ServerError(f"{data.get('message', 'the server refused the request')} ({data.get('code', '?')})")
        return dict(answer.get("data") or {})

    async def reset(
        self, scenario_id: str | None = None, *, seed: int | None = None, session_id: str | None = None
    ) -> Step:
        """Start an episode: the scenario named (or one drawn with the session's generator, ``seed`` reseeding
        it); with a session server, the session named. Its opening."""
        data = {
            key: value
            for key, value in (("scenario_id", scenario_id), ("seed", seed), ("session_id", session_id))
            if value is not None
        }
        return Step.of(await self._ask({"type": "reset", "data": data}))

    async def step(self, text: str, tool_calls: list[dict[str, Any]] | None = None) -> Step:
        """Play one policy turn: its visible text (``QUESTION: ...`` / ``ANSWER: ...``) and, under the tool
        protocol, its calls (``{"id", "name": "ask_user", "arguments": {"question": ...}}``)."""
        action: dict[str, Any] = {"text": text}
        if tool_calls:
            action["tool_calls"] = tool_calls
        return Step.of(await self._ask({"type": "step", "data": action}))

    async def state(self) -> dict[str, Any]:
        """The session's state (``episode_id``, ``scenario_id``, ``trial``, ``n_questions``, ``reward``, ...)."""
        return await self._ask({"type": "state"})
