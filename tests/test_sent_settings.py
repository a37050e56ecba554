"""The protocol says what was sent (issue 32, part 3): each role's settings read back from its requests.

inspect's Anthropic client sends no temperature, top-p or top-k to any model (Anthropic's current API takes none), so
a run whose simulated user was asked for 0.7 and whose judge for 0 had neither. Two runs of the same flags on the mock
server, one through inspect's real Anthropic Messages client and one through its OpenAI-compatible client:

* Anthropic (its judge given a thinking budget, ``--judge-reasoning-tokens 1024``): no request on the wire carries a
  temperature and every judge request the budget; ``protocol.json`` says the user's 0.7 and the judge's 0.0 were not
  sent, its effective settings have both null (and the budget, sent), and its id is another than the flags' (as are
  the results rows'); the report names what was not sent.
* OpenAI-compatible: every setting asked was sent; the id stays ``default-v1.0`` and nothing is noted.

The two runs are then not one protocol: the report refuses to put them in one table and names the temperatures. A
third run, ``--preset paper`` through inspect's Gemini client, really sends the paper's 0.4 and 0.1 and keeps
``paper-v1.0``.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from inspect_ai.model import GenerateConfig
from typer.testing import CliRunner

import prefdisco.cli as cli
from mock_openai import MockOpenAI, providers_env, tagged_scenarios, write_scenarios
from prefdisco.errors import UserError
from prefdisco.evaluation.protocol.effective import effective_settings
from prefdisco.evaluation.protocol.protocols import DEFAULT_SETTINGS
from prefdisco.evaluation.settings.config import RunConfig
from prefdisco.evaluation.settings.preset_rules import preset_settings
from prefdisco.results.sent_settings import RoleSent, SentSettings, asked_of, from_request

MODES = "baseline,discovery,oracle"


def run(tmp_path, monkeypatch, mock: MockOpenAI, model: str, name: str, *extra: str) -> tuple[dict, pd.DataFrame]:
    bench = write_scenarios(tmp_path / "scenarios.jsonl", tagged_scenarios(3))
    args = ["eval", str(bench), "--model", model, "--log-dir", str(tmp_path / name), "--modes", MODES, *extra]
    result = CliRunner().invoke(cli.app, [*args, "--display", "none"])
    assert result.exit_code == 0, result.output
    record = json.loads((tmp_path / name / "protocol.json").read_text())
    return record, pd.read_csv(tmp_path / name / "results.csv")


@pytest.mark.slow
def test_a_provider_that_drops_the_temperature_makes_the_run_another_protocol(tmp_path, monkeypatch):
    cli._register()
    with MockOpenAI() as mock:
        providers_env(monkeypatch, mock, tmp_path)
        budget = ("--judge-reasoning-tokens", "1024")  # Claude's thinking takes a budget, not an effort
        claude_model = f"anthropic/claude-sonnet-4-5-m{mock.port}"
        claude, claude_rows = run(tmp_path, monkeypatch, mock, claude_model, "claude", *budget)
        wire = list(mock.wire)
        openai, openai_rows = run(tmp_path, monkeypatch, mock, f"openai-api/mock/m{mock.port}", "openai")
        gemini = f"google/gemini-2.5-flash-m{mock.port}"
        paper, paper_rows = run(tmp_path, monkeypatch, mock, gemini, "paper", "--preset", "paper")

    # the Anthropic run: dialogues ran and were judged, through the real client, and no temperature reached the wire
    assert (claude_rows["failed"] == 0).all() and claude_rows["pref_align"].notna().all()
    assert (claude_rows.query("mode == 'discovery'")["n_questions"] > 0).all()
    assert {role for role, _ in wire} >= {"assistant", "user", "judge"}
    assert not any("temperature" in body for _, body in wire)
    # both of Anthropic's wire formats ran: the answers (a 32,000-token default) and the thinking judge streamed, the
    # simulated user's replies came as JSON; every judge request carried the thinking budget
    assert {bool(body.get("stream")) for role, body in wire if role in ("assistant", "judge")} == {True}
    assert {bool(body.get("stream")) for role, body in wire if role == "user"} == {False}
    assert {body["thinking"]["budget_tokens"] for role, body in wire if role == "judge"} == {1024}
    # every request asks Anthropic to cache its prompt prefix (inspect's automatic caching): the judge prompts of one
    # response share all but their criterion, so later judge calls read it from the cache
    assert all("cache_control" in body for _, body in wire)
    assert claude["sent"]["grader"]["sent"]["reasoning_tokens"] == 1024
    assert claude["settings"]["grader_reasoning_tokens"] == 1024 == claude["given"]["grader_reasoning_tokens"]
    why = "inspect's Anthropic client sends no temperature (Anthropic's current API takes none)"
    assert f"grader temperature 0.0: not sent ({claude_model}): {why}" in claude["not_sent"]
    assert f"user temperature 0.7: not sent ({claude_model}): {why}" in claude["not_sent"]
    assert claude["settings"]["user_temperature"] is None and claude["settings"]["grader_temperature"] is None
    assert claude["given"]["user_temperature"] == 0.7 and claude["given"]["grader_temperature"] == 0.0
    # the flags' protocol (the defaults with a judge budget) is a custom one; what was sent is another
    assert claude["asked_id"].startswith("custom-") and claude["id"].startswith("custom-")
    assert claude["id"] != claude["asked_id"]
    assert set(claude_rows["protocol_id"]) == {claude["id"]}
    assert claude["sent"]["user"]["asked"]["temperature"] == 0.7 and "temperature" not in claude["sent"]["user"]["sent"]
    assert claude["sent"]["user"]["sent"]["max_tokens"] == claude["sent"]["user"]["asked"]["max_tokens"]

    # the OpenAI-compatible run: everything asked was sent
    assert openai["id"] == "default-v1.0" and openai["not_sent"] == [] and openai["asked_id"] is None
    assert openai["sent"]["user"]["sent"]["temperature"] == 0.7
    assert openai["sent"]["grader"]["sent"]["temperature"] == 0.0
    assert set(openai_rows["protocol_id"]) == {"default-v1.0"}

    # --preset paper on a provider that takes a temperature: its fixed 0.4 and 0.1 really sent, the paper's id kept
    assert paper["id"] == "paper-v1.0" and paper["not_sent"] == [] and paper["asked_id"] is None
    assert paper["sent"]["user"]["sent"]["temperature"] == 0.4 and paper["sent"]["grader"]["sent"]["temperature"] == 0.1
    assert (paper_rows["failed"] == 0).all() and set(paper_rows["protocol_id"]) == {"paper-v1.0"}

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


@pytest.mark.parametrize(
    ("models", "role"),
    [
        ({"models": ["anthropic/claude-sonnet-4-5"]}, "the model under test"),
        ({"user_model": "anthropic/claude-haiku-4-5"}, "the simulated user"),
        ({"grader_model": "openai/o3"}, "the judge"),
        ({"judge_panel": ["openai/gpt-4o", "anthropic/claude-opus-4-1"]}, "the judge"),
    ],
)
def test_a_preset_that_fixes_a_temperature_refuses_a_model_sent_none(tmp_path, models, role):
    """``--preset paper`` fixes the temperatures (model 0.7, user 0.4, judge 0.1): a role on a model inspect sends no
    temperature is refused in one line, before any call; ``--preset default`` runs it (and records what was sent)."""
    base = {"models": ["openai/gpt-4.1"], "user_model": "openai/gpt-4.1", "grader_model": "openai/gpt-4.1"}
    settings = base | models
    paper = RunConfig(**settings, log_dir=tmp_path, **preset_settings("paper", {}))
    with pytest.raises(UserError) as refused:
        paper.validate()
    line = str(refused.value)
    assert line.startswith(f"--preset paper fixes the temperature of {role} to ") and "\n" not in line
    assert "sent none" in line and "--preset default" in line
    RunConfig(**settings, log_dir=tmp_path).validate()  # the default preset fixes nothing


def test_models_sent_a_temperature_pass_the_paper_preset(tmp_path):
    models = {"models": ["openai/gpt-4.1", "openai/gpt-5.1"], "user_model": "google/gemini-2.5-flash"}
    paper = preset_settings("paper", {})
    RunConfig(**models, grader_model="openai-api/vllm/qwen", log_dir=tmp_path, **paper).validate()
