"""What every training export shares: the rows with their counts, the usable trials, and a trial's messages.

A trial is usable when its mode was asked for, it did not fail, and it has a transcript and a final response;
the rest are counted by reason (``excluded_mode``, ``excluded_failed``, ``excluded_no_transcript``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from prefdisco.training.runs import Trial


@dataclass
class Export:
    rows: list[dict[str, Any]]
    counts: Counter[str] = field(default_factory=Counter)


def usable(trials: Sequence[Trial], modes: Sequence[str], counts: Counter[str]) -> list[Trial]:
    """The trials in ``modes`` with a dialogue and a final response; the rest counted by reason."""
    kept = []
    for trial in trials:
        if trial.mode not in modes:
            counts["excluded_mode"] += 1
        elif trial.failed:
            counts["excluded_failed"] += 1
        elif not trial.has_dialogue:
            counts["excluded_no_transcript"] += 1
        else:
            kept.append(trial)
    return kept


def dialogue(trial: Trial) -> list[dict[str, str]]:
    """The messages the assistant saw, ending with its final turn (the final response appended when the
    transcript stops before it). Pushback after the final answer (``--pushback``) is not part of it: its replies
    are not the response that was scored, and a reply that gave in is no example to learn from."""
    messages = [dict(m) for m in trial.before_pushback]
    if not messages or messages[-1]["role"] != "assistant":
        messages.append({"role": "assistant", "content": trial.final_response or ""})
    return messages


def opening(trial: Trial) -> list[dict[str, str]]:
    """The messages before the assistant's first turn (system prompt and problem)."""
    out = []
    for m in trial.messages:
        if m["role"] == "assistant":
            break
        out.append(dict(m))
    return out


def sortable(trial: Trial) -> tuple[str, str, str, int, int]:
    """A trial's place in an export's fixed order: model, mode, task, K, epoch."""
    return (trial.model, trial.mode, trial.task, -1 if trial.fixed_k is None else trial.fixed_k, trial.epoch)
