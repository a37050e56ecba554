"""Structured output: ask an inspect model for JSON that fits a pydantic model, and re-ask when it does not.

``generate_structured`` sends the pydantic model's JSON schema as ``GenerateConfig.response_schema`` (providers
with native structured output use it; the embedded llama.cpp provider turns it into a grammar), parses the
completion robustly (code fences stripped, the outermost JSON object taken) and validates it with pydantic.
An invalid reply is answered with the bad output (capped at ``ECHO_LIMIT`` characters) plus a one-line reason and
the model is asked again, at most ``retries`` more times; each retry replaces the previous rejected exchange, so
the conversation does not grow with the retries. It never returns a half-valid object: after the last failure it raises
``StructuredOutputError``. HTTP/provider errors are not retried here (inspect retries those itself).

``cache`` applies to every attempt: a retry's conversation differs from the first one, so it has its own cache key,
and a rerun replays the whole chain (the bad reply, then the re-ask) without paying for any of it again. The
accepted attempt's ``ModelOutput`` is returned with the value, so callers can read its log-probabilities.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelUsage,
    ResponseSchema,
)
from inspect_ai.util import JSONSchema, json_schema
from pydantic import BaseModel, ValidationError

from prefdisco import prompts
from prefdisco.errors import validation_messages

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_NAME = re.compile(r"[^A-Za-z0-9_-]+")


class StructuredOutputError(Exception):
    """The model's reply stayed invalid after every retry. ``reason`` is the last one-line validation error;
    ``outputs`` holds every rejected attempt's output, in order."""

    def __init__(
        self,
        reason: str,
        *,
        attempts: int,
        model: str,
        usage: ModelUsage,
        errors: list[str],
        outputs: list[ModelOutput] | None = None,
    ) -> None:
        super().__init__(f"{model}: no valid reply after {attempts} attempt(s): {reason}")
        self.reason = reason
        self.attempts = attempts
        self.model = model
        self.usage = usage
        self.errors = errors
        self.outputs = outputs or []


@dataclass
class StructuredResult(Generic[T]):
    """A validated reply, how many model calls it took, which model answered and the summed token usage."""

    value: T
    attempts: int
    model: str
    output: ModelOutput
    """The accepted attempt's output (its log-probabilities, stop reason, raw completion)."""
    usage: ModelUsage = field(default_factory=ModelUsage)
    errors: list[str] = field(default_factory=list)
    """One line per rejected attempt (empty when the first reply was valid)."""


ECHO_LIMIT = 2000
"""At most this many characters of a rejected reply are sent back with the feedback: a reply that ran to the token
limit would otherwise push the retry past a small model's context window."""


def _cap(text: str) -> str:
    return text if len(text) <= ECHO_LIMIT else text[:ECHO_LIMIT] + " …(cut)"


def literal(*values: Any) -> Any:
    """``Literal[values...]`` built at run time, for reply models whose allowed values come from the data (the
    attribute names of a profile, the values of an attribute). Typed ``Any``: a static checker cannot know them."""
    return Literal[values]


def model_name(model: Model) -> str:
    """``provider/name`` of an inspect model, as recorded on artefacts."""
    return str(model)


UNSENT_KEYWORDS = ("minLength", "maxLength")
"""String length limits are validated by pydantic but not sent: grammar-constrained providers (llama.cpp) expand
``maxLength: 400`` into a grammar of 400 nested optional rules, which the embedded model could not use (its
output came back unconstrained) and which made every token slow."""


def response_schema(schema: type[BaseModel], name: str | None = None, *, strict: bool | None = None) -> ResponseSchema:
    """The ``ResponseSchema`` for a pydantic model (``name`` defaults to the class name, sanitized), without
    the keywords in ``UNSENT_KEYWORDS``. ``strict`` asks providers with a strict mode (OpenAI) to enforce it; every
    field must then be required (the top level is always sent closed, ``additionalProperties: false``)."""
    return _response_schema(schema, name, strict)  # shared, never changed: GenerateConfig.merge copies it


@functools.lru_cache(maxsize=256)
def _response_schema(schema: type[BaseModel], name: str | None, strict: bool | None) -> ResponseSchema:
    """Made once per (model class, name, strict): building the JSON schema costs about 2 ms, on every judge call."""
    label = _NAME.sub("_", name or schema.__name__).strip("_")[:64] or "response"
    return ResponseSchema(name=label, json_schema=_strip(json_schema(schema)), strict=strict)


def _strip(node: JSONSchema) -> JSONSchema:
    update: dict[str, Any] = dict.fromkeys(UNSENT_KEYWORDS)
    if node.properties:
        update["properties"] = {k: _strip(v) for k, v in node.properties.items()}
    if node.items is not None:
        update["items"] = _strip(node.items)
    if node.anyOf:
        update["anyOf"] = [_strip(v) for v in node.anyOf]
    if isinstance(node.additionalProperties, JSONSchema):
        update["additionalProperties"] = _strip(node.additionalProperties)
    return node.model_copy(update=update)


def structured_config(
    model: Model, schema: type[BaseModel], name: str | None = None, *, strict: bool | None = None
) -> GenerateConfig:
    """``response_schema`` for every provider; for providers that take a whole JSON schema in the request body
    (``accepts_json_schema_body``: the embedded model, like llama.cpp's server) also the full pydantic schema as
    ``extra_body["json_schema"]``, so list sizes, constants and string lengths reach the grammar too."""
    config = GenerateConfig(response_schema=response_schema(schema, name, strict=strict))
    if getattr(model.api, "accepts_json_schema_body", False):
        config = config.merge(GenerateConfig(extra_body={"json_schema": schema.model_json_schema()}))
    return config


def overlay(config: GenerateConfig, other: GenerateConfig) -> GenerateConfig:
    """``config.merge(other)`` (each field ``other`` sets replaces ``config``'s) without its deep copies: the fields
    are shared, never changed in place. A structured call makes this once per call, and the deep copies of the
    response schema cost more CPU than the rest of the call's own work."""
    return config.model_copy(update={k: v for k, v in other if v is not None})


def extract_json(text: str) -> Any:
    """The JSON object in a reply: fences stripped, then the whole text, the outermost ``{...}``, or the first
    object that decodes. Raw control characters (a line break) inside strings are accepted. Raises
    ``ValueError`` with a one-line reason."""
    stripped = text.strip()
    if not stripped:
        raise ValueError("the reply was empty")
    fenced = _FENCE.search(stripped)
    candidates = [fenced.group(1).strip()] if fenced else []
    candidates.append(stripped)
    for candidate in candidates:
        try:
            return json.loads(candidate, strict=False)
        except json.JSONDecodeError:
            pass
        start, end = candidate.find("{"), candidate.rfind("}")
        if start != -1 and end > start:
            try:
                return json.loads(candidate[start : end + 1], strict=False)
            except json.JSONDecodeError:
                pass
    decoder = json.JSONDecoder(strict=False)
    for match in re.finditer(r"\{", stripped):
        try:
            value, _ = decoder.raw_decode(stripped, match.start())
            return value
        except json.JSONDecodeError:
            continue
    raise ValueError("the reply contains no JSON object")


def parse_reply(text: str, schema: type[T]) -> T:
    """Parse and validate one reply. Raises ``ValueError`` whose message is one line naming every field that is
    wrong (``name: ...; age: ...``): the model's re-ask and a failure's reason show them all, never "(+N more)"."""
    data = extract_json(text)
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    try:
        return schema.model_validate(data)
    except ValidationError as err:
        raise ValueError("; ".join(validation_messages(err))) from None


async def generate_structured(
    model: Model,
    messages: str | list[ChatMessage],
    schema: type[T],
    *,
    config: GenerateConfig | None = None,
    retries: int = 2,
    name: str | None = None,
    strict: bool | None = None,
    cache: CachePolicy | bool = False,
) -> StructuredResult[T]:
    """Ask ``model`` for a JSON object valid under ``schema``; re-ask up to ``retries`` times with feedback.

    ``cache`` is passed to every attempt (see the module docstring); ``strict`` to the response schema."""
    if retries < 0:
        raise ValueError("retries must be >= 0")
    original: list[ChatMessage] = [ChatMessageUser(content=messages)] if isinstance(messages, str) else list(messages)
    conversation = original
    call_config = overlay(config or GenerateConfig(), structured_config(model, schema, name, strict=strict))
    label = model_name(model)
    usage = ModelUsage()
    errors: list[str] = []
    rejected: list[ModelOutput] = []
    for attempt in range(1, retries + 2):
        output = await model.generate(conversation, config=call_config, cache=cache)
        if output.usage is not None:
            usage = usage + output.usage
        text = output.completion or ""
        try:
            value = parse_reply(text, schema)
        except ValueError as err:
            reason = " ".join(str(err).split())
            if output.stop_reason in ("max_tokens", "model_length"):
                reason = f"the reply was cut off at the length limit, so be briefer ({reason})"
            errors.append(reason)
            rejected.append(output)
            if attempt > retries:
                raise StructuredOutputError(
                    reason, attempts=attempt, model=label, usage=usage, errors=errors, outputs=rejected
                ) from None
            conversation = [  # the question, the latest bad reply (capped) and why it was rejected
                *original,
                ChatMessageAssistant(content=_cap(text) or "(empty reply)"),
                ChatMessageUser(content=prompts.render("build_retry", reason=reason)),
            ]
            continue
        return StructuredResult(value=value, attempts=attempt, model=label, output=output, usage=usage, errors=errors)
    raise AssertionError("unreachable")  # pragma: no cover
