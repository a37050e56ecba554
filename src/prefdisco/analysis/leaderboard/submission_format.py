"""The submission format (``analysis/leaderboard/schemas/submission.schema.json``, JSON Schema 2020-12, package data):
the one check of a submission against the schema, and a model's figures in one ranking as the leaderboard's columns and
back.

A ranking's figures (the schema's ``figures``) are the leaderboard's row of that model in that ranking
(``leaderboard.BASE_COLUMNS`` and the harms, transfer and cost columns), grouped: NormAlign with its interval and
reason, the per-scenario summary (median, share negative), PrefAlign per condition (the oracle's with its
interval), accuracy per condition with its Wilson interval and n, the mean questions, the cost per scenario, the
harms (``harm:MEASURE[CONDITION]``, keyed ``MEASURE[CONDITION]``) and the transfer figures (``transfer_gain[ARM]``,
``transfer_gain_slope[ARM]``). ``leaderboard_row`` gives the same columns back, so a board of submissions is ranked
by the leaderboard's own code on the same numbers (``submission_board.py``).
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

from prefdisco.analysis.leaderboard.board import USD_PER_SCENARIO
from prefdisco.errors import UserError
from prefdisco.schema import CONDITIONS

FORMAT = "prefdisco-submission/1"
SCHEMA_FILE = "submission.schema.json"
HARM = "harm:"
SUFFIXES = ("_low", "_high")
SHOWN_ERROR = 160
"""The most characters of the schema's own message a refusal quotes (it can hold a whole object)."""


@cache
def schema() -> dict[str, Any]:
    """The shipped schema (``prefdisco/analysis/schemas/submission.schema.json``)."""
    text = files("prefdisco.analysis.leaderboard").joinpath("schemas", SCHEMA_FILE).read_text(encoding="utf-8")
    found: dict[str, Any] = json.loads(text)
    return found


def check_submission(submission: Any, where: str) -> None:
    """Refuse ``submission`` (read from ``where``) in one line unless it is valid under the shipped schema: its
    format first, then the schema's most relevant error with the place it was found."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    if not isinstance(submission, dict) or submission.get("format") != FORMAT:
        found = submission.get("format") if isinstance(submission, dict) else type(submission).__name__
        raise UserError(f"{where}: not a PrefDisco submission (format {found!r}, expected {FORMAT!r})")
    error = best_match(Draft202012Validator(schema()).iter_errors(submission))
    if error is not None:
        place = "/".join(str(p) for p in error.absolute_path) or "the top level"
        message = error.message if len(error.message) <= SHOWN_ERROR else error.message[: SHOWN_ERROR - 1] + "…"
        raise UserError(f"{where}: {place}: {message} (prefdisco/analysis/schemas/{SCHEMA_FILE})")


def _split(column: str) -> tuple[str, str]:
    """A column's figure and its suffix (``''``, ``_low`` or ``_high``)."""
    for suffix in SUFFIXES:
        if column.endswith(suffix):
            return column.removesuffix(suffix), suffix
    return column, ""


def _interval(value: Any, low: Any, high: Any) -> dict[str, Any]:
    return {"value": value, "low": low, "high": high}


def ranking_figures(row: dict[str, Any], scenarios: dict[str, Any], extra_cols: list[str]) -> dict[str, Any]:
    """The schema's ``figures`` of a leaderboard row (``row``: its columns; ``extra_cols``: its harms, transfer and
    cost columns; ``scenarios``: the ranking's per-scenario NormAlign summary)."""
    out: dict[str, Any] = {
        "n_scenarios": int(row["n_scenarios"]),
        "normalign": {
            **_interval(row["normalign"], row["normalign_low"], row["normalign_high"]),
            "reason": row["normalign_reason"] or "",
        },
        "normalign_scenarios": scenarios,
        "pref_align": {
            "baseline": row["mean_baseline"],
            "discovery": row["mean_discovery"],
            "oracle": _interval(row["oracle_pref_align"], row["oracle_pref_align_low"], row["oracle_pref_align_high"]),
        },
        "accuracy": {
            m: {**_interval(*(row[f"accuracy_{m}{s}"] for s in ("", *SUFFIXES))), "n": row[f"accuracy_{m}_n"]}
            for m in CONDITIONS
        },
        "mean_questions": row["mean_questions"],
        "harms": {},
        "transfer": {},
    }
    for column in extra_cols:
        if column == USD_PER_SCENARIO:
            out[USD_PER_SCENARIO] = row[column]
            continue
        figure, suffix = _split(column)
        group, key = ("harms", figure.removeprefix(HARM)) if figure.startswith(HARM) else ("transfer", figure)
        out[group].setdefault(key, {})[(suffix or "_value")[1:]] = row[column]
    return out


def leaderboard_row(task: str, model: str, figures: dict[str, Any]) -> dict[str, Any]:
    """The leaderboard's row (``BASE_COLUMNS`` and the extra columns the figures hold) of ``figures`` (the schema's
    ``figures`` of ``model`` in the ranking ``task``); ``rank``, ``group`` and ``group_reason`` left to the ranking."""
    normalign, pref = figures["normalign"], figures["pref_align"]
    row: dict[str, Any] = {"task": task, "rank": None, "group": None, "model": model, "group_reason": ""}
    row |= {
        "normalign": normalign["value"],
        "normalign_low": normalign["low"],
        "normalign_high": normalign["high"],
        "normalign_reason": normalign["reason"],
        "oracle_pref_align": pref["oracle"]["value"],
        "oracle_pref_align_low": pref["oracle"].get("low"),
        "oracle_pref_align_high": pref["oracle"].get("high"),
        "mean_baseline": pref["baseline"],
        "mean_discovery": pref["discovery"],
    }
    for m in CONDITIONS:
        a = figures["accuracy"][m]
        row |= {f"accuracy_{m}": a["value"], f"accuracy_{m}_low": a["low"], f"accuracy_{m}_high": a["high"]}
        row[f"accuracy_{m}_n"] = a["n"]
    row |= {"mean_questions": figures["mean_questions"], "n_scenarios": figures["n_scenarios"]}
    for group, prefix in (("harms", HARM), ("transfer", "")):
        for key, parts in figures[group].items():
            for part, value in parts.items():
                row[f"{prefix}{key}{'' if part == 'value' else '_' + part}"] = value
    if USD_PER_SCENARIO in figures:
        row[USD_PER_SCENARIO] = figures[USD_PER_SCENARIO]
    return row
