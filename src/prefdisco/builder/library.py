"""The persona library a build uses, and ``prefdisco personas``, which generates one on its own.

A build either reads ``--persona-library`` (personas.jsonl) or generates ``--library-size`` personas through
:func:`prefdisco.builder.personas.build_library`, checkpointed with the rest of the build. ``prefdisco personas``
writes a library to a personas.jsonl file, resumable from a checkpoint beside it (``.NAME.checkpoint.jsonl``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai.model import Model

from prefdisco.builder.blueprints import BlueprintSpace
from prefdisco.builder.config import BuildConfig
from prefdisco.builder.ipip import IpipItem, load_ipip
from prefdisco.builder.personas import (
    LibraryConfig,
    LibraryResult,
    build_library,
    library_diversity,
    load_library,
    save_library,
)
from prefdisco.builder.pool import Progress, StepRunner
from prefdisco.builder.setup import check_out_folder, make_runner
from prefdisco.errors import UserError
from prefdisco.overwrite import refuse_overwrite
from prefdisco.schema import Persona


def library_config(config: BuildConfig, n: int) -> LibraryConfig:
    """The rejection-sampling settings of a library of ``n`` personas under ``config``."""
    return LibraryConfig(
        n=n,
        seed=config.seed,
        max_share=config.max_share,
        max_marginal_share=config.max_marginal_share,
        batch_size=config.persona_batch,
        space=BlueprintSpace(facets=config.facets),
    )


def ipip_items(config: BuildConfig) -> dict[str, list[IpipItem]] | None:
    """The ``--ipip`` items that ground generated personas, or None for the packaged trait hints."""
    return load_ipip(config.ipip) if config.ipip else None


async def library_for_build(runner: StepRunner, config: BuildConfig) -> tuple[list[Persona], dict[str, Any]]:
    """The build's persona library (read, or generated through ``runner``) and its manifest entry."""
    if config.persona_library is not None:
        library = load_library(config.persona_library)
        return library, {
            "source": str(config.persona_library),
            "size": len(library),
            "diversity": library_diversity(library),
        }
    ipip = ipip_items(config)
    result = await build_library(runner, library_config(config, config.library_n), ipip)
    return result.personas, {
        "source": "generated",
        "size": len(result.personas),
        "requested": config.library_n,
        "candidates": result.candidates,
        "blueprints": result.blueprints,
        "rejections": result.rejections,
        "diversity": result.diversity,
        "ipip": str(config.ipip) if config.ipip else None,
    }


@dataclass
class LibraryReport:
    out: Path
    result: LibraryResult
    usage: dict[str, Any]
    failures: list[dict[str, Any]]


def library_checkpoint(out: Path) -> Path:
    return out.parent / f".{out.name}.checkpoint.jsonl"


async def generate_library(
    out: Path,
    config: BuildConfig,
    *,
    models: Sequence[Model] | None = None,
    progress: Progress | None = None,
    overwrite: bool = False,
) -> LibraryReport:
    """Generate ``config.library_n`` personas into ``out`` (personas.jsonl), resumable from a checkpoint
    beside it; an ``out`` that holds something is refused unless ``overwrite``."""
    out = Path(out)
    if out.is_dir():
        raise UserError(f"{out}: --out is a folder; give the personas.jsonl file to write")
    check_out_folder(out.parent)
    checkpoint = library_checkpoint(out)
    refuse_overwrite(out, overwrite, note=f" (its checkpoint {checkpoint.name} is kept)" if checkpoint.exists() else "")
    runner = make_runner(config, progress, models=models, checkpoint=library_checkpoint(out))
    ipip = ipip_items(config)
    result = await build_library(runner, library_config(config, config.library_n), ipip)
    if not result.personas:
        raise UserError(f"{out}: no persona was accepted{runner.first_failure()}")
    save_library(out, result.personas)
    return LibraryReport(
        out=out,
        result=result,
        usage=runner.usage_table(),
        failures=[f.as_dict() for f in runner.failures],
    )


def run_personas(
    out: Path, config: BuildConfig, progress: Progress | None = None, overwrite: bool = False
) -> LibraryReport:
    return asyncio.run(generate_library(out, config, progress=progress, overwrite=overwrite))
