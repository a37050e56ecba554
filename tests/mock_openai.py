"""A fault-injecting OpenAI-compatible chat-completions server for reliability tests and benchmarks.

Start it on a free local port (127.0.0.1 only) in a background thread with its own event loop::

    with MockOpenAI(MockConfig(rate_429=0.1)) as mock:
        os.environ.update(mock.env("mock"))          # MOCK_BASE_URL, MOCK_API_KEY
        ... run inspect with model "openai-api/mock/m" ...
        mock.stats()["completions"]

or as its own process (benchmarks measure the client's CPU without the server in it)::

    python tests/mock_openai.py --latency-s 1.0 [--questions 5] ...   # prints "port N", serves until stdin closes

Replies are role-aware and deterministic per request content, so a PrefDisco dialogue runs end to end:

* judge (a message contains ``Reply with JSON only: {"score"``) → ``{"score": N}``, N from a hash of the prompt;
  the structured judge (``{"c1": N, ...}``, with ``"reasoning": N`` … when it also asks the quality) gets one such
  score per key;
* user audit (``Reply with JSON only, one entry per turn key`` — the schema-constrained audit, answered like any
  schema request below — or the older ``Reply with JSON only: {"turns"``, answered one ``{"asked": [],
  "revealed": []}`` per turn), counted as role ``audit``;
* quality judge (``Reply with JSON only: {"reasoning"``) → ``{"reasoning": N, "completeness": N, "facts": N}``, each
  N from a hash of the prompt, counted as role ``quality`` (attributed to the response's mode and case);
* SimpleQA grader (asks for CORRECT / INCORRECT / NOT_ATTEMPTED) → ``{"grade": "CORRECT"}``;
* simulated user (system says ``You are role-playing a real person``) → a short first-person reply;
* discovery / fixed-K assistant (system contains ``QUESTION:``) → ``QUESTION: ...?`` while the request holds at
  most ``questions`` user turns, then ``ANSWER: ...``;
* the same under the tool protocol (system mentions the ``ask_user tool`` and the request offers a tool of that
  name) → a call ``ask_user(question=...)`` while fewer than ``questions`` were asked (tool results and user
  turns after the first), then the answer without a marker (also when no tool is offered any more);
* anything else → an answer ending with ``The answer is B`` (or, when the request carries a JSON schema in
  ``response_format``, a deterministic instance of that schema).

Assistant answers carry ``[mode:baseline|oracle|discovery]`` so every later call (the judge's) can be attributed
to a condition, and a ``[case ID]`` tag anywhere in a request attributes the call to a scenario (``by_case``; the
simulated user repeats the tag so the audit is attributed too). ``judged`` records each per-criterion judge reply
by (case, mode, attribute): None for a garbage one.

Faults, drawn per request from a seeded RNG (so a retried request can succeed): HTTP 429 and HTTP 500 with
``Retry-After`` (``retry_after_s``), a timeout (the request is held ``hang_s`` seconds, then the connection closed), a
dropped connection, a malformed 200 body, an empty completion and a prose (non-JSON) completion (``rate_garbage``).
``judge_garbage_rate`` makes judge replies unparseable, deterministically per prompt (a retried judge prompt stays
garbage, so the judgement ends invalid), and only when configured. ``api_key`` set → any other key is answered 401
(message masked like OpenAI's, or the full key echoed with ``echo_key_in_401``). ``reject_case`` answers
``reject_status`` (400) to every request of one ``[case ID]`` tag (a 429 or 5xx one with the faults' ``Retry-After``).
``endings`` makes every assistant turn of a case end as a refusal, a content filter, an empty completion or a cut at
the token limit (``ENDINGS``).

``MockOpenAI(structured=fn)`` lets a test fill JSON-schema requests itself: ``fn(messages, schema, h)`` returns
the reply (a string, or a value sent as JSON), or None for the default ``from_schema`` instance (``h``: the
request's deterministic hash).

``MockOpenAI(scores=fn)`` plants models that differ: every assistant answer then carries ``[model:NAME]`` (the
request's ``model``, e.g. ``good12345`` for ``openai-api/mock/good12345``), and each per-criterion judge reply
(``{"score": N}``) is ``fn(model, mode, h)`` for the model and condition tagged in the judged response (``h``: the
request's deterministic hash with the tag left out, so two models under one rule score alike), or the default
hashed score when ``fn`` returns None. Without ``scores`` nothing changes (no tag, hashed scores), so other tests'
numbers stay as they were.

Concurrency: ``max_in_flight`` counts every request at once; ``max_in_flight_of({"user"})`` (any set of the
classified roles, e.g. ``{"judge", "audit", "grader"}``) the most requests of those roles answered at once, from
classification to response (``latency_s`` delays each response, so calls overlap).

The same server speaks Anthropic's Messages API (``POST /v1/messages``; point inspect's ``anthropic/…`` provider at
it with ``ANTHROPIC_BASE_URL``) and OpenAI's Responses API (``POST /v1/responses``; inspect's ``openai/…`` provider,
which uses it for o-series and gpt-5, with ``OPENAI_BASE_URL``), as JSON or server-sent events (``tests/mock_wire.py``):
the same replies and counts, and each request's settings (everything but the messages, system, input and tools) kept
in ``wire`` with its role, so a test sees what a provider client really sent (inspect's Anthropic client sends no
temperature). ``thinking`` makes every assistant answer carry that reasoning text, in each format's own reasoning
part; a user's or judge's request that contains it is counted as ``reasoning_leaks``. Anthropic's Message Batches
API too (``POST /v1/messages/batches``, its batch and results; ``tests/mock_batch.py``): each request of a batch is
answered as it would be alone, counted in ``by_role_batched`` / ``by_case_role_batched`` beside every count above,
the batch ended at once (``batch_sizes``).

Control endpoints: ``GET /_mock/stats``, ``POST /_mock/reset``, ``POST /_mock/config`` (JSON of MockConfig
fields).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import itertools
import json
import random
import re
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, fields
from typing import Any

from aiohttp import web

from mock_batch import batch_info, batch_result, results_jsonl
from mock_wire import (
    BUDGET_THOUGHT,
    REFUSAL,
    Reply,
    anthropic_body,
    anthropic_events,
    anthropic_messages,
    anthropic_schema,
    gemini_body,
    gemini_events,
    gemini_messages,
    gemini_tools,
    responses_body,
    responses_events,
    responses_messages,
    responses_schema,
    sse,
    tool_names,
)

JUDGE_MARK = 'Reply with JSON only: {"score"'
STRUCTURED_JUDGE_MARK = 'Reply with JSON only: {"c1"'
AUDIT_MARK = 'Reply with JSON only: {"turns"'
QUALITY_MARK = 'Reply with JSON only: {"reasoning"'
AUDIT_SCHEMA_MARK = "Reply with JSON only, one entry per turn key"
USER_MARK = "You are role-playing a real person"
MAPPER_MARK = 'Reply with JSON only: {"about"'
PROTOCOL_MARK = "QUESTION:"
TOOLS_MARK = "ask_user tool"
TOOL_NAME = "ask_user"
CASE_TAG = re.compile(r"\[case ([A-Za-z0-9_.-]+)\]")
MODE_TAG = re.compile(r"\[mode:([a-z_0-9]+)\]")
MODEL_TAG = re.compile(r"\[model:([A-Za-z0-9_.-]+)\]")
GARBAGE_JUDGE = "Hard to say; the response is fine in places and weak in others."
GARBAGE_REPLY = "Sorry, I got distracted there. Could you repeat the question?"
ENDINGS = ("refusal", "filter", "empty", "length", "thinking")
"""How an assistant turn may end (``MockConfig.endings``): ``refusal`` — ``message.refusal`` set, no content;
``filter`` — ``finish_reason: "content_filter"``, no content; ``empty`` — an empty completion; ``length`` — the usual
answer with ``finish_reason: "length"`` (cut at the token limit); ``thinking`` — a reasoning model that spent its
whole budget thinking: its thinking and no answer, cut at the limit."""


@dataclass
class MockConfig:
    latency_s: float = 0.0
    latency_jitter_s: float = 0.0
    rate_429: float = 0.0
    retry_after_s: float = 1.0
    rate_500: float = 0.0
    rate_timeout: float = 0.0
    hang_s: float = 30.0
    rate_drop: float = 0.0
    rate_malformed: float = 0.0
    rate_empty: float = 0.0
    rate_garbage: float = 0.0
    judge_garbage_rate: float = 0.0
    questions: int = 2
    seed: int = 0
    api_key: str | None = None
    echo_key_in_401: bool = False
    reject_case: str | None = None
    reject_status: int = 400
    reject_role: str | None = None
    """Reject every request of this classified role (``judge``, ``user``, …; with ``reject_case``, of that case
    only) with ``reject_status``, in every wire format: a sample that fails after its earlier calls were answered."""
    endings: dict[str, str] | None = None
    """``[case ID]`` → how every assistant turn of that case ends (``ENDINGS``), as each wire format says it."""
    usage: dict[str, int] | None = None
    """Every Anthropic and Responses call's tokens, planted (``mock_wire.py``): ``input`` (of which ``cached``),
    ``output`` (of which ``reasoning``)."""
    thinking: str | None = None
    """A reasoning model's thinking, carried by every assistant answer (chat completions: ``reasoning_content``, as
    vLLM and DeepSeek send it; Anthropic: a ``thinking`` block; Responses: a ``reasoning`` item)."""

    def update(self, changes: dict[str, Any]) -> None:
        names = {f.name for f in fields(self)}
        unknown = sorted(set(changes) - names)
        if unknown:
            raise ValueError(f"unknown mock settings: {', '.join(unknown)}")
        for key, value in changes.items():
            setattr(self, key, value)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _judge_prompt(messages: list[dict[str, Any]]) -> str:
    """The first user message: the judge prompt, the same on every re-ask of it."""
    return next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")


def _digest(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x00".join(parts).encode()).digest()[:8], "big")


@dataclass(frozen=True)
class Classified:
    role: str  # judge | quality | audit | grader | mapper | user | assistant
    mode: str | None  # baseline | oracle | discovery | fixed_k (assistant and judge calls)
    case: str | None


def classify(messages: list[dict[str, Any]]) -> Classified:
    system = "\n".join(_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
    everything = "\n".join(_text(m.get("content")) for m in messages)
    case = CASE_TAG.search(everything)
    case_id = case.group(1) if case else None
    mode = MODE_TAG.search(everything)
    if JUDGE_MARK in everything or STRUCTURED_JUDGE_MARK in everything:
        return Classified("judge", mode.group(1) if mode else None, case_id)
    if QUALITY_MARK in everything:
        return Classified("quality", mode.group(1) if mode else None, case_id)
    if AUDIT_MARK in everything or AUDIT_SCHEMA_MARK in everything:
        return Classified("audit", "discovery", case_id)
    if "NOT_ATTEMPTED" in everything and "CORRECT" in everything:
        return Classified("grader", mode.group(1) if mode else None, case_id)
    if MAPPER_MARK in everything:  # the targeted user's mapping of a question (on the judge's model)
        return Classified("mapper", "discovery", case_id)
    if USER_MARK in system:
        return Classified("user", "discovery", case_id)
    if not system and _text(messages[0].get("content")).startswith(USER_MARK):  # the person's pushback challenge
        return Classified("user", None, case_id)
    if PROTOCOL_MARK in system or TOOLS_MARK in system:
        return Classified("assistant", "fixed_k" if "exactly" in system else "discovery", case_id)
    return Classified("assistant", "oracle" if system else "baseline", case_id)


def from_schema(schema: dict[str, Any], h: int) -> Any:
    """A deterministic instance of a JSON schema (objects, arrays, enums, scalars)."""
    if schema.get("enum"):
        return schema["enum"][h % len(schema["enum"])]
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        keys = schema.get("required", list(props))
        return {k: from_schema(props.get(k, {}), h // (i + 7) + i) for i, k in enumerate(keys)}
    if kind == "array":
        n = max(int(schema.get("minItems", 0)), 0)
        return [from_schema(schema.get("items", {}), h + i) for i in range(n)]
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 1.0))
    if kind == "boolean":
        return bool(h % 2)
    return "mock"


Structured = Callable[[list[dict[str, Any]], dict[str, Any], int], Any]
"""A test's own filler for JSON-schema requests: ``(messages, schema, h) -> reply | None``."""
Scores = Callable[[str, str | None, int], int | None]
"""A test's planted judge scores: ``(model, mode, h) -> score | None`` (None: the default hashed score); ``h`` is the
request's hash without the ``[model:…]`` tag, so it depends on the transcript, never on the model's name."""


def reply_for(
    messages: list[dict[str, Any]],
    who: Classified,
    config: MockConfig,
    schema: Any = None,
    structured: Structured | None = None,
    scores: Scores | None = None,
    model: str = "mock",
) -> str:
    """The deterministic reply to one request (``schema``: the request's JSON schema, if any; ``structured``: a
    filler for schema requests that may answer instead of ``from_schema``; ``scores``: planted judge scores, and
    ``model`` the request's model, tagged into assistant answers when ``scores`` is given)."""
    everything = "\n".join(_text(m.get("content")) for m in messages)
    h = _digest(str(config.seed), everything)
    if who.role == "judge" and scores is not None and JUDGE_MARK in everything:
        judged = MODEL_TAG.search(everything)
        # hashed without the model's tag: two models given the same rule score the same, whatever their names
        untagged = _digest(str(config.seed), MODEL_TAG.sub("", everything))
        planted = scores(judged.group(1), who.mode, untagged) if judged else None
        if planted is not None:
            return json.dumps({"score": int(planted)})
    if who.role == "judge":
        # garbage is decided by the judge prompt alone, so the judge's re-asks (the prompt, the bad reply and why)
        # stay garbage and the judgement ends invalid
        hp = _digest(str(config.seed), _judge_prompt(messages))
        if config.judge_garbage_rate > 0 and (hp % 10_000) / 10_000 < config.judge_garbage_rate:
            return GARBAGE_JUDGE
        if STRUCTURED_JUDGE_MARK in everything:
            # the rubric's keys c1..cM, then the general quality's when the call also asks it
            keys = re.findall(r'"(\w+)": N', everything.split(STRUCTURED_JUDGE_MARK[:-4], 1)[-1])
            return json.dumps({k: 1 + (h >> (3 * i)) % 5 for i, k in enumerate(keys)})
        return json.dumps({"score": 1 + (h >> 16) % 5})
    if who.role == "quality":  # one level per key the prompt asks for
        keys = re.findall(r'"(\w+)": N', everything.split(QUALITY_MARK[:-11], 1)[-1])
        return json.dumps({k: 1 + (h >> (3 * i)) % 5 for i, k in enumerate(keys)})
    if who.role == "audit" and not isinstance(schema, dict):  # a schema audit: the schema branch below
        n = len(re.findall(r"^Turn \d+$", everything, flags=re.MULTILINE))
        return json.dumps({"turns": [{"asked": [], "revealed": []} for _ in range(n)]})
    if who.role == "grader":
        return json.dumps({"grade": "CORRECT"})
    if who.role == "user":
        tag = f" [case {who.case}]" if who.case else ""
        return f"I like short, concrete explanations with one worked example, please.{tag}"
    if isinstance(schema, dict):
        value = structured(messages, schema, h) if structured is not None else None
        if value is None:
            value = from_schema(schema, h)
        return value if isinstance(value, str) else json.dumps(value)
    tag = f" [model:{model}]" if scores is not None else ""
    answer = f"[mode:{who.mode}]{tag} Here is a worked explanation written for you, step by step. The answer is B"
    if who.mode in ("discovery", "fixed_k"):
        if TOOLS_MARK in _system(messages):
            return answer  # the tool protocol: questions are tool calls (``tool_call_for``)
        asked = sum(1 for m in messages if m.get("role") == "user") - 1
        if asked < config.questions:
            return f"QUESTION: How much detail would you like in my explanation (question {asked + 1})?"
        return "ANSWER: " + answer
    return answer


def _system(messages: list[dict[str, Any]]) -> str:
    return "\n".join(_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))


def tool_call_for(
    messages: list[dict[str, Any]], who: Classified, config: MockConfig, tools: Any
) -> dict[str, Any] | None:
    """The ``ask_user`` call a tool-protocol assistant turn makes, or None (the turn is the answer)."""
    offered = [t.get("function", {}).get("name") for t in tools or [] if isinstance(t, dict)]
    if who.mode not in ("discovery", "fixed_k") or TOOL_NAME not in offered or TOOLS_MARK not in _system(messages):
        return None
    asked = sum(1 for m in messages if m.get("role") == "tool") + sum(1 for m in messages if m.get("role") == "user")
    if asked - 1 >= config.questions:
        return None
    question = f"How much detail would you like in my explanation (question {asked})?"
    return {"name": TOOL_NAME, "arguments": {"question": question}}


def completion_body(
    model: str,
    text: str,
    prompt_chars: int,
    n: int,
    tool_call: dict[str, Any] | None = None,
    ending: str | None = None,
    thinking: str | None = None,
) -> dict[str, Any]:
    """A chat completion answering ``text`` (or calling ``tool_call``), ended as ``ending`` says (``ENDINGS``)."""
    prompt_tokens, completion_tokens = prompt_chars // 4 + 1, len(text) // 4 + 1
    message: dict[str, Any] = {"role": "assistant", "content": text}
    finish = "stop"
    if ending == "refusal":
        message = {"role": "assistant", "content": None, "refusal": REFUSAL}
    elif ending == "filter":
        message, finish = {"role": "assistant", "content": None}, "content_filter"
    elif ending == "empty":
        message = {"role": "assistant", "content": ""}
    elif ending == "length":
        finish = "length"
    elif ending == "thinking":  # the whole budget spent thinking: no content, cut at the limit
        message, finish, thinking = {"role": "assistant", "content": ""}, "length", thinking or BUDGET_THOUGHT
    if tool_call is not None:
        arguments = json.dumps(tool_call["arguments"])
        function = {"name": tool_call["name"], "arguments": arguments}
        call = {"id": f"call_mock_{n}", "type": "function", "function": function}
        message = {"role": "assistant", "content": "", "tool_calls": [call]}
    if thinking is not None:
        message["reasoning_content"] = thinking  # as vLLM and DeepSeek send a reasoning model's thinking
    return {
        "id": f"chatcmpl-mock-{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish if tool_call is None else "tool_calls",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class MockOpenAI:
    """The server; ``start()`` binds 127.0.0.1 on a free port and serves from a daemon thread."""

    def __init__(
        self,
        config: MockConfig | None = None,
        *,
        structured: Structured | None = None,
        scores: Scores | None = None,
        **settings: Any,
    ) -> None:
        self.config = config or MockConfig()
        self.config.update(settings)
        self.structured = structured
        self.scores = scores
        self.port = 0
        self._rng = random.Random(self.config.seed)
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._stopping: asyncio.Event | None = None
        self.reset()

    # --- bookkeeping -------------------------------------------------------------------------------------

    def reset(self) -> None:
        with self._lock:
            self.counts: Counter[str] = Counter()
            self.by_role: Counter[str] = Counter()
            self.by_model: Counter[str] = Counter()  # the request's model name → completions
            self.by_case: Counter[tuple[str, str]] = Counter()  # (case, mode) → completions
            self.by_case_role: Counter[tuple[str, str, str]] = Counter()  # (case, mode, role) → completions
            self.by_role_batched: Counter[str] = Counter()  # the completions that came in a batch, by role
            self.by_case_role_batched: Counter[tuple[str, str, str]] = Counter()
            self.batches: dict[str, list[dict[str, Any]]] = {}  # batch id → its results, in order
            self.garbage_prompts: set[int] = set()
            self.judged: dict[tuple[str | None, str | None, str], int | None] = {}  # (case, mode, attribute)
            self.wire: list[tuple[str, dict[str, Any]]] = []  # (role, request body less messages and tools)
            self.in_flight = 0
            self.max_in_flight = 0
            self.in_flight_by_role: Counter[str] = Counter()  # requests being answered, by classified role
            self.max_by_roles: dict[frozenset[str], int] = {}  # set of roles seen → most of them in flight at once
            self.first_at: float | None = None
            self.last_at: float | None = None
            self.handled_s = 0.0  # the handlers' time, request read to response returned, summed
            self._n = 0

    def stats(self) -> dict[str, Any]:
        """Counts so far: ``received``, ``answered`` (every response written), ``completions`` (HTTP 200 with
        a chat completion), one key per fault kind, ``by_role``, ``by_case``, ``in_flight``, ``max_in_flight`` and
        ``max_in_flight_by_role`` (see ``max_in_flight_of``)."""
        with self._lock:
            return {
                **dict(self.counts),
                "received": self.counts["received"],
                "answered": self.counts["answered"],
                "completions": self.counts["completions"],
                "by_role": dict(self.by_role),
                "by_model": dict(self.by_model),
                "by_case": {f"{c}|{m}": n for (c, m), n in self.by_case.items()},
                "by_case_role": {f"{c}|{m}|{r}": n for (c, m, r), n in self.by_case_role.items()},
                "by_role_batched": dict(self.by_role_batched),
                "by_case_role_batched": {f"{c}|{m}|{r}": n for (c, m, r), n in self.by_case_role_batched.items()},
                "batch_sizes": [len(results) for results in self.batches.values()],
                "garbage_judge_prompts": len(self.garbage_prompts),
                "in_flight": self.in_flight,
                "max_in_flight": self.max_in_flight,
                "max_in_flight_by_role": {r: self._max_in_flight_of({r}) for r in self.in_flight_by_role},
                "first_at": self.first_at,
                "last_at": self.last_at,
                "handled_s": self.handled_s,
            }

    def _record_judgement(self, messages: list[dict[str, Any]], who: Classified, text: str) -> None:
        """Remember what a per-criterion judge prompt was answered (None: garbage), keyed by case/mode/attribute."""
        everything = "\n".join(_text(m.get("content")) for m in messages)
        if text == GARBAGE_JUDGE:
            self.garbage_prompts.add(_digest(_judge_prompt(messages)))
        attribute = re.search(r"^The preference: (.+)$", everything, flags=re.MULTILINE)
        if attribute and text:
            score = json.loads(text)["score"] if text != GARBAGE_JUDGE else None
            self.judged[(who.case, who.mode, attribute.group(1).strip())] = score

    def max_in_flight_of(self, roles: set[str]) -> int:
        """The most requests of ``roles`` (classified roles, see ``classify``) answered at once, counted from the
        request's classification to its response (latency included)."""
        with self._lock:
            return self._max_in_flight_of(roles)

    def _max_in_flight_of(self, roles: set[str]) -> int:
        return self.max_by_roles.get(frozenset(r for r in roles if r in self.in_flight_by_role), 0)

    @contextlib.contextmanager
    def _role_in_flight(self, role: str) -> Iterator[None]:
        with self._lock:
            self.in_flight_by_role[role] += 1
            others = [r for r in self.in_flight_by_role if r != role]
            for n in range(len(others) + 1):  # only the sets holding ``role`` can have grown
                for rest in itertools.combinations(others, n):
                    group = frozenset((role, *rest))
                    now = sum(self.in_flight_by_role[r] for r in group)
                    self.max_by_roles[group] = max(self.max_by_roles.get(group, 0), now)
        try:
            yield
        finally:
            with self._lock:
                self.in_flight_by_role[role] -= 1

    def _count(self, key: str) -> None:
        with self._lock:
            self.counts[key] += 1

    # --- lifecycle ---------------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def env(self, service: str = "mock", api_key: str = "sk-mock-key") -> dict[str, str]:
        """Environment for inspect's ``openai-api/<service>/<model>`` provider."""
        prefix = service.upper().replace("-", "_")
        return {f"{prefix}_BASE_URL": self.base_url, f"{prefix}_API_KEY": api_key}

    def start(self) -> MockOpenAI:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mock-openai", daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=10)
        return self

    async def _start(self) -> None:
        self._stopping = asyncio.Event()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_post("/chat/completions", self._handle)
        app.router.add_post("/v1/messages", self._handle_messages)
        app.router.add_post("/v1/messages/batches", self._create_batch)
        app.router.add_get("/v1/messages/batches/{batch_id}", self._get_batch)
        app.router.add_get("/v1/messages/batches/{batch_id}/results", self._batch_results)
        app.router.add_post("/v1/responses", self._handle_responses)
        app.router.add_post("/v1beta/models/{call}", self._handle_gemini)
        app.router.add_post("/v1/models/{call}", self._handle_gemini)  # google-genai 2+ calls v1
        app.router.add_get("/_mock/stats", self._stats)
        app.router.add_post("/_mock/reset", self._reset)
        app.router.add_post("/_mock/config", self._configure)
        self._runner = web.AppRunner(app, access_log=None, handler_cancellation=True, shutdown_timeout=0.5)
        await self._runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        self.port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock, backlog=1024).start()

    def stop(self) -> None:
        if self._loop is None:
            return

        async def shutdown() -> None:
            assert self._stopping is not None and self._runner is not None
            self._stopping.set()
            await self._runner.cleanup()

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._loop = None

    def __enter__(self) -> MockOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- HTTP handlers -----------------------------------------------------------------------------------

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats())

    async def _reset(self, request: web.Request) -> web.Response:
        self.reset()
        return web.json_response({"ok": True})

    async def _configure(self, request: web.Request) -> web.Response:
        self.config.update(await request.json())
        self._rng.seed(self.config.seed)
        return web.json_response(asdict(self.config))

    def _draw_fault(self) -> str | None:
        c = self.config
        with self._lock:
            x = self._rng.random()
        for name, rate in (
            ("fault_429", c.rate_429),
            ("fault_500", c.rate_500),
            ("fault_timeout", c.rate_timeout),
            ("fault_drop", c.rate_drop),
            ("fault_malformed", c.rate_malformed),
            ("fault_empty", c.rate_empty),
            ("fault_garbage", c.rate_garbage),
        ):
            if x < rate:
                return name
            x -= rate
        return None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        now = time.monotonic()
        with self._lock:
            self.counts["received"] += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.first_at = self.first_at if self.first_at is not None else now
        try:
            response = await self._respond(request)
            if response is not None:
                self._count("answered")
            return response if response is not None else web.Response(status=204)
        finally:
            with self._lock:
                self.in_flight -= 1
                self.last_at = time.monotonic()
                self.handled_s += self.last_at - now

    async def _respond(self, request: web.Request) -> web.StreamResponse | None:
        c = self.config
        if c.api_key is not None:
            sent = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
            if sent != c.api_key:
                self._count("rejected_401")
                shown = sent if c.echo_key_in_401 else (sent[:6] + "*" * 8 + sent[-4:] if sent else "")
                return web.json_response(
                    {
                        "error": {
                            "message": f"Incorrect API key provided: {shown}.",
                            "type": "invalid_request_error",
                            "code": "invalid_api_key",
                        }
                    },
                    status=401,
                )
        try:
            body = await request.json()
            messages = list(body["messages"])
        except (ValueError, KeyError, TypeError):
            self._count("bad_request")
            return web.json_response({"error": {"message": "invalid request body"}}, status=400)
        who = classify(messages)
        with self._role_in_flight(who.role):
            return await self._answer(request, body, messages, who)

    async def _handle_messages(self, request: web.Request) -> web.StreamResponse:
        """Anthropic's Messages API (``POST /v1/messages``; ``tests/mock_wire.py``)."""
        return await self._handle_wire(request, "anthropic")

    async def _handle_responses(self, request: web.Request) -> web.StreamResponse:
        """OpenAI's Responses API (``POST /v1/responses``; ``tests/mock_wire.py``)."""
        return await self._handle_wire(request, "responses")

    async def _handle_gemini(self, request: web.Request) -> web.StreamResponse:
        """Google's ``generateContent`` (``POST /v1beta/models/MODEL:generateContent``; ``tests/mock_wire.py``)."""
        return await self._handle_wire(request, "gemini")

    async def _handle_wire(self, request: web.Request, wire: str) -> web.StreamResponse:
        """The same role-aware replies as chat completions, in another wire format (JSON, or server-sent events with
        ``stream: true``); every request's settings kept in ``wire``, and a thinking text found in a user's or a
        judge's request counted as ``reasoning_leaks``."""
        with self._lock:
            self.counts["received"] += 1
        try:
            body = await request.json()
            reader = {"anthropic": anthropic_messages, "responses": responses_messages, "gemini": gemini_messages}
            messages = reader[wire](body)
            if wire == "gemini":  # the model and the streaming are in the path, not the body
                name, _, method = request.match_info["call"].partition(":")
                body = {**body, "model": name, "stream": method == "streamGenerateContent"}
        except (ValueError, KeyError, TypeError):
            self._count("bad_request")
            return web.json_response({"type": "error", "error": {"message": "invalid request body"}}, status=400)
        rejected = self._rejected(classify(messages))
        if rejected is not None:
            return rejected
        if self.config.latency_s > 0:  # the provider's time to answer, as on chat completions
            await asyncio.sleep(self.config.latency_s)
        reply = self._wire_reply(body, messages, wire)
        if not body.get("stream"):
            return web.json_response(reply)
        events = {"anthropic": anthropic_events, "responses": responses_events, "gemini": gemini_events}[wire]
        stream = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await stream.prepare(request)
        await stream.write(sse(events(reply)))
        await stream.write_eof()
        return stream

    def _wire_reply(
        self, body: dict[str, Any], messages: list[dict[str, Any]], wire: str, batched: bool = False
    ) -> dict[str, Any]:
        """The reply to one request in ``wire``'s format, counted and its settings kept (``batched``: it came in a
        batch, ``by_role_batched``)."""
        who = classify(messages)
        c, model = self.config, str(body.get("model", "mock"))
        schema = {"responses": responses_schema, "anthropic": anthropic_schema}.get(wire, lambda _: None)(body)
        text = reply_for(messages, who, c, schema, self.structured, self.scores, model)
        ending = (c.endings or {}).get(who.case or "") if who.role == "assistant" else None
        thinking = c.thinking if who.role == "assistant" else None
        offered = gemini_tools(body) if wire == "gemini" else tool_names(body)
        tool_call = tool_call_for(messages, who, c, offered) if ending is None else None
        leaked = c.thinking is not None and who.role != "assistant" and c.thinking in json.dumps(body)
        with self._lock:
            self._n += 1
            n = self._n
            self.counts["completions"] += 1
            self.counts["answered"] += 1
            self.counts["reasoning_leaks"] += int(leaked)
            self.by_role[who.role] += 1
            self.by_model[model] += 1
            if who.case is not None:
                self.by_case[(who.case, who.mode or "?")] += 1
                self.by_case_role[(who.case, who.mode or "?", who.role)] += 1
            omit = ("messages", "tools", "system", "input", "instructions", "contents", "systemInstruction")
            kept = {k: v for k, v in body.items() if k not in omit}
            self.wire.append((who.role, {**kept, "_format": wire}))
            if batched:
                self.by_role_batched[who.role] += 1
                if who.case is not None:
                    self.by_case_role_batched[(who.case, who.mode or "?", who.role)] += 1
        prompt_chars = sum(len(_text(m.get("content"))) for m in messages)
        make = {"anthropic": anthropic_body, "responses": responses_body, "gemini": gemini_body}[wire]
        return make(Reply(model, text, prompt_chars, n, ending, thinking, tool_call, c.usage))

    async def _create_batch(self, request: web.Request) -> web.Response:
        """Anthropic's Message Batches API (``POST /v1/messages/batches``): every request answered at once as it
        would be alone, the batch ended at once (``tests/mock_batch.py``)."""
        body = await request.json()
        results = []
        for item in body.get("requests", []):
            params = dict(item["params"])
            with self._lock:
                self.counts["received"] += 1
            reply = self._wire_reply(params, anthropic_messages(params), "anthropic", batched=True)
            results.append(batch_result(item["custom_id"], reply))
        with self._lock:
            self.counts["batches"] += 1
            batch_id = f"msgbatch_{self.counts['batches']:04d}"
            self.batches[batch_id] = results
        return web.json_response(batch_info(batch_id, len(results), self.base_url.removesuffix("/v1")))

    async def _get_batch(self, request: web.Request) -> web.Response:
        batch_id = request.match_info["batch_id"]
        if batch_id not in self.batches:
            return web.json_response({"type": "error", "error": {"message": "no such batch"}}, status=404)
        return web.json_response(batch_info(batch_id, len(self.batches[batch_id]), self.base_url.removesuffix("/v1")))

    async def _batch_results(self, request: web.Request) -> web.Response:
        results = self.batches.get(request.match_info["batch_id"])
        if results is None:
            return web.json_response({"type": "error", "error": {"message": "no such batch"}}, status=404)
        return web.Response(text=results_jsonl(results), content_type="application/binary")

    def _rejected(self, who: Classified) -> web.Response | None:
        """The error a request of ``who`` gets (``reject_case``, ``reject_role``), or None: it is answered."""
        c = self.config
        if c.reject_case is None and c.reject_role is None:
            return None
        if (c.reject_case is not None and who.case != c.reject_case) or (
            c.reject_role is not None and who.role != c.reject_role
        ):
            return None
        self._count(f"rejected_{c.reject_status}")
        retryable = c.reject_status == 429 or c.reject_status >= 500  # with Retry-After, as a 429 or 500 fault
        return web.json_response(
            {"error": {"message": f"request rejected for case {who.case}", "type": "invalid_request_error"}},
            status=c.reject_status,
            headers=self._retry_after() if retryable else None,
        )

    def _retry_after(self) -> dict[str, str]:
        """The headers that tell a client how long to wait before it tries again (``retry_after_s``)."""
        wait = self.config.retry_after_s
        return {"Retry-After": str(max(0, round(wait))), "retry-after-ms": str(int(wait * 1000))}

    async def _answer(
        self, request: web.Request, body: dict[str, Any], messages: list[dict[str, Any]], who: Classified
    ) -> web.StreamResponse | None:
        c = self.config
        rejected = self._rejected(who)
        if rejected is not None:
            return rejected
        latency = c.latency_s + (random.random() * c.latency_jitter_s if c.latency_jitter_s else 0.0)
        if latency > 0:
            await asyncio.sleep(latency)
        fault = self._draw_fault()
        if fault is not None:
            self._count(fault)
        if fault == "fault_429":
            return web.json_response(
                {"error": {"message": "Rate limit reached (mock)", "type": "rate_limit_error"}},
                status=429,
                headers=self._retry_after(),
            )
        if fault == "fault_500":  # with the same Retry-After as a 429 (the SDK's own backoff is 0.5-8 s)
            return web.json_response(
                {"error": {"message": "internal error (mock)", "type": "server_error"}},
                status=500,
                headers=self._retry_after(),
            )
        if fault == "fault_timeout":
            assert self._stopping is not None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), timeout=c.hang_s)
            if request.transport is not None:
                request.transport.close()
            return None
        if fault == "fault_drop":
            if request.transport is not None:
                request.transport.close()
            return None
        if fault == "fault_malformed":
            return web.Response(
                status=200, text='{"id": "chatcmpl-broken", "choices": [{"mess', content_type="application/json"
            )
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
        if fault == "fault_empty":
            text = ""
        elif fault == "fault_garbage":
            text = GARBAGE_REPLY
        else:
            text = reply_for(messages, who, c, schema, self.structured, self.scores, str(body.get("model", "mock")))
        tool_call = tool_call_for(messages, who, c, body.get("tools")) if fault is None else None
        ending = (c.endings or {}).get(who.case or "") if who.role == "assistant" else None
        if ending is not None:
            tool_call = None  # the turn ends as planted: no question asked
        with self._lock:
            self._n += 1
            n = self._n
            self.counts["completions"] += 1
            self.by_role[who.role] += 1
            self.by_model[str(body.get("model"))] += 1
            if who.case is not None:
                self.by_case[(who.case, who.mode or "?")] += 1
                self.by_case_role[(who.case, who.mode or "?", who.role)] += 1
            if who.role == "judge":
                self._record_judgement(messages, who, text)
            if c.thinking is not None and who.role != "assistant" and c.thinking in json.dumps(body):
                self.counts["reasoning_leaks"] += 1
        prompt_chars = sum(len(_text(m.get("content"))) for m in messages)
        thinking = c.thinking if who.role == "assistant" else None
        body_out = completion_body(str(body.get("model", "mock")), text, prompt_chars, n, tool_call, ending, thinking)
        return web.json_response(body_out)


def tagged_scenarios(n: int, prefix: str = "c") -> list[Any]:
    """``n`` copies of the packaged demo scenarios with new ids ``{prefix}0000``... and a ``[case ID]`` tag in
    each question, so the mock can attribute every call to its scenario."""
    from prefdisco.demo import demo_scenarios

    base = demo_scenarios()
    out = []
    for i in range(n):
        s = base[i % len(base)]
        sid = f"{prefix}{i:04d}"
        problem = s.problem.model_copy(
            update={"id": f"{s.problem.id}-{sid}", "question": f"{s.problem.question} [case {sid}]"}
        )
        out.append(s.model_copy(update={"id": sid, "problem": problem}))
    return out


def mock_env(monkeypatch: Any, mock: MockOpenAI, tmp_path: Any) -> None:
    """Point inspect's ``openai-api/mock/…`` provider at ``mock`` (``monkeypatch``: pytest's, undone after the test),
    with an inspect cache in ``tmp_path`` and a 1.5 s bound on a hung request."""
    for key, value in mock.env("mock").items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))
    monkeypatch.setenv("INSPECT_HTTP_REQUEST_TIMEOUT", "1.5")
    monkeypatch.setenv("INSPECT_DISPLAY", "none")


def providers_env(monkeypatch: Any, mock: MockOpenAI, tmp_path: Any) -> None:
    """``mock_env``, and inspect's ``openai/…`` (Responses), ``anthropic/…`` and ``google/…`` providers pointed at
    ``mock`` too, each with a key of its own (``tests/mock_wire.py``)."""
    mock_env(monkeypatch, mock, tmp_path)
    root = f"http://127.0.0.1:{mock.port}"
    for provider, base in (("OPENAI", f"{root}/v1"), ("ANTHROPIC", root), ("GOOGLE", root)):
        monkeypatch.setenv(f"{provider}_BASE_URL", base)
        monkeypatch.setenv(f"{provider}_API_KEY", f"mock-{provider.lower()}-key")


def write_scenarios(path: Any, scenarios: list[Any]) -> Any:
    """Write ``scenarios.jsonl`` (one Scenario JSON per line) and return its path."""
    from pathlib import Path

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(s.model_dump_json() + "\n" for s in scenarios), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    kinds = {"float": float, "int": int, "bool": lambda v: v.lower() in ("1", "true", "yes")}
    for f in fields(MockConfig):
        parser.add_argument("--" + f.name.replace("_", "-"), dest=f.name, type=kinds.get(str(f.type), str))
    args = {k: v for k, v in vars(parser.parse_args(argv)).items() if v is not None}
    mock = MockOpenAI(MockConfig(**args)).start()
    print(f"port {mock.port}", flush=True)
    try:
        sys.stdin.read()  # serve until the parent closes our stdin (or exits)
    finally:
        mock.stop()


if __name__ == "__main__":
    main()
