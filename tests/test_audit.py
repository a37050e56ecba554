"""The simulator-leak audit on a scripted grader: the bounded reply model, leaks, and invalid replies."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from inspect_ai.model import GenerateConfig, ModelOutput, ModelUsage, get_model

from prefdisco.scoring.audit import audit_reply_model, audit_user
from prefdisco.structured import parse_reply, response_schema
from scripted import make_scenario

TURNS = [
    {"kind": "question", "content": "How deep?"},
    {"kind": "reply", "content": "Step by step."},
    {"kind": "question", "content": "Analogies?"},
    {"kind": "reply", "content": "Machine ones, and plain words please."},
]


def flags(*on: int) -> dict[str, bool]:
    return {f"a{i}": i in on for i in (1, 2, 3)}  # a1 depth, a2 analogies, a3 vocabulary


class Grader:
    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.inputs: list[list[str]] = []
        self.configs: list[GenerateConfig] = []
        self.model = get_model("mockllm/model", custom_outputs=self, memoize=False)

    def __call__(self, input: list[Any], tools: Any, tool_choice: Any, config: GenerateConfig) -> ModelOutput:
        self.inputs.append([m.text for m in input])
        self.configs.append(config)
        out = ModelOutput.from_content("mockllm", self.replies[min(len(self.inputs), len(self.replies)) - 1])
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out


def test_reply_model_is_bounded_and_every_flag_is_required():
    schema = response_schema(audit_reply_model(3, 2)).json_schema
    assert schema.required == ["t1", "t2"]
    turn = schema.properties["t1"]
    assert turn.required == ["asked", "revealed"] and turn.additionalProperties is False
    assert turn.properties["asked"].required == ["a1", "a2", "a3"]
    assert turn.properties["asked"].properties["a1"].type == "boolean"
    model = audit_reply_model(3, 1)
    with pytest.raises(ValueError, match=r"t1\.revealed: Field required"):
        parse_reply('{"t1": {"asked": {"a1": true, "a2": false, "a3": false}}}', model)
    with pytest.raises(ValueError, match="a2: Field required"):
        parse_reply('{"t1": {"asked": {"a1": true}, "revealed": {"a1": true}}}', model)
    with pytest.raises(ValueError, match="a1: Input should be a valid boolean"):
        text = json.dumps({"t1": {"asked": {**flags(), "a1": "yes"}, "revealed": flags()}})
        parse_reply(text, model)


def test_leaks_are_revealed_but_unasked_preferences():
    scenario = make_scenario()
    reply = {"t1": {"asked": flags(1), "revealed": flags(1)}, "t2": {"asked": flags(2), "revealed": flags(2, 3)}}
    grader = Grader(json.dumps(reply))
    audit = asyncio.run(audit_user(grader.model, scenario.profile, TURNS))
    assert audit is not None and audit.audit_valid
    assert audit.user_turns == 2 and audit.leaked_turns == 1
    assert audit.leaked_attributes == [[], ["Technical vocabulary"]]
    assert audit.asked_attributes == [["Explanation depth"], ["Use of analogies"]]
    config = grader.configs[0]
    assert config.temperature == 0.0 and config.max_tokens == 32 + 16 * 2 * (3 + 2)
    assert config.response_schema is not None and config.response_schema.name == "user_audit"


def test_an_invalid_reply_is_re_asked_once_then_marked_invalid():
    scenario = make_scenario()
    grader = Grader("not json", '{"t1": {}}')
    audit = asyncio.run(audit_user(grader.model, scenario.profile, TURNS))
    assert audit is not None and audit.audit_valid is False and audit.leaked_turns == 0
    assert len(grader.inputs) == 2  # one call and one retry
    assert grader.inputs[1][1] == "not json" and "no JSON object" in grader.inputs[1][2]
    assert "after 2 attempt(s)" in (audit.error or "") and "t1.asked: Field required" in (audit.error or "")


def test_no_question_no_audit():
    grader = Grader("unused")
    assert asyncio.run(audit_user(grader.model, make_scenario().profile, [])) is None
    assert grader.inputs == []
