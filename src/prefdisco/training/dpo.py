"""DPO pairs: two responses made in the same context, the better one chosen, the prompt that context.

A trial's **context** is its transcript up to the final answer; two trials pair only when they are of one scenario
and their contexts are identical. Within a context, trials whose final turns are the same text are one response;
of two responses the correct one ahead by ``--margin`` (``basis: "pref_align"``), or the one whose rival is wrong
(``basis: "correct"``), is chosen. At most one direction holds (the margin is positive; a correctness pair needs B
wrong, so B is never chosen). The rules, the row layout (TRL's conversational preference layout) and every count
of the sidecar are described once, in docs/agents.md, "Training data from runs".

Across scenarios the same prompt can recur (baseline: every persona of a problem sees the problem alone), so a row
whose swap is also formed is dropped with it (``dropped_contradicting_pair``) and a repeated row is kept once
(``skipped_duplicate_pair``): no two rows share a prompt with chosen and rejected swapped.

Pushback turns are neither part of the context nor the final turn (``rows.dialogue``); with ``pushback=True``
(``--pushback-pairs``) the replies make pairs of their own (``pushback_pairs.py``, ``metadata.basis``
``"pushback"``), under the same rule against a prompt both ways.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from statistics import fmean
from typing import Any

from prefdisco.schema import Mode
from prefdisco.training.pushback_pairs import BASIS, pushback_candidates
from prefdisco.training.rows import Export, dialogue, sortable, usable
from prefdisco.training.runs import Trial

DEFAULT_DPO_MODES: tuple[str, ...] = (Mode.DISCOVERY.value, Mode.ORACLE.value, Mode.FIXED_K.value)
"""The conditions whose context carries the person (the profile, or what the dialogue drew out). Baseline's
context is the problem alone, the same for every persona, so a pair ranked by one persona's rubric would teach a
style for everyone; it is read only when ``--modes`` names it. The wrong_persona control never by default."""

_EPS = 1e-9


@dataclass
class Response:
    """One final turn of a context and the trials that wrote it."""

    text: str
    trials: list[Trial]

    @property
    def pref_align(self) -> float:
        return fmean(t.pref_align for t in self.trials if t.pref_align is not None)

    @property
    def correct(self) -> bool | None:
        seen = {t.correct for t in self.trials}
        return seen.pop() if len(seen) == 1 else None

    def identity(self) -> dict[str, Any]:
        first = self.trials[0].identity()
        return {**first, "pref_align": self.pref_align, "correct": self.correct, "n_trials": len(self.trials)}


def _final_turn(trial: Trial) -> tuple[list[dict[str, str]], str]:
    messages = dialogue(trial)
    return messages[:-1], messages[-1]["content"]


def _preference(a: Response, b: Response, margin: float, floor: float | None) -> tuple[Response, Response, str] | None:
    """(chosen, rejected, basis) of two responses of one context, or None when neither is preferred."""
    for chosen, rejected in ((a, b), (b, a)):
        if chosen.correct is not True or (floor is not None and chosen.pref_align < floor - _EPS):
            continue
        gap = chosen.pref_align - rejected.pref_align
        if gap >= margin - _EPS:
            return chosen, rejected, "pref_align"
        if rejected.correct is False and gap >= -_EPS:
            return chosen, rejected, "correct"
    return None


def dpo_rows(
    trials: Sequence[Trial], modes: Sequence[str], margin: float, floor: float | None, pushback: bool = False
) -> Export:
    """The pairs of the module docstring, scenario by scenario, contexts in the order of their first trial; with
    ``pushback``, the pushback pairs after them."""
    export = Export(rows=[])
    contexts: dict[tuple[str, str, str], tuple[list[dict[str, str]], dict[str, Response]]] = {}
    scenarios: set[tuple[str, str]] = set()
    kept = sorted(usable(trials, modes, export.counts), key=lambda t: (t.task, t.scenario_id, *sortable(t)))
    for trial in kept:
        if trial.pref_align is None:
            export.counts["excluded_unscored"] += 1
            continue
        prompt, final = _final_turn(trial)
        scenarios.add((trial.task, trial.scenario_id))
        key = (trial.task, trial.scenario_id, json.dumps(prompt, sort_keys=True))
        _, by_final = contexts.setdefault(key, (prompt, {}))
        if final in by_final:
            export.counts["merged_identical_response"] += 1
            by_final[final].trials.append(trial)
        else:
            by_final[final] = Response(final, [trial])
    candidates: list[dict[str, Any]] = []
    for (task, sid, _), (prompt, by_text) in contexts.items():
        responses = list(by_text.values())
        if len(responses) == 1:
            export.counts["excluded_alone_in_context"] += len(responses[0].trials)
            continue
        ordered = sorted(responses, key=lambda r: -r.pref_align)  # stable: first trial's order among ties
        for a, b in combinations(ordered, 2):
            found = _preference(a, b, margin, floor)
            if found is None:
                export.counts["pairs_without_preference"] += 1
                continue
            chosen, rejected, basis = found
            candidates.append(
                {
                    "prompt": prompt,
                    "chosen": [{"role": "assistant", "content": chosen.text}],
                    "rejected": [{"role": "assistant", "content": rejected.text}],
                    "metadata": {
                        "task": task,
                        "scenario_id": sid,
                        "basis": basis,
                        "margin": chosen.pref_align - rejected.pref_align,
                        "chosen": chosen.identity(),
                        "rejected": rejected.identity(),
                    },
                }
            )
    if pushback:
        candidates += pushback_candidates(kept, export.counts)
    export.rows = _consistent(candidates, export)
    export.counts["scenarios"] = len(scenarios)
    export.counts["contexts"] = len(contexts)
    export.counts["pairs"] = len(export.rows)
    if pushback:
        export.counts["pushback_pairs"] = sum(r["metadata"]["basis"] == BASIS for r in export.rows)
    return export


def _consistent(rows: list[dict[str, Any]], export: Export) -> list[dict[str, Any]]:
    """``rows`` without repeats and without any pair whose swap is also there (both dropped)."""

    def key(row: dict[str, Any], swap: bool = False) -> tuple[str, str, str]:
        chosen, rejected = row["chosen"][0]["content"], row["rejected"][0]["content"]
        if swap:
            chosen, rejected = rejected, chosen
        return json.dumps(row["prompt"], sort_keys=True), chosen, rejected

    formed = {key(row) for row in rows}
    kept, written = [], set()
    for row in rows:
        k = key(row)
        if key(row, swap=True) in formed:
            export.counts["dropped_contradicting_pair"] += 1
        elif k in written:
            export.counts["skipped_duplicate_pair"] += 1
        else:
            written.add(k)
            kept.append(row)
    return kept
