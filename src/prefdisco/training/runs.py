"""One run folder as a list of trials: each results row joined with its transcript.

A trial is one (model, task, scenario_id, mode, fixed_k, epoch): its scores from the results table
(``results/table.py`` reads and validates it, or reads the eval logs when the folder has no table) and, from
``transcripts.jsonl`` (or the logs), the messages the assistant saw and its final response. A row without a
transcript keeps empty messages, so an export can count it instead of losing it silently.

A trial of a run with ``--pushback N`` also has its pushback: the transcript's ``pushback`` field, each turn's
challenge, the assistant's reply and that reply's correctness by the benchmark's metric (``scoring/harms.py``). The
transcript's messages end with those challenges and replies, after the final answer; ``before_pushback`` is the
dialogue without them (the final answer last) and ``pushback_contexts`` what the assistant saw before each reply.
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
class PushbackReply:
    """One turn of pushback after the final answer: the person's challenge, the assistant's reply (None: never
    given, a trial cut short) and whether the reply is correct (None: not judged)."""

    challenge: str
    reply: str | None
    correct: bool | None


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
    pushback: tuple[PushbackReply, ...] = ()
    pushback_target: str | None = None
    """The wrong answer the person insisted on (the results' ``pushback_target``; None: none named)."""

    @property
    def key(self) -> Key:
        return (self.model, self.task, self.scenario_id, self.mode, self.fixed_k, self.epoch)

    @property
    def has_dialogue(self) -> bool:
        return bool(self.messages) and bool((self.final_response or "").strip())

    @property
    def before_pushback(self) -> list[dict[str, str]]:
        """The messages up to the final answer: the pushback's challenges and replies cut off the end."""
        return self.messages[: len(self.messages) - pushback_length(self.pushback)]

    def pushback_contexts(self) -> list[tuple[list[dict[str, str]], dict[str, str], PushbackReply]]:
        """For each replied turn of pushback: the messages up to and including its challenge, the reply as the
        assistant wrote it (its message) and the turn."""
        start = len(self.before_pushback)
        out = []
        for turn in self.pushback:
            if turn.reply is None:
                break
            out.append((self.messages[: start + 1], self.messages[start + 1], turn))
            start += 2
        return out

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


def pushback_length(pushback: tuple[PushbackReply, ...]) -> int:
    """How many messages the pushback adds after the final answer: each challenge, and each reply given."""
    return sum(1 + (turn.reply is not None) for turn in pushback)


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


def _pushback(value: object, messages: list[dict[str, str]], where: str) -> tuple[PushbackReply, ...]:
    """The transcript's pushback turns, checked against the end of its messages."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if _missing(value):
        return ()
    expected = f"{where}: field pushback: expected a list of {{challenge, reply, correct}} objects"
    if not isinstance(value, list | tuple):
        raise UserError(expected)
    turns = []
    for turn in value:
        if not isinstance(turn, dict) or not isinstance(turn.get("challenge"), str):
            raise UserError(expected)
        reply, correct = turn.get("reply"), turn.get("correct")
        turns.append(
            PushbackReply(
                turn["challenge"], None if _missing(reply) else str(reply), None if _missing(correct) else bool(correct)
            )
        )
    pushback = tuple(turns)
    if not pushback:
        return ()
    start = len(messages) - pushback_length(pushback)  # the final answer is the message before
    tail = messages[max(start, 0) :]
    roles = [m["role"] for m in tail]
    said = [m["content"] for m in tail if m["role"] == "user"]
    shape = [r for t in pushback for r in ("user", "assistant")[: 1 + (t.reply is not None)]]
    answered = start >= 1 and messages[start - 1]["role"] == "assistant"
    if not answered or roles != shape or said != [t.challenge for t in pushback]:
        raise UserError(f"{where}: field pushback: expected its challenges and replies at the end of messages")
    return pushback


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
        messages = _messages(obj.get("messages"), where) if obj else []
        target = row.get("pushback_target")
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
                messages=messages,
                final_response=None if _missing(final) else str(final),
                pushback=_pushback(obj.get("pushback"), messages, where) if obj else (),
                pushback_target=None if _missing(target) else str(target),
            )
        )
    return trials, data.source
