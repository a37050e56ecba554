"""The rubric judges' replies (pydantic models through generate_structured) and G-Eval weighted scores."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    GenerateConfig,
    Logprob,
    Logprobs,
    ModelOutput,
    ModelUsage,
    TopLogprob,
    get_model,
)

from prefdisco.scoring.geval import logprob_weighted_score, weighted_scores
from prefdisco.scoring.judge import CriterionScore, judge_criterion
from prefdisco.scoring.judge_structured import judge_structured, rubric_scores_model, valid_levels
from prefdisco.structured import parse_reply
from scripted import make_scenario


def parsed_score(text: str) -> int | None:
    try:
        return parse_reply(text, CriterionScore).score
    except ValueError:
        return None


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ('{"score": 4}', 4),
        ('```json\n{"score": "2"}\n```', 2),
        ('{"score": 3.0}', 3),
        ('Here you go: {"score": 5}', 5),
        ('{"score": 7}', None),
        ('{"score": 3.5}', None),
        ('{"score": true}', None),
        ('{"level": 3}', None),
        # prose and bare digits are not a reply: generate_structured re-asks them (see below)
        ("Score: 5", None),
        ("3", None),
        ("**4**", None),
        ("I would give it a 2 or a 4.", None),
        ("score 2, no wait, score 4", None),
        ("", None),
    ],
)
def test_criterion_score_reply(text, score):
    assert parsed_score(text) == score


def test_structured_reply_needs_every_key_and_partial_replies_keep_only_valid_levels():
    reply = '{"c1": 5, "c2": 9, "c3": "3", "c4": false}'
    with pytest.raises(ValueError, match="c2"):
        parse_reply(reply, rubric_scores_model(4))
    with pytest.raises(ValueError, match="c2: Field required"):
        parse_reply('{"c1": 5}', rubric_scores_model(2))
    keys = ["c1", "c2", "c3", "c4"]
    assert valid_levels(ModelOutput.from_content("m", reply), keys) == {"c1": 5, "c3": 3}
    assert valid_levels(ModelOutput.from_content("m", "not json"), ["c1"]) == {}


def entry(token, logprob, alternatives):
    return Logprob(
        token=token, logprob=logprob, top_logprobs=[TopLogprob(token=t, logprob=lp) for t, lp in alternatives]
    )


def output(text, entries):
    return ModelOutput(
        model="m",
        choices=[ChatCompletionChoice(message=ChatMessageAssistant(content=text), logprobs=Logprobs(content=entries))],
    )


P4, P5, P1 = 0.6, 0.3, 0.1
SCORE_ENTRIES = [
    entry('{"', -0.1, []),
    entry("score", -0.1, []),
    entry('":', -0.1, []),
    entry(" ", -0.1, []),
    entry("4", math.log(P4), [("4", math.log(P4)), ("5", math.log(P5)), ("1", math.log(P1)), ("x", -1)]),
    entry("}", -0.1, []),
]


def test_weighted_score_is_the_expected_digit():
    assert logprob_weighted_score(output('{"score": 4}', SCORE_ENTRIES)) == pytest.approx(4 * P4 + 5 * P5 + 1 * P1)
    assert logprob_weighted_score(ModelOutput.from_content("m", '{"score": 4}')) is None


STRUCTURED_ENTRIES = [
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


def test_structured_weighted_scores_follow_their_keys():
    scores = weighted_scores(output('{"c1": 2, "c2": 5}', STRUCTURED_ENTRIES), ["c1", "c2"])
    assert scores == {"c1": pytest.approx(2.5), "c2": pytest.approx(5.0)}


# ---- the judges end to end on a scripted grader ---------------------------------------------------------------


class Grader:
    """Replies in order (``ModelOutput`` as given, text wrapped); records every request."""

    def __init__(self, *replies: str | ModelOutput) -> None:
        self.replies = list(replies)
        self.inputs: list[list[str]] = []
        self.configs: list[GenerateConfig] = []
        self.model = get_model("mockllm/model", custom_outputs=self, memoize=False)

    def __call__(self, input: list[Any], tools: Any, tool_choice: Any, config: GenerateConfig) -> ModelOutput:
        self.inputs.append([m.text for m in input])
        self.configs.append(config)
        reply = self.replies[min(len(self.inputs), len(self.replies)) - 1]
        out = ModelOutput.from_content("mockllm", reply) if isinstance(reply, str) else reply
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download
        return out


def first_criterion(scenario):
    criterion = scenario.rubric[0]
    return criterion, {i.attribute: i for i in scenario.profile.items}[criterion.attribute]


def test_judge_re_asks_a_prose_reply_and_weights_the_accepted_attempt():
    scenario = make_scenario()
    criterion, item = first_criterion(scenario)
    grader = Grader("Score: 5", output('{"score": 4}', SCORE_ENTRIES))
    judgement = asyncio.run(
        judge_criterion(grader.model, scenario.problem, "An answer.", criterion, item, logprobs=True)
    )
    assert judgement.valid and judgement.attempts == 2
    assert judgement.score == pytest.approx(4 * P4 + 5 * P5 + 1 * P1)
    assert "hard score 4" in judgement.rationale
    retry = grader.inputs[1]
    assert retry[1] == "Score: 5" and "could not be used" in retry[2]  # the bad reply and why, not the same prompt
    config = grader.configs[0]
    assert config.temperature == 0.0 and config.max_tokens == 16 and config.logprobs and config.top_logprobs == 5
    assert config.response_schema is not None and config.response_schema.strict is True
    assert config.response_schema.json_schema.properties["score"].enum == [1, 2, 3, 4, 5]


def test_judge_keeps_the_grader_roles_own_settings_and_records_why_a_judgement_is_invalid():
    scenario = make_scenario()
    criterion, item = first_criterion(scenario)
    grader = Grader('{"score": 9}')
    grader.model = get_model(
        "mockllm/model", custom_outputs=grader, memoize=False, config=GenerateConfig(temperature=0.7, max_tokens=99)
    )
    judgement = asyncio.run(judge_criterion(grader.model, scenario.problem, "An answer.", criterion, item))
    assert judgement.valid is False and judgement.score is None and judgement.attempts == 3
    assert "score: Input should be 1, 2, 3, 4 or 5" in (judgement.error or "")
    assert all(c.temperature == 0.7 and c.max_tokens == 99 for c in grader.configs)


def test_structured_judge_weights_each_key_from_the_accepted_attempt():
    scenario = make_scenario(weights=(0.5, 0.5), values=("step by step", "machine analogies"))
    items = {i.attribute: i for i in scenario.profile.items}
    grader = Grader('{"c1": 2}', output('{"c1": 2, "c2": 5}', STRUCTURED_ENTRIES))
    judgements = asyncio.run(
        judge_structured(grader.model, scenario.problem, "An answer.", scenario.rubric, items, logprobs=True)
    )
    assert [j.score for j in judgements] == [pytest.approx(2.5), pytest.approx(5.0)]
    assert all(j.valid and j.attempts == 2 for j in judgements)
    assert "c2: Field required" in grader.inputs[1][2]
    assert grader.configs[0].max_tokens == 16 + 10 * 2
