"""``prefdisco leaderboard --submissions DIR``: a folder of submissions (``submission.py``, every ``*.json`` in it)
read back into a leaderboard, as tau2-bench's site reads its submissions.

Each file is checked against the shipped schema (``submission_format.check_submission``) and refused in one line
naming the file and the place when it is not one. The submissions are ranked together only when they are comparable:

* of one benchmark: the same ``benchmark.content_hash`` (never overridden: their scenarios share ids, not
  content);
* under one protocol: their protocol records compared as runs' are (``results/merge.comparable``, the refusal
  ``prefdisco leaderboard`` and ``report`` make of runs; ``--allow-mixed`` puts them together anyway, the
  differences at the page's top);
* drawn alike: the same bootstrap seed and resamples (their intervals were drawn so, and the board's paired tests
  use them again);
* each model once.

The board is then the leaderboard's own: each submission's figures are its model's rows (``submission_format.
leaderboard_row``), ranked, tested pairwise over the submissions' per-scenario PrefAligns and grouped by
``leaderboard.rank_rows``, and written by ``leaderboard_page`` as a board of runs is; the page's caveats are the
submissions' (each once) and each protocol's simulator shows the reference fidelity its submission carries.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import ValidationError

from prefdisco.analysis.leaderboard.board import BASE_COLUMNS, OVERALL, Leaderboard, column_order, rank_rows
from prefdisco.analysis.leaderboard.submission_format import check_submission, leaderboard_row
from prefdisco.errors import UserError
from prefdisco.results.merge import RunProtocol, comparable
from prefdisco.results.protocol_record import ProtocolRecord

SCENARIO_COLUMNS = ["model", "task", "scenario_id", "baseline", "discovery", "oracle"]


def read_submissions(folder: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Every ``*.json`` of ``folder`` (sorted by name), each checked against the schema."""
    folder = Path(folder)
    if not folder.is_dir():
        raise UserError(f"--submissions {folder}: not a folder (give the --out of prefdisco submit)")
    paths = sorted(folder.glob("*.json"))
    if not paths:
        raise UserError(f"--submissions {folder}: holds no submission (*.json); give the --out of prefdisco submit")
    found = []
    for path in paths:
        try:
            submission = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as e:
            raise UserError(f"{path}: cannot be read ({e})") from None
        except json.JSONDecodeError as e:
            raise UserError(f"{path}: line {e.lineno}: not JSON ({e.msg})") from None
        check_submission(submission, str(path))
        found.append((path, submission))
    return found


def _protocol(path: Path, submission: dict[str, Any]) -> RunProtocol:
    try:
        record = ProtocolRecord.model_validate(submission["protocol"])
    except ValidationError as e:
        first = e.errors()[0]
        place = "/".join(str(p) for p in first["loc"])
        raise UserError(f"{path}: protocol/{place}: {first['msg']}") from None
    return RunProtocol(str(path), record, [record.id])


def _same(found: list[tuple[Path, dict[str, Any]]], what: str, key: Any, refusal: str) -> None:
    """Refuse, naming the first two submissions that differ in ``key(submission)``, with ``refusal``."""
    first_path, first = found[0]
    for path, submission in found[1:]:
        a, b = key(first), key(submission)
        if a != b:
            raise UserError(f"{first_path} and {path} {what} ({a} vs {b}): {refusal}")


def board_of_submissions(folder: Path, allow_mixed: bool = False) -> Leaderboard:
    """The leaderboard of the submissions in ``folder`` (module docstring)."""
    found = read_submissions(folder)
    _same(
        found,
        "are submissions of different benchmarks",
        lambda s: s["benchmark"]["content_hash"],
        "a leaderboard ranks one benchmark; rank each benchmark's submissions apart",
    )
    protocols = [_protocol(path, s) for path, s in found]
    notes = comparable(protocols, allow_mixed)
    _same(
        found,
        "were made with different bootstrap settings",
        lambda s: f"seed {s['bootstrap']['seed']}, {s['bootstrap']['resamples']} resamples",
        "their intervals were not drawn alike; write both with the same prefdisco submit --seed and --bootstrap",
    )
    owner: dict[str, Path] = {}
    for path, s in found:
        if s["model"] in owner:
            first = owner[s["model"]]
            raise UserError(f"{first} and {path} both submit {s['model']}: a leaderboard ranks a model once")
        owner[s["model"]] = path
        if any(r["task"] == OVERALL for r in s["scenarios"]):
            raise UserError(f"{path}: holds a task named {OVERALL!r}, the overall ranking's name")

    tasks = sorted({t for _, s in found for t in s["rankings"] if t != OVERALL})
    rows = [
        leaderboard_row(name, s["model"], s["rankings"][name])
        for name in (OVERALL, *tasks)
        for _, s in found
        if name in s["rankings"]
    ]
    extra = sorted({c for r in rows for c in r if c not in BASE_COLUMNS}, key=column_order)
    rows = [{**{c: None for c in extra}, **r} for r in rows]
    scenarios = pd.DataFrame(
        [{"model": s["model"], **r} for _, s in found for r in s["scenarios"]], columns=SCENARIO_COLUMNS
    )
    seed, n_boot = found[0][1]["bootstrap"]["seed"], found[0][1]["bootstrap"]["resamples"]
    table, pairwise = rank_rows(rows, scenarios, extra, seed=seed, n_boot=n_boot)
    fidelity = {
        str(path): s["simulated_user"]["reference_fidelity"]["reading"]
        for path, s in found
        if s["simulated_user"]["reference_fidelity"] is not None
    }
    return Leaderboard(
        table=table,
        pairwise=pairwise,
        protocols=protocols,
        notes=notes,
        source=str(folder),
        seed=seed,
        n_boot=n_boot,
        caveats=list(dict.fromkeys(c for _, s in found for c in s["caveats"])),
        scenarios=scenarios,
        fidelity=fidelity,
    )
