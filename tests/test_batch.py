"""``--batch`` (issue 34 part 3; issue 45, defect 6): the calls no turn waits for — every judge call and the answer of
a single-turn condition without pushback — go through the provider's batch API, driven by inspect's own
``AnthropicBatcher`` against a mock of Anthropic's Message Batches endpoints (``tests/mock_batch.py``); the dialogue's
turns, the simulated user and the targeted user's mapping stay real-time; the rows say what went by batch and
``cost_usd`` prices it at the batch share.

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
from prefdisco.evaluation.settings.batch import batch_value, check_batch
from prefdisco.prices import prices
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
    from prefdisco.evaluation.estimate.plan import estimate_run
    from prefdisco.evaluation.settings.config import RunConfig
    from prefdisco.prices import prices

    roles = {"models": [MODEL], "user_model": MODEL, "grader_model": MODEL, "log_dir": tmp_path, "prices": prices()}
    plan = {"modes": ["baseline", "discovery", "oracle"], "fixed_k": [1], "judge": "structured"}
    plain, batched = (estimate_run([tagged_scenario("k0")], RunConfig(**roles, **plan, batch=b)) for b in (None, "on"))
    assert [(ln.role, ln.part) for ln in plain.lines] == [(ln.role, ln.part) for ln in batched.lines]
    for before, after in zip(plain.lines, batched.lines, strict=True):
        half = before.role == "grader" or before.part in ("baseline", "oracle")  # never a dialogue turn or the user
        assert after.usd == pytest.approx(before.usd * (0.5 if half else 1.0)), (before.role, before.part)
    assert any("--batch" in note for note in batched.notes)


def _first_attribute(messages, schema, h):
    """The targeted user's mapping of every question: the profile's first attribute (so the user model answers)."""
    about = schema.get("properties", {}).get("about")
    return {"about": [about["items"]["enum"][0]]} if about else None


@pytest.mark.slow
def test_what_a_turn_waits_for_stays_real_time_and_is_priced_so(tmp_path, monkeypatch):
    """The targeted user's mapping of each question and the answers a pushback challenges are waited for by the next
    turn: under ``--batch`` they go real-time, and only the judges' calls at the end of each sample by batch.

    The run, by hand: the two scenarios above, baseline and discovery, ``--user-type targeted --pushback 1``, the
    structured judge, every call $0.00071 real-time and $0.000355 by batch (the module docstring's prices). Per
    scenario:

    * baseline: the answer, the person's challenge (the user model) and the reply to it, all real-time, then the
      judge by batch: 3 × $0.00071 + $0.000355 = $0.002485 (the judges' part $0.000355);
    * discovery: 2 questions, the answer and the reply to the challenge (4 model calls), 2 mappings on the judge's
      model, 2 simulated replies and the challenge (3 user calls), all real-time, then the judge and the audit by
      batch: 9 × $0.00071 + 2 × $0.000355 = $0.0071 (the judges' part, the mappings with it: $0.00213).

    Before, the mapping went by batch with the judges and the single-turn answers with their pushback replies too,
    and the rows priced them at the batch share ($0.001775 and $0.00639)."""
    cli._register()
    bench = write_scenarios(tmp_path / "scenarios.jsonl", [tagged_scenario(s) for s in ("k0", "k1")])
    settings = tmp_path / "batch.json"
    settings.write_text(json.dumps({"size": 50, "send_delay": 0.3, "tick": 0.1}))
    with MockOpenAI(MockConfig(usage=USAGE), structured=_first_attribute) as mock:
        providers_env(monkeypatch, mock, tmp_path)
        # a model name of this server's (inspect memoizes a model by name, client and port), at the packaged price
        model, book = f"{MODEL}-m{mock.port}", tmp_path / "prices.json"
        book.write_text(json.dumps({model: prices().get(MODEL)}))
        args = ["eval", str(bench), "--model", model, "--log-dir", str(tmp_path / "run"), "--batch", str(settings)]
        args += ["--modes", "baseline,discovery", "--judge", "structured", "--user-type", "targeted"]
        args += ["--prices", str(book)]
        result = CliRunner().invoke(cli.app, [*args, "--pushback", "1", "--display", "none"])
        assert result.exit_code == 0, result.output
        stats = mock.stats()
    batched, every = stats["by_role_batched"], stats["by_role"]
    assert every["mapper"] == 4 and "mapper" not in batched  # 2 questions x 2 scenarios, each real-time
    assert every["assistant"] == 2 * (2 + 4) and "assistant" not in batched  # the answers pushback challenged
    assert every["user"] == 2 * (1 + 3) and "user" not in batched
    assert batched == {"judge": 4, "audit": 2} == {r: every[r] for r in ("judge", "audit")}  # only the judging

    rows = pd.read_csv(tmp_path / "run" / "results.csv").set_index(["scenario_id", "mode"])
    assert set(rows["batched"]) == {"grader"}  # the model under test's answers went real-time
    hand = {"baseline": (3 * CALL + CALL / 2, CALL / 2), "discovery": (9 * CALL + 2 * CALL / 2, 3 * CALL)}
    for (_, mode), row in rows.iterrows():
        assert (row["cost_usd"], row["grader_cost_usd"]) == pytest.approx(hand[mode]), mode


def test_the_dry_run_prices_the_mapping_and_challenged_answers_in_full(tmp_path):
    """The estimate counts as the run sends: under ``--batch`` the targeted user's mapping and, with ``--pushback``,
    the single-turn answers stay at the full price; the judges' calls are halved."""
    from prefdisco.evaluation.estimate.plan import estimate_run
    from prefdisco.evaluation.settings.config import RunConfig

    roles = {"models": [MODEL], "user_model": MODEL, "grader_model": MODEL, "log_dir": tmp_path, "prices": prices()}
    plan = {"modes": ["baseline", "discovery"], "judge": "structured", "user_type": "targeted", "pushback": 1}
    plain, batched = (estimate_run([tagged_scenario("k0")], RunConfig(**roles, **plan, batch=b)) for b in (None, "on"))
    assert {(ln.role, ln.part) for ln in plain.lines} >= {("grader", "mapper"), ("assistant", "baseline")}
    for before, after in zip(plain.lines, batched.lines, strict=True):
        half = before.role == "grader" and before.part != "mapper"
        assert after.usd == pytest.approx(before.usd * (0.5 if half else 1.0)), (before.role, before.part)


def test_each_judge_usage_entry_is_priced_as_it_was_sent():
    """A row whose judges went by batch (``batched`` grader), at claude-haiku-4-5's $1 / $5 per 1M: each entry below
    is 1,000 input and 100 output tokens, $0.0015 real-time and $0.00075 by batch. The first judge's calls by batch
    ($0.00075), the targeted user's mapping on the judge's model real-time ($0.0015), and a further judging added
    without ``--batch`` real-time ($0.0015): the judges' part $0.00375 (the row's ``batched`` alone would have priced
    all three at the batch share, $0.00225). A further judging sent by batch records it, and only a provider with a
    batch API in inspect sent it so."""
    from types import SimpleNamespace

    from inspect_ai.scorer import Score

    from prefdisco.results.contract import SENT_BY_BATCH, SENT_REAL_TIME
    from prefdisco.results.judgings import JUDGINGS, USAGE_KEY, extra_usage
    from prefdisco.results.logs import with_cost
    from prefdisco.results.sample_rows import SampleRows

    tokens = {f"{p}{k}": 0 for p in ("", "user_", "grader_") for k in ("input_tokens", "output_tokens")}
    row = {"model": MODEL, "user_model": MODEL, "grader_model": MODEL, "batched": "grader", **tokens}
    judges = [(MODEL, 1000, 100, 0, 0), (MODEL, 1000, 100, 0, 0, SENT_REAL_TIME), (MODEL, 1000, 100, SENT_REAL_TIME)]
    priced = with_cost(SampleRows("u", row, judge_usage=judges), prices())
    assert priced["grader_cost_usd"] == pytest.approx(0.00075 + 0.0015 + 0.0015)

    other = "openai-api/vllm/judge"
    record = {"score": "prefdisco_judge", "models": [MODEL, other], "batched": True}
    spec = SimpleNamespace(metadata={JUDGINGS: [record]})
    scores = {"prefdisco_judge": Score(value=1, metadata={USAGE_KEY: [[MODEL, 10, 2], [other, 5, 1]]})}
    assert extra_usage(spec, scores) == [(MODEL, 10, 2, 0, 0, SENT_BY_BATCH), (other, 5, 1, 0, 0, SENT_REAL_TIME)]
    older = SimpleNamespace(metadata={JUDGINGS: [{k: v for k, v in record.items() if k != "batched"}]})
    assert extra_usage(older, scores) == [(MODEL, 10, 2), (other, 5, 1)]  # as the row's ``batched`` says
