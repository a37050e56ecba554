"""The protocol says what was sent (issue 32, part 3): each role's settings read back from its requests.

inspect's Anthropic client sends no temperature, top-p or top-k to any model (Anthropic's current API takes none), so
a run whose simulated user was asked for 0.7 and whose judge for 0 had neither. Two runs of the same flags on the mock
server, one through inspect's real Anthropic Messages client and one through its OpenAI-compatible client:

* Anthropic: no request on the wire carries a temperature; ``protocol.json`` says the user's 0.7 and the judge's 0.0
  were not sent, its effective settings have both null, and its id is a custom one (``asked_id`` default-v1.0), as
  are the results rows'; the report names what was not sent.
* OpenAI-compatible: every setting asked was sent; the id stays ``default-v1.0`` and nothing is noted.

The two runs are then not one protocol: the report refuses to put them in one table and names the temperatures.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from inspect_ai.model import GenerateConfig
from typer.testing import CliRunner

import prefdisco.cli as cli
from mock_openai import MockOpenAI, mock_env, tagged_scenarios, write_scenarios
from prefdisco.evaluation.effective_protocol import effective_settings
from prefdisco.evaluation.protocols import DEFAULT_SETTINGS
from prefdisco.results.sent_settings import RoleSent, SentSettings, asked_of, from_request

MODES = "baseline,discovery,oracle"


def run(tmp_path, monkeypatch, mock: MockOpenAI, model: str, name: str) -> tuple[dict, pd.DataFrame]:
    bench = write_scenarios(tmp_path / "scenarios.jsonl", tagged_scenarios(3))
    args = ["eval", str(bench), "--model", model, "--log-dir", str(tmp_path / name), "--modes", MODES]
    result = CliRunner().invoke(cli.app, [*args, "--display", "none"])
    assert result.exit_code == 0, result.output
    record = json.loads((tmp_path / name / "protocol.json").read_text())
    return record, pd.read_csv(tmp_path / name / "results.csv")


@pytest.mark.slow
def test_a_provider_that_drops_the_temperature_makes_the_run_another_protocol(tmp_path, monkeypatch):
    cli._register()
    with MockOpenAI() as mock:
        mock_env(monkeypatch, mock, tmp_path)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{mock.port}")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-mock")
        claude, claude_rows = run(tmp_path, monkeypatch, mock, f"anthropic/claude-sonnet-4-5-m{mock.port}", "claude")
        wire = list(mock.wire)
        openai, openai_rows = run(tmp_path, monkeypatch, mock, f"openai-api/mock/m{mock.port}", "openai")

    # the Anthropic run: dialogues ran and were judged, through the real client, and no temperature reached the wire
    assert (claude_rows["failed"] == 0).all() and claude_rows["pref_align"].notna().all()
    assert (claude_rows.query("mode == 'discovery'")["n_questions"] > 0).all()
    assert {role for role, _ in wire} >= {"assistant", "user", "judge"}
    assert not any("temperature" in body for _, body in wire)
    # both of Anthropic's wire formats ran: the answers (a 32,000-token default) streamed, the rest as JSON
    assert {bool(body.get("stream")) for role, body in wire if role == "assistant"} == {True}
    assert {bool(body.get("stream")) for role, body in wire if role in ("user", "judge")} == {False}
    claude_model = f"anthropic/claude-sonnet-4-5-m{mock.port}"
    assert f"grader temperature 0.0: not sent ({claude_model})" in claude["not_sent"]
    assert f"user temperature 0.7: not sent ({claude_model})" in claude["not_sent"]
    assert claude["settings"]["user_temperature"] is None and claude["settings"]["grader_temperature"] is None
    assert claude["given"]["user_temperature"] == 0.7 and claude["given"]["grader_temperature"] == 0.0
    assert claude["asked_id"] == "default-v1.0" and claude["id"].startswith("custom-")
    assert set(claude_rows["protocol_id"]) == {claude["id"]}
    assert claude["sent"]["user"]["asked"]["temperature"] == 0.7 and "temperature" not in claude["sent"]["user"]["sent"]
    assert claude["sent"]["user"]["sent"]["max_tokens"] == claude["sent"]["user"]["asked"]["max_tokens"]

    # the OpenAI-compatible run: everything asked was sent
    assert openai["id"] == "default-v1.0" and openai["not_sent"] == [] and openai["asked_id"] is None
    assert openai["sent"]["user"]["sent"]["temperature"] == 0.7
    assert openai["sent"]["grader"]["sent"]["temperature"] == 0.0
    assert set(openai_rows["protocol_id"]) == {"default-v1.0"}

    # the report says what was not sent, and the two runs are not one protocol
    out = tmp_path / "report"
    report = CliRunner().invoke(cli.app, ["report", str(tmp_path / "claude"), "--out", str(out), "--no-figures"])
    assert report.exit_code == 0, report.output
    summary = json.loads((out / "summary.json").read_text())
    assert any("user temperature 0.7: not sent" in c for c in summary["caveats"])
    assert summary["protocol_id"] == claude["id"]
    both = [str(tmp_path / "claude"), str(tmp_path / "openai")]
    mixed = CliRunner().invoke(cli.app, ["report", *both, "--out", str(tmp_path / "mixed"), "--no-figures"])
    assert mixed.exit_code == 2 and "user_temperature null vs 0.7" in mixed.output


def test_each_providers_request_shape_is_read():
    """The settings of a raw request in each provider's shape (what inspect records in ``ModelEvent.call``)."""
    assert from_request({"model": "gpt-4.1", "temperature": 0.0, "max_tokens": 16, "seed": 3}) == {
        "temperature": 0.0, "max_tokens": 16,
    }  # fmt: skip
    responses = {"model": "o3", "max_output_tokens": 400, "reasoning": {"effort": "low", "summary": "auto"}}
    assert from_request(responses) == {"max_tokens": 400, "reasoning_effort": "low"}
    assert from_request({"model": "o4-mini", "max_completion_tokens": 99}) == {"max_tokens": 99}
    anthropic = {"model": "claude", "max_tokens": 32000, "thinking": {"type": "enabled", "budget_tokens": 2048}}
    assert from_request(anthropic) == {"max_tokens": 32000, "reasoning_tokens": 2048}
    assert from_request({"output_config": {"effort": "high"}, "max_tokens": 10})["reasoning_effort"] == "high"
    gemini = {
        "config": {"temperature": 0.7, "topP": 0.9, "maxOutputTokens": 64, "thinkingConfig": {"thinkingBudget": 0}}
    }
    assert from_request(gemini) == {"temperature": 0.7, "top_p": 0.9, "max_tokens": 64, "reasoning_tokens": 0}
    assert asked_of(GenerateConfig(temperature=0.0, max_tokens=5, seed=1)) == {"temperature": 0.0, "max_tokens": 5}


def test_effective_settings_null_what_was_not_sent_and_keep_what_was_changed():
    sent = SentSettings(
        roles={
            "user": RoleSent(model="m", asked={"temperature": 0.7, "max_tokens": 160}, sent={"max_tokens": 160}),
            "grader": RoleSent(model="m", asked={"reasoning_effort": "max"}, sent={"reasoning_effort": "high"}),
        }
    )
    given = DEFAULT_SETTINGS | {"grader_reasoning_effort": "max"}
    effective = effective_settings(given, sent)
    assert effective == given | {"user_temperature": None, "grader_reasoning_effort": "high"}
    # a setting the flags left to the provider (None) stays None; the judge's temperature, not recorded, stays
    assert effective["user_max_tokens"] is None and effective["grader_temperature"] == 0.0
    assert sent.notes() == ["grader reasoning_effort 'max': sent as 'high' (m)", "user temperature 0.7: not sent (m)"]
