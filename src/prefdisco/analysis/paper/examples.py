"""Appendix C: qualitative examples — one scenario's baseline, discovery and oracle side by side.

Automatic picks (among rows that did not fail), ``n`` per kind, no scenario twice:
* ``monotone gain``: baseline < discovery < oracle PrefAlign; largest discovery − baseline first;
* ``discovery worse than baseline``: discovery < baseline; largest drop first;
* ``correct baseline turned incorrect``: baseline correct, discovery incorrect; most questions asked first.
Ties are broken by model, task and scenario id. When no scenario fits a kind (a run too small or too flat, such as
the embedded demo), the first scenario scored in all three conditions (else the first scenario) is shown as
``FALLBACK``, so a report never lacks an example while examples are on. Chosen scenario ids are shown for every
(model, task) they appear in. Beside baseline, discovery and oracle, an example shows each fixed-K condition the
scenario ran (``fixed_k=K``, the dialogue of K forced questions). Scores are the trials' averages
(``trials.py``); the transcript shown is the first trial's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from prefdisco.errors import UserError
from prefdisco.results.contract import FIXED_K_MODE, condition_label
from prefdisco.schema import CONDITIONS

KINDS = ("monotone gain", "discovery worse than baseline", "correct baseline turned incorrect")
FALLBACK = "first scenario (none fits a kind)"
FEW_SCENARIOS = 10
"""A run of fewer scenarios leads its HTML and Markdown report with one dialogue (``lead_dialogue``): its intervals
are absent (under 4 scenarios) or span much of the scale, so its numbers say little, and its dialogues are few
enough to read."""


@dataclass
class ModeView:
    mode: str
    pref_align: float | None
    correct: bool | None
    n_questions: int | None
    messages: list[dict[str, str]] = field(default_factory=list)
    final_response: str = ""
    has_transcript: bool = False


@dataclass
class Example:
    kind: str
    model: str
    task: str
    scenario_id: str
    modes: list[ModeView]
    attributes: list[dict[str, object]]


@dataclass
class Lead:
    """The dialogue a small run's report shows near its top: one condition of its first example."""

    example: Example
    view: ModeView
    n_scenarios: int


def lead_dialogue(examples: list[Example], n_scenarios: int) -> Lead | None:
    """For a run of fewer than ``FEW_SCENARIOS`` scenarios, the first example's condition with a transcript that
    asked the most questions (a fixed-K or discovery dialogue, where there is one); None for a larger run or when
    no example has a transcript."""
    if n_scenarios >= FEW_SCENARIOS:
        return None
    for example in examples:
        shown = [v for v in example.modes if v.has_transcript]
        if shown:
            return Lead(example, max(shown, key=lambda v: v.n_questions or 0), n_scenarios)
    return None


def _wide(results: pd.DataFrame) -> pd.DataFrame:
    rows = results.loc[~results["failed"].to_numpy() & results["mode"].isin(CONDITIONS).to_numpy()]
    rows = rows.astype({"model": str, "task": str, "scenario_id": str, "mode": str})
    wide = rows.pivot(
        index=["model", "task", "scenario_id"],
        columns="mode",
        values=["pref_align", "correct", "n_questions"],
    )
    wide.columns = [f"{v}_{m}" for v, m in wide.columns]
    for v in ("pref_align", "correct", "n_questions"):
        for m in CONDITIONS:
            if f"{v}_{m}" not in wide.columns:
                wide[f"{v}_{m}"] = np.nan
    return wide.reset_index()


def pick(wide: pd.DataFrame, n: int, chosen: list[str]) -> list[tuple[str, str, str, str]]:
    """(kind, model, task, scenario_id) tuples to show, from the ``_wide`` per-scenario table."""
    keys = ["model", "task", "scenario_id"]
    b, d, o = (wide[f"pref_align_{m}"] for m in CONDITIONS)
    picks: list[tuple[str, str, str, str]] = []
    seen: set[tuple[str, str, str]] = set()
    for sid in chosen:
        found = wide.loc[wide["scenario_id"] == sid, keys]
        if found.empty:
            raise UserError(f"--scenario {sid}: no such scenario_id in the results table")
        for key in found.itertuples(index=False):
            picks.append(("chosen", *key))
            seen.add(tuple(key))
    if n <= 0:
        return picks
    candidates = {
        KINDS[0]: wide.assign(_s=d - b).loc[(b < d) & (d < o)],
        KINDS[1]: wide.assign(_s=b - d).loc[d < b],
        KINDS[2]: wide.assign(_s=wide["n_questions_discovery"].fillna(0)).loc[
            (wide["correct_baseline"] == 1) & (wide["correct_discovery"] == 0)
        ],
    }
    for kind, frame in candidates.items():
        ordered = frame.sort_values(["_s", *keys], ascending=[False, True, True, True])
        taken = 0
        for key in ordered[keys].itertuples(index=False):
            if taken == n:
                break
            if tuple(key) in seen:
                continue
            seen.add(tuple(key))
            picks.append((kind, *key))
            taken += 1
    if not picks and len(wide):
        complete = wide.loc[b.notna() & d.notna() & o.notna()]
        first = (complete if len(complete) else wide).sort_values(keys).iloc[0]
        picks.append((FALLBACK, str(first["model"]), str(first["task"]), str(first["scenario_id"])))
    return picks


def _k(value: object) -> str:
    """A row's or transcript's K as text: empty for the conditions without one."""
    if value is None or value == "" or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return ""
    try:
        return str(int(float(value)))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(value)


def _key(obj: dict) -> tuple[str, ...]:
    """(model, task, scenario_id, mode, K) of a transcript, K empty for the conditions without one."""
    return (*(str(obj.get(k, "")) for k in ("model", "task", "scenario_id", "mode")), _k(obj.get("fixed_k")))


def _trial(obj: dict) -> float:
    epoch = obj.get("epoch")
    try:
        return float(epoch) if epoch is not None and not np.isnan(float(epoch)) else 1.0
    except (TypeError, ValueError):
        return 1.0


def _keep(found: dict[tuple, dict], key: tuple, obj: dict) -> None:
    """Keep ``obj`` for ``key`` unless an earlier trial's transcript is already kept."""
    if key not in found or _trial(obj) < _trial(found[key]):
        found[key] = obj


def transcripts_from_rows(rows: pd.DataFrame, wanted: set[tuple[str, ...]]) -> dict[tuple, dict]:
    """Transcripts already in memory (a frame with the JSONL's fields)."""
    found: dict[tuple, dict] = {}
    ids = {k[2] for k in wanted}
    if rows.empty or "scenario_id" not in rows.columns:
        return found
    for obj in rows.loc[rows["scenario_id"].astype(str).isin(ids)].to_dict("records"):
        key = _key(obj)
        if key in wanted:
            _keep(found, key, obj)
    return found


def read_transcripts(path: Path | None, wanted: set[tuple[str, ...]]) -> dict[tuple, dict]:
    """Transcripts for (model, task, scenario_id, mode, K) keys (``_key``), streaming the JSONL once."""
    if path is None or not wanted:
        return {}
    ids = sorted({k[2] for k in wanted})
    prefilter = re.compile("|".join(re.escape(json.dumps(i)[1:-1]) for i in ids))
    found: dict[tuple, dict] = {}
    for obj in json_objects(path, prefilter.search):
        key = _key(obj)
        if key in wanted:
            _keep(found, key, obj)
    return found


def json_objects(path: Path, wanted: Callable[[str], object]) -> Iterator[dict]:
    """The JSON objects of a JSONL file's lines that ``wanted`` accepts (the other lines are not parsed)."""
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not wanted(line):
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise UserError(f"{path}: line {lineno}: not a JSON object ({e.msg})") from None
            if isinstance(obj, dict):
                yield obj


def _text(value: object) -> str:
    return "" if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)


def _messages(obj: dict) -> list[dict[str, str]]:
    out = []
    messages = obj.get("messages")
    for m in messages if isinstance(messages, list | tuple | np.ndarray) else []:
        if isinstance(m, dict):
            out.append({"role": str(m.get("role", "")), "content": str(m.get("content", ""))})
    return out


def _fixed_k(results: pd.DataFrame) -> pd.DataFrame:
    """The fixed-K rows that did not fail, keyed as the examples are, with K as text."""
    rows = results.loc[(results["mode"].astype(str) == FIXED_K_MODE).to_numpy() & ~results["failed"].to_numpy()]
    rows = rows.astype({"model": str, "task": str, "scenario_id": str})
    return rows.assign(k=[_k(v) for v in rows["fixed_k"]]).sort_values(["model", "task", "scenario_id", "fixed_k"])


def _view(label: str, pref_align: object, correct: object, n_questions: object, obj: dict | None) -> ModeView:
    return ModeView(
        mode=label,
        pref_align=None if pd.isna(pref_align) else float(pref_align),  # type: ignore[arg-type]
        correct=None if pd.isna(correct) else bool(correct),
        n_questions=None if pd.isna(n_questions) else int(n_questions),  # type: ignore[call-overload]
        messages=_messages(obj) if obj else [],
        final_response=_text(obj.get("final_response")) if obj else "",
        has_transcript=obj is not None,
    )


def build_examples(
    results: pd.DataFrame,
    attributes: pd.DataFrame | None,
    transcripts: Path | None,
    *,
    n: int,
    chosen: list[str],
    transcript_rows: pd.DataFrame | None = None,
) -> list[Example]:
    wide = _wide(results)
    picks = pick(wide, n, chosen)
    if not picks:
        return []
    fixed = _fixed_k(results)
    fixed_of = {key: sub for key, sub in fixed.groupby(["model", "task", "scenario_id"], sort=False)}
    wanted: set[tuple[str, ...]] = {(m, t, s, mode, "") for _, m, t, s in picks for mode in CONDITIONS}
    for _, m, t, sid in picks:
        wanted |= {(m, t, sid, FIXED_K_MODE, k) for k in fixed_of.get((m, t, sid), fixed.iloc[:0])["k"]}
    if transcript_rows is not None:
        texts = transcripts_from_rows(transcript_rows, wanted)
    else:
        texts = read_transcripts(transcripts, wanted)
    wide = wide.set_index(["model", "task", "scenario_id"])
    examples = []
    for kind, model, task, sid in picks:
        row = wide.loc[(model, task, sid)]
        views = [
            _view(
                mode,
                row[f"pref_align_{mode}"],
                row[f"correct_{mode}"],
                row[f"n_questions_{mode}"],
                texts.get((model, task, sid, mode, "")),
            )
            for mode in CONDITIONS
        ]
        for r in fixed_of.get((model, task, sid), fixed.iloc[:0]).to_dict("records"):
            obj = texts.get((model, task, sid, FIXED_K_MODE, r["k"]))
            label = condition_label(FIXED_K_MODE, r["fixed_k"])
            views.append(_view(label, r["pref_align"], r["correct"], r["n_questions"], obj))
        labels = [v.mode for v in views]
        examples.append(Example(kind, model, task, sid, views, _attribute_rows(attributes, model, task, sid, labels)))
    return examples


def _attribute_rows(
    attributes: pd.DataFrame | None, model: str, task: str, sid: str, labels: list[str]
) -> list[dict[str, object]]:
    """One row per attribute of the scenario: its weight and its score in each of the example's conditions
    (``labels``: baseline, discovery, oracle, ``fixed_k=K``), None where it has none."""
    if attributes is None:
        return []
    mask = (
        (attributes["scenario_id"] == sid).to_numpy()
        & (attributes["model"] == model).to_numpy()
        & (attributes["task"] == task).to_numpy()
        & attributes["mode"].isin([*CONDITIONS, FIXED_K_MODE]).to_numpy()
    )
    sub = attributes.loc[mask].astype({"attribute": str, "mode": str})
    if sub.empty:
        return []
    sub = sub.assign(condition=[condition_label(m, k) for m, k in zip(sub["mode"], sub["fixed_k"], strict=True)])
    weights = sub.groupby("attribute")["weight"].first()
    scores = sub.pivot(index="attribute", columns="condition", values="score")
    rows = []
    for attribute in weights.sort_values(ascending=False, kind="stable").index:
        row: dict[str, object] = {"attribute": attribute, "weight": float(weights[attribute])}
        for condition in labels:
            v = scores[condition].get(attribute, np.nan) if condition in scores.columns else np.nan
            row[condition] = None if pd.isna(v) else float(v)
        rows.append(row)
    return rows
