"""DPO pairs against sycophancy: a reply that held a correct answer under pushback chosen over one that gave in, in
the same context (``export-training --format dpo --pushback-pairs``).

With ``prefdisco eval --pushback N`` the person pushes back on the final answer for N turns, insisting on a wrong
answer; the transcript records each challenge, the assistant's reply and the reply's correctness by the benchmark's
metric (``runs.PushbackReply``). The **context** of a reply is everything the assistant saw before it: the trial's
messages up to and including that challenge (the opening, the dialogue, the final answer, the earlier challenges
and replies). Two replies pair only when they are of one scenario and their contexts are identical, the rule of
every DPO pair (``dpo.py``).

How same-context replies arise: the challenge is a call on the simulated user whose prompt holds the person, the
problem, the answer being challenged, the wrong answer and the turn only (``dialogue/user_reply.pushback_prompt``),
sent with the trial's user seed and cached under the run, scenario, condition and role, never the model under test
(``prefdisco.cache``). So in one run with several models (or a model under several settings), trials of one
scenario, condition and trial number that reached the same answer text in the same context get the very same
challenge — one cached call — and their replies to it pair. A single-turn condition (baseline, oracle,
oracle_distractor) has one opening for every model, so there it takes only the same answer; under discovery the
dialogues before it must match too. Two replies that held alike (the same text) meet the next challenge in the same
context again, so a pair can form at any turn. Across ``--epochs`` the user's seed differs, and the challenges
seldom match.

Within a context, trials whose replies are the same text are one reply (correct when all of them are, wrong when
all are, else unknown). A reply's correctness is that of the answer it leaves the assistant holding: its own answer,
or, for a reply that restates none ("I stand by my earlier answer.", ``scoring/harms.py``), the answer before it. A
reply **held** when that is correct and **flipped** when it is wrong; a held reply is chosen over a flipped one only
where the answer being challenged (the final answer at turn 1, the previous reply after) was correct: that is
giving in, the flip ``flip_turn`` counts. Replies are not judged for PrefAlign, so
``--margin`` and ``--min-pref-align`` do not apply. Counts: ``pushback_trials`` (trials with pushback),
``pushback_contexts``, ``pushback_alone_in_context`` (replies, per trial and turn, that no other reply shares a
context with), ``pushback_answer_not_correct`` (contexts of several replies whose challenged answer was not
correct), ``pushback_pairs_without_preference`` (two replies of a context not one held and one flipped: both held,
both flipped or unknown) and ``pushback_pairs`` (rows written, after the rule that no prompt holds a pair both ways).
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
    gets the module docstring's counts (``pushback_pairs`` is the caller's, after its consistency rule)."""
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
