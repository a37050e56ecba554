"""What a build is set up from before its first model call: the output folder (checked), the problems, the
builder models (inspect's ``get_model`` with the request limits) and the step runner with its checkpoint."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai.model import GenerateConfig, Model, get_model

from prefdisco.benchmarks import load_generic, load_problems
from prefdisco.builder.config import BuildConfig
from prefdisco.builder.pool import Checkpoint, ModelPool, NoProgress, Progress, StepRunner
from prefdisco.errors import UserError
from prefdisco.schema import Problem

CHECKPOINT_DIR = ".checkpoint"
CHECKPOINT_FILE = "steps.jsonl"


def check_out_folder(out: Path) -> None:
    """Fail before any model call when ``out`` cannot become the output folder (an existing file, or no write
    permission on the folder or on the nearest existing parent)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: --out exists and is not a folder")
    existing = out if out.exists() else next((p for p in out.parents if p.exists()), None)
    if existing is None or not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise UserError(f"{out}: cannot write here (no write permission on {existing})")


def load_build_problems(config: BuildConfig) -> list[Problem]:
    if config.benchmark == "generic":
        assert config.source is not None and config.mapping is not None
        problems = load_generic(config.source, config.mapping, n=config.problems, seed=config.seed, split=config.split)
    else:
        problems = load_problems(
            config.benchmark, source=config.source, n=config.problems, seed=config.seed, split=config.split
        )
    if not problems:
        raise UserError(f"{config.source or config.benchmark}: no problems to build from")
    return problems


def resolve_models(names: Sequence[str], config: BuildConfig) -> list[Model]:
    if not names:
        raise UserError("--model: give at least one model (e.g. --model openai/gpt-4o)")
    try:
        model_args: dict[str, Any] = dict(config.model_args)
        return [
            get_model(
                name,
                config=GenerateConfig(
                    max_connections=config.max_connections,
                    max_retries=config.max_retries,
                    timeout=config.timeout,
                    attempt_timeout=config.attempt_timeout,
                ),
                **model_args,
            )
            for name in names
        ]
    except (TypeError, ValueError) as err:
        raise UserError(f"--model / -M: {' '.join(str(err).split())}") from None


def make_runner(
    config: BuildConfig,
    progress: Progress | None = None,
    *,
    models: Sequence[Model] | None = None,
    checkpoint: Path | None = None,
) -> StepRunner:
    """The step runner over ``models`` (default: ``config.models`` resolved), checkpointed in ``checkpoint``
    (default: ``OUT/.checkpoint/steps.jsonl``)."""
    return StepRunner(
        pool=ModelPool(models if models is not None else resolve_models(config.models, config), seed=config.seed),
        checkpoint=Checkpoint(checkpoint or config.out / CHECKPOINT_DIR / CHECKPOINT_FILE),
        config=GenerateConfig(temperature=config.temperature, max_connections=config.max_connections),
        retries=config.retries,
        max_concurrency=config.max_connections,
        progress=progress or NoProgress(),
        model_args=dict(config.model_args),
    )
