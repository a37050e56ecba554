"""``--batch`` (issue 34 part 3): every judge call and the single-turn conditions' answers go through the provider's
batch API, driven by inspect's own ``AnthropicBatcher`` against a mock of Anthropic's Message Batches endpoints
(``tests/mock_batch.py``); the dialogue's turns and the simulated user stay real-time; the rows say what went by
batch and ``cost_usd`` prices it at the batch share.

The run, by hand: 2 scenarios (3 criteria, letter answers) on ``anthropic/claude-haiku-4-5`` in every role, baseline,
discovery and oracle, the structured judge. The mock plants every call's usage: 1,000 input tokens of which 600 read
from the cache, 50 output. At the packaged price ($1 per 1M input, $0.10 cached — Anthropic's 0.1 share — $5 output)
one call is (400 × 1 + 600 × 0.1 + 50 × 5) / 1M = $0.00071, by batch half that, $0.000355. Per scenario:

* baseline, oracle: the answer and the judge, both by batch: 2 × $0.000355 = $0.00071 (real-time: $0.00142);
* discovery: 2 questions and the answer and 2 simulated replies real-time, the judge and the audit by batch:
  5 × $0.00071 + 2 × $0.000355 = $0.00426.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

import prefdisco.cli as cli
from mock_openai import MockConfig, MockOpenAI, providers_env, write_scenarios
from prefdisco.errors import UserError
from prefdisco.evaluation.batch import batch_value, check_batch
from scripted import tagged_scenario

MODEL = "anthropic/claude-haiku-4-5"
USAGE = {"input": 1000, "cached": 600, "output": 50, "reasoning": 0}
CALL = 0.00071
HAND = {"baseline": 2 * CALL / 2, "discovery": 5 * CALL + 2 * CALL / 2, "oracle": 2 * CALL / 2}


@pytest.mark.slow
def test_judges_and_single_turn_answers_go_by_batch_and_cost_half(tmp_path, monkeypatch):
    cli._register()
    bench = write_scenarios(tmp_path / "scenarios.jsonl", [tagged_scenario(s) for s in ("k0", "k1")])
    settings = tmp_path / "batch.json"
    settings.write_text(json.dumps({"size": 50, "send_delay": 0.3, "tick": 0.1}))
    with MockOpenAI(MockConfig(usage=USAGE)) as mock:
        providers_env(monkeypatch, mock, tmp_path)
        args = ["eval", str(bench), "--model", MODEL, "--log-dir", str(tmp_path / "run"), "--batch", str(settings)]
        result = CliRunner().invoke(
            cli.app, [*args, "--modes", "baseline,discovery,oracle", "--judge", "structured", "--display", "none"]
        )
        assert result.exit_code == 0, result.output
        stats = mock.stats()
    batched, every = stats["by_case_role_batched"], stats["by_case_role"]
    for case in ("k0", "k1"):
        for mode in ("baseline", "oracle"):  # one answer and its judge: both by batch
            for role in ("assistant", "judge"):
                assert batched.get(f"{case}|{mode}|{role}") == every[f"{case}|{mode}|{role}"] == 1, (case, mode, role)
        # the dialogue: every turn real-time, the judge and the audit by batch
        assert f"{case}|discovery|assistant" not in batched and every[f"{case}|discovery|assistant"] == 3
        assert f"{case}|discovery|user" not in batched and every[f"{case}|discovery|user"] == 2
        assert batched[f"{case}|discovery|judge"] == batched[f"{case}|discovery|audit"] == 1
    assert sum(stats["batch_sizes"]) == sum(stats["by_role_batched"].values()) == 2 * (2 + 2 + 2)
    assert len(stats["batch_sizes"]) < 12  # calls gathered into batches, not one batch a call

    rows = pd.read_csv(tmp_path / "run" / "results.csv").set_index(["scenario_id", "mode"])
    for (_, mode), row in rows.iterrows():
        assert row["batched"] == ("grader" if mode == "discovery" else "assistant grader")
        assert row["cost_usd"] == pytest.approx(HAND[mode]), mode
    assert json.loads((tmp_path / "run" / "run.json").read_text())["batch"] == str(settings)

    out = tmp_path / "report"
    report = CliRunner().invoke(cli.app, ["report", str(tmp_path / "run"), "--out", str(out), "--no-figures"])
    assert report.exit_code == 0, report.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cost_batch"]["roles"] == {
        "baseline": ["assistant", "grader"],
        "discovery": ["grader"],
        "oracle": ["assistant", "grader"],
    }
    assert summary["cost_batch"]["shares"]["anthropic/"] == 0.5
    assert summary["cost_total"][MODEL] == pytest.approx(2 * sum(HAND.values()))
    page = (out / "report.html").read_text()
    assert 'id="cost-batch"' in page and "discovery: every judge call" in page


def test_the_flag_is_read_as_inspects_and_refused_where_it_batches_nothing(tmp_path):
    assert batch_value("on") is True and batch_value("200") == 200
    settings = tmp_path / "b.json"
    settings.write_text('{"size": 10, "send_delay": 1.5}')
    assert (batch_value(str(settings)).size, batch_value(str(settings)).send_delay) == (10, 1.5)
    for bad, said in (("0", "at least 1"), ("soon", "expected 'on'"), (str(tmp_path / "none.json"), "expected 'on'")):
        with pytest.raises(UserError, match=said):
            batch_value(bad)
    settings.write_text('{"size": "many"}')
    with pytest.raises(UserError, match="not a JSON object of batch settings"):
        batch_value(str(settings))
    # nothing to batch: no judge or single-turn model with a batch API (the dialogues never are)
    with pytest.raises(UserError, match="none of openai-api/x/y"):
        check_batch("on", ["openai-api/x/y"], ["openai-api/x/y"], ["baseline"])
    with pytest.raises(UserError, match="none of openai-api/j"):
        check_batch("on", ["openai/gpt-4.1"], ["openai-api/j"], ["discovery"])  # a dialogue model: never batched
    check_batch("on", ["openai/gpt-4.1"], ["openai-api/j"], ["baseline"])  # the baseline answers can go
    check_batch(None, ["openai-api/x/y"], ["openai-api/x/y"], ["baseline"])


def test_the_dry_run_prices_what_goes_by_batch_at_the_share(tmp_path):
    from prefdisco.evaluation.config import RunConfig
    from prefdisco.evaluation.estimate import estimate_run
    from prefdisco.prices import prices

    roles = {"models": [MODEL], "user_model": MODEL, "grader_model": MODEL, "log_dir": tmp_path, "prices": prices()}
    plan = {"modes": ["baseline", "discovery", "oracle"], "fixed_k": [1], "judge": "structured"}
    plain, batched = (estimate_run([tagged_scenario("k0")], RunConfig(**roles, **plan, batch=b)) for b in (None, "on"))
    assert [(ln.role, ln.part) for ln in plain.lines] == [(ln.role, ln.part) for ln in batched.lines]
    for before, after in zip(plain.lines, batched.lines, strict=True):
        half = before.role == "grader" or before.part in ("baseline", "oracle")  # never a dialogue turn or the user
        assert after.usd == pytest.approx(before.usd * (0.5 if half else 1.0)), (before.role, before.part)
    assert any("--batch" in note for note in batched.notes)
