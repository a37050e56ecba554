"""What an ``--out`` already holds, and the one refusal to replace it without ``--overwrite``.

``build``, ``personas``, ``import-release`` and ``export-release`` write a benchmark folder or one file (``publish``
a published folder, refusing any ``--out`` that holds anything). Before any
work they ask :func:`refuse_overwrite`: an ``--out`` that holds a benchmark, a persona library, a release or any
other non-empty file is refused in one line naming what is there and how many scenarios, personas or records it
holds, unless ``--overwrite`` is given. An absent path, an empty file and a folder without benchmark files hold
nothing to lose. (``build`` resumes into its own folder when the settings are the same: ``builder/setup.py``.)
"""

from __future__ import annotations

import json
from pathlib import Path

from prefdisco.benchio import HASHED_FILES, MANIFEST_FILE, SCENARIOS_FILE
from prefdisco.errors import UserError
from prefdisco.wording import counted


def _records(path: Path) -> list[dict[str, object] | None]:
    """Each non-blank line of a text file as a JSON object (None for a line that is not one)."""
    out: list[dict[str, object] | None] = []
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.strip():
                    try:
                        value = json.loads(line)
                    except json.JSONDecodeError:
                        value = None
                    out.append(value if isinstance(value, dict) else None)
    except OSError:
        return []
    return out


def _jsonl_holds(path: Path) -> str:
    """``4 scenarios``, ``a persona library of 100 personas``, ``a prefq-bench release of 3 records``, ``a session
    set of 5 sessions`` or ``12 lines``: what a JSONL file holds, judged by its first line."""
    records = _records(path)
    first = (records[0] if records else None) or {}
    if first.get("type") in ("metadata", "personalized_problem"):
        n = sum(1 for r in records if r and r.get("type") == "personalized_problem")
        return f"a prefq-bench release of {counted(n, 'record')}"
    if first.get("type") == "session_set":
        n = sum(1 for r in records if r and r.get("type") == "session")
        return f"a session set of {counted(n, 'session')}"
    if {"problem", "persona", "profile"} <= set(first):
        return counted(len(records), "scenario")
    if {"name", "occupation", "big_five"} <= set(first):
        return f"a persona library of {counted(len(records), 'persona')}"
    return counted(len(records), "line")


def bench_scenarios(folder: Path) -> int:
    """How many scenarios a benchmark folder holds (its manifest's count, else the lines of its scenarios file)."""
    try:
        manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
        return int(manifest["counts"]["scenarios"])
    except (OSError, ValueError, KeyError, TypeError):
        return len(_records(folder / SCENARIOS_FILE))


PUBLISHED_MANIFEST = Path("prefdisco") / MANIFEST_FILE
"""The manifest of a folder ``prefdisco publish`` wrote (``publish/layout.py``'s ``BENCH`` folder)."""

REPORT_MARKERS = ("report.html", "summary.json")
"""The files that make a folder a ``prefdisco report`` folder."""


def report_of(folder: Path) -> str | None:
    """The results ``folder``'s report is of (its ``summary.json``'s ``source``); None when it holds no report."""
    folder = Path(folder)
    if not all((folder / name).is_file() for name in REPORT_MARKERS):
        return None
    try:
        source = json.loads((folder / "summary.json").read_text(encoding="utf-8")).get("source")
    except (OSError, ValueError, AttributeError):
        source = None
    return str(source or "unknown results")


def holds(path: Path) -> str | None:
    """What ``path`` holds that writing there would replace, in words; None when nothing would be lost."""
    path = Path(path)
    if path.is_dir():
        if (path / MANIFEST_FILE).is_file():
            return f"a benchmark of {counted(bench_scenarios(path), 'scenario')}"
        if (path / PUBLISHED_MANIFEST).is_file():
            return f"a published benchmark of {counted(bench_scenarios(path / PUBLISHED_MANIFEST.parent), 'scenario')}"
        n = len(_records(path / SCENARIOS_FILE)) if (path / SCENARIOS_FILE).is_file() else 0
        if n:
            return f"{SCENARIOS_FILE} with {counted(n, 'scenario')}"
        source = report_of(path)
        if source is not None:
            return f"the report of {source}"
        return None
    if not path.is_file() or path.stat().st_size == 0:
        return None
    folder = path.parent
    if path.name in (*HASHED_FILES, MANIFEST_FILE) and (folder / MANIFEST_FILE).is_file():
        return f"the {path.name} of the benchmark folder {folder} ({counted(bench_scenarios(folder), 'scenario')})"
    if path.suffix == ".jsonl":
        return _jsonl_holds(path)
    return f"a file of {counted(path.stat().st_size, 'byte')}"


def refuse_overwrite(path: Path, overwrite: bool, flag: str = "--out", note: str = "") -> None:
    """Raise a one-line ``UserError`` when ``path`` holds something and ``overwrite`` is not given."""
    if overwrite:
        return
    held = holds(path)
    if held is not None:
        raise UserError(f"{flag} {path}: holds {held}; give --overwrite to replace it{note}, or another {flag}")
