"""A WebSocket client that leaves mid-step is no server error.

OpenEnv's WebSocket endpoint answers each message after the environment's step; when the client has closed the
connection meanwhile (a trainer killed, a notebook cell interrupted), the answer cannot be sent, the endpoint tries
to send an error about that, fails again, and uvicorn logs the chain as "Exception in ASGI application" — several
tracebacks for an ordinary event. ``LeftClients`` (ASGI middleware on the OpenEnv app) ends such a connection with
one log line instead; the session's environment is already released by the endpoint's own ``finally``. Any other
exception passes through unchanged.

A client that ends its session in order (OpenEnv's ``close`` message, or closing the socket between steps) is no
event at all: openenv-core 0.3's endpoint then closes the socket a second time, which raises the same "gone"
exception after the endpoint has already read the end; such a connection ends silently.
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


def ends_session(message: dict[str, Any]) -> bool:
    """Whether a message the endpoint received ends the session in order: the socket closed, or OpenEnv's
    ``{"type": "close"}``."""
    if message.get("type") == "websocket.disconnect":
        return True
    text = message.get("text")
    if message.get("type") != "websocket.receive" or not isinstance(text, str) or '"close"' not in text:
        return False
    try:
        return bool(json.loads(text).get("type") == "close")
    except (ValueError, AttributeError):
        return False


class LeftClients:
    """ASGI middleware: a WebSocket connection whose client left mid-step ends with one log line (module docstring)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "websocket":
            await self.app(scope, receive, send)
            return
        ended = False

        async def watched() -> dict[str, Any]:
            nonlocal ended
            message: dict[str, Any] = await receive()
            ended = ended or ends_session(message)
            return message

        try:
            await self.app(scope, watched, send)
        except Exception as error:
            if not client_gone(error):
                raise
            if ended:  # the endpoint had read the end: closing a closed socket (openenv-core 0.3)
                return
            logger.warning("a client left its WebSocket session mid-step; its episode is dropped")
