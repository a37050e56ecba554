"""A finished dialogue scored outside an eval, by the scorer's own code: the one path the RL episode
(``env/episode.py``) and the play-the-user study (``annotate/play_session.py``) share.

The rubric judge (``RubricJudging`` of the named judge), then ``scorer.assess`` (correctness, the audit of the
user's turns, the harm checks, the quality judgement) on the one judge model, which sends the trial's grader seed
(``prefdisco.seeds``). No call is cached: every dialogue is a fresh draw. The ``Score`` is the one
``prefdisco eval`` records (its value dict and metadata: judgements, turns, correctness, audit).
"""

from __future__ import annotations

from inspect_ai.model import Model
from inspect_ai.scorer import Score

from prefdisco.dialogue.dialogue_state import DialogueState
from prefdisco.dialogue.visible import visible_text
from prefdisco.schema import Scenario
from prefdisco.scoring.panel import FIRST_ROLE, Judging, PanelVerdict
from prefdisco.scoring.scorer import Submission, UserAuditing, assess, rubric_judging
from prefdisco.seeds import seeded_model


async def score_finished(
    scenario: Scenario,
    state: DialogueState,
    judge_model: Model,
    *,
    grader_seed: int | None = None,
    judge: str = "per_criterion",
    logprobs: bool = False,
    audit: bool = True,
    wrong_answer: str | None = None,
) -> Score:
    """The score of the finished dialogue ``state`` of ``scenario``, judged by ``judge_model`` (seeded with
    ``grader_seed``); ``wrong_answer``: the scenario's seeded wrong answer (``belief_agreement``)."""
    if not state.done:
        raise ValueError("only a finished dialogue is scored")
    record = state.record()
    sub = Submission(scenario, visible_text(state.final or ""), record, wrong_answer)
    grader = seeded_model(judge_model, grader_seed)
    judged = await rubric_judging(judge, logprobs, quality=True)(grader, sub, False)
    verdict = PanelVerdict([Judging(str(judge_model), FIRST_ROLE, 1, judged.judgements, judged.quality)])
    return await assess(grader, sub, verdict, False, UserAuditing(audit))
