"""The wire formats the mock server speaks besides chat completions (``tests/mock_openai.py``): each request read
as the chat messages the role-aware replies are made from, each reply written as that provider's response.

* **Anthropic Messages** (``POST /v1/messages``): JSON, or server-sent events with ``stream: true``; a refusal is
  ``stop_reason: "refusal"`` with no content, a cut ``max_tokens``; a reasoning model's thinking is a ``thinking``
  block with its signature before the text.
* **Google Gemini** (``POST /v1beta/models/MODEL:generateContent``, and ``:streamGenerateContent?alt=sse``): the
  thinking is a ``thought`` part, a tool call a ``functionCall`` part, a refusal ``finishReason: SAFETY`` with no
  content, a cut ``MAX_TOKENS``; usage with cached content and thought tokens.
* **OpenAI Responses** (``POST /v1/responses``, what inspect's ``openai/`` provider uses for o-series and gpt-5): JSON,
  or events (``response.created`` … ``response.completed``) with ``stream: true``; a refusal is a ``refusal`` content
  part, a cut an ``incomplete`` response (``max_output_tokens``); the thinking is a ``reasoning`` output item (its
  summary); usage carries cached and reasoning tokens.

``usage``: every call's tokens, planted (``{"input", "cached", "output", "reasoning"}``: input in all, of which read
from the cache; output in all, of which reasoning), so a test prices a run by hand; None: counted from the text.

``thinking``: the reasoning text a reasoning model's answer carries (None: no reasoning part). It must never reach a
simulated user's or a judge's request: the server counts requests of those roles that contain it.
"""

from __future__ import annotations

import json
from dataclasses import astuple, dataclass
from typing import Any

REFUSAL = "I'm sorry, but I can't help with that."


@dataclass(frozen=True)
class Reply:
    """What one reply is made of, whatever the format: the request's model, the reply's text, the prompt's length
    (for the usage), the reply's number, how it ends (``mock_openai.ENDINGS``), the thinking it carries, the tool call
    it makes instead of the text, and planted usage."""

    model: str
    text: str
    prompt_chars: int
    n: int
    ending: str | None = None
    thinking: str | None = None
    tool_call: dict[str, Any] | None = None
    usage: dict[str, int] | None = None


BUDGET_THOUGHT = "Let me weigh how much detail this person wants before I answer, step by"
"""The thinking of a reasoning model whose whole budget went on reasoning (the ``thinking`` ending): no answer
follows, and the generation is cut at the token limit."""


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or the ``text`` of each part (thinking and reasoning parts have
    none, so they are never read as what was said)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


# ---- Anthropic Messages ----------------------------------------------------------------------------------------


def anthropic_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """An Anthropic Messages request as chat messages: the system prompt first, each message's text blocks joined."""
    system = body.get("system")
    system_text = system if isinstance(system, str) else text_of(system or [])
    out = [{"role": "system", "content": system_text}] if system_text else []
    for m in body["messages"]:
        content = m.get("content")
        results = [b for b in content if b.get("type") == "tool_result"] if isinstance(content, list) else []
        if results:  # a tool's result: a ``tool`` message, as chat completions has it
            out += [{"role": "tool", "content": text_of(b.get("content"))} for b in results]
        else:
            out.append({"role": m["role"], "content": text_of(content)})
    return out


def tool_names(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools a request offers, as chat completions lists them (``{"function": {"name": …}}``), whatever the
    format (Anthropic and Responses name a tool at its top level); none when its tool choice is "none" (the tool
    listed but withdrawn: Anthropic ``{"type": "none"}``, Responses ``"none"``)."""
    choice = body.get("tool_choice")
    if choice == "none" or (isinstance(choice, dict) and choice.get("type") == "none"):
        return []
    return [
        {"function": {"name": t.get("name") or (t.get("function") or {}).get("name")}} for t in body.get("tools") or []
    ]


def anthropic_body(reply: Reply) -> dict[str, Any]:
    """An Anthropic Messages response answering ``text`` (or calling ``tool_call``: a ``tool_use`` block), ended as
    ``ending`` says (``mock_openai.ENDINGS``: a refusal and a content filter are both Anthropic's ``stop_reason:
    "refusal"`` with no content)."""
    model, text, prompt_chars, n, ending, thinking, tool_call, usage = astuple(reply)
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    stop = "end_turn"
    if tool_call is not None:
        use = {"type": "tool_use", "id": f"toolu_mock_{n}", "name": tool_call["name"], "input": tool_call["arguments"]}
        content, stop = [use], "tool_use"
    if ending in ("refusal", "filter"):
        content, stop = [], "refusal"
    elif ending == "empty":
        content = []
    elif ending == "length":
        stop = "max_tokens"
    elif ending == "thinking":
        content, stop, thinking = [], "max_tokens", thinking or BUDGET_THOUGHT
    if thinking is not None and stop != "refusal":
        content = [{"type": "thinking", "thinking": thinking, "signature": f"sig-mock-{n}"}, *content]
    return {
        "id": f"msg_mock_{n}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": prompt_chars // 4 + 1, "output_tokens": len(text) // 4 + 1}
        if usage is None
        else {
            "input_tokens": usage["input"] - usage["cached"],  # Anthropic counts the cache read apart
            "cache_read_input_tokens": usage["cached"],
            "cache_creation_input_tokens": 0,
            "output_tokens": usage["output"],
        },
    }


def anthropic_events(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``message`` as Anthropic's server-sent events (``stream: true``): the message opened empty, each block started,
    sent in two deltas (text, or thinking then its signature) and stopped, then the stop reason and the output
    tokens, then the stop."""
    start = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
    for i, block in enumerate(message["content"]):
        empty = {"type": "thinking", "thinking": "", "signature": ""} if block["type"] == "thinking" else {
            "type": "text", "text": ""}  # fmt: skip
        if block["type"] == "tool_use":
            empty = {**block, "input": {}}
        events.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": empty}))
        if block["type"] == "tool_use":
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
        elif block["type"] == "thinking":
            deltas = [{"type": "thinking_delta", "thinking": block["thinking"]},
                      {"type": "signature_delta", "signature": block["signature"]}]  # fmt: skip
        else:
            text = block["text"]
            deltas = [{"type": "text_delta", "text": p} for p in (text[: len(text) // 2], text[len(text) // 2 :])]
        for delta in deltas:
            events.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    stop = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    usage = {"output_tokens": message["usage"]["output_tokens"]}
    events.append(("message_delta", {"type": "message_delta", "delta": stop, "usage": usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


# ---- OpenAI Responses ------------------------------------------------------------------------------------------


def responses_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A Responses request as chat messages: ``instructions`` as the system prompt, each input message's text, a
    function call's output as a ``tool`` message; reasoning items and the calls themselves carry no text."""
    out = [{"role": "system", "content": body["instructions"]}] if body.get("instructions") else []
    items = body["input"] if isinstance(body["input"], list) else [{"role": "user", "content": body["input"]}]
    for item in items:
        kind = item.get("type", "message")
        if kind == "message" and "role" in item:
            out.append({"role": item["role"], "content": text_of(item.get("content"))})
        elif kind == "function_call_output":
            out.append({"role": "tool", "content": str(item.get("output", ""))})
    return out


def responses_schema(body: dict[str, Any]) -> Any:
    """The JSON schema a Responses request asks its reply to follow (``text.format``), if any."""
    fmt = (body.get("text") or {}).get("format") or {}
    return fmt.get("schema") if fmt.get("type") == "json_schema" else None


def anthropic_schema(body: dict[str, Any]) -> Any:
    """The JSON schema an Anthropic request asks its reply to follow (structured outputs: ``output_format``)."""
    fmt = body.get("output_format") or {}
    return fmt.get("schema") if fmt.get("type") == "json_schema" else None


def responses_body(reply: Reply) -> dict[str, Any]:
    """A Responses API response answering ``text`` (a reasoning item first when ``thinking``; a ``function_call``
    item instead of the message when ``tool_call``), ended as ``ending`` says; usage with half the input read from
    the cache and the reasoning tokens."""
    model, text, prompt_chars, n, ending, thinking, tool_call, usage = astuple(reply)
    part: dict[str, Any] = {"type": "output_text", "text": text, "annotations": []}
    status, incomplete = "completed", None
    if ending in ("refusal", "filter"):
        part = {"type": "refusal", "refusal": REFUSAL}
    elif ending == "empty":
        part = {"type": "output_text", "text": "", "annotations": []}
    elif ending in ("length", "thinking"):
        status, incomplete = "incomplete", {"reason": "max_output_tokens"}
    if ending == "thinking":
        thinking = thinking or BUDGET_THOUGHT
    message = {"type": "message", "id": f"msg_mock_{n}", "role": "assistant", "status": "completed", "content": [part]}
    if tool_call is not None:
        arguments = json.dumps(tool_call["arguments"])
        message = {"type": "function_call", "id": f"fc_mock_{n}", "call_id": f"call_mock_{n}",
                   "name": tool_call["name"], "arguments": arguments, "status": "completed"}  # fmt: skip
    output: list[dict[str, Any]] = [message] if ending != "thinking" else []
    reasoning_tokens = 0
    if thinking is not None:
        summary = [{"type": "summary_text", "text": thinking}]
        output = [{"type": "reasoning", "id": f"rs_mock_{n}", "summary": summary}, *output]
        reasoning_tokens = len(thinking) // 4 + 1
    n_in, n_out = prompt_chars // 4 + 1, len(text) // 4 + 1 + reasoning_tokens
    cached = n_in // 2
    if usage is not None:  # planted: every call the same tokens (``MockConfig.usage``)
        n_in, cached, n_out, reasoning_tokens = usage["input"], usage["cached"], usage["output"], usage["reasoning"]
    return {
        "id": f"resp_mock_{n}",
        "object": "response",
        "created_at": 0,
        "model": model,
        "status": status,
        "incomplete_details": incomplete,
        "error": None,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": n_in,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": n_out,
            "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
            "total_tokens": n_in + n_out,
        },
    }


def responses_events(response: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``response`` as the Responses API's server-sent events (``stream: true``): created (in progress, no output),
    then completed (or incomplete) with the whole response."""
    started = {**response, "status": "in_progress", "output": [], "usage": None}
    end = "response.completed" if response["status"] == "completed" else "response.incomplete"
    return [
        ("response.created", {"type": "response.created", "sequence_number": 0, "response": started}),
        (end, {"type": end, "sequence_number": 1, "response": response}),
    ]


# ---- Google Gemini generateContent ------------------------------------------------------------------------------


def gemini_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A ``generateContent`` request as chat messages: ``systemInstruction`` first, each content's text parts joined
    (a ``model`` turn is the assistant's), a ``functionResponse`` part as a ``tool`` message; thought parts and
    function calls carry no text."""
    system = body.get("systemInstruction") or body.get("system_instruction") or {}
    system_text = text_of([p for p in system.get("parts", []) if not p.get("thought")])
    out = [{"role": "system", "content": system_text}] if system_text else []
    for content in body.get("contents", []):
        parts = content.get("parts", [])
        replies = [p for p in parts if "functionResponse" in p or "function_response" in p]
        if replies:
            for p in replies:
                reply = p.get("functionResponse") or p.get("function_response") or {}
                out.append({"role": "tool", "content": json.dumps(reply.get("response", {}))})
            continue
        role = "assistant" if content.get("role") == "model" else "user"
        out.append({"role": role, "content": text_of([p for p in parts if not p.get("thought")])})
    return out


def gemini_tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The function declarations a request offers, as chat completions lists them (none under mode ``NONE``)."""
    config = (body.get("toolConfig") or {}).get("functionCallingConfig") or {}
    if str(config.get("mode", "")).upper() == "NONE":
        return []
    declared = []
    for tool in body.get("tools") or []:
        declared += tool.get("functionDeclarations") or tool.get("function_declarations") or []
    return [{"function": {"name": d.get("name")}} for d in declared]


def gemini_body(reply: Reply) -> dict[str, Any]:
    """A ``generateContent`` response answering ``text`` (a thought part first when ``thinking``; a ``functionCall``
    part instead of the text when ``tool_call``), ended as ``ending`` says: a refusal or filter is
    ``finishReason: SAFETY`` with no content, a cut ``MAX_TOKENS``; usage with cached and thought tokens."""
    model, text, prompt_chars, n, ending, thinking, tool_call, usage = astuple(reply)
    parts: list[dict[str, Any]] = [{"text": text}]
    finish = "STOP"
    if tool_call is not None:
        parts = [{"functionCall": {"name": tool_call["name"], "args": tool_call["arguments"]}}]
    if ending in ("refusal", "filter"):
        parts, finish = [], "SAFETY"
    elif ending == "empty":
        parts = [{"text": ""}]
    elif ending == "length":
        finish = "MAX_TOKENS"
    elif ending == "thinking":
        parts, finish, thinking = [], "MAX_TOKENS", thinking or BUDGET_THOUGHT
    if thinking is not None and finish != "SAFETY":
        parts = [{"text": thinking, "thought": True}, *parts]
    n_in, n_out = prompt_chars // 4 + 1, len(text) // 4 + 1
    cached, thoughts = n_in // 2, (len(thinking) // 4 + 1) if thinking else 0
    if usage is not None:
        n_in, cached, n_out, thoughts = (
            usage["input"],
            usage["cached"],
            usage["output"] - usage["reasoning"],
            usage["reasoning"],
        )
    candidate: dict[str, Any] = {"finishReason": finish, "index": 0}
    if parts:
        candidate["content"] = {"role": "model", "parts": parts}
    return {
        "candidates": [candidate],
        "usageMetadata": {
            "promptTokenCount": n_in,
            "cachedContentTokenCount": cached,
            "candidatesTokenCount": n_out,
            "thoughtsTokenCount": thoughts,
            "totalTokenCount": n_in + n_out + thoughts,
        },
        "modelVersion": model,
        "responseId": f"gemini-mock-{n}",
    }


def gemini_events(response: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``streamGenerateContent?alt=sse``: the whole response as one data event (no event name)."""
    return [("", response)]


def sse(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    """Server-sent events, one ``event:`` / ``data:`` pair each."""
    return b"".join(
        (f"event: {kind}\n" if kind else "").encode() + f"data: {json.dumps(data)}\n\n".encode()
        for kind, data in events
    )
