"""Several runs as one table, only when their protocols agree (``prefdisco report RUN [RUN …]``, the leaderboard).

A run folder is a submission: runs made by different people on the same protocol merge into one table. Runs are
comparable when their protocol records agree (``results/protocol_record.py``: settings, prompts, simulator,
judges, the benchmark's rubrics); a run with no record (a results file) is compared by the ``protocol_id`` of its
rows, and a run with neither (an older run) by nothing, so it is refused beside another. Incomparable runs are
refused in one line naming the runs and what differs, unless ``allow_mixed`` (``--allow-mixed``): then they merge
and the differences come back as notes the report prints.

One table holds a model once per (task, scenario, condition, trial): a model that two runs both hold (a person and
a simulator playing the user for the same model, or two protocols of it) is named ``MODEL @ RUN`` in each run's
rows (results, attributes and transcripts alike), and a note says so.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from prefdisco.benchio import json_lines
from prefdisco.errors import UserError
from prefdisco.results.contract import PROTOCOL_ID
from prefdisco.results.protocol_record import ProtocolRecord, differences, read_record
from prefdisco.results.table import ResultsData, load_results


@dataclass
class RunProtocol:
    """One run's protocol as far as it is known: its record (a run folder that has one) and its rows' ids."""

    run: str
    record: ProtocolRecord | None
    ids: list[str] = field(default_factory=list)

    @property
    def id(self) -> str | None:
        if self.record is not None:
            return self.record.id
        return self.ids[0] if len(self.ids) == 1 else None

    def summary(self) -> dict[str, object]:
        """What ``summary.json`` says of it (``protocols``)."""
        if self.record is not None:
            return {"run": self.run, **self.record.model_dump(mode="json")}
        return {"run": self.run, "id": self.id, "ids": self.ids}


@dataclass
class Merged:
    data: ResultsData
    protocols: list[RunProtocol]
    notes: list[str] = field(default_factory=list)
    """What the report must say: the protocols mixed under ``--allow-mixed``, the models renamed."""


def run_protocol(path: Path, data: ResultsData) -> RunProtocol:
    record = read_record(path) if path.is_dir() else None
    ids: list[str] = []
    if PROTOCOL_ID in data.results.columns:
        ids = sorted(str(i) for i in data.results[PROTOCOL_ID].dropna().unique())
    return RunProtocol(str(path), record, ids)


def mismatch(a: RunProtocol, b: RunProtocol) -> list[str]:
    """Why ``b`` cannot share a table with ``a`` (empty: it can)."""
    if a.record is not None and b.record is not None:
        return differences(a.record, b.record)
    if a.id is None or b.id is None:
        unknown = a if a.id is None else b
        return [f"{unknown.run} has no protocol record (a run made before protocols were recorded)"]
    if a.id != b.id:
        return [f"protocol {a.id} vs {b.id}"]
    return []


def _transcript_rows(data: ResultsData) -> pd.DataFrame:
    if data.transcript_rows is not None:
        return data.transcript_rows
    if data.transcripts is None:
        return pd.DataFrame()
    rows = []
    for lineno, obj in json_lines(Path(data.transcripts)):
        if isinstance(obj, json.JSONDecodeError):
            raise UserError(f"{data.transcripts}: line {lineno}: not a JSON object ({obj.msg})")
        rows.append(obj)
    return pd.DataFrame(rows)


def _renamed(frame: pd.DataFrame | None, models: set[str], label: str) -> pd.DataFrame | None:
    if frame is None or frame.empty or "model" not in frame.columns:
        return frame
    model = frame["model"].astype(str)
    return frame.assign(model=model.where(~model.isin(models), model + f" @ {label}"))


def _concat(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """``frames`` stacked, a categorical column kept categorical (its categories in the order first seen)."""
    out = pd.concat(frames, ignore_index=True)
    for name in out.columns:
        kinds = [f[name].dtype for f in frames if name in f.columns]
        if kinds and all(isinstance(k, pd.CategoricalDtype) for k in kinds):
            categories = list(dict.fromkeys(c for k in kinds for c in k.categories))
            out[name] = pd.Categorical(out[name], categories=categories, ordered=kinds[0].ordered)
    return out


ROLES_HINT = (
    "the simulated user and the judge default to each run's model under test, so every model met its own user and "
    "judge: run each model with the same --user-model and --judge-model to compare them, or "
)
"""What the refusal adds when the runs differ in their simulated user or judges, the usual cause: runs made with
``eval --model M`` alone."""


def comparable(protocols: Sequence[RunProtocol], allow_mixed: bool = False) -> list[str]:
    """Refuse, in one line naming two of them and what differs, ``protocols`` that do not all agree with the first
    (runs, or the submissions of a board: ``analysis/leaderboard/submission_board.py``); with ``allow_mixed``, the
    notes that
    say what differs instead."""
    notes: list[str] = []
    first = protocols[0]
    for other in protocols[1:]:
        why = mismatch(first, other)
        if why and not allow_mixed:
            shown = "; ".join(why[:4]) + (f"; and {len(why) - 4} more" if len(why) > 4 else "")
            raise UserError(
                f"{first.run} and {other.run} ran different protocols ({shown}): their numbers are not comparable; "
                + (ROLES_HINT if any(w.startswith(("user_model ", "judges ")) for w in why) else "")
                + "give --allow-mixed to put them in one table anyway"
            )
        if why:
            notes.append(f"{other.run} ran another protocol than {first.run} ({'; '.join(why)}) (--allow-mixed)")
    return notes


def load_runs(paths: Sequence[Path], allow_mixed: bool = False) -> Merged:
    """The runs at ``paths`` as one ``ResultsData`` (one path: that run as it is, its protocol checked for rows of
    several protocols), refusing incomparable protocols unless ``allow_mixed``."""
    seen: dict[Path, Path] = {}
    for path in map(Path, paths):  # a run given twice would count its every row twice
        same = seen.setdefault(path.resolve(), path)
        if same is not path:
            twice = str(path) if str(path) == str(same) else f"{same} and {path}"
            raise UserError(f"RESULTS: {twice} given twice (the same run); give each run once")
    loaded = [(Path(p), load_results(Path(p))) for p in paths]
    protocols = [run_protocol(p, d) for p, d in loaded]
    notes: list[str] = []
    for run in protocols:  # one table made of rows of several protocols (results files concatenated by hand)
        if len(run.ids) > 1:
            if not allow_mixed:
                raise UserError(
                    f"{run.run} holds rows of {len(run.ids)} protocols ({', '.join(run.ids)}); their numbers are "
                    "not comparable: report each apart, or give --allow-mixed"
                )
            notes.append(f"{run.run} mixes protocols {', '.join(run.ids)} (--allow-mixed)")
    notes += comparable(protocols, allow_mixed)
    if len(loaded) == 1:
        return Merged(loaded[0][1], protocols, notes)

    held = [set(d.results["model"].astype(str)) for _, d in loaded]
    shared = {m for i, models in enumerate(held) for m in models if any(m in o for j, o in enumerate(held) if j != i)}
    if shared:
        notes.append(
            f"{', '.join(sorted(shared))} appear(s) in more than one run: each run's rows are named MODEL @ RUN"
        )
    results, attributes, transcripts = [], [], []
    for path, data in loaded:
        label = path.name or str(path)
        results.append(_renamed(data.results, shared, label))
        attributes.append(_renamed(data.attributes, shared, label))
        transcripts.append(_renamed(_transcript_rows(data), shared, label))
    merged_results = _concat(results)
    merged_results["row"] = range(1, len(merged_results) + 1)
    kept = [a for a in attributes if a is not None]
    data = ResultsData(
        results=merged_results,
        attributes=_concat(kept) if kept else None,
        transcripts=None,
        source="; ".join(d.source for _, d in loaded),
        attributes_source="; ".join(d.attributes_source for _, d in loaded if d.attributes_source) or None,
        transcript_rows=pd.concat(transcripts, ignore_index=True),
    )
    return Merged(data, protocols, notes)
