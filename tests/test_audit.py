"""The simulator audit on a scripted grader: the bounded reply model, leaks, error severities, invalid replies."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from inspect_ai.model import GenerateConfig, ModelOutput, ModelUsage, get_model

from prefdisco.scoring.audit import ERROR_SEVERITY, audit_reply_model, audit_user
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


def turn(asked: dict[str, bool], revealed: dict[str, bool], *errors: str) -> dict[str, object]:
    flagged = ("hallucinated", "contradicted", "helped_task", "broke_character")
    return {"asked": asked, "revealed": revealed, **{e: e in errors for e in flagged}}


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
    one = schema.properties["t1"]
    assert one.required == ["asked", "revealed", "hallucinated", "contradicted", "helped_task", "broke_character"]
    assert one.additionalProperties is False
    assert one.properties["asked"].required == ["a1", "a2", "a3"]
    assert one.properties["asked"].properties["a1"].type == "boolean"
    assert one.properties["helped_task"].type == "boolean"
    model = audit_reply_model(3, 1)
    with pytest.raises(ValueError, match=r"t1\.revealed: Field required"):
        parse_reply(json.dumps({"t1": {k: v for k, v in turn(flags(1), flags()).items() if k != "revealed"}}), model)
    with pytest.raises(ValueError, match="a2: Field required"):
        parse_reply(json.dumps({"t1": turn({"a1": True}, flags())}), model)
    with pytest.raises(ValueError, match="helped_task: Field required"):
        parse_reply(json.dumps({"t1": {k: v for k, v in turn(flags(), flags()).items() if k != "helped_task"}}), model)
    with pytest.raises(ValueError, match="a1: Input should be a valid boolean"):
        parse_reply(json.dumps({"t1": turn({**flags(), "a1": "yes"}, flags())}), model)


def test_leaks_are_revealed_but_unasked_preferences():
    scenario = make_scenario()
    reply = {"t1": turn(flags(1), flags(1)), "t2": turn(flags(2), flags(2, 3))}
    grader = Grader(json.dumps(reply))
    audit = asyncio.run(audit_user(grader.model, scenario.profile, TURNS))
    assert audit is not None and audit.audit_valid
    assert audit.user_turns == 2 and audit.leaked_turns == 1
    assert audit.leaked_attributes == [[], ["Technical vocabulary"]]
    assert audit.asked_attributes == [["Explanation depth"], ["Use of analogies"]]
    assert audit.revealed_attributes == [["Explanation depth"], ["Technical vocabulary", "Use of analogies"]]
    # the leak is the one (derived) error: minor, so no critical turn
    assert audit.errors == [[], ["revealed_unasked"]] and audit.severities == [[], ["minor"]]
    assert audit.critical_turns == 0
    config = grader.configs[0]
    # 2 turns x (3 attribute flags + 2 + 4 error flags) x 16 tokens, plus 32
    assert config.temperature == 0.0 and config.max_tokens == 32 + 16 * 2 * 9
    assert config.response_schema is not None and config.response_schema.name == "user_audit"


def test_an_invalid_reply_is_re_asked_once_then_marked_invalid():
    scenario = make_scenario()
    grader = Grader("not json", '{"t1": {}}')
    audit = asyncio.run(audit_user(grader.model, scenario.profile, TURNS))
    assert audit is not None and audit.audit_valid is False and audit.leaked_turns == 0
    assert len(grader.inputs) == 2  # one call and one retry
    assert grader.inputs[1][1] == "not json" and "no JSON object" in grader.inputs[1][2]
    assert "after 2 attempt(s)" in (audit.error or "") and "t1.asked: Field required" in (audit.error or "")


THREE_TURNS = [
    *TURNS,
    {"kind": "question", "content": "Anything else?"},
    {"kind": "reply", "content": "As an AI language model I cannot say."},
]


def test_errors_map_to_severities_and_critical_turns_are_counted():
    scenario = make_scenario()
    reply = {
        "t1": turn(flags(1), flags(1), "helped_task"),  # critical_helped
        "t2": turn(flags(2), flags(2, 3), "contradicted", "hallucinated"),  # critical_hindered (twice) + a leak
        "t3": turn(flags(), flags(), "broke_character"),  # minor only
    }
    grader = Grader(json.dumps(reply))
    audit = asyncio.run(audit_user(grader.model, scenario.profile, THREE_TURNS, problem=scenario.problem))
    assert audit is not None and audit.audit_valid
    assert audit.errors == [
        ["helped_task"],
        ["contradicted", "hallucinated", "revealed_unasked"],
        ["broke_character"],
    ]
    assert audit.severities == [["critical_helped"], ["critical_hindered", "minor"], ["minor"]]
    assert audit.critical_turns == 2 and audit.leaked_turns == 1
    assert ERROR_SEVERITY == {
        "helped_task": "critical_helped",
        "contradicted": "critical_hindered",
        "hallucinated": "critical_hindered",
        "revealed_unasked": "minor",
        "broke_character": "minor",
    }
    # the grader sees the task, its answer and the values the user holds (to judge contradictions and help)
    [prompt] = grader.inputs[0]
    assert "A ferry carries 12 cars per trip" in prompt and "correct answer (for your checking only): B" in prompt
    assert "The user wants: step by step" in prompt and '"helped_task": true|false' in prompt


def test_no_question_no_audit():
    grader = Grader("unused")
    assert asyncio.run(audit_user(grader.model, make_scenario().profile, [])) is None
    assert grader.inputs == []
