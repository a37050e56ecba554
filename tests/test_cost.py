"""What a run cost (issue 34, part 1): tokens per role with cached and reasoning tokens, USD with cached input at its
own rate, and the report's Cost table, for a planted run priced by hand.

The run: 2 scenarios (3 criteria each, letter answers: correctness needs no call) in baseline, discovery and oracle
on ``openai/o3`` through inspect's real Responses client (every role the same model), the structured judge. The mock
plants every call's usage: 1,000 input tokens of which 600 read from the cache, 50 output tokens of which 20
reasoning. At the price given with ``--prices`` — $2 per 1M fresh input, $0.50 per 1M cached input, $8 per 1M output
— one call costs (400 × 2 + 600 × 0.5 + 50 × 8) / 1M = $0.0015. By hand, per scenario:

* baseline and oracle: the answer and the structured judge (the general quality asked in its call) = 2 calls =
  $0.003 (model $0.0015, judges $0.0015);
* discovery: 2 questions and the answer, 2 simulated replies, the judge and the audit = 7 calls = $0.0105 (model
  $0.0045, user $0.003, judges $0.003);

so the run is 2 × (0.003 + 0.0105 + 0.003) = $0.033, and every cell's cached share is 600 / 1,000 = 0.6. The
report sets the run's own estimate (``estimate.json``) beside those measured figures, per role.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

import prefdisco.cli as cli
from mock_openai import MockConfig, MockOpenAI, providers_env, write_scenarios
from prefdisco.prices import cost_usd, prices
from scripted import tagged_scenario

USAGE = {"input": 1000, "cached": 600, "output": 50, "reasoning": 20}
PRICE = {"input": 2.0, "output": 8.0, "cached_input": 0.5}
PER_CALL = 0.0015
CALLS = {  # per scenario, by role (model under test, simulated user, judges: the structured call with the quality
    # in it, and the audit after a dialogue with questions)
    "baseline": {"model": 1, "user": 0, "judges": 1},
    "discovery": {"model": 3, "user": 2, "judges": 2},
    "oracle": {"model": 1, "user": 0, "judges": 1},
}


def scenarios() -> list:
    return [tagged_scenario(sid) for sid in ("k0", "k1")]


def test_one_call_priced_by_hand():
    assert cost_usd(PRICE, 400, 50, cache_read=600) == pytest.approx(PER_CALL)
    book = prices()
    gpt41 = book.get("openai/gpt-4.1")
    assert gpt41["cached_input"] == 0.5  # its own cached rate (a quarter of its input price)
    claude = book.get("anthropic/claude-sonnet-4-5")
    assert (claude["cached_input"], claude["cache_write"]) == pytest.approx((0.3, 3.75))  # the provider's shares
    assert book.get("prefdisco/smollm2")["cached_input"] == 0.0


@pytest.mark.slow
def test_a_planted_runs_cost_by_role_and_condition_is_the_hand_count(tmp_path, monkeypatch):
    cli._register()
    bench = write_scenarios(tmp_path / "scenarios.jsonl", scenarios())
    with MockOpenAI(MockConfig(usage=USAGE)) as mock:
        providers_env(monkeypatch, mock, tmp_path)
        model = f"openai/o3-cost{mock.port}"
        book = tmp_path / "prices.json"
        book.write_text(json.dumps({model: PRICE}))
        args = ["eval", str(bench), "--model", model, "--log-dir", str(tmp_path / "run"), "--prices", str(book)]
        result = CliRunner().invoke(
            cli.app, [*args, "--modes", "baseline,discovery,oracle", "--judge", "structured", "--display", "none"]
        )
        assert result.exit_code == 0, result.output
        stats = mock.stats()
    per_role: dict[str, int] = {}
    for key, n in stats["by_case_role"].items():  # the calls made for the scenarios
        per_role[key.split("|")[2]] = per_role.get(key.split("|")[2], 0) + n
    assert per_role == {"assistant": 10, "user": 4, "judge": 6, "audit": 2}  # the hand count, 2 scenarios: no quality
    # call of its own (the structured judge's call asks it)
    # beside them, inspect's OpenAI client probes once per model instance whether reasoning summaries are allowed
    # ("Please say 'hello, world'"): billed by the provider, in no sample's usage, so not in cost_usd
    assert stats["by_role"]["assistant"] - per_role["assistant"] == 2

    rows = pd.read_csv(tmp_path / "run" / "results.csv")
    for r in rows.to_dict("records"):
        calls = CALLS[r["mode"]]
        for prefix, role in (("", "model"), ("user_", "user"), ("grader_", "judges")):
            n = calls[role]
            assert (r[f"{prefix}input_tokens"], r[f"{prefix}cache_read_tokens"]) == (400 * n, 600 * n), (
                r["mode"],
                role,
            )
            assert (r[f"{prefix}output_tokens"], r[f"{prefix}reasoning_tokens"]) == (50 * n, 20 * n), (r["mode"], role)
        assert r["cost_usd"] == pytest.approx(PER_CALL * sum(calls.values()))
        assert r["user_cost_usd"] == pytest.approx(PER_CALL * calls["user"])
        assert r["grader_cost_usd"] == pytest.approx(PER_CALL * calls["judges"])

    out = tmp_path / "report"
    report = CliRunner().invoke(cli.app, ["report", str(tmp_path / "run"), "--out", str(out), "--no-figures"])
    assert report.exit_code == 0, report.output
    summary = json.loads((out / "summary.json").read_text())
    cells = summary["cost"][model]["demo"]
    for mode, calls in CALLS.items():
        cell = cells[mode]
        assert cell["n_scenarios"] == 2 and cell["cached_share"] == pytest.approx(0.6)
        assert cell["usd_per_scenario"] == pytest.approx(PER_CALL * sum(calls.values()))
        parts = (cell["model_usd"], cell["user_usd"], cell["judges_usd"])
        assert parts == pytest.approx(tuple(PER_CALL * calls[k] for k in ("model", "user", "judges")))
        assert cell["reasoning_per_scenario"] == pytest.approx(20 * sum(calls.values()))
    assert summary["cost_total"][model] == pytest.approx(0.033)  # 22 calls x $0.0015
    assert (out / "table_cost.csv").is_file() and 'id="cost"' in (out / "report.html").read_text()
    # the run's own estimate (estimate.json, written before its first call) beside what was measured, per role
    estimate = summary["cost_estimate"]
    assert (tmp_path / "run" / "estimate.json").is_file()
    for role, calls in (("model", 10), ("simulated user", 4), ("judges", 8)):  # measured: the hand count x 1 call
        line = estimate[role]
        measured = (line["measured_input_tokens"], line["measured_output_tokens"], line["measured_usd"])
        assert measured == pytest.approx((1000 * calls, 50 * calls, PER_CALL * calls)), role
    # the estimate plans the whole question budget (5 questions, 6 answers' turns, 5 replies per discovery dialogue)
    # and every judge call: 2 x (1 + 6 + 1) model calls, 2 x 5 user calls, 2 x (1 + 2 + 1) judge calls
    calls = {role: line["estimated_calls"] for role, line in estimate.items()}
    assert calls == {"model": 16, "simulated user": 10, "judges": 8}
    assert all(line["estimated_usd"] > 0 for line in estimate.values())
    # the run's time from its logs: 6 samples, the longest of them its critical path, inside the busy time
    timing = summary["run_time"]
    assert timing["n_samples"] == 6 and 0 < timing["critical_path_s"] <= timing["busy_s"]
    assert timing["samples_in_flight"] >= 1 and 0 < timing["critical_share"] <= 1
    # the calls as inspect timed them (call_time.json): the 22 of the hand count, inside the run's wall time
    assert timing["calls"] == 22 and timing["call_s"] > 0 and timing["calls_in_flight"] > 0
    assert timing["max_connections"] is None and timing["connection_share"] is None  # none given: not a share
    assert 'id="run-time"' in (out / "report.html").read_text()


def test_run_time_is_the_union_of_the_samples_against_the_longest():
    """Three samples by hand: 0-10 s and 5-12 s overlap, 20-23 s after a pause (a killed run and its rerun): busy
    10 + 2 + 3 = 15 s, the critical path 10 s, 20 sample-seconds over 15 busy ones = 1.33 samples at once."""
    from datetime import datetime, timedelta

    from prefdisco.results.run_time import busy_seconds

    t0 = datetime(2026, 12, 5)
    at = [(t0 + timedelta(seconds=a), t0 + timedelta(seconds=b)) for a, b in ((0, 10), (5, 12), (20, 23))]
    assert busy_seconds(at) == pytest.approx(15.0)
    assert busy_seconds(list(reversed(at))) == pytest.approx(15.0)
    assert busy_seconds([(t0, t0 + timedelta(seconds=4)), (t0, t0 + timedelta(seconds=2))]) == pytest.approx(4.0)


def test_calls_in_flight_are_the_calls_seconds_over_the_union_of_the_invocations(tmp_path):
    """Two shards at once (0-10 s and 5-15 s, 32 of the run's 64 connections each) and a resumed invocation after a
    pause (30-35 s): wall 15 + 5 = 20 s; calls 100 + 60 + 20 = 180 taking 400 + 240 + 60 = 700 s: 35 calls at once,
    35 / 64 busy."""
    from prefdisco.results.run_time import CALL_TIME_FILE, call_time

    def entry(start, end, calls, seconds, connections=32):
        return {"started": start, "ended": end, "calls": calls, "call_s": seconds, "max_connections": connections}

    for shard, entries in {
        "shard-0": [entry(0, 10, {"m/a": 80, "m/u": 20}, {"m/a": 300.0, "m/u": 100.0})],
        "shard-1": [entry(5, 15, {"m/a": 60}, {"m/a": 240.0}), entry(30, 35, {"m/a": 20}, {"m/a": 60.0}, None)],
    }.items():
        (tmp_path / shard).mkdir()
        (tmp_path / shard / CALL_TIME_FILE).write_text(json.dumps(entries))
    (tmp_path / "shard-2").mkdir()
    (tmp_path / "shard-2" / CALL_TIME_FILE).write_text("{not json")  # unreadable: left out, never an error
    found = call_time([tmp_path])
    assert (found["wall_s"], found["calls"], found["call_s"]) == pytest.approx((20.0, 180, 700.0))
    assert found["calls_in_flight"] == pytest.approx(35.0)
    assert (found["max_connections"], found["connection_share"]) == (64, pytest.approx(35 / 64))
    assert set(call_time([tmp_path / "shard-2"]).values()) == {None}  # nothing measured


@pytest.mark.slow
def test_cost_total_is_every_trials_bill_and_the_critical_path_the_longest_working_time(tmp_path, monkeypatch):
    """``--epochs 3``, baseline only, the structured judge, at the prices above ($0.0015 a call), on 2 scenarios:
    k0 answered and judged (2 calls, $0.003 a trial); k1 answered, then its judge call rejected (400, not retried):
    the sample fails having spent 1 call, $0.0015 a trial. The bill, by hand: 3 × ($0.003 + $0.0015) = $0.0135, and
    the estimate table's measured USD per trial ($0.003 model + $0.0015 judges) times the 3 trials is the same. (Before:
    $0.003, one trial of the scenarios that did not fail.)

    The time: every call answers after 0.1 s, one connection (``--max-connections 1``) and the 6 samples started at
    once (``--max-samples 6``), so all but the first queue for the connection. The critical path is the longest
    working time of the samples that finished (inspect's ``working_time``: queueing left out), never more than the
    run's wall time; from start to end the last sample took several calls' time longer."""
    from inspect_ai.log import list_eval_logs, read_eval_log_sample_summaries

    cli._register()
    bench = write_scenarios(tmp_path / "scenarios.jsonl", scenarios())
    with MockOpenAI(MockConfig(usage=USAGE, reject_case="k1", reject_role="judge", latency_s=0.1)) as mock:
        providers_env(monkeypatch, mock, tmp_path)
        model = f"openai/o3-bill{mock.port}"
        book = tmp_path / "prices.json"
        book.write_text(json.dumps({model: PRICE}))
        args = ["eval", str(bench), "--model", model, "--log-dir", str(tmp_path / "run"), "--prices", str(book)]
        args += ["--modes", "baseline", "--judge", "structured", "--epochs", "3", "--retry-attempts", "0"]
        result = CliRunner().invoke(cli.app, [*args, "--max-connections", "1", "--max-samples", "6"])
        assert result.exit_code == 2 and "3 failed sample(s)" in result.output, result.output
    rows = pd.read_csv(tmp_path / "run" / "results.csv")
    assert sorted(zip(rows["scenario_id"], rows["failed"], strict=True)) == [("k0", 0)] * 3 + [("k1", 1)] * 3
    out = tmp_path / "report"
    report = CliRunner().invoke(cli.app, ["report", str(tmp_path / "run"), "--out", str(out), "--no-figures"])
    assert report.exit_code == 0, report.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cost_total"][model] == pytest.approx(3 * (2 * PER_CALL + PER_CALL))
    assert summary["cost"][model]["demo"]["baseline"]["usd"] == pytest.approx(0.0135)
    per_trial = summary["cost_estimate"]
    assert (per_trial["model"]["measured_usd"], per_trial["judges"]["measured_usd"]) == pytest.approx((0.003, 0.0015))
    assert summary["cost_total"][model] == pytest.approx(3 * sum(r["measured_usd"] for r in per_trial.values()))

    timing = summary["run_time"]
    finished = [
        s for info in list_eval_logs(str(tmp_path / "run")) for s in read_eval_log_sample_summaries(info) if not s.error
    ]
    assert timing["n_samples"] == len(finished) == 3
    assert timing["critical_path_s"] == pytest.approx(max(s.working_time for s in finished))
    assert timing["longest_sample_s"] == pytest.approx(max(s.total_time for s in finished))
    assert timing["critical_path_s"] <= timing["wall_s"]
    assert timing["longest_sample_s"] - timing["critical_path_s"] >= 0.2  # it queued behind two calls at least
