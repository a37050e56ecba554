"""The PrefDisco scorer: rubric judgements, PrefAlign, correctness and dialogue facts for one sample.

One registered scorer composed of three typed parts, each a call on the grader (role ``grader``):

* ``RubricJudging`` — the rubric judged by a named judge (``judging.py``), giving PrefAlign;
* ``Correctness`` — the response checked against the problem's answer (``correctness.py``);
* ``UserAuditing`` — the simulated user's replies audited for leaks (``audit.py``; only after a question).

The score value is a dict so ``inspect view`` shows each part and the results table is read straight from
the logs::

    {"pref_align": float | None, "correct": 1 | 0 | None, "n_questions": int, "judge_invalid": int,
     "user_turns": int | None, "user_leaks": int | None}

``None`` means "not measured" (every judgement invalid; correctness not judgeable; no valid audit) and is
excluded from the metrics (``metrics.py``) — never a zero. Per-attribute judgements, the correctness detail, the
dialogue turns and the audit go into the score's metadata.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspect_ai.model import CachePolicy, Model, get_model
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from prefdisco.cache import cache_policy
from prefdisco.dialogue.scenario import scenario_of
from prefdisco.dialogue.state import DialogueRecord
from prefdisco.dialogue.visible import visible_text
from prefdisco.schema import AttributeJudgement, Scenario
from prefdisco.scoring.alignment import pref_align
from prefdisco.scoring.audit import UserAudit, audit_user
from prefdisco.scoring.correctness import CorrectnessResult, check_correct
from prefdisco.scoring.judging import JUDGES, Judge, judge_named
from prefdisco.scoring.metrics import PREFDISCO_METRICS
from prefdisco.seeds import TrialSeeds, seeded_model

__all__ = ["JUDGES", "prefdisco_scorer"]


@dataclass(frozen=True)
class Submission:
    """What is scored: the scenario, the final response (its visible text: never reasoning) and the dialogue that
    led to it."""

    scenario: Scenario
    response: str
    record: DialogueRecord

    @classmethod
    def of(cls, state: TaskState) -> Submission:
        record = state.store_as(DialogueRecord)
        response = record.final_response if record.final_response is not None else state.output.completion or ""
        return cls(scenario_of(state), visible_text(response), record)


@dataclass(frozen=True)
class RubricJudging:
    judge: Judge
    logprobs: bool = False

    async def __call__(self, grader: Model, sub: Submission, cache: CachePolicy | bool) -> list[AttributeJudgement]:
        scenario = sub.scenario
        items = {i.attribute: i for i in scenario.profile.items}
        return await self.judge(
            grader, scenario.problem, sub.response, scenario.rubric, items, logprobs=self.logprobs, cache=cache
        )


@dataclass(frozen=True)
class Correctness:
    async def __call__(self, grader: Model, sub: Submission, cache: CachePolicy | bool) -> CorrectnessResult:
        return await check_correct(sub.scenario.problem, sub.response, grader=grader, cache=cache)


@dataclass(frozen=True)
class UserAuditing:
    enabled: bool = True

    async def __call__(self, grader: Model, sub: Submission, cache: CachePolicy | bool) -> UserAudit | None:
        if not self.enabled:
            return None
        turns = [t.model_dump() for t in sub.record.turns]
        return await audit_user(grader, sub.scenario.profile, turns, cache=cache)


@dataclass(frozen=True)
class Findings:
    judgements: list[AttributeJudgement]
    correctness: CorrectnessResult
    audit: UserAudit | None

    def score(self, sub: Submission) -> Score:
        audited = self.audit if self.audit is not None and self.audit.audit_valid else None
        value = {
            "pref_align": pref_align(self.judgements),
            "correct": None if self.correctness.correct is None else int(self.correctness.correct),
            "n_questions": sub.record.n_questions,
            "judge_invalid": sum(not j.valid for j in self.judgements),
            "user_turns": audited.user_turns if audited else None,
            "user_leaks": audited.leaked_turns if audited else None,
        }
        return Score(
            value=value,
            answer=sub.response,
            explanation=self.correctness.detail or None,
            metadata={
                "judgements": [j.model_dump() for j in self.judgements],
                "correctness": self.correctness.model_dump(),
                "turns": [t.model_dump() for t in sub.record.turns],
                "unmarked_turns": sub.record.unmarked_turns,
                "user_audit": self.audit.model_dump() if self.audit else None,
            },
        )


@scorer(metrics=PREFDISCO_METRICS)
def prefdisco_scorer(
    judge: str = "per_criterion", logprobs: bool = False, audit: bool = True, cache_scope: str | None = None
) -> Scorer:
    """Judge the rubric (role ``grader``), check correctness and audit the simulated user.

    Args:
        judge: ``per_criterion`` (one call per criterion, concurrent — the paper's method) or ``structured``
            (one call scoring every criterion).
        logprobs: use probability-weighted scores where the grader returns log-probabilities.
        audit: run the simulator-leak audit on dialogues with at least one question (one grader call).
        cache_scope: cache grader calls under this run scope (see ``prefdisco.cache``); None: no cache.
    """
    rubric = RubricJudging(judge_named(judge), logprobs)
    correctness = Correctness()
    auditing = UserAuditing(audit)

    async def score(state: TaskState, target: Target) -> Score:
        sub = Submission.of(state)
        grader = seeded_model(get_model(role="grader"), state.store_as(TrialSeeds).grader)
        cache = cache_policy(cache_scope, sub.scenario.id, sub.record.condition, "grader")
        judgements = await rubric(grader, sub, cache)
        checked = await correctness(grader, sub, cache)
        audited = await auditing(grader, sub, cache)
        return Findings(judgements, checked, audited).score(sub)

    return score
