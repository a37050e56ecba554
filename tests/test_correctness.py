"""Free-text correctness (normalized match and the SimpleQA grader) and the dispatch on answer type."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai.model import CachePolicy, GenerateConfig, ModelOutput, ModelUsage, get_model

import benchmark_rows
from prefdisco.prompts import render
from prefdisco.schema import Problem
from prefdisco.scoring.correctness import check_correct, check_correct_offline
from prefdisco.scoring.correctness.simpleqa_grader import SimpleQAGrade, grade_simpleqa
from prefdisco.scoring.extract.text import normalize_text
from prefdisco.structured import parse_reply


@pytest.fixture(scope="module")
def simpleqa(shared_benchmarks: Path) -> list[Problem]:
    return benchmark_rows.simpleqa(shared_benchmarks)


@pytest.fixture(scope="module")
def medqa(shared_benchmarks: Path) -> list[Problem]:
    return benchmark_rows.medqa(shared_benchmarks)


def test_squad_normalization() -> None:
    assert normalize_text("The  Eiffel-Tower!") == "eiffeltower"
    assert normalize_text("An apple, a day") == "apple day"


def test_free_text_normalized_match(simpleqa: list[Problem]) -> None:
    p = simpleqa[0]  # Michio Sugeno
    assert check_correct_offline(p, p.answer).correct is True
    assert check_correct_offline(p, f"After checking the records, the answer is {p.answer.upper()}.").correct is True
    assert check_correct_offline(p, f"Reasoning first.\n**{p.answer}**").correct is True
    assert check_correct_offline(p, "The answer is Lotfi Zadeh.").correct is False
    result = check_correct_offline(p, "")
    assert result.correct is False and result.method == "normalized_match"


def test_grader_prompt_renders_the_three_inputs() -> None:
    text = render("simpleqa_grader", question="Who won?", target="Ann $5", response="It was Ann.")
    assert "Who won?" in text and "Ann $5" in text and "It was Ann." in text
    assert all(grade in text for grade in ("CORRECT", "INCORRECT", "NOT_ATTEMPTED"))


def _grader(contents: list[str], seen: list[GenerateConfig], inputs: list[list[str]] | None = None, **kwargs):
    replies = iter(contents)

    def respond(input, tools, tool_choice, config):
        seen.append(config)
        if inputs is not None:
            inputs.append([m.text for m in input])
        output = ModelOutput.from_content(model="mockllm", content=next(replies))
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download
        return output

    return get_model("mockllm/model", custom_outputs=respond, memoize=False, **kwargs)


def _grade(text: str) -> str | None:
    try:
        return parse_reply(text, SimpleQAGrade).grade
    except ValueError:
        return None


@pytest.mark.parametrize(
    ("text", "grade"),
    [
        ('{"grade": "CORRECT"}', "CORRECT"),
        ('```json\n{"grade": "NOT_ATTEMPTED"}\n```', "NOT_ATTEMPTED"),
        ('{"grade": "not attempted"}', "NOT_ATTEMPTED"),
        ('{"grade": "Not-Attempted"}', "NOT_ATTEMPTED"),
        ('{"grade": "incorrect"}', "INCORRECT"),
        ('The grade: {"grade": "CORRECT"}', "CORRECT"),
        ('{"grade": "MAYBE"}', None),
        ('{"verdict": "CORRECT"}', None),
        # bare words and letters are not a reply: generate_structured re-asks them (see below)
        ("INCORRECT", None),
        ("not attempted.", None),
        ("The response is CORRECT", None),
        ("B", None),
        ("(C)", None),
        ("CORRECT or INCORRECT, hard to say", None),
        ("I like turtles", None),
    ],
)
def test_grade_reply(text: str, grade: str | None) -> None:
    assert _grade(text) == grade


@pytest.mark.asyncio
async def test_simpleqa_grader_json_and_config(simpleqa: list[Problem]) -> None:
    p = simpleqa[0]
    seen: list[GenerateConfig] = []
    grader = _grader(['{"grade": "CORRECT"}'], seen)
    result = await grade_simpleqa(p.question, p.answer, f"I believe it was {p.answer}.", grader)
    assert result.correct is True and result.grade == "CORRECT" and result.method == "simpleqa_grader"
    config = seen[0]
    assert config.temperature == 0
    assert config.max_tokens is not None and config.max_tokens > 0
    schema = config.response_schema
    assert schema is not None and schema.json_schema.properties is not None
    assert schema.json_schema.properties["grade"].enum == ["CORRECT", "INCORRECT", "NOT_ATTEMPTED"]
    assert schema.strict is True and schema.json_schema.required == ["grade"]


@pytest.mark.asyncio
async def test_simpleqa_grader_keeps_the_grader_roles_own_settings(simpleqa: list[Problem]) -> None:
    p = simpleqa[0]
    seen: list[GenerateConfig] = []
    grader = _grader(['{"grade": "CORRECT"}'], seen, config=GenerateConfig(temperature=1.0, max_tokens=4000))
    await grade_simpleqa(p.question, p.answer, p.answer, grader)
    assert seen[0].temperature == 1.0 and seen[0].max_tokens == 4000


@pytest.mark.asyncio
async def test_simpleqa_grader_re_asks_bare_words(simpleqa: list[Problem]) -> None:
    p = simpleqa[1]
    seen: list[GenerateConfig] = []
    inputs: list[list[str]] = []
    grader = _grader(["NOT_ATTEMPTED", '{"grade": "NOT_ATTEMPTED"}'], seen, inputs)
    result = await grade_simpleqa(p.question, p.answer, "I don't know.", grader)
    assert result.correct is False and result.grade == "NOT_ATTEMPTED"
    assert len(seen) == 2 and inputs[1][1] == "NOT_ATTEMPTED" and "no JSON object" in inputs[1][2]
    grader = _grader(["INCORRECT", '{"grade": "INCORRECT"}'], seen)
    result = await grade_simpleqa(p.question, p.answer, "Marie Curie", grader)
    assert result.correct is False and result.grade == "INCORRECT"


@pytest.mark.asyncio
async def test_simpleqa_grader_retries_then_succeeds(simpleqa: list[Problem]) -> None:
    p = simpleqa[2]
    seen: list[GenerateConfig] = []
    grader = _grader(["hmm, let me think", "???", '{"grade": "CORRECT"}'], seen)
    result = await grade_simpleqa(p.question, p.answer, p.answer, grader)
    assert result.correct is True and result.grade == "CORRECT"
    assert len(seen) == 3


@pytest.mark.asyncio
async def test_simpleqa_grader_unparseable_is_none(simpleqa: list[Problem]) -> None:
    p = simpleqa[2]
    seen: list[GenerateConfig] = []
    grader = _grader(["garbage"] * 5, seen)
    result = await grade_simpleqa(p.question, p.answer, p.answer, grader)
    assert result.correct is None and result.grade is None
    assert result.detail.startswith("grader output unparseable") and "no JSON object" in result.detail
    assert len(seen) == 3  # one call and two retries


@pytest.mark.asyncio
async def test_simpleqa_grader_calls_are_cached_retries_included(simpleqa: list[Problem], tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    p = simpleqa[3]
    policy = CachePolicy(expiry=None, scopes={"run": "r1", "scenario": "s1", "role": "grader"})
    seen: list[GenerateConfig] = []
    first = await check_correct(p, p.answer, grader=_grader(["hmm", '{"grade": "CORRECT"}'], seen), cache=policy)
    assert first.grade == "CORRECT" and len(seen) == 2
    replayed = await check_correct(p, p.answer, grader=_grader([], seen), cache=policy)
    assert replayed == first and len(seen) == 2  # a rerun pays for neither the bad reply nor the re-ask
    other = CachePolicy(expiry=None, scopes={"run": "r2", "scenario": "s1", "role": "grader"})
    await check_correct(p, p.answer, grader=_grader(['{"grade": "CORRECT"}'], seen), cache=other)
    assert len(seen) == 3  # another run scope is not replayed


@pytest.mark.asyncio
async def test_check_correct_dispatch(simpleqa: list[Problem], medqa: list[Problem]) -> None:
    p = simpleqa[0]
    seen: list[GenerateConfig] = []
    graded = await check_correct(p, "Some other person.", grader=_grader(['{"grade": "INCORRECT"}'], seen))
    assert graded.method == "simpleqa_grader" and graded.correct is False and len(seen) == 1
    # without a grader: normalized match
    offline = await check_correct(p, p.answer)
    assert offline.method == "normalized_match" and offline.correct is True
    # a free-text problem of another benchmark uses the grader only when its metadata asks for it
    other = Problem.model_validate({**p.model_dump(exclude={"answer_spec"}), "benchmark": "trivia"})
    assert (await check_correct(other, p.answer, grader=_grader([], seen))).method == "normalized_match"
    asks = Problem.model_validate({**other.model_dump(exclude={"answer_spec"}), "metadata": {"grader": "model"}})
    graded = await check_correct(asks, p.answer, grader=_grader(['{"grade": "CORRECT"}'], seen))
    assert graded.method == "simpleqa_grader" and graded.correct is True
    # non-free-text problems never call the grader
    mc = await check_correct(medqa[0], f"Answer: {medqa[0].answer}", grader=_grader([], seen))
    assert mc.method == "letter" and mc.correct is True
