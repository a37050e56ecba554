"""Deferred judging: the dialogue scored now without a grader call, the rubric judged later (``prefdisco judge``).

``prefdisco eval --judge later`` runs the dialogues only. Its tasks score every sample with ``prefdisco_dialogue``,
which records what the scorer knows without the grader: the final response, the turns, ``n_questions``, the
elicitation metrics a user that records its revelations gives (the audit's come with the judging), and
correctness where no model grades it (every answer type but SimpleQA's graded text, whose ``correct`` stays
None). The value says ``judged: 0`` and ``pref_align`` and ``quality`` are None ("not measured": the metrics and
reports leave them out), so the results reader shows the row as pending, never as failed.

``prefdisco judge RUN_DIR`` (``evaluation/later/judge_later.py``) then scores the logs with the real
``prefdisco_scorer``
(the pending score is replaced, so a judged log reads exactly as an inline-judged one, its general quality judged
too unless the run recorded ``quality: false``), and a further judge with ``prefdisco_judge``: the rubric only, by
that judge's panel (roles ``grader``, ``grader_2``, … bound to *its* models), appended beside the first judging;
correctness, the audit and the quality stay with the first judge. Both judge with the same ``PanelJudging`` as the
inline scorer, so the grader calls carry the seeds and cache scopes an inline run's would.
"""

from __future__ import annotations

from inspect_ai.model import get_model
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from prefdisco.schema import Problem
from prefdisco.scoring.alignment import coverage, pref_align
from prefdisco.scoring.correctness import CorrectnessResult, check_correct_offline, needs_grader
from prefdisco.scoring.criterion_order import DEFAULT_MAX_CRITERIA
from prefdisco.scoring.harms import check_harms
from prefdisco.scoring.metrics import PREFDISCO_METRICS, judge_invalid_total, pref_align_mean
from prefdisco.scoring.non_answer import DEFAULT_REFUSALS, check_refusals, rule_correctness
from prefdisco.scoring.panel import PanelVerdict
from prefdisco.scoring.scorer import Findings, PanelJudging, Submission, rubric_judging
from prefdisco.seeds import TrialSeeds, seeded_model

JUDGE_LATER = "later"
"""The ``--judge`` value of a run whose judging is deferred to ``prefdisco judge``."""
PENDING_SCORE = "prefdisco_dialogue"
"""The score key of a sample awaiting its judging."""
JUDGED_SCORE = "prefdisco_scorer"
"""The score key of the first judging (inline or deferred): the one the results row is read from."""
EXTRA_SCORE = "prefdisco_judge"
"""The score key (``prefdisco_judge``, ``prefdisco_judge1``, … as inspect names repeats) of a further judging."""
PENDING_METHOD = "pending"
"""The correctness method of a model-graded answer before its judging."""


async def _offline(problem: Problem, response: str) -> CorrectnessResult:
    return check_correct_offline(problem, response)


@scorer(metrics=PREFDISCO_METRICS)
def prefdisco_dialogue() -> Scorer:
    """The dialogue's facts without any grader call; the rubric, the audit and model-graded correctness pending."""

    async def score(state: TaskState, target: Target) -> Score:
        sub = Submission.of(state)
        problem = sub.scenario.problem
        if sub.non_answer:  # refused or empty: incorrect by rule, now and after the judging (``non_answer.py``)
            checked = rule_correctness(sub.non_answer)
        elif needs_grader(problem):
            checked = CorrectnessResult(
                correct=None, extracted=None, method=PENDING_METHOD, detail="graded by prefdisco judge"
            )
        else:
            checked = check_correct_offline(problem, sub.response)
        harms = await check_harms(problem, sub.record, sub.response, _offline)
        found = Findings(PanelVerdict([]), checked, None, harms).score(sub)
        assert isinstance(found.value, dict)
        return Score(
            value={**found.value, "judged": 0},
            answer=found.answer,
            explanation=found.explanation,
            metadata={**(found.metadata or {}), "judge_pending": True},
        )

    return score


@scorer(metrics=[pref_align_mean(), judge_invalid_total()])
def prefdisco_judge(
    judge: str = "per_criterion",
    logprobs: bool = False,
    cache_scope: str | None = None,
    judges: int = 1,
    judge_repeats: int = 1,
    seed_scope: str | None = None,
    judge_max_criteria: int = DEFAULT_MAX_CRITERIA,
    refusals: str = DEFAULT_REFUSALS,
) -> Scorer:
    """A further judge's rubric judgements (roles ``grader``, ``grader_2``, … bound to that judge's panel) and the
    PrefAlign they give; arguments as ``prefdisco_scorer``'s. The first judge's score is left as it is. A refused or
    empty response is scored by the run's ``refusals`` rule, as the first judging scored it (``non_answer.py``): no
    judge call, every criterion 1 by rule, and under ``exclude`` no PrefAlign (the reason in the metadata's
    ``pref_align_reason``)."""
    rule = check_refusals(refusals)
    judging = rubric_judging(judge, logprobs, judge_max_criteria)  # the rubric only: the quality stays the first's
    rubric = PanelJudging(judging, judges, judge_repeats, cache_scope, seed_scope)

    async def score(state: TaskState, target: Target) -> Score:
        sub = Submission.of(state)
        grader = seeded_model(get_model(role="grader"), state.store_as(TrialSeeds).grader)
        verdict = await rubric(grader, sub, state)
        combined = verdict.combined()
        excluded = sub.non_answer is not None and rule == "exclude"
        return Score(
            value={
                "pref_align": None if excluded else pref_align(combined),
                "pref_align_coverage": coverage(combined),
                "judge_invalid": verdict.n_invalid(),
            },
            answer=sub.response,
            metadata={"judgements": verdict.records(), "pref_align_reason": sub.non_answer if excluded else None},
        )

    return score
