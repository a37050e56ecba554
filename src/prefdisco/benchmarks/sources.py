"""Where rows come from: a Hugging Face Hub dataset, or local JSONL/JSON/CSV/Parquet files.

Local files are read with ``datasets.load_dataset("json" | "csv" | "parquet", data_files=..., split="train")``
(the single split those builders make), so a benchmark's field mapping is the same online and offline.

A folder source is resolved to ``<split>.<ext>`` inside it (or ``<split>-*.<ext>`` shards, also under
``data/``); when the split was not asked for explicitly and no such file exists, the folder's single data file
is used. Anything else is a ``UserError`` listing what the folder holds.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from prefdisco.errors import UserError

if TYPE_CHECKING:
    import datasets

HUB_PROBE_S = 3.0
"""Seconds the Hub's host has to accept a connection before a load is refused as offline."""
BUILDERS = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet"}
"""Data file suffix -> ``datasets`` builder; earlier suffixes are preferred when a folder holds several."""


@dataclass(frozen=True)
class Rows:
    """A loaded table and how to name it in messages."""

    dataset: datasets.Dataset
    where: str


def _data_files(folder: Path) -> list[Path]:
    found: list[Path] = []
    for place in (folder, folder / "data"):
        if place.is_dir():
            found += sorted(p for p in place.iterdir() if p.is_file() and p.suffix.lower() in BUILDERS)
    return found


def _one_format(files: list[Path]) -> list[Path]:
    """Of files in several formats, those of the preferred one."""
    for suffix in BUILDERS:
        chosen = [f for f in files if f.suffix.lower() == suffix]
        if chosen:
            return chosen
    return []


def resolve_local(source: Path, split: str, *, explicit_split: bool) -> list[Path]:
    """The data file(s) a local source stands for."""
    if not source.exists():
        raise UserError(f"{source}: no such file or folder")
    if source.is_file():
        if source.suffix.lower() not in BUILDERS:
            raise UserError(f"{source}: unsupported file type (expected one of {', '.join(BUILDERS)})")
        return [source]
    files = _data_files(source)
    exact = _one_format([f for f in files if f.stem == split])
    if exact:
        return exact[:1]
    shards = _one_format([f for f in files if f.stem.startswith(f"{split}-")])
    if shards:
        return shards
    if not explicit_split and len(files) == 1:
        return files
    names = ", ".join(str(f.relative_to(source)) for f in files) or "no data files"
    if not explicit_split and len(files) > 1:
        raise UserError(f"{source}: holds several data files; name one, or choose a split (found: {names})")
    raise UserError(
        f"{source}: no data file for split {split!r} (expected {split}.jsonl, .json, .csv or .parquet; found: {names})"
    )


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0]}" if text else type(err).__name__


def load_local(files: list[Path]) -> Rows:
    """Read local data files (all of one format) into one table."""
    import datasets

    builder = BUILDERS[files[0].suffix.lower()]
    where = str(files[0]) if len(files) == 1 else f"{files[0].parent} ({len(files)} {builder} files)"
    bars_were_on = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()  # local files load in a blink; no "Generating train split" noise
    try:
        ds = datasets.load_dataset(builder, data_files=[str(f) for f in files], split="train")
    except Exception as err:  # datasets raises many types for unreadable files; all are the user's to fix
        raise UserError(f"{where}: could not be read as {builder}: {_first_line(err)}") from None
    finally:
        if bars_were_on:
            datasets.enable_progress_bars()
    return Rows(ds, where)


def source_hint(columns: Sequence[str] = ()) -> str:
    """How to give a benchmark's rows without the Hub: ``--source`` and the row format (docs/building.md)."""
    named = f" with its columns ({', '.join(columns)})" if columns else " with the Hub's columns"
    return (
        f"pass --source PATH, a local copy of the split: a .jsonl, .json, .csv or .parquet file, or a folder of "
        f'them{named}; docs/building.md, "Without the Hub"'
    )


def hub_offline() -> bool:
    """``HF_HUB_OFFLINE`` (or ``TRANSFORMERS_OFFLINE``) is set: the Hugging Face cache only."""
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return value.strip().lower() in ("1", "on", "yes", "true")


def hub_reachable(timeout_s: float = HUB_PROBE_S) -> bool:
    """Whether a connection to the Hub's host opens within ``timeout_s`` (``HF_ENDPOINT`` honoured): a probe
    before ``datasets`` spends its retries (27 s) on a machine without the network."""
    endpoint = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    port = endpoint.port or (80 if endpoint.scheme == "http" else 443)
    try:
        socket.create_connection((endpoint.hostname or "huggingface.co", port), timeout=timeout_s).close()
    except OSError:
        return False
    return True


def load_hub(hub_id: str, config: str | None, split: str, columns: Sequence[str] = ()) -> Rows:
    """Load one split of a Hub dataset (network or local HF cache); without the network, at once one line saying
    so and how to give the rows instead (``columns``: the ones the benchmark reads)."""
    import datasets

    name = None if config in (None, "", "default") else config
    where = f"Hugging Face dataset {hub_id} ({name or 'default'} config, {split} split)"
    offline = hub_offline()
    if not offline and not hub_reachable():
        raise UserError(
            f"{where}: the Hugging Face Hub cannot be reached from here; {source_hint(columns)} (a copy already in "
            "the Hugging Face cache is read with HF_HUB_OFFLINE=1)"
        )
    try:
        ds = datasets.load_dataset(hub_id, name, split=split)
    except Exception as err:  # network, auth, unknown id/config/split, script datasets: all user-fixable
        hint = ""
        if "scripts are no longer supported" in str(err):
            hint = " (it needs a loading script, which datasets>=4 cannot run; pass a local copy as source)"
        elif offline:
            hint = f" (HF_HUB_OFFLINE is set and it is not in the Hugging Face cache; {source_hint(columns)})"
        raise UserError(f"{where}: could not be loaded: {_first_line(err)}{hint}") from None
    if not isinstance(ds, datasets.Dataset):
        raise UserError(f"{where}: expected one split, got {type(ds).__name__}")
    return Rows(ds, where)
