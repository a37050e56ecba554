"""``prefdisco submit RUN [RUN …] --out DIR``: one submission per model of each run, a JSON file in the shipped
format (``submission_format.py``, ``analysis/leaderboard/schemas/submission.schema.json``), for a leaderboard that ranks
submissions (``prefdisco leaderboard --submissions DIR``, ``submission_board.py``; tau2-bench's pattern).

A submission names what its numbers are of and how they were made: the model; the benchmark by its content hash as
the run recorded it (``protocol.json``'s ``benchmark``: a benchmark folder's manifest ``content_hash``, a file's
sha256), its rubrics hash and the run's scenario set; the run's whole settled protocol record (its id, the
settings as sent, what each role was sent and not sent), whether that protocol is a shipped one, the simulated
user (type, model, and, given ``--reference-table``, its reference fidelity against real people where that table
measured the same simulated user, ``analysis/validity/reference.py``), the judges, the trials, the bootstrap's seed and
resamples, and the PrefDisco version.

Its figures are the leaderboard's row of the model in each ranking (overall and per task), computed by the leaderboard's
own code (``leaderboard.build_leaderboard``) over the model's run: the report's numbers (NormAlign and its interval, the
per-scenario summary with the share of negative NormAlign, PrefAlign per condition, accuracy per condition with its
Wilson interval, mean questions, cost per scenario, harms, transfer), the non-answers per task and condition
(``summary.json``'s ``non_answers``), the per-scenario PrefAligns a board's paired tests resample, and the caveats of
the run's report. Every figure of a model depends on its own rows and the seed only (each stream is seeded by model and
task), so a model's submission holds the numbers a leaderboard of its run beside any other gives it.

A run must be a run folder whose ``protocol.json`` records the benchmark's content hash (a run made before it was
recorded: rerun its ``prefdisco eval`` in the same folder, which resumes without a call and records it). Everything is
computed and checked against the schema before anything is written; an ``--out`` that is one of the runs is refused, one
holding a file of a name about to be written (or a benchmark) without ``--overwrite``; each file is written atomically.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from prefdisco.analysis.leaderboard.board import BASE_COLUMNS, OVERALL, Leaderboard, build_leaderboard
from prefdisco.analysis.leaderboard.submission_format import FORMAT, check_submission, ranking_figures
from prefdisco.analysis.report.run_record import RUN_FILE
from prefdisco.analysis.section.shown import plain
from prefdisco.analysis.stats.bootstrap import check_resamples
from prefdisco.analysis.stats.trials import average_trials, trial_counts
from prefdisco.analysis.validity.non_answers import non_answer_table, non_answers_summary
from prefdisco.analysis.validity.reference import ReferenceTable, load_reference_table, match, simulator_fidelity
from prefdisco.atomic import atomic_write
from prefdisco.errors import UserError
from prefdisco.overwrite import refuse_overwrite
from prefdisco.results.merge import RunProtocol, load_runs
from prefdisco.results.protocol_record import ProtocolRecord, read_record, setting
from prefdisco.results.table import ResultsData
from prefdisco.version import __version__

STANDARD = ("default-", "targeted-", "paper-", "demo-")
"""The shipped protocols' names (``evaluation/protocol/protocols.SHIPPED``: ``NAME-vN.X``); any other id is ``custom-…``
or a person's ``human-…``."""


def file_name(model: str) -> str:
    """The submission file of ``model``: its name with every run of other characters than letters, digits, ``.``,
    ``_`` and ``-`` made one ``_``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("_.") + ".json"


def _run_json(run: Path) -> dict[str, Any]:
    try:
        found = json.loads((run / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def run_record(run: Path) -> ProtocolRecord:
    """The protocol record of the run folder ``run``, refused in one line when it cannot name its benchmark."""
    if not run.exists():
        raise UserError(f"RUN {run}: no such run folder")
    record = read_record(run) if run.is_dir() else None
    if record is None:
        raise UserError(
            f"RUN {run}: no protocol.json; a submission is made of an eval run folder (--log-dir), which records what "
            "its numbers were made under"
        )
    if not record.benchmark:
        raise UserError(
            f"RUN {run}: its protocol.json records no benchmark content hash (a run made before it was recorded); "
            "rerun its prefdisco eval with the same benchmark and --log-dir (it resumes without a call) to record it"
        )
    return record


def _fidelity(table: ReferenceTable | None, protocol: RunProtocol) -> dict[str, Any] | None:
    """The simulated user's reference fidelity against the people of ``table`` (None: no table given)."""
    if table is None or protocol.record is None:
        return None
    label, _ = match(table, protocol.record)
    row = next((r for r in table.rows[1:] if str(r["simulator"]) == label), {}) if label is not None else {}
    return {
        "value": row.get("reference_fidelity"),
        "low": row.get("reference_fidelity_low"),
        "high": row.get("reference_fidelity_high"),
        "against": table.reference,
        "reading": simulator_fidelity(table, protocol),
    }


def _scenario_summary(cells: pd.DataFrame, model: str, task: str) -> dict[str, Any]:
    """``summary.json``'s ``normalign_scenarios`` of one cell (the pooled cell for the overall ranking)."""
    cell = cells.loc[(cells["model"] == model) & (cells["task"] == task)].iloc[0]
    return {
        "median": cell["scenario_median"],
        "share_negative": cell["scenario_share_negative"],
        "n_defined": int(cell["scenario_n_defined"]),
        "n_excluded": int(cell["scenario_n_excluded"]),
    }


def _submission(
    model: str,
    board: Leaderboard,
    data: ResultsData,
    protocol: RunProtocol,
    run_settings: dict[str, Any],
    reference: ReferenceTable | None,
) -> dict[str, Any]:
    """The submission of ``model`` from its run's leaderboard ``board`` (every figure the board's)."""
    record = protocol.record
    assert record is not None and record.benchmark  # run_submissions checked both (run_record)
    assert board.cells is not None and board.scenarios is not None  # build_leaderboard sets both
    extra = [c for c in board.table.columns if c not in BASE_COLUMNS]
    rankings = {}
    for row in board.table.loc[board.table["model"] == model].to_dict("records"):
        summary = _scenario_summary(board.cells, model, row["task"])
        rankings[row["task"]] = ranking_figures(plain(row), plain(summary), extra)
    rows = data.results.loc[data.results["model"].astype(str) == model]
    mine = board.scenarios.loc[board.scenarios["model"] == model]
    sent = record.settings
    return plain(
        {
            "format": FORMAT,
            "prefdisco_version": __version__,
            "model": model,
            "benchmark": {
                "content_hash": record.benchmark,
                "rubrics": record.rubrics,
                "scenario_set": run_settings.get("scenario_set"),
                "n_scenarios": run_settings.get("n_scenarios"),
            },
            "protocol": record.model_dump(mode="json"),
            "standard_protocol": record.id.startswith(STANDARD),
            "simulated_user": {
                "type": setting(record, "user_type"),
                "model": record.user_model,
                "reference_fidelity": _fidelity(reference, protocol),
            },
            "judges": {
                "models": record.judges,
                "kind": setting(record, "judge"),
                "repeats": setting(record, "judge_repeats"),
                "temperature": sent.get("grader_temperature"),
            },
            "trials": {"epochs": run_settings.get("epochs"), **trial_counts(rows, average_trials(rows))},
            "bootstrap": {"seed": board.seed, "resamples": board.n_boot},
            "rankings": rankings,
            "non_answers": non_answers_summary(non_answer_table(rows)).get(model, {}),
            "scenarios": mine[["task", "scenario_id", "baseline", "discovery", "oracle"]].to_dict("records"),
            "caveats": list(board.caveats),
        }
    )


def run_submissions(
    run: Path, *, seed: int, n_boot: int, reference: ReferenceTable | None = None
) -> dict[str, dict[str, Any]]:
    """model → its submission, for every model of the run folder ``run`` (module docstring)."""
    run_record(run)  # before any table is read
    merged = load_runs([run])
    protocol = merged.protocols[0]
    board = build_leaderboard(merged.data, seed=seed, n_boot=n_boot, protocols=merged.protocols, notes=merged.notes)
    models = [str(m) for m in dict.fromkeys(board.table.loc[board.table["task"] == OVERALL, "model"])]
    settings = _run_json(run)
    return {m: _submission(m, board, merged.data, protocol, settings, reference) for m in models}


def make_submissions(
    runs: Sequence[Path],
    out: Path,
    *,
    seed: int = 0,
    n_boot: int = 1000,
    reference_table: Path | None = None,
    overwrite: bool = False,
) -> list[Path]:
    """Write one submission per model of ``runs`` to ``out`` (module docstring); the files written."""
    check_resamples(n_boot)  # before any file is read
    paths = [Path(p) for p in runs]
    if not paths:
        raise UserError("RUN: give at least one eval run folder")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a folder")
    for run in paths:
        if run.is_dir() and run.resolve() == out.resolve():
            raise UserError(
                f"--out {out}: is the run folder {run}; leaderboard --submissions reads every *.json of a folder, and "
                "a run's own (run.json, protocol.json) are no submissions: give a folder of its own"
            )
    refuse_overwrite(out, overwrite)  # a benchmark there
    reference = load_reference_table(reference_table) if reference_table is not None else None
    files: dict[str, tuple[Path, dict[str, Any]]] = {}
    for run in paths:
        for model, submission in run_submissions(run, seed=seed, n_boot=n_boot, reference=reference).items():
            name = file_name(model)
            if name in files:
                other, held = files[name]
                both = f"both hold {model}" if held["model"] == model else f"hold {held['model']} and {model}"
                raise UserError(
                    f"RUN: {other} and {run} {both}, one submission file ({name}): give each run to its own --out"
                )
            check_submission(submission, f"{name} (of {run})")
            files[name] = (run, submission)
    for name in files:
        refuse_overwrite(out / name, overwrite)
    written = []
    for name, (_, submission) in files.items():
        atomic_write(out / name, json.dumps(submission, indent=2, allow_nan=False) + "\n")
        written.append(out / name)
    return written
