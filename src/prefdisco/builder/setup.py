"""What a build is set up from before its first model call: the output folder (checked), the problems, the
builder models (inspect's ``get_model`` with the request limits) and the step runner with its checkpoint."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai.model import GenerateConfig, Model, get_model

from prefdisco.benchio import MANIFEST_FILE
from prefdisco.benchmarks import load_generic, load_problems
from prefdisco.benchmarks.loader import local_source_files
from prefdisco.builder.config import BuildConfig
from prefdisco.builder.personas import load_library
from prefdisco.builder.pool import Checkpoint, ModelPool, NoProgress, Progress, StepRunner
from prefdisco.errors import UserError
from prefdisco.models.args import check_model_name
from prefdisco.overwrite import holds, refuse_overwrite
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


FREE_SETTINGS = ("out", "retries", "max_connections", "max_retries", "timeout", "attempt_timeout", "min_yield")
"""Build settings that change how a build runs, not what it builds: a folder built with others resumes."""

ADDED_SETTINGS: dict[str, object] = {"session_length": None}
"""Settings added after builds were written: a manifest without one was built with this value."""


def check_existing_build(config: BuildConfig, overwrite: bool = False) -> None:
    """Refuse, before any call, a ``--out`` that holds a benchmark built with other settings (or not built: an
    imported one) unless ``overwrite``; the same settings resume. The first differing setting is named."""
    out = Path(config.out)
    kept = KEPT_NOTE if (out / CHECKPOINT_DIR).is_dir() else ""
    if overwrite or not (out / MANIFEST_FILE).is_file():
        refuse_overwrite(out, overwrite, note=kept)
        return
    try:
        recorded = json.loads((out / MANIFEST_FILE).read_text(encoding="utf-8")).get("config") or {}
    except (OSError, ValueError, AttributeError):
        recorded = {}
    if not isinstance(recorded, dict) or "benchmark" not in recorded:
        refuse_overwrite(out, overwrite, note=kept)  # not a build of ours (an imported release, say)
        return
    before = {**ADDED_SETTINGS, **_flat(recorded)}
    for key, value in _flat(config.model_dump(mode="json")).items():
        if key == "source" and _same_source(config, before.get(key), value):
            continue
        if key in before and key.split(".")[0] not in FREE_SETTINGS and before[key] != value:
            held = holds(out)
            raise UserError(
                f"--out {out}: holds {held} built with other settings ({key} {json.dumps(before[key])} there, "
                f"{json.dumps(value)} now); give --overwrite to replace it{kept}, or another --out"
            )


def _same_source(config: BuildConfig, recorded: Any, now: Any) -> bool:
    """Whether two ``--source`` values read the same data files (a folder and its data file, a relative and an
    absolute path), with the same benchmark name for ``generic``: the same source, written another way."""
    if not isinstance(recorded, str) or not isinstance(now, str):
        return False
    reads = local_source_files(config.benchmark, now, config.split)
    return reads is not None and reads == local_source_files(config.benchmark, recorded, config.split)


NO_MODEL = "--model: give at least one model (e.g. --model openai/gpt-4o)"


def check_build(config: BuildConfig, overwrite: bool = False) -> None:
    """Everything a build checks before its first model call, the same for ``build`` and ``build --dry-run``: the
    output folder, a benchmark already there, a builder model named (its name without white space at an end), and a
    given persona library (readable, at least ``--personas-per-problem`` personas)."""
    if not config.models:
        raise UserError(NO_MODEL)
    for name in config.models:
        check_model_name(name)
    check_out_folder(config.out)
    check_existing_build(config, overwrite)
    if config.persona_library is not None:
        check_library_size(len(load_library(config.persona_library)), config.personas_per_problem)


def check_library_size(size: int, per_problem: int, why: str = "") -> None:
    """A library of ``size`` personas cannot give each problem ``per_problem`` different ones."""
    if size < per_problem:
        raise UserError(f"persona library: {size} persona(s), fewer than --personas-per-problem {per_problem}{why}")


def _flat(settings: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested settings as ``relevance.max_new``-style keys."""
    out: dict[str, Any] = {}
    for key, value in settings.items():
        if isinstance(value, dict) and value:
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


KEPT_NOTE = " (its checkpoint is kept: calls already made are not made again)"


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
        raise UserError(NO_MODEL)
    for name in names:
        check_model_name(name)
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
