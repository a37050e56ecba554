"""A response that is no answer — refused, or empty — is scored by rule, never judged as if it were an answer.

A refusal (``dialogue/response_end.py``: a content filter, a refusal stop, a refusal part) or an empty response (no
visible text: an empty completion, a reasoning model that spent its budget thinking) would otherwise reach the judge,
which scores whatever it is shown: a refused scenario came back with PrefAlign 3.25 and ``failed`` 0, as an answered
one. Here such a response is:

* ``score`` (the default, ``--refusals score``): every criterion scored 1 (the rubric's lowest level) by rule, so
  PrefAlign is 1, and the answer is incorrect; no judge, correctness or quality call is made;
* ``exclude`` (``--refusals exclude``): scored as above but left out — PrefAlign and ``correct`` None, with the
  reason in ``pref_align_reason`` — so the means are over the answered responses only.

Either way the results row says what happened (``stop_reason``, ``refused``, ``truncated``, ``empty``) and the report
counts them per model and condition. A truncated response with text is an answer: it is judged, and flagged.
"""

from __future__ import annotations

from typing import Literal

from prefdisco.dialogue.response_end import ResponseEnd
from prefdisco.schema import AttributeJudgement, PreferenceItem
from prefdisco.scoring.correctness import CorrectnessResult

RefusalRule = Literal["score", "exclude"]
REFUSAL_RULES: tuple[str, ...] = ("score", "exclude")
DEFAULT_REFUSALS: RefusalRule = "score"
RULE_SCORE = 1.0
"""Every criterion's score of a non-answer: the rubric's lowest level."""
RULE_METHOD = "rule"
"""The correctness method (and the judgement's rationale prefix) of a non-answer."""


def non_answer(response: str, end: ResponseEnd | None) -> str | None:
    """``refused`` or ``empty`` when ``response`` (the final response's visible text) is no answer, else None."""
    if end is not None and end.refused:
        return "refused"
    if not response.strip():
        return "empty"
    return None


def check_refusals(value: str) -> RefusalRule:
    """``value`` as a refusal rule, or a one-line error naming the choices."""
    if value not in REFUSAL_RULES:
        raise ValueError(f"--refusals must be one of {', '.join(REFUSAL_RULES)}, got {value!r}")
    return value  # type: ignore[return-value]


RESPONSE_STOP = "response_stop_reason"
"""The score metadata's key of inspect's stop reason of the final response (None: text from a driver): the results
row's ``stop_reason`` (not the dialogue's stop reason, which the RL episode's info calls ``stop_reason``)."""


def rule_judgements(items: dict[str, PreferenceItem], reason: str) -> list[AttributeJudgement]:
    """Each criterion of the profile ``items`` scored by rule: the lowest level, valid, no judge call."""
    return [
        AttributeJudgement(
            attribute=name,
            weight=item.weight,
            score=RULE_SCORE,
            valid=True,
            rationale=f"{RULE_METHOD}: the response was {reason}, not judged",
        )
        for name, item in items.items()
    ]


def rule_correctness(reason: str) -> CorrectnessResult:
    """A non-answer's correctness: incorrect, no answer read, no grader call."""
    return CorrectnessResult(
        correct=False, extracted=None, method=RULE_METHOD, detail=f"the response was {reason}", answered=False
    )


def end_columns(end: ResponseEnd | None, reason: str | None) -> dict[str, int]:
    """The score value's record of how the response ended, as numbers (inspect's metrics read every value):
    ``refused``, ``truncated`` and ``empty`` (1 / 0); the stop reason itself is text, in the score's metadata
    (``RESPONSE_STOP``), as is a left-out non-answer's ``pref_align_reason``."""
    return {
        "refused": int(reason == "refused"),
        "truncated": int(bool(end is not None and end.truncated)),
        "empty": int(reason == "empty"),
    }
