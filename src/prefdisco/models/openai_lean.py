"""A lean OpenAI-compatible chat-completions provider for inspect: one aiohttp POST per call, no SDK.

Use it as ``--model openai-lean/<service>/<model>`` with the same environment variables as inspect's own
``openai-api`` provider: ``<SERVICE>_BASE_URL`` and ``<SERVICE>_API_KEY`` (``-M base_url=...`` also works). The key
travels only in the ``Authorization`` header: it is neither in the logged request nor in any error message.

It exists for CPU: the ``openai`` SDK path costs about 8 ms of CPU per call on top of inspect's own ~7-10 ms, which
caps one process at ~50 calls/s; this provider parses the JSON reply directly into inspect's types.

Scope: text chat only — system/user/assistant messages, ``temperature``, ``max_tokens``, ``top_p``, ``seed``,
``stop_seqs``, penalties, ``logprobs``/``top_logprobs``, ``response_schema`` (sent as ``response_format``
``json_schema``) and ``extra_body`` (merged into the request, e.g. a llama.cpp ``grammar``). Tool definitions are
refused.

It makes exactly one HTTP request per attempt and never retries by itself: inspect retries, using
``should_retry`` — 429 is a rate limit (``Retry-After`` passed on), 408/409/5xx, connection errors, timeouts and
malformed replies are transient, 401 is an authentication failure, any other 4xx fails the call — and waits
``RetryWait`` between attempts (the server's ``Retry-After``, else the ``openai`` SDK's short first waits, then
inspect's own schedule). The request
timeout is ``INSPECT_HTTP_REQUEST_TIMEOUT`` seconds (default 600), like inspect's SDK clients; inspect's own
``attempt_timeout`` applies on top.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
from typing import Any

import aiohttp
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    Logprob,
    Logprobs,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    TopLogprob,
)
from inspect_ai.model._model import RetryDecision
from inspect_ai.model._model_call import ModelCall
from inspect_ai.tool import ToolChoice, ToolInfo
from tenacity import RetryCallState
from tenacity.wait import wait_base

DEFAULT_REQUEST_TIMEOUT = 600.0
RETRYABLE_STATUS = {408, 409, 425, 500, 502, 503, 504, 520, 521, 522, 523, 524, 529}
_STOP_REASONS = {
    "stop": "stop",
    "length": "max_tokens",
    "content_filter": "content_filter",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
}


class RetryWait(wait_base):
    """Backoff between inspect's attempts: the server's ``Retry-After`` when it sent one (at most 60 s); else
    0.5 s then 1 s (what the ``openai`` SDK's own two retries wait), then inspect's schedule (3 s doubling, at
    most 30 min), each with jitter."""

    def __call__(self, retry_state: RetryCallState) -> float:
        n = retry_state.attempt_number
        ex = retry_state.outcome.exception() if retry_state.outcome else None
        retry_after = getattr(ex, "retry_after", None)
        if retry_after is not None:
            return min(float(retry_after), 60.0) + random.uniform(0, 0.1)
        if n <= 2:
            return 0.5 * 2 ** (n - 1) * random.uniform(0.75, 1.0)
        return min(3.0 * 2 ** (n - 3), 1800.0) + random.uniform(0, 3.0)


class LeanAPIError(Exception):
    """An HTTP error status from the server (message from its error body; never the request or the key)."""

    def __init__(self, status: int, message: str, retry_after: float | None = None) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.retry_after = retry_after


class LeanResponseError(Exception):
    """A 200 reply that is not a chat completion (malformed JSON, no choices)."""


def _retry_after(headers: Any) -> float | None:
    for name, scale in (("retry-after-ms", 0.001), ("Retry-After", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        if seconds >= 0:
            return seconds
    return None


def _error_message(body: str) -> str:
    try:
        data = json.loads(body)
    except ValueError:
        return body.strip()[:300] or "(empty body)"
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])[:300]
    if isinstance(error, str):
        return error[:300]
    return body.strip()[:300]


def request_body(model: str, input: list[ChatMessage], config: GenerateConfig) -> dict[str, Any]:
    """The chat-completions request for ``input`` under ``config``."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role if m.role != "tool" else "user", "content": m.text} for m in input],
    }
    optional = {
        "temperature": config.temperature,
        "max_tokens": config.max_tokens,
        "top_p": config.top_p,
        "seed": config.seed,
        "frequency_penalty": config.frequency_penalty,
        "presence_penalty": config.presence_penalty,
        "stop": list(config.stop_seqs) if config.stop_seqs else None,
        "logprobs": config.logprobs,
        "top_logprobs": config.top_logprobs,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    if config.response_schema is not None:
        schema = config.response_schema
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": schema.name,
                "schema": schema.json_schema.model_dump(exclude_none=True, by_alias=True),
                **({"description": schema.description} if schema.description else {}),
                **({"strict": schema.strict} if schema.strict is not None else {}),
            },
        }
    if config.extra_body:
        body.update(config.extra_body)
    return body


def _logprobs(data: Any) -> Logprobs | None:
    if not isinstance(data, dict) or not isinstance(data.get("content"), list):
        return None
    return Logprobs(
        content=[
            Logprob(
                token=str(entry.get("token", "")),
                logprob=float(entry.get("logprob", 0.0)),
                top_logprobs=[
                    TopLogprob(token=str(t.get("token", "")), logprob=float(t.get("logprob", 0.0)))
                    for t in entry.get("top_logprobs") or []
                ],
            )
            for entry in data["content"]
        ]
    )


def output_from_response(data: Any, model_name: str) -> ModelOutput:
    """Turn a chat-completions JSON reply into a ``ModelOutput``; LeanResponseError when it is not one."""
    if not isinstance(data, dict) or not isinstance(data.get("choices"), list) or not data["choices"]:
        raise LeanResponseError(f"not a chat completion: {str(data)[:200]}")
    choices = []
    for choice in sorted(data["choices"], key=lambda c: c.get("index", 0) if isinstance(c, dict) else 0):
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            raise LeanResponseError(f"choice without a message: {str(choice)[:200]}")
        choices.append(
            ChatCompletionChoice(
                message=ChatMessageAssistant(
                    content=message.get("content") or "", model=data.get("model") or model_name, source="generate"
                ),
                stop_reason=_STOP_REASONS.get(str(choice.get("finish_reason")), "unknown"),  # type: ignore[arg-type]
                logprobs=_logprobs(choice.get("logprobs")),
            )
        )
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return ModelOutput(
        model=data.get("model") or model_name,
        choices=choices,
        usage=ModelUsage(
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
            total_tokens=int(usage.get("total_tokens") or 0),
        ),
    )


class OpenAILeanAPI(ModelAPI):
    """inspect provider ``openai-lean/<service>/<model>`` (see the module docstring)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        service, sep, model = model_name.partition("/")
        if not sep or not model:
            raise ValueError(f"openai-lean model names are openai-lean/<service>/<model>, got {model_name!r}")
        if model_args:
            raise ValueError(f"unknown model args for openai-lean/{model_name}: {', '.join(sorted(model_args))}")
        prefix = service.upper().replace("-", "_")
        super().__init__(model_name, base_url, api_key, [f"{prefix}_API_KEY"], config)
        self.service, self.service_model = service, model
        self.api_key = self.api_key or os.environ.get(f"{prefix}_API_KEY")
        if not self.api_key:
            raise ValueError(f"openai-lean/{model_name}: set {prefix}_API_KEY in the environment")
        self.base_url = (self.base_url or os.environ.get(f"{prefix}_BASE_URL") or "").rstrip("/")
        if not self.base_url:
            raise ValueError(f"openai-lean/{model_name}: set {prefix}_BASE_URL (or -M base_url=...)")
        self.url = f"{self.base_url}/chat/completions"
        timeout = float(os.environ.get("INSPECT_HTTP_REQUEST_TIMEOUT") or DEFAULT_REQUEST_TIMEOUT)
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        self._sessions: dict[asyncio.AbstractEventLoop, aiohttp.ClientSession] = {}
        self._closing: set[asyncio.Task[None]] = set()

    def connection_key(self) -> str:
        return f"{self.base_url}|{self.service_model}"

    def should_retry(self, ex: Exception) -> bool | RetryDecision:
        if isinstance(ex, LeanAPIError):
            if ex.status == 429:
                return RetryDecision.rate_limit(retry_after=ex.retry_after)
            if ex.status in RETRYABLE_STATUS or ex.status >= 500:
                return RetryDecision.transient(retry_after=ex.retry_after)
            return RetryDecision.no()
        if isinstance(ex, aiohttp.ClientError | asyncio.TimeoutError | LeanResponseError | ConnectionError):
            return RetryDecision.transient()
        return RetryDecision.no()

    def retry_wait(self) -> wait_base:
        return RetryWait()

    def is_auth_failure(self, ex: Exception) -> bool:
        return isinstance(ex, LeanAPIError) and ex.status == 401

    def _session(self) -> aiohttp.ClientSession:
        """One session per event loop (a memoized model may outlive the loop of an earlier eval)."""
        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None or session.closed:
            for old_loop in [lp for lp in self._sessions if lp.is_closed()]:
                self._retire(self._sessions.pop(old_loop))
            connector = aiohttp.TCPConnector(limit=0, ttl_dns_cache=300)
            session = aiohttp.ClientSession(connector=connector, timeout=self.timeout)
            self._sessions[loop] = session
        return session

    def _retire(self, session: aiohttp.ClientSession) -> None:
        """Close a session whose event loop has ended (an earlier eval of this process): detach it and close its
        connector from the running loop. Its sockets died with their loop; this only keeps aiohttp from logging
        "Unclosed client session" into the next eval's transcripts."""
        connector = session.connector
        session.detach()
        if connector is None:
            return

        async def close() -> None:
            with contextlib.suppress(Exception):
                await connector.close()

        task = asyncio.get_running_loop().create_task(close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        session = self._sessions.pop(loop, None)
        if session is not None and not session.closed:
            await session.close()

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> tuple[ModelOutput, ModelCall]:
        if tools:
            raise ValueError("openai-lean does not support tools")
        body = request_body(self.service_model, input, config)
        headers = {"Authorization": f"Bearer {self.api_key}", "Content-Type": "application/json"}
        async with self._session().post(self.url, data=json.dumps(body), headers=headers) as response:
            text = await response.text()
            if response.status >= 400:
                raise LeanAPIError(response.status, _error_message(text), _retry_after(response.headers))
        try:
            data = json.loads(text)
        except ValueError as e:
            raise LeanResponseError(f"malformed JSON reply ({e.msg})") from e
        return output_from_response(data, self.model_name), ModelCall.create(body, data)
