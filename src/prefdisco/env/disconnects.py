"""A WebSocket client that leaves mid-step is no server error.

OpenEnv's WebSocket endpoint answers each message after the environment's step; when the client has closed the
connection meanwhile (a trainer killed, a notebook cell interrupted), the answer cannot be sent, the endpoint tries
to send an error about that, fails again, and uvicorn logs the chain as "Exception in ASGI application" — several
tracebacks for an ordinary event. ``LeftClients`` (ASGI middleware on the OpenEnv app) ends such a connection with
one log line instead; the session's environment is already released by the endpoint's own ``finally``. Any other
exception passes through unchanged.

A client that ends its session in order (OpenEnv's ``close`` message, or closing the socket between steps) is no
event at all: openenv-core 0.3's endpoint then closes the socket a second time, which raises the same "gone"
exception; such a connection ends silently. Which one it was is told by what the client asked and was not yet
answered: a request (reset, step, state) received and no answer sent when the socket went is a client that left
mid-step. (Whether the endpoint had read the socket's end cannot tell them apart: 0.3 reads the next message while
a step runs, so it reads the end of a client that left mid-step too.)
"""

from __future__ import annotations

import json
import logging
from typing import Any

logger = logging.getLogger("prefdisco.env")

GONE = {"WebSocketDisconnect", "WebSocketDisconnected", "ClientDisconnected", "ConnectionClosed",
        "ConnectionClosedError", "ConnectionClosedOK"}  # fmt: skip
"""The exception types (starlette, uvicorn, websockets) that say the client is gone."""


def client_gone(error: BaseException | None) -> bool:
    """Whether ``error``, or an exception it was raised from or while handling, says the client closed the socket."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if type(error).__name__ in GONE:
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


def is_request(message: dict[str, Any]) -> bool:
    """Whether a message the endpoint received asks for an answer: any client message but OpenEnv's
    ``{"type": "close"}`` (and the socket's own end)."""
    text = message.get("text")
    if message.get("type") != "websocket.receive" or not isinstance(text, str):
        return False
    try:
        return bool(json.loads(text).get("type") != "close")
    except (ValueError, AttributeError):
        return True  # the endpoint answers a message it cannot read with an error


class LeftClients:
    """ASGI middleware: a WebSocket connection whose client left mid-step ends with one log line (module docstring)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "websocket":
            await self.app(scope, receive, send)
            return
        unanswered = 0

        async def watched() -> dict[str, Any]:
            nonlocal unanswered
            message: dict[str, Any] = await receive()
            unanswered += is_request(message)
            return message

        async def answered(message: dict[str, Any]) -> None:
            nonlocal unanswered
            await send(message)
            if message.get("type") == "websocket.send":
                unanswered = max(0, unanswered - 1)

        try:
            await self.app(scope, watched, answered)
        except Exception as error:
            if not client_gone(error):
                raise
            if not unanswered:  # gone between steps: an ordered end, or closing a closed socket (openenv-core 0.3)
                return
            logger.warning("a client left its WebSocket session mid-step; its episode is dropped")
