"""One run folder as a list of trials: each results row joined with its transcript.

A trial is one (model, task, scenario_id, mode, fixed_k, epoch): its scores from the results table
(``results/table.py`` reads and validates it, or reads the eval logs when the folder has no table) and, from
``transcripts.jsonl`` (or the logs), the messages the assistant saw and its final response. A row without a
transcript keeps empty messages, so an export can count it instead of losing it silently.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from prefdisco.benchio import json_lines
from prefdisco.errors import UserError
from prefdisco.results.table import load_results

Key = tuple[str, str, str, str, int | None, int]
"""(model, task, scenario_id, mode, fixed_k, epoch): the results table's row key."""


@dataclass(frozen=True)
class Trial:
    model: str
    task: str
    scenario_id: str
    mode: str
    fixed_k: int | None
    epoch: int
    pref_align: float | None
    correct: bool | None
    failed: bool
    messages: list[dict[str, str]] = field(default_factory=list)
    final_response: str | None = None

    @property
    def key(self) -> Key:
        return (self.model, self.task, self.scenario_id, self.mode, self.fixed_k, self.epoch)

    @property
    def has_dialogue(self) -> bool:
        return bool(self.messages) and bool((self.final_response or "").strip())

    def identity(self) -> dict[str, Any]:
        """Which trial this is and how it scored (for an export row's metadata)."""
        return {
            "model": self.model,
            "mode": self.mode,
            "fixed_k": self.fixed_k,
            "epoch": self.epoch,
            "pref_align": self.pref_align,
            "correct": self.correct,
        }


def _missing(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)) or value == ""


def _k(value: object) -> int | None:
    return None if _missing(value) else int(float(value))  # type: ignore[arg-type]


def key_of(obj: dict[str, Any]) -> Key:
    epoch = obj.get("epoch")
    return (
        str(obj.get("model", "")),
        str(obj.get("task", "")),
        str(obj.get("scenario_id", "")),
        str(obj.get("mode", "")),
        _k(obj.get("fixed_k")),
        1 if _missing(epoch) else int(float(epoch)),  # type: ignore[arg-type]
    )


def _messages(value: object, where: str) -> list[dict[str, str]]:
    if hasattr(value, "tolist"):  # an array, from a frame read back from Parquet
        value = value.tolist()
    if _missing(value):
        return []
    if not isinstance(value, list | tuple):
        raise UserError(f"{where}: field messages: expected a list of {{role, content}} objects")
    out = []
    for m in value:
        if not isinstance(m, dict) or "role" not in m:
            raise UserError(f"{where}: field messages: expected a list of {{role, content}} objects")
        content = m.get("content")
        out.append({"role": str(m["role"]), "content": "" if _missing(content) else str(content)})
    return out


def _transcripts_from_file(path: Path) -> Iterable[tuple[str, dict[str, Any]]]:
    for lineno, obj in json_lines(path):
        if isinstance(obj, Exception) or not isinstance(obj, dict):
            raise UserError(f"{path}:{lineno}: expected one JSON object per line (a transcript)")
        yield f"{path}:{lineno}", obj


def _transcripts(rows: pd.DataFrame | None, path: Path | None, run_dir: Path) -> dict[Key, tuple[str, dict]]:
    if rows is not None:
        found: Iterable[tuple[str, dict[str, Any]]] = (
            (f"{run_dir} (transcripts from logs) row {i + 1}", obj) for i, obj in enumerate(rows.to_dict("records"))
        )
    elif path is not None and path.is_file():
        found = _transcripts_from_file(path)
    else:
        raise UserError(f"{run_dir}: no transcripts.jsonl beside the results table; the export needs the dialogues")
    index: dict[Key, tuple[str, dict]] = {}
    for where, obj in found:
        index.setdefault(key_of(obj), (where, obj))
    return index


def _number(value: object) -> float | None:
    return None if _missing(value) else float(value)  # type: ignore[arg-type]


def read_trials(run_dir: Path) -> tuple[list[Trial], str]:
    """Every trial of the run (results-table order) and where its results came from."""
    data = load_results(Path(run_dir))
    transcripts = _transcripts(data.transcript_rows, data.transcripts, Path(run_dir))
    trials = []
    for row in data.results.to_dict("records"):
        key = key_of(row)
        where, obj = transcripts.get(key, ("", {}))
        correct = _number(row["correct"])
        final = obj.get("final_response")
        trials.append(
            Trial(
                model=key[0],
                task=key[1],
                scenario_id=key[2],
                mode=key[3],
                fixed_k=key[4],
                epoch=key[5],
                pref_align=_number(row["pref_align"]),
                correct=None if correct is None else correct > 0,
                failed=bool(row["failed"]),
                messages=_messages(obj.get("messages"), where) if obj else [],
                final_response=None if _missing(final) else str(final),
            )
        )
    return trials, data.source
