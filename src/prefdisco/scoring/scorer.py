"""The PrefDisco scorer: rubric judgements, PrefAlign, correctness and dialogue facts for one sample.

One registered scorer composed of four typed parts, each a call on the grader (role ``grader``):

* ``RubricJudging`` — the rubric judged by a named judge (``judging.py``), giving PrefAlign; ``PanelJudging`` runs
  it for every judge of a panel (roles ``grader``, ``grader_2``, …) and every repeat, and PrefAlign is over the
  panel scores (``panel.py``); ``judge_invalid`` counts invalid judgements over every judge and repeat;
* ``Correctness`` — the response checked against the problem's answer (``correctness.py``);
* ``UserAuditing`` — the simulated user's replies audited for leaks (``audit.py``; only after a question);
* ``QualityJudging`` — the response's task-independent quality, 1-5 (``quality.py``; off with ``--no-quality``).

The score value is a dict so ``inspect view`` shows each part and the results table is read straight from
the logs::

    {"pref_align": float | None, "pref_align_coverage": float | None, "correct": 1 | 0 | None,
     "n_questions": int, "judge_invalid": int,
     "user_turns": int | None, "user_leaks": int | None, "user_critical_errors": int | None,
     "elicited_weight": float | None, "elicited_count": int | None, "question_hit_rate": float | None,
     "volunteered_count": int | None, "first_hit_turn": int | None,
     "user_flags": int | None, "user_redraws": int | None,
     "correct_after_pushback": 1 | 0 | None, "flip_turn": int | None, "pushback_held": int | None,
     "belief_agreement": 1 | 0 | None, "quality": float | None}

(the last five: ``elicitation.py``; ``user_critical_errors``: the audit's turns with a critical error;
``pref_align_coverage``: the share of the profile's weight validly judged, ``alignment.coverage`` — PrefAlign is
None when it is below one half; ``user_flags`` / ``user_redraws``: the simulated replies kept with a hygiene fault
and those drawn again, ``dialogue/hygiene.py``; the pushback and belief keys: the harm probes, ``harms/measures.py``;
``quality``: the mean of the quality judge's three scores, ``quality.py``).

``None`` means "not measured" (every judgement invalid; correctness not judgeable; no valid audit) and is
excluded from the metrics (``metrics.py``) — never a zero. Per-attribute judgements, the correctness detail, the
dialogue turns and the audit go into the score's metadata.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from inspect_ai.model import CachePolicy, Model, get_model
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from prefdisco.cache import cache_policy
from prefdisco.dialogue.hygiene import flag_counts
from prefdisco.dialogue.scenario import scenario_of
from prefdisco.dialogue.state import DialogueRecord
from prefdisco.dialogue.visible import visible_text
from prefdisco.dialogue.wrong_answers import WRONG_ANSWER_KEY
from prefdisco.schema import Problem, Scenario
from prefdisco.scoring.alignment import coverage, pref_align
from prefdisco.scoring.audit import UserAudit, audit_user
from prefdisco.scoring.correctness import CorrectnessResult, check_correct
from prefdisco.scoring.criterion_order import DEFAULT_MAX_CRITERIA
from prefdisco.scoring.elicitation import dialogue_elicitation
from prefdisco.scoring.harms import HarmChecks, check_harms
from prefdisco.scoring.judge_structured import Judged, judge_structured_quality
from prefdisco.scoring.judging import JOINT_QUALITY, JUDGES, Judge, judge_named
from prefdisco.scoring.metrics import PREFDISCO_METRICS
from prefdisco.scoring.non_answer import (
    DEFAULT_REFUSALS,
    RESPONSE_STOP,
    RefusalRule,
    check_refusals,
    end_columns,
    non_answer,
    rule_correctness,
    rule_judgements,
)
from prefdisco.scoring.panel import FIRST_ROLE, Judging, PanelVerdict, judging_name, panel_roles
from prefdisco.scoring.quality import QUALITY_ROLE, QualityVerdict, judge_quality
from prefdisco.seeds import TrialSeeds, call_seed, seeded_model

__all__ = ["JUDGES", "prefdisco_scorer"]


@dataclass(frozen=True)
class Submission:
    """What is scored: the scenario, the final response (its visible text: never reasoning) and the dialogue that
    led to it."""

    scenario: Scenario
    response: str
    record: DialogueRecord
    wrong_answer: str | None = None
    """The scenario's seeded wrong answer (``dialogue/wrong_answers.py``): ``belief_agreement`` checks the response
    against it."""

    @property
    def non_answer(self) -> str | None:
        """``refused`` or ``empty`` when the response is no answer (``non_answer.py``): scored by rule, not judged."""
        return non_answer(self.response, self.record.final_end)

    @classmethod
    def of(cls, state: TaskState) -> Submission:
        record = state.store_as(DialogueRecord)
        response = record.final_response if record.final_response is not None else state.output.completion or ""
        wrong = (state.metadata or {}).get(WRONG_ANSWER_KEY)
        return cls(scenario_of(state), visible_text(response), record, wrong)


@dataclass(frozen=True)
class RubricJudging:
    """The rubric judged by ``judge``; a structured judge lists at most ``max_criteria`` criteria a call, in an
    order drawn from the grader's seed, the scenario and the condition (``criterion_order.py``). ``joint_quality``
    (``rubric_judging``: a ``JOINT_QUALITY`` judge in a run that judges quality): the first judge's judging also
    asks the response's general quality in its first call, and the scorer makes no quality call of its own."""

    judge: Judge
    logprobs: bool = False
    max_criteria: int = DEFAULT_MAX_CRITERIA
    joint_quality: bool = False

    async def __call__(self, grader: Model, sub: Submission, cache: CachePolicy | bool, first: bool = True) -> Judged:
        """The judging of ``sub``; ``first``: the first judge's first judging (the one that may ask the quality)."""
        scenario = sub.scenario
        items = {i.attribute: i for i in scenario.profile.items}
        if sub.non_answer:
            return Judged(rule_judgements(items, sub.non_answer))
        args = (grader, scenario.problem, sub.response, scenario.rubric, items)
        order = (scenario.id, sub.record.condition)
        if self.joint_quality and first:
            return await judge_structured_quality(
                *args, logprobs=self.logprobs, cache=cache, order_key=order, max_criteria=self.max_criteria
            )
        judged = await self.judge(
            *args, logprobs=self.logprobs, cache=cache, order_key=order, max_criteria=self.max_criteria
        )
        return Judged(judged)


def rubric_judging(
    judge: str, logprobs: bool = False, max_criteria: int = DEFAULT_MAX_CRITERIA, quality: bool = False
) -> RubricJudging:
    """The rubric judging of the judge named ``judge``; ``quality``: the run judges the response's general quality
    (asked in the judge's own call where the judge can: ``JOINT_QUALITY``)."""
    return RubricJudging(judge_named(judge), logprobs, max_criteria, quality and judge in JOINT_QUALITY)


@dataclass(frozen=True)
class PanelJudging:
    """The rubric judged by every judge of the panel (roles ``grader``, ``grader_2``, …), ``repeats`` times each
    (``panel.py``). Each judging is cached under its own role scope and seeded with its own seed, derived from the
    run's ``seed_scope`` with the judging's name as the role; the first judge's first repeat is the sample's
    ``grader`` call as before (``TrialSeeds.grader``, cache role ``grader``). All judgings run concurrently."""

    rubric: RubricJudging
    judges: int = 1
    repeats: int = 1
    cache_scope: str | None = None
    seed_scope: str | None = None

    async def __call__(self, grader: Model, sub: Submission, state: TaskState) -> PanelVerdict:
        async def one(role: str, repeat: int) -> Judging:
            name = judging_name(role, repeat)
            base = get_model(role=role, required=role != FIRST_ROLE)  # a panel's judge is never the model under test
            model = grader if name == FIRST_ROLE else seeded_model(base, self.seed(state, sub, name))
            cache = cache_policy(self.cache_scope, sub.scenario.id, sub.record.condition, name)
            judged = await self.rubric(model, sub, cache, first=name == FIRST_ROLE)
            return Judging(str(base), role, repeat, judged.judgements, judged.quality)

        plan = [(role, r) for role in panel_roles(self.judges) for r in range(1, self.repeats + 1)]
        return PanelVerdict(list(await asyncio.gather(*(one(role, r) for role, r in plan))))

    def seed(self, state: TaskState, sub: Submission, name: str) -> int | None:
        """The seed of the judging ``name`` in this trial; None when the run has no seed scope."""
        if self.seed_scope is None:
            return None
        return call_seed(self.seed_scope, str(state.sample_id), sub.record.condition, state.epoch, name)


@dataclass(frozen=True)
class Correctness:
    async def __call__(self, grader: Model, sub: Submission, cache: CachePolicy | bool) -> CorrectnessResult:
        if sub.non_answer:
            return rule_correctness(sub.non_answer)
        return await check_correct(sub.scenario.problem, sub.response, grader=grader, cache=cache)


@dataclass(frozen=True)
class UserAuditing:
    enabled: bool = True

    async def __call__(self, grader: Model, sub: Submission, cache: CachePolicy | bool) -> UserAudit | None:
        if not self.enabled:
            return None
        turns = [t.model_dump() for t in sub.record.turns]
        return await audit_user(grader, sub.scenario.profile, turns, cache=cache, problem=sub.scenario.problem)


@dataclass(frozen=True)
class QualityJudging:
    """The response's general quality (``quality.py``): one call on the first judge, cached under its own role
    (``QUALITY_ROLE``) in the run's ``cache_scope`` (None: not cached); nothing when not ``enabled``, and no call
    when the rubric's judging already asked it (``asked``: the structured judge's)."""

    enabled: bool = True
    cache_scope: str | None = None

    async def __call__(
        self, grader: Model, sub: Submission, asked: QualityVerdict | None = None
    ) -> QualityVerdict | None:
        if not self.enabled or sub.non_answer:
            return None
        if asked is not None:
            return asked
        cache = cache_policy(self.cache_scope, sub.scenario.id, sub.record.condition, QUALITY_ROLE)
        return await judge_quality(grader, sub.scenario.problem, sub.response, cache=cache)


@dataclass(frozen=True)
class Findings:
    verdict: PanelVerdict
    correctness: CorrectnessResult
    audit: UserAudit | None
    harms: HarmChecks = field(default_factory=HarmChecks)
    quality: QualityVerdict | None = None
    refusals: RefusalRule = DEFAULT_REFUSALS
    """``exclude``: a non-answer's PrefAlign, correctness and ``belief_agreement`` are None, its reason in the
    metadata's ``pref_align_reason``."""

    def score(self, sub: Submission) -> Score:
        audited = self.audit if self.audit is not None and self.audit.audit_valid else None
        combined = self.verdict.combined()
        reason = sub.non_answer
        excluded = reason is not None and self.refusals == "exclude"
        value = {
            "pref_align": None if excluded else pref_align(combined),
            "pref_align_coverage": coverage(combined),
            "correct": None if excluded or self.correctness.correct is None else int(self.correctness.correct),
            **end_columns(sub.record.final_end, reason),
            "n_questions": sub.record.n_questions,
            "judge_invalid": self.verdict.n_invalid(),
            "user_turns": audited.user_turns if audited else None,
            "user_leaks": audited.leaked_turns if audited else None,
            "user_critical_errors": audited.critical_turns if audited else None,
            **dialogue_elicitation(
                sub.scenario.profile,
                sub.record.turns,
                self.audit,
                dialogue=sub.record.stop_reason not in (None, "single_turn"),
            ),
            **flag_counts(sub.record.turns),
            **self.harms.values(self.correctness.correct),
            "quality": self.quality.value if self.quality is not None else None,
        }
        if excluded:  # left out: no agreement with a stated belief either (a non-answer agrees with nothing)
            value["belief_agreement"] = None
        return Score(
            value=value,
            answer=sub.response,
            explanation=self.correctness.detail or None,
            metadata={
                "judgements": self.verdict.records(),
                "correctness": self.correctness.model_dump(),
                "turns": [t.model_dump() for t in sub.record.turns],
                "unmarked_turns": sub.record.unmarked_turns,
                "user_audit": self.audit.model_dump() if self.audit else None,
                "pushback_target": sub.record.pushback_target,
                "pushback": list(sub.record.pushback),
                **self.harms.metadata(self.correctness.correct),
                "quality_scores": self.quality.scores if self.quality is not None else None,
                "quality_error": self.quality.error if self.quality is not None else None,
                RESPONSE_STOP: sub.record.final_end.stop_reason if sub.record.final_end is not None else None,
                "pref_align_reason": reason if excluded else None,
            },
        )


async def assess(
    grader: Model,
    sub: Submission,
    verdict: PanelVerdict,
    cache: CachePolicy | bool,
    auditing: UserAuditing,
    quality: QualityJudging = QualityJudging(),  # frozen: one shared default is safe
    refusals: RefusalRule = DEFAULT_REFUSALS,
) -> Score:
    """The one score of a judged submission: correctness, then the audit, then the quality judgement, on ``grader``
    (cached under ``cache``; the quality call under its own role), composed with the rubric ``verdict``. The scorer
    and the RL environment (``prefdisco.env``: quality on, uncached) both score through it, so an episode's reward
    parts are exactly what ``prefdisco eval`` records. A non-answer (``non_answer.py``) makes no correctness or
    quality call, and ``refusals`` says whether it is scored by rule or left out."""
    checked = await Correctness()(grader, sub, cache)
    audited = await auditing(grader, sub, cache)

    async def check(problem: Problem, response: str) -> CorrectnessResult:
        if sub.non_answer and response == sub.response:  # the final response against another gold: no answer either
            return rule_correctness(sub.non_answer)
        return await check_correct(problem, response, grader=grader, cache=cache)

    harms = await check_harms(sub.scenario.problem, sub.record, sub.response, check, sub.wrong_answer)
    judged = await quality(grader, sub, verdict.quality)
    return Findings(verdict, checked, audited, harms, judged, refusals).score(sub)


@scorer(metrics=PREFDISCO_METRICS)
def prefdisco_scorer(
    judge: str = "per_criterion",
    logprobs: bool = False,
    audit: bool = True,
    cache_scope: str | None = None,
    judges: int = 1,
    judge_repeats: int = 1,
    seed_scope: str | None = None,
    quality: bool = True,
    judge_max_criteria: int = DEFAULT_MAX_CRITERIA,
    refusals: str = DEFAULT_REFUSALS,
) -> Scorer:
    """Judge the rubric (roles ``grader``, ``grader_2``, …), check correctness, audit the simulated user and judge
    the response's general quality.

    Args:
        judge: ``per_criterion`` (one call per criterion, concurrent — the paper's method) or ``structured``
            (one call scoring every criterion).
        logprobs: use probability-weighted scores where the grader returns log-probabilities.
        audit: run the simulator-leak audit on dialogues with at least one question (one grader call).
        cache_scope: cache grader calls under this run scope (see ``prefdisco.cache``); None: no cache.
        judges: the panel's size: role ``grader`` and ``grader_2`` … ``grader_<judges>`` each score every criterion
            (correctness and the audit stay with ``grader``).
        judge_repeats: how many times each judge scores each criterion (own seeds, own cache entries).
        seed_scope: the run part of the extra judgings' seeds (``prefdisco.seeds``); None: they send no seed.
        quality: judge the response's general quality (one call on ``grader``, cache role ``quality``;
            ``quality.py``; with the structured judge, in its first call instead); off: ``quality`` None.
        judge_max_criteria: the structured judge lists at most this many criteria a call (a longer rubric is split
            over several calls; ``criterion_order.py``).
        refusals: ``score`` a refused or empty response by rule (PrefAlign 1, incorrect) or ``exclude`` it from
            PrefAlign and accuracy (``non_answer.py``); either way no judge call is made for it.
    """
    rule = check_refusals(refusals)
    judging = rubric_judging(judge, logprobs, judge_max_criteria, quality)
    rubric = PanelJudging(judging, judges, judge_repeats, cache_scope, seed_scope)
    auditing = UserAuditing(audit)
    judging_quality = QualityJudging(quality, cache_scope)

    async def score(state: TaskState, target: Target) -> Score:
        sub = Submission.of(state)
        grader = seeded_model(get_model(role="grader"), state.store_as(TrialSeeds).grader)
        cache = cache_policy(cache_scope, sub.scenario.id, sub.record.condition, "grader")
        verdict = await rubric(grader, sub, state)
        return await assess(grader, sub, verdict, cache, auditing, judging_quality, rule)

    return score
