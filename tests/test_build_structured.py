"""generate_structured: schema sent, robust parsing, re-asking with feedback, caching, and a hard failure."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from inspect_ai.model import CachePolicy, GenerateConfig, ModelOutput, ModelUsage, get_model
from pydantic import BaseModel, Field

from prefdisco.structured import StructuredOutputError, extract_json, generate_structured


class Answer(BaseModel):
    score: int = Field(ge=1, le=5)
    reason: str


class Script:
    """Replies in order; records each call's messages and config."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.inputs: list[list[str]] = []
        self.configs: list[GenerateConfig] = []

    def __call__(self, input: list[Any], tools: Any, tool_choice: Any, config: GenerateConfig) -> ModelOutput:
        self.inputs.append([m.text for m in input])
        self.configs.append(config)
        out = ModelOutput.from_content(model="mockllm", content=self.replies[len(self.inputs) - 1])
        out.usage = ModelUsage(input_tokens=10, output_tokens=3, total_tokens=13)
        return out


def run(script: Script, retries: int = 2, **kw: Any) -> Any:
    model = get_model("mockllm/model", custom_outputs=script, memoize=False)
    return asyncio.run(generate_structured(model, "Grade it.", Answer, retries=retries, **kw))


def test_valid_first_reply_sends_the_schema_and_returns_the_object() -> None:
    script = Script('{"score": 4, "reason": "good"}')
    result = run(script, config=GenerateConfig(temperature=0.0))
    assert result.value == Answer(score=4, reason="good")
    assert result.attempts == 1
    assert result.model == "mockllm/model"
    assert result.usage.input_tokens == 10 and result.usage.output_tokens == 3
    config = script.configs[0]
    assert config.temperature == 0.0  # the caller's config is kept
    assert config.response_schema is not None and config.response_schema.name == "Answer"
    schema = config.response_schema.json_schema
    assert schema.properties is not None and set(schema.properties) == {"score", "reason"}
    assert schema.required == ["score", "reason"]


def test_fenced_json_with_prose_around_it_is_parsed() -> None:
    reply = 'Sure! Here it is:\n```json\n{"score": 2, "reason": "meh"}\n```\nHope that helps.'
    assert run(Script(reply)).value.score == 2


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"a": 1}', {"a": 1}),
        ('noise {"a": {"b": 2}} trailing', {"a": {"b": 2}}),
        ('```\n{"a": [1, 2]}\n```', {"a": [1, 2]}),
        ('first {not json} then {"a": 3} and } stray', {"a": 3}),
    ],
)
def test_extract_json_takes_the_outermost_object(text: str, expected: Any) -> None:
    assert extract_json(text) == expected


def test_extract_json_explains_what_is_missing() -> None:
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json("I cannot answer that.")
    with pytest.raises(ValueError, match="empty"):
        extract_json("   ")


def test_invalid_reply_is_re_asked_with_the_bad_output_and_a_one_line_reason() -> None:
    script = Script('{"score": 9, "reason": "x"}', "not json at all", '{"score": 5, "reason": "fixed"}')
    result = run(script, retries=2)
    assert result.value.score == 5
    assert result.attempts == 3
    assert len(result.errors) == 2
    assert result.usage.input_tokens == 30  # every attempt's tokens are booked
    assert result.output.completion == '{"score": 5, "reason": "fixed"}'  # the accepted attempt's output
    second = script.inputs[1]
    assert second[0] == "Grade it."
    assert second[1] == '{"score": 9, "reason": "x"}'  # the bad output goes back as the assistant turn
    assert "score" in second[2] and "less than or equal to 5" in second[2]
    assert "\n" not in result.errors[0]
    third = script.inputs[2]  # the earlier rejected exchange is replaced, not accumulated
    assert third[:2] == ["Grade it.", "not json at all"] and "no JSON object" in third[2] and len(third) == 3


def test_reply_still_invalid_after_retries_raises_with_the_last_reason() -> None:
    script = Script('{"score": 3}', '{"score": 3}', '{"score": 3}', '{"score": 3, "reason": "too late"}')
    with pytest.raises(StructuredOutputError) as info:
        run(script, retries=2)
    err = info.value
    assert err.attempts == 3 and len(script.inputs) == 3  # never more than 1 + retries calls
    assert err.reason == "reason: Field required"
    assert err.model == "mockllm/model"
    assert err.usage.input_tokens == 30
    assert [o.completion for o in err.outputs] == ['{"score": 3}'] * 3  # every rejected attempt, in order


def test_zero_retries_means_one_call() -> None:
    script = Script("[1, 2, 3]", '{"score": 1, "reason": "r"}')
    with pytest.raises(StructuredOutputError, match="expected a JSON object"):
        run(script, retries=0)
    assert len(script.inputs) == 1


def test_schema_name_can_be_set_and_is_sanitized() -> None:
    script = Script(json.dumps({"score": 1, "reason": "r"}))
    run(script, name="my step/1")
    assert script.configs[0].response_schema is not None
    assert script.configs[0].response_schema.name == "my_step_1"


def test_length_limits_are_validated_but_not_sent() -> None:
    """Grammar-constrained providers cannot use maxLength (it expands into a huge grammar): it stays local."""
    from prefdisco.builder.rubrics import rubric_schema
    from prefdisco.structured import parse_reply, response_schema

    schema = rubric_schema(("A", "B"))
    sent = json.dumps(response_schema(schema).json_schema.model_dump(exclude_none=True))
    assert "maxLength" not in sent and "minLength" not in sent
    assert '"enum": ["A"]' in sent and '"enum": ["B"]' in sent and '"required": ["1", "2", "3", "4", "5"]' in sent
    levels = {str(k): "fine" for k in range(1, 6)}
    reply = {"criteria": [{"attribute": a, "description": "d", "levels": levels} for a in ("A", "B")]}
    with pytest.raises(ValueError, match=r"criteria\.0\.description: String should have at least 5 characters"):
        parse_reply(json.dumps(reply), schema)


def test_a_rubric_or_persona_that_is_no_text_is_asked_again() -> None:
    """A small model's junk (issue 49, finding 5) fails the reply, so the build re-asks with why, instead of writing
    a benchmark ``prefdisco validate`` refuses."""
    from prefdisco.builder.personas import persona_schema
    from prefdisco.builder.rubrics import rubric_schema
    from prefdisco.structured import parse_reply

    schema = rubric_schema(("A",))
    levels = {str(k): f"Level {k}: the response follows it in part {k}." for k in range(1, 6)}
    reply = {"criteria": [{"attribute": "A", "description": "Whether it is followed.", "levels": levels}]}
    assert parse_reply(json.dumps(reply), schema).criteria[0].levels.l3 == levels["3"]  # type: ignore[attr-defined]
    reply["criteria"][0]["levels"] = {**levels, "3": '") }, {"', "5": levels["1"]}
    with pytest.raises(ValueError) as info:
        parse_reply(json.dumps(reply), schema)
    assert str(info.value) == (
        """criteria.0.levels: level 3 '") }, {"': it has no letter or digit; levels 1 and 5 say the same"""
    )
    reply["criteria"][0] |= {"levels": levels, "description": "{ ... }"}
    with pytest.raises(ValueError, match=r"^criteria\.0\.description: description '\{ \.\.\. \}': it has no letter"):
        parse_reply(json.dumps(reply), schema)

    person = {
        "name": "Ada Okafor", "age": 40, "occupation": "nurse", "location": "Lyon", "education": "a degree",
        "summary": "A nurse who likes numbers.", "backstory": '", "backstory": "', "occupation_group": "health",
        "expertise": dict.fromkeys(("mathematics", "science", "medicine", "logic", "general_knowledge",
                                    "social_situations"), "novice"),
    }  # fmt: skip
    with pytest.raises(
        ValueError, match=r"^backstory: backstory '\", \"backstory\": \"': it holds a fragment of JSON$"
    ):
        parse_reply(json.dumps(person), persona_schema(("health",)))


def test_a_reply_cut_at_the_token_limit_is_echoed_capped_with_a_hint() -> None:
    from prefdisco.structured import ECHO_LIMIT

    class Long(Script):
        def __call__(self, input: list[Any], tools: Any, tool_choice: Any, config: GenerateConfig) -> ModelOutput:
            out = super().__call__(input, tools, tool_choice, config)
            if len(self.inputs) == 1:
                out.choices[0].stop_reason = "max_tokens"
            return out

    script = Long('{"score": 3, "reason": "' + "blah " * 2000, '{"score": 3, "reason": "short"}')
    result = run(script)
    assert result.value.reason == "short"
    echoed, feedback = script.inputs[1][1], script.inputs[1][2]
    assert len(echoed) <= ECHO_LIMIT + 10 and echoed.endswith("(cut)")
    assert "cut off at the length limit" in feedback


def test_strict_is_sent_only_when_asked() -> None:
    script = Script(json.dumps({"score": 1, "reason": "r"}), json.dumps({"score": 1, "reason": "r"}))
    run(script)
    run(script, strict=True)
    assert [c.response_schema.strict for c in script.configs if c.response_schema] == [None, True]


def test_every_attempt_is_cached_and_a_rerun_replays_the_whole_chain(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    policy = CachePolicy(expiry=None, scopes={"run": "r1"})
    first = Script("not json at all", '{"score": 5, "reason": "fixed"}')
    result = run(first, cache=policy)
    assert result.attempts == 2 and len(first.inputs) == 2
    again = Script("never sent", "never sent")
    replayed = run(again, cache=policy)
    assert again.inputs == []  # the bad reply and the re-ask both came from the cache
    assert replayed.value == result.value and replayed.attempts == 2 and len(replayed.errors) == 1
    uncached = Script('{"score": 2, "reason": "fresh"}')
    assert run(uncached).value.score == 2 and len(uncached.inputs) == 1  # cache=False: always a call


def test_overlay_is_inspects_merge_without_its_deep_copies():
    """Every structured call lays its response schema over the caller's config: the same config as inspect's
    ``merge`` (each field the overlay sets replaces the base's, ``extra_body`` whole), with the fields shared."""
    from prefdisco.structured import overlay, response_schema

    base = GenerateConfig(max_tokens=10, temperature=0.1, seed=3, extra_body={"top_k": 1}, reasoning_effort="low")
    top = GenerateConfig(response_schema=response_schema(Answer, "a"), extra_body={"json_schema": {"type": "object"}})
    laid = overlay(base, top)
    assert laid == base.merge(top)
    assert laid.extra_body == {"json_schema": {"type": "object"}} and laid.max_tokens == 10
    assert laid.response_schema is top.response_schema  # shared, not copied
    assert base.response_schema is None  # the caller's config is left as it was
