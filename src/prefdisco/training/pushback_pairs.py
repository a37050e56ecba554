"""DPO pairs against sycophancy: a reply that held a correct answer under pushback chosen over one that gave in, in
the same context (``export-training --format dpo --pushback-pairs``; the rules and counts are described once, in
docs/agents.md, "Training data from runs").

A reply's **context** is the trial's messages up to and including the challenge it answers (``runs.PushbackReply``
holds each challenge, the reply and its correctness); two replies pair only when they are of one scenario and their
contexts are identical, the rule of every DPO pair (``dpo.py``). Same-context replies arise because the challenge
is a call on the simulated user whose prompt holds only the person, the problem, the answer challenged, the wrong
answer and the turn (``dialogue/user_reply.pushback_prompt``), sent with the trial's user seed and cached per run,
scenario, condition and role, never per model under test (``prefdisco.cache``): trials of several models that
reached the same answer text in the same context get the very same challenge.

A reply's correctness is that of the answer it leaves the assistant holding: its own answer, or, for a reply that
restates none (``scoring/harms.py``), the answer before it. A held reply is chosen over a flipped one only where the
answer being challenged was correct: that is giving in, the flip ``flip_turn`` counts. Replies are not judged for
PrefAlign, so ``--margin`` and ``--min-pref-align`` do not apply.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from prefdisco.training.runs import Trial

BASIS = "pushback"
"""``metadata.basis`` of a pushback pair."""


@dataclass
class Reply:
    """One reply text of a context and the trials that wrote it, with each one's check."""

    text: str
    trials: list[tuple[Trial, bool | None]] = field(default_factory=list)

    @property
    def correct(self) -> bool | None:
        seen = {correct for _, correct in self.trials}
        return seen.pop() if len(seen) == 1 else None

    def identity(self) -> dict[str, Any]:
        first = self.trials[0][0]
        return {**first.identity(), "reply_correct": self.correct, "n_trials": len(self.trials)}


@dataclass
class Context:
    """The messages before a reply, the turn, whether the answer being challenged was correct, and the replies."""

    prompt: list[dict[str, str]]
    turn: int
    challenged: set[bool | None] = field(default_factory=set)
    replies: dict[str, Reply] = field(default_factory=dict)

    @property
    def challenged_correct(self) -> bool:
        return self.challenged == {True}


def _contexts(trials: Sequence[Trial], counts: Counter[str]) -> dict[tuple[str, str, str], Context]:
    contexts: dict[tuple[str, str, str], Context] = {}
    for trial in trials:
        if not trial.pushback:
            continue
        counts["pushback_trials"] += 1
        challenged = trial.correct  # the final answer is the one the first challenge is about
        for turn, (prompt, reply, checked) in enumerate(trial.pushback_contexts(), start=1):
            key = (trial.task, trial.scenario_id, json.dumps(prompt, sort_keys=True))
            context = contexts.setdefault(key, Context([dict(m) for m in prompt], turn))
            context.challenged.add(challenged)
            text = reply["content"]
            context.replies.setdefault(text, Reply(text)).trials.append((trial, checked.correct))
            challenged = checked.correct
    return contexts


def pushback_candidates(trials: Sequence[Trial], counts: Counter[str]) -> list[dict[str, Any]]:
    """The held-over-flipped pairs of ``trials`` (usable trials, in the export's order), as DPO rows; ``counts``
    gets the sidecar's pushback counts (docs/agents.md; ``pushback_pairs`` is the caller's, after its rule)."""
    contexts = _contexts(trials, counts)
    counts["pushback_contexts"] += len(contexts)
    rows: list[dict[str, Any]] = []
    for (task, sid, _), context in contexts.items():
        replies = list(context.replies.values())
        if len(replies) == 1:
            counts["pushback_alone_in_context"] += len(replies[0].trials)
            continue
        if not context.challenged_correct:
            counts["pushback_answer_not_correct"] += 1
            continue
        for a, b in combinations(replies, 2):
            held, flipped = (a, b) if a.correct is True else (b, a)
            if held.correct is not True or flipped.correct is not False:
                counts["pushback_pairs_without_preference"] += 1
                continue
            target = next((t.pushback_target for t, _ in held.trials if t.pushback_target is not None), None)
            rows.append(
                {
                    "prompt": context.prompt,
                    "chosen": [{"role": "assistant", "content": held.text}],
                    "rejected": [{"role": "assistant", "content": flipped.text}],
                    "metadata": {
                        "task": task,
                        "scenario_id": sid,
                        "basis": BASIS,
                        "pushback_turn": context.turn,
                        "pushback_target": target,
                        "chosen": held.identity(),
                        "rejected": flipped.identity(),
                    },
                }
            )
    return rows
