"""How a build step calls a model: the model pool, the resumable checkpoint and the usage ledger.

* ``ModelPool`` picks one model per (item, step) with ``random.Random`` seeded by (seed, item key, step), so the
  choice is the same for an item whatever the concurrency or the order in which items run.
* ``Checkpoint`` is an append-only JSONL file: one line per finished step result, keyed by a hash of the
  step's inputs (the full prompt, the response schema) and its config (models, seed, temperature). Lines are
  flushed and fsync'ed as they are written, so a crash loses at most the items in flight; a torn last line is
  ignored on reload.
* ``StepRunner.run`` looks the key up in the checkpoint (no model call when present), otherwise calls
  ``generate_structured`` with the pooled model, appends the result, and books calls and tokens per step.
  A reply that stays invalid after the retries is recorded as a failure and the item is skipped (``None``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from inspect_ai.model import ChatMessage, GenerateConfig, Model
from pydantic import BaseModel, ValidationError

from prefdisco.seeds import step_seed
from prefdisco.structured import StructuredOutputError, generate_structured, model_name

T = TypeVar("T", bound=BaseModel)


class ModelPool:
    """Several inspect models; one is chosen per (item, step), deterministically from the seed."""

    def __init__(self, models: Sequence[Model], seed: int = 0) -> None:
        if not models:
            raise ValueError("a model pool needs at least one model")
        self.models = list(models)
        self.seed = seed

    @property
    def names(self) -> list[str]:
        return [model_name(m) for m in self.models]

    def choose(self, item: str, step: str) -> Model:
        rng = random.Random(f"{self.seed}\x1f{item}\x1f{step}")
        return self.models[rng.randrange(len(self.models))]


def step_key(step: str, inputs: Any, config: Any) -> str:
    """A stable hash of a step's inputs and config (JSON with sorted keys)."""
    payload = json.dumps({"step": step, "inputs": inputs, "config": config}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


class Checkpoint:
    """Append-only JSONL of finished step results, keyed by ``step_key``; ``path=None`` keeps it in memory."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.records: dict[str, dict[str, Any]] = {}
        self.torn_lines = 0
        if path is not None and path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    self.torn_lines += 1
                    continue
                if isinstance(record, dict) and isinstance(record.get("key"), str):
                    self.records[record["key"]] = record

    def __len__(self) -> int:
        return len(self.records)

    def get(self, key: str) -> dict[str, Any] | None:
        return self.records.get(key)

    def put(self, record: dict[str, Any]) -> None:
        self.records[record["key"]] = record
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
            f.flush()
            os.fsync(f.fileno())


@dataclass
class StepUsage:
    """Calls and tokens of one step. ``*_run`` counts this run only; the others include checkpointed work."""

    items: int = 0
    cached: int = 0
    failed: int = 0
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    calls_run: int = 0
    input_tokens_run: int = 0
    output_tokens_run: int = 0

    def book(self, calls: int, input_tokens: int, output_tokens: int, *, cached: bool) -> None:
        self.calls += calls
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        if not cached:
            self.calls_run += calls
            self.input_tokens_run += input_tokens
            self.output_tokens_run += output_tokens


@dataclass
class StepOutcome(Generic[T]):
    """A finished step: the validated value, the model that wrote it and what it cost."""

    value: T
    model: str
    attempts: int
    input_tokens: int
    output_tokens: int
    cached: bool


def provider_error(err: BaseException) -> str:
    """One line naming a provider error: its type and the start of its message (never the request)."""
    text = " ".join(str(err).split())
    text = text if len(text) <= 300 else text[:300] + " …"
    return f"provider error {type(err).__name__}" + (f": {text}" if text else "")


@dataclass
class Failure:
    step: str
    item: str
    model: str
    attempts: int
    reason: str
    errors: list[str] = field(default_factory=list)
    """One line per attempt that failed (the last is ``reason``)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "item": self.item,
            "model": self.model,
            "attempts": self.attempts,
            "reason": self.reason,
            "errors": list(self.errors),
        }


class Progress(Protocol):
    """Told when a step starts (how many items) and as its items finish (``failed``: how many of them failed)."""

    def start(self, step: str, total: int) -> None: ...

    def advance(self, step: str, n: int = 1, failed: int = 0) -> None: ...


class NoProgress:
    def start(self, step: str, total: int) -> None:
        pass

    def advance(self, step: str, n: int = 1, failed: int = 0) -> None:
        pass


@dataclass
class StepRunner:
    """Runs step items through the pool with checkpointing, bounded concurrency and usage booking."""

    pool: ModelPool
    checkpoint: Checkpoint = field(default_factory=Checkpoint)
    config: GenerateConfig = field(default_factory=GenerateConfig)
    retries: int = 2
    max_concurrency: int = 8
    progress: Progress = field(default_factory=NoProgress)
    usage: dict[str, StepUsage] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)
    model_args: dict[str, Any] = field(default_factory=dict)
    """Provider args the pool's models were made with (part of every key: they can change the replies)."""

    def __post_init__(self) -> None:
        self._semaphore = asyncio.Semaphore(max(1, self.max_concurrency))

    def fingerprint(self) -> dict[str, Any]:
        """The part of every key that is not the prompt: models, seed, sampling settings."""
        return {
            "models": self.pool.names,
            "seed": self.pool.seed,
            "temperature": self.config.temperature,
            **({"model_args": self.model_args} if self.model_args else {}),
        }

    def key(self, step: str, item: str, messages: str | list[ChatMessage], schema: type[BaseModel]) -> str:
        text = messages if isinstance(messages, str) else [m.model_dump(exclude={"id"}) for m in messages]
        inputs = {"item": item, "messages": text, "schema": schema.model_json_schema()}
        return step_key(step, inputs, self.fingerprint())

    async def run(
        self,
        step: str,
        item: str,
        messages: str | list[ChatMessage],
        schema: type[T],
        *,
        name: str | None = None,
        max_tokens: int | None = None,
        advance: bool = True,
    ) -> StepOutcome[T] | None:
        """One item of one step: from the checkpoint if finished before, else from a pooled model.
        ``max_tokens`` is the step's output budget (unless the runner's config sets one); ``advance=False``
        leaves the progress bar to the caller (e.g. when not every item counts)."""
        usage = self.usage.setdefault(step, StepUsage())
        key = self.key(step, item, messages, schema)
        cached = self._from_checkpoint(key, schema)
        if cached is not None:
            usage.items += 1
            usage.cached += 1
            usage.book(cached.attempts, cached.input_tokens, cached.output_tokens, cached=True)
            if advance:
                self.progress.advance(step)
            return cached
        model = self.pool.choose(item, step)
        config = self.config
        if config.seed is None:  # each item's call its own seed, whatever ran before it (seeds.step_seed)
            config = config.merge(GenerateConfig(seed=step_seed(self.pool.seed, step, item)))
        if max_tokens is not None and config.max_tokens is None:
            config = config.merge(GenerateConfig(max_tokens=max_tokens))
        failure: Failure | None
        async with self._semaphore:
            try:
                result = await generate_structured(
                    model, messages, schema, config=config, retries=self.retries, name=name or step
                )
            except StructuredOutputError as err:
                usage.book(err.attempts, err.usage.input_tokens, err.usage.output_tokens, cached=False)
                failure = Failure(step, item, err.model, err.attempts, err.reason, list(err.errors))
            except Exception as err:
                # e.g. a 200 whose body is not JSON, a 400 for this one request, a connection still refused after
                # --max-retries: this item fails and is reported; the build goes on with the others.
                reason = provider_error(err)
                failure = Failure(step, item, model_name(model), 1, reason, [reason])
            else:
                failure = None
        if failure is not None:
            usage.failed += 1
            self.failures.append(failure)
            if advance:
                self.progress.advance(step, failed=1)
            return None
        outcome = StepOutcome(
            value=result.value,
            model=result.model,
            attempts=result.attempts,
            input_tokens=result.usage.input_tokens,
            output_tokens=result.usage.output_tokens,
            cached=False,
        )
        self.checkpoint.put(
            {
                "key": key,
                "step": step,
                "item": item,
                "model": outcome.model,
                "attempts": outcome.attempts,
                "input_tokens": outcome.input_tokens,
                "output_tokens": outcome.output_tokens,
                "value": result.value.model_dump(mode="json", by_alias=True),
            }
        )
        usage.items += 1
        usage.book(outcome.attempts, outcome.input_tokens, outcome.output_tokens, cached=False)
        if advance:
            self.progress.advance(step)
        return outcome

    def _from_checkpoint(self, key: str, schema: type[T]) -> StepOutcome[T] | None:
        record = self.checkpoint.get(key)
        if record is None:
            return None
        try:
            value = schema.model_validate(record["value"])
        except (ValidationError, KeyError):
            return None
        return StepOutcome(
            value=value,
            model=str(record.get("model", "")),
            attempts=int(record.get("attempts", 1)),
            input_tokens=int(record.get("input_tokens", 0)),
            output_tokens=int(record.get("output_tokens", 0)),
            cached=True,
        )

    def first_failure(self) -> str:
        """``; first failure: step item (model): reason``, or nothing when no item failed (for error messages)."""
        if not self.failures:
            return ""
        f = self.failures[0]
        return f"; first failure: {f.step} {f.item} ({f.model}): {f.reason}"

    def usage_table(self) -> dict[str, dict[str, int]]:
        return {step: vars(u).copy() for step, u in self.usage.items()}
