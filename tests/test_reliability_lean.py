"""The lean OpenAI-compatible provider (``openai-lean/<service>/<model>``) against the fault-injecting mock."""

from __future__ import annotations

import asyncio
import math

import pandas as pd
import pytest
from inspect_ai.model import GenerateConfig, ResponseSchema, get_model
from inspect_ai.util import JSONSchema
from typer.testing import CliRunner

import prefdisco.cli as cli
import prefdisco.models.lean_registry  # noqa: F401  (registers openai-lean)
from mock_openai import MockOpenAI, tagged_scenarios, write_scenarios
from prefdisco.models.openai_lean import LeanAPIError, RetryWait, request_body

KEY = "sk-test-LEAN-1122334455"


@pytest.fixture
def mock(monkeypatch, tmp_path):
    with MockOpenAI() as server:
        for key, value in server.env("mock", api_key=KEY).items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))
        monkeypatch.setenv("INSPECT_HTTP_REQUEST_TIMEOUT", "1.5")
        monkeypatch.setenv("INSPECT_DISPLAY", "none")
        yield server


def generate(mock: MockOpenAI, prompt: str, **config):
    model = get_model(f"openai-lean/mock/m{mock.port}", memoize=False)
    return asyncio.run(model.generate(prompt, config=GenerateConfig(**config)))


def test_eval_through_lean_provider_survives_every_fault(mock, tmp_path):
    mock.config.update(
        dict(
            rate_429=0.08,
            retry_after_s=0.1,
            rate_500=0.05,
            rate_timeout=0.02,
            hang_s=5,
            rate_drop=0.03,
            rate_malformed=0.03,
            judge_garbage_rate=0.05,
            seed=11,
        )
    )
    scenarios = tagged_scenarios(4)
    bench = write_scenarios(tmp_path / "scenarios.jsonl", scenarios)
    cli._register()
    model = f"openai-lean/mock/m{mock.port}"
    args = ["eval", str(bench), "--model", model, "--log-dir", str(tmp_path / "run"), "--display", "none"]
    result = CliRunner().invoke(cli.app, args)
    assert result.exit_code == 0, result.output
    stats = mock.stats()
    faults = [k for k in ("fault_429", "fault_500", "fault_timeout", "fault_drop", "fault_malformed") if stats.get(k)]
    assert len(faults) >= 4, stats

    results = pd.read_csv(tmp_path / "run" / "results.csv")
    assert len(results) == 12 and (results["failed"] == 0).all()
    attributes = pd.read_csv(tmp_path / "run" / "attributes.csv")
    for row in attributes.itertuples():
        said = mock.judged[(row.scenario_id, row.mode, row.attribute)]
        assert math.isnan(row.score) if said is None else row.score == said, row
    assert results["judge_invalid"].sum() == sum(v is None for v in mock.judged.values())


def test_request_carries_schema_settings_and_extra_body():
    schema = ResponseSchema(
        name="s", json_schema=JSONSchema(type="object", properties={"score": JSONSchema(type="integer")})
    )
    config = GenerateConfig(temperature=0, max_tokens=16, response_schema=schema, extra_body={"grammar": "g"})
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser

    body = request_body("m", [ChatMessageSystem(content="sys"), ChatMessageUser(content="hi")], config)
    assert body["messages"] == [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]
    assert body["temperature"] == 0 and body["max_tokens"] == 16 and body["grammar"] == "g"
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["properties"] == {"score": {"type": "integer"}}
    assert "top_p" not in body and "seed" not in body


def test_judge_reply_and_usage_are_read(mock):
    output = generate(mock, 'Grade it. Reply with JSON only: {"score": N}', temperature=0)
    assert output.completion.startswith('{"score": ')
    assert output.usage is not None and output.usage.output_tokens > 0
    assert output.choices[0].stop_reason == "stop"


def test_wrong_key_is_an_auth_failure_not_retried_and_never_echoed(mock, monkeypatch):
    mock.config.api_key = KEY
    mock.config.echo_key_in_401 = False
    monkeypatch.setenv("MOCK_API_KEY", "sk-test-WRONG-5566778899")
    with pytest.raises(Exception) as raised:
        generate(mock, "hello", max_retries=3)
    assert "401" in str(raised.value)
    assert "sk-test-WRONG-5566778899" not in str(raised.value) and KEY not in str(raised.value)
    assert mock.stats()["rejected_401"] == 1


def test_bad_request_fails_without_retry(mock):
    mock.config.reject_case = "x1"
    with pytest.raises(Exception, match="400"):
        generate(mock, "a question [case x1]", max_retries=3)
    assert mock.stats()["rejected_400"] == 1


def test_rate_limit_and_malformed_replies_are_retried(mock):
    mock.config.update(dict(rate_429=1.0, retry_after_s=0.05))
    with pytest.raises(Exception) as raised:  # inspect's tenacity RetryError once retries are exhausted
        generate(mock, "hello", max_retries=2)
    last = raised.value.last_attempt.exception()  # type: ignore[attr-defined]
    assert isinstance(last, LeanAPIError) and last.status == 429 and last.retry_after == pytest.approx(0.05)
    assert mock.stats()["fault_429"] == 3  # 1 attempt + 2 retries
    mock.config.update(dict(rate_429=0.0, rate_malformed=0.5, seed=3))
    mock.reset()
    output = generate(mock, "hello", max_retries=10)
    assert "The answer is B" in output.completion


def test_retry_wait_follows_retry_after_then_backs_off():
    class State:
        def __init__(self, n: int, ex: Exception) -> None:
            self.attempt_number = n
            self.outcome = type("O", (), {"exception": lambda self: ex})()

    wait = RetryWait()
    assert 2.0 <= wait(State(1, LeanAPIError(429, "slow down", retry_after=2.0))) <= 2.1  # type: ignore[arg-type]
    assert wait(State(1, LeanAPIError(500, "boom"))) <= 0.5  # type: ignore[arg-type]
    assert 3.0 <= wait(State(3, LeanAPIError(500, "boom"))) <= 6.0  # type: ignore[arg-type]
