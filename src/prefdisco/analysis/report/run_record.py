"""What the report's header says of the run's judge settings, read from the ``run.json`` files beside the results.

``prefdisco eval`` records every setting of a run in its folder's ``run.json`` (``evaluation/settings/config.py``). The
report shows the judge's: the judge kind, its temperature (``grader_temperature``; null: the provider's default),
the structured judge's criteria a call (``judge_max_criteria``, recorded only when not the default) and the run seed
(``seed``: every judge call's seed derives from it). The files are the folder's own ``run.json``, else every
``run.json`` below it (a ``--workers`` run's worker folders, runs merged under one parent, a sessions run's
positions); a results file's folder is searched the same way. A table with no ``run.json`` beside it (a hand-made
table) says so.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prefdisco.scoring.criterion_order import DEFAULT_MAX_CRITERIA

RUN_FILE = "run.json"
JUDGE_SETTINGS = ("judge", "grader_temperature", "judge_max_criteria", "seed")
DEFAULTS: dict[str, Any] = {
    "judge": "per_criterion",
    "grader_temperature": 0.0,
    "judge_max_criteria": DEFAULT_MAX_CRITERIA,
    "seed": 0,
}
"""What a ``run.json`` without the key ran with."""
NOT_RECORDED = "judge settings not recorded (no run.json beside the results)"


def run_files(results: Path) -> list[Path]:
    """The ``run.json`` files of RESULTS (a run folder, a parent of runs, or a results file)."""
    folder = Path(results) if Path(results).is_dir() else Path(results).parent
    own = folder / RUN_FILE
    return [own] if own.is_file() else sorted(folder.rglob(RUN_FILE))


def judge_settings(results: Path | Sequence[Path] | None) -> dict[str, Any]:
    """Each judge setting's distinct values over the run's ``run.json`` files (a list, in the order first seen), and
    ``run_files`` (how many were read); empty lists and 0 when there is none."""
    found: dict[str, list[Any]] = {name: [] for name in JUDGE_SETTINGS}
    roots = [] if results is None else [results] if isinstance(results, (str, Path)) else list(results)
    files = [file for root in roots for file in run_files(Path(root))]
    read = 0
    for file in files:
        try:
            record = json.loads(file.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if not isinstance(record, dict):
            continue
        read += 1
        for name in JUDGE_SETTINGS:
            value = record.get(name, DEFAULTS[name])
            if value not in found[name]:
                found[name].append(value)
    return {**found, "run_files": read}


def header_line(settings: dict[str, Any]) -> str:
    """One line for the report's header: the judge, its temperature, criteria a call and the run seed."""
    if not settings.get("run_files"):
        return NOT_RECORDED

    def values(name: str, show=str) -> str:
        return " / ".join(show(v) for v in settings[name]) or "—"

    def temperature(value: Any) -> str:
        return "the provider's default" if value is None else f"{float(value):g}"

    parts = [
        f"judge {values('judge')}",
        f"judge temperature {values('grader_temperature', temperature)}",
        f"run seed {values('seed')} (every judge call's seed derives from it)",
    ]
    if "structured" in settings["judge"]:
        parts.insert(2, f"at most {values('judge_max_criteria')} criteria a structured call")
    return " · ".join(parts)
