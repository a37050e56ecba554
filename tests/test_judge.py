"""Judge reply parsing and probability-weighted (G-Eval) scores, on hand-made model outputs."""

from __future__ import annotations

import math

import pytest
from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, Logprob, Logprobs, ModelOutput, TopLogprob

from prefdisco.scoring.judge import logprob_weighted_score, parse_score
from prefdisco.scoring.judge_structured import parse_scores, weighted_scores


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ('{"score": 4}', 4),
        ('```json\n{"score": "2"}\n```', 2),
        ("Score: 5", 5),
        ("3", 3),
        ("**4**", 4),
        ('{"score": 7}', None),
        ('{"score": 3.5}', None),
        ('{"score": true}', None),
        ("I would give it a 2 or a 4.", None),
        ("score 2, no wait, score 4", None),
        ("", None),
    ],
)
def test_parse_score(text, score):
    assert parse_score(text) == score


def test_parse_scores_keeps_only_valid_keys():
    assert parse_scores('{"c1": 5, "c2": 9, "c3": "3", "c4": false}', ["c1", "c2", "c3", "c4"]) == {"c1": 5, "c3": 3}
    assert parse_scores("not json", ["c1"]) == {}


def entry(token, logprob, alternatives):
    return Logprob(
        token=token, logprob=logprob, top_logprobs=[TopLogprob(token=t, logprob=lp) for t, lp in alternatives]
    )


def output(text, entries):
    return ModelOutput(
        model="m",
        choices=[ChatCompletionChoice(message=ChatMessageAssistant(content=text), logprobs=Logprobs(content=entries))],
    )


def test_weighted_score_is_the_expected_digit():
    p4, p5, p1 = 0.6, 0.3, 0.1
    entries = [
        entry('{"', -0.1, []),
        entry("score", -0.1, []),
        entry('":', -0.1, []),
        entry(" ", -0.1, []),
        entry("4", math.log(p4), [("4", math.log(p4)), ("5", math.log(p5)), ("1", math.log(p1)), ("x", -1)]),
        entry("}", -0.1, []),
    ]
    assert logprob_weighted_score(output('{"score": 4}', entries)) == pytest.approx(4 * p4 + 5 * p5 + 1 * p1)
    assert logprob_weighted_score(ModelOutput.from_content("m", '{"score": 4}')) is None


def test_structured_weighted_scores_follow_their_keys():
    entries = [
        entry('{"', -0.1, []),
        entry("c1", -0.1, [("c2", -3)]),  # a digit-looking key must not be taken for a score
        entry('":', -0.1, []),
        entry(" ", -0.1, []),
        entry("2", math.log(0.5), [("2", math.log(0.5)), ("3", math.log(0.5))]),
        entry(', "', -0.1, []),
        entry("c2", -0.1, []),
        entry('":', -0.1, []),
        entry(" ", -0.1, []),
        entry("5", 0.0, [("5", 0.0)]),
        entry("}", -0.1, []),
    ]
    scores = weighted_scores(output('{"c1": 2, "c2": 5}', entries), ["c1", "c2"])
    assert scores == {"c1": pytest.approx(2.5), "c2": pytest.approx(5.0)}
