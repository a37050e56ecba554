"""The script the RL hub tests share (tests/test_env_verifiers.py, tests/test_env_openenv.py): the policy's turns,
the scripted simulated user and judge, the reward weights and the reward by hand, and the same turns through
PrefDisco's own ``Episode`` (what every hub's reward must equal)."""

from __future__ import annotations

import json

from prefdisco.env import Episode, StepResult
from prefdisco.schema import Scenario
from scripted import Call, Scripted, replies
from test_env import AUDIT

TURNS = (
    "QUESTION: How detailed should I be?",
    "QUESTION: Do you like analogies?",
    "ANSWER: The answer is B: 3 trips.",
)
WEIGHTS = {"w_pref": 1.0, "w_correct": 1.0, "w_questions": -0.05}
# by hand: every criterion scored 4 -> PrefAlign 4; (4 - 1) / 4 = 0.75, + 1 (correct) - 0.05 * 2 (questions) = 1.65
REWARD = 1.65


def grading(call: Call, index: int) -> str:
    """The judge: 4 on every criterion, the audit of test_env, the response's quality."""
    if "checking a conversation" in call.text:
        return json.dumps(AUDIT)
    if '{"reasoning": N, "completeness": N, "facts": N}' in call.text:
        return json.dumps({"reasoning": 4, "completeness": 4, "facts": 5})
    if "The preference: " in call.text:
        return json.dumps({"score": 4})
    raise AssertionError("unexpected grader call")


def roles() -> tuple[Scripted, Scripted]:
    """A fresh simulated user and judge."""
    return Scripted(replies("Very detailed, please.", "Yes, machine ones.")), Scripted(grading)


def episode_result(
    scenario: Scenario, turns: tuple[str, ...] = TURNS, **options: object
) -> tuple[StepResult, Scripted, Scripted]:
    """The same turns through PrefDisco's own ``Episode`` on fresh scripts: its last step and the two roles."""
    user, grader = roles()
    episode = Episode(scenario, user.model, grader.model, reward=WEIGHTS, **options)  # type: ignore[arg-type]
    episode.reset()
    for turn in turns:
        result = episode.step(turn)
        if result.done:
            break
    episode.close()
    return result, user, grader
