"""The re-ask rate of a sessions run: how often the assistant asks the person again about what they already told
it at an earlier problem of the session.

Read from the transcripts (``transcripts.jsonl``, or the rows read from the logs): a reply turn of a user that
records what it revealed (``--user-type targeted``: ``revealed``, the profile attributes its question asked about
and the reply was shown) names what its question was about. For one dialogue — a trial of a scenario at position
p of a session, in one arm (discovery, the cold arm, or a carry arm) — let E be every attribute revealed at
positions 1 … p − 1 of the same session, arm, model, task and trial. A question **re-asks** when its reply revealed
an attribute in E, and

    re-ask rate = questions that re-ask / questions asked (its reply turns)

Not measured (None, never 0): at position 1 (nothing was revealed earlier), for a dialogue that asked nothing, for
a dialogue with a reply turn whose ``revealed`` is null (a user that does not record it), and for every later
position of a session whose earlier dialogue is missing, failed or not measured. A question about an attribute
the current profile lacks is read as ``none`` by the targeted user (revealed []): it counts as asked, not as a
re-ask. A changed attribute (``--drift``) asked again counts as a re-ask: the assistant could not know it changed.

A scenario's rate is the mean over its measured trials, as every statistic averages trials first (``trials.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from prefdisco.analysis.paper.examples import json_objects
from prefdisco.analysis.transfer.measures import ARMS

KEY: tuple[str, ...] = ("model", "task", "scenario_id", "mode", "epoch")
RATE_COLUMNS: tuple[str, ...] = ("model", "task", "scenario_id", "mode", "reask_rate", "reask_trials")


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    """The transcripts of the arms in a transcripts.jsonl (a line naming no arm is not parsed)."""
    lines = json_objects(path, lambda line: any(arm in line for arm in ARMS))
    return (obj for obj in lines if obj.get("mode") in ARMS)


def _epoch(value: object) -> int:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 1
    return 1 if np.isnan(number) else int(number)


def _dialogues(objects: Iterable[dict[str, Any]]) -> dict[tuple[str, ...], list[list[str] | None]]:
    """Key (``KEY``, as text) → each reply turn's ``revealed`` list (None: not recorded)."""
    out: dict[tuple[str, ...], list[list[str] | None]] = {}
    for obj in objects:
        key = (*(str(obj.get(k, "")) for k in KEY[:4]), str(_epoch(obj.get("epoch"))))
        turns = obj.get("turns")
        if not isinstance(turns, list | np.ndarray):
            continue
        replies = [t for t in turns if isinstance(t, dict) and t.get("kind") == "reply"]
        out[key] = [None if t.get("revealed") is None else [str(a) for a in t["revealed"]] for t in replies]
    return out


def transcript_dialogues(
    path: Path | None, rows: pd.DataFrame | None
) -> dict[tuple[str, ...], list[list[str] | None]] | None:
    """The arms' dialogues of the transcripts (``_dialogues``); None when the run has no transcripts."""
    if rows is not None:
        if rows.empty or "turns" not in rows.columns or "mode" not in rows.columns:
            return {}
        return _dialogues(rows.loc[rows["mode"].astype(str).isin(ARMS)].to_dict("records"))
    if path is None or not Path(path).is_file():
        return None
    return _dialogues(_lines(Path(path)))


def trial_rates(trial_rows: pd.DataFrame, dialogues: dict[tuple[str, ...], list[list[str] | None]]) -> pd.DataFrame:
    """The re-ask rate of every trial of the arms (module docstring): ``KEY`` and ``reask_rate`` (NaN: not
    measured)."""
    keep = trial_rows["session_id"].notna().to_numpy() & trial_rows["mode"].isin(ARMS).to_numpy()
    rows = trial_rows.loc[keep]
    frame = pd.DataFrame(
        {
            "model": rows["model"].astype(str).to_numpy(),
            "task": rows["task"].astype(str).to_numpy(),
            "scenario_id": rows["scenario_id"].astype(str).to_numpy(),
            "mode": rows["mode"].astype(str).to_numpy(),
            "epoch": rows["epoch"].to_numpy(dtype=int),
            "session_id": rows["session_id"].astype(str).to_numpy(),
            "position": rows["position"].to_numpy(dtype=float).astype(int),
            "failed": rows["failed"].to_numpy(dtype=bool),
        }
    ).sort_values(["model", "task", "mode", "session_id", "epoch", "position"], ignore_index=True)
    rates = np.full(len(frame), np.nan)
    for _, chain in frame.groupby(["model", "task", "mode", "session_id", "epoch"], sort=False):
        earlier: set[str] | None = set()  # None once an earlier position is not measured
        expected = 1
        for i, r in zip(chain.index, chain.itertuples(index=False), strict=True):
            replies = None if r.failed else dialogues.get((r.model, r.task, r.scenario_id, r.mode, str(r.epoch)))
            if r.position != expected or replies is None or any(v is None for v in replies):
                earlier = None  # a gap in the chain, a failed or unrecorded dialogue: nothing after it is known
            if earlier is not None and replies and r.position > 1:
                rates[i] = sum(bool(earlier.intersection(v or ())) for v in replies) / len(replies)
            if earlier is not None and replies is not None:
                earlier.update(a for v in replies for a in (v or ()))
            expected = r.position + 1
    return frame.drop(columns=["session_id", "position", "failed"]).assign(reask_rate=rates)


Dialogues = dict[tuple[str, ...], list[list[str] | None]]
"""(model, task, scenario_id, mode, epoch) as text → each reply turn's ``revealed`` (None: not recorded)."""


def reask_rates(trial_rows: pd.DataFrame, dialogues: Dialogues | None) -> pd.DataFrame:
    """Per (model, task, scenario_id, arm): the mean re-ask rate over the measured trials (``reask_trials``); empty
    when the transcripts are missing or nothing was measured."""
    if dialogues is None or "session_id" not in trial_rows.columns:
        return pd.DataFrame(columns=list(RATE_COLUMNS))
    trials = trial_rates(trial_rows, dialogues).dropna(subset=["reask_rate"])
    if trials.empty:
        return pd.DataFrame(columns=list(RATE_COLUMNS))
    out = (
        trials.groupby(["model", "task", "scenario_id", "mode"], sort=True)["reask_rate"]
        .agg(reask_rate="mean", reask_trials="size")
        .reset_index()
    )
    return out[list(RATE_COLUMNS)]
