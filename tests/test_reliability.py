"""`prefdisco eval` against a faulty OpenAI-compatible server: every (scenario, mode) ends scored or explicitly
failed with its reason; nothing is scored silently and nothing is lost.

The server is ``mock_openai.MockOpenAI`` on a free 127.0.0.1 port, reached through inspect's ``openai-api/mock/m``
provider. Transient faults (429 with Retry-After, 500, hung requests) are retried by the ``openai`` SDK and by
inspect; ``INSPECT_HTTP_REQUEST_TIMEOUT`` bounds a hung request (inspect reads it for every provider client).
Garbage judge replies are deterministic per prompt, so a garbage judgement stays garbage on the judge's retries
and must end as an invalid judgement (no score), counted in ``judge_invalid``.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest
from typer.testing import CliRunner

import prefdisco.cli as cli
from mock_openai import MockConfig, MockOpenAI, mock_env, tagged_scenarios, write_scenarios

# under xdist the module's tests stay on one worker, which builds its module fixture (a rejected scenario's eval) once
pytestmark = pytest.mark.xdist_group("test_reliability")

MODES = ("baseline", "discovery", "oracle")


@pytest.fixture(scope="module")
def app():
    cli._register()
    return cli.app


def run_eval(app, mock: MockOpenAI, bench, log_dir, *extra: str):
    # a model name per server: inspect memoizes models by name, and a memoized client would still point at the
    # port of an earlier test's server (and retry its refused connections forever)
    model = f"openai-api/mock/m{mock.port}"
    args = ["eval", str(bench), "--model", model, "--log-dir", str(log_dir), "--display", "none", *extra]
    return CliRunner().invoke(app, args)


@pytest.mark.slow
def test_transient_faults_end_scored_with_invalid_judgements_counted(app, tmp_path, monkeypatch):
    faults = MockConfig(
        rate_429=0.10, retry_after_s=0.2, rate_500=0.05, rate_timeout=0.02, hang_s=10, judge_garbage_rate=0.05, seed=7
    )
    scenarios = tagged_scenarios(10)
    bench = write_scenarios(tmp_path / "scenarios.jsonl", scenarios)
    with MockOpenAI(faults) as mock:
        mock_env(monkeypatch, mock, tmp_path)
        result = run_eval(app, mock, bench, tmp_path / "run", "--max-connections", "32")
        stats = mock.stats()
        judged = dict(mock.judged)

    assert result.exit_code == 0, result.output
    # the faults really happened (and were retried)
    assert stats["fault_429"] > 0 and stats["fault_500"] > 0 and stats["fault_timeout"] > 0
    assert stats["garbage_judge_prompts"] > 0

    results = pd.read_csv(tmp_path / "run" / "results.csv")
    keys = list(zip(results["scenario_id"], results["mode"], strict=True))
    assert sorted(keys) == sorted((s.id, m) for s in scenarios for m in MODES)  # one row each, nothing lost
    assert (results["failed"] == 0).all(), results[results["failed"] == 1][["scenario_id", "mode", "error"]]
    assert results["error"].isna().all()

    # every judgement is exactly what the server said: a score, or no score when the reply was garbage
    attributes = pd.read_csv(tmp_path / "run" / "attributes.csv")
    by_sample = {(s.id, m): s for s in scenarios for m in MODES}
    assert len(attributes) == sum(len(s.rubric) for s in by_sample.values())
    for row in attributes.itertuples():
        said = judged[(row.scenario_id, row.mode, row.attribute)]
        if said is None:
            assert math.isnan(row.score), row
        else:
            assert row.score == said, row
    garbage = sum(v is None for v in judged.values())
    assert garbage == stats["garbage_judge_prompts"] > 0
    assert results["judge_invalid"].sum() == garbage

    # PrefAlign is the weighted mean over the valid judgements only — never a zero for a garbage one — and empty
    # when they cover less than half of the profile's weight
    for row in results.itertuples():
        scenario = by_sample[(row.scenario_id, row.mode)]
        weights = {i.attribute: i.weight for i in scenario.profile.items}
        valid = [(weights[a], judged[(row.scenario_id, row.mode, a)]) for a in weights]
        valid = [(w, s) for w, s in valid if s is not None]
        if sum(w for w, _ in valid) < 0.5 * sum(weights.values()):
            assert math.isnan(row.pref_align)
        else:
            expected = sum(w * s for w, s in valid) / sum(w for w, _ in valid)
            assert row.pref_align == pytest.approx(expected), row


# ---- a permanent failure: one scenario whose every request the server rejects with HTTP 400 -----------------


@pytest.fixture(scope="module")
def rejected_run(app, tmp_path_factory):
    """Four scenarios; every request of ``c0002`` is answered 400. Yields the run and the (still running) mock."""
    tmp_path = tmp_path_factory.mktemp("rejected")
    monkeypatch = pytest.MonkeyPatch()
    scenarios = tagged_scenarios(4)
    bench = write_scenarios(tmp_path / "scenarios.jsonl", scenarios)
    with MockOpenAI(MockConfig(reject_case="c0002")) as mock:
        mock_env(monkeypatch, mock, tmp_path)
        result = run_eval(app, mock, bench, tmp_path / "run")
        results = pd.read_csv(tmp_path / "run" / "results.csv")
        yield {"result": result, "results": results, "mock": mock, "bench": bench, "run": tmp_path / "run"}
    monkeypatch.undo()


def test_rejected_scenario_is_marked_failed_never_scored(rejected_run):
    results = rejected_run["results"]
    assert len(results) == 12
    failed = results[results["failed"] == 1]
    assert sorted(failed["scenario_id"]) == ["c0002"] * 3
    assert failed["pref_align"].isna().all() and failed["correct"].isna().all()
    assert failed["error"].notna().all() and (failed["error"].str.len() > 0).all()
    assert (results[results["failed"] == 0]["pref_align"].notna()).all()


def test_failed_row_error_names_the_cause(rejected_run):
    failed = rejected_run["results"].query("failed == 1")
    for error in failed["error"]:
        assert "Error code: 400" in error and "request rejected for case c0002" in error, error
        assert "messages" not in error  # not the request (and its prompt text)


def test_failed_samples_fail_the_command_and_a_rerun_retries_only_them(rejected_run, app):
    result = rejected_run["result"]
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "3 failed" in lines[0], result.stderr

    mock = rejected_run["mock"]
    mock.config.reject_case = None  # the provider recovers
    mock.reset()
    rerun = run_eval(app, mock, rejected_run["bench"], rejected_run["run"])
    assert rerun.exit_code == 0, rerun.output
    results = pd.read_csv(rejected_run["run"] / "results.csv")
    assert len(results) == 12 and (results["failed"] == 0).all()
    # only the failed scenario was run again
    assert {key.split("|")[0] for key in mock.stats()["by_case"]} == {"c0002"}


@pytest.mark.slow
def test_retries_are_bounded_by_max_retries(app, tmp_path, monkeypatch):
    scenarios = tagged_scenarios(2)
    bench = write_scenarios(tmp_path / "scenarios.jsonl", scenarios)
    with MockOpenAI(MockConfig(reject_case="c0001", reject_status=500, retry_after_s=0.05)) as mock:
        mock_env(monkeypatch, mock, tmp_path)
        result = run_eval(
            app, mock, bench, tmp_path / "run", "--modes", "baseline", "--max-retries", "1", "--timeout", "20"
        )
        rejected = mock.stats().get("rejected_500", 0)
    assert result.exit_code == 2, result.output
    results = pd.read_csv(tmp_path / "run" / "results.csv")
    assert results.set_index("scenario_id")["failed"].to_dict() == {"c0000": 0, "c0001": 1}
    # per sample attempt (at most 3: inspect's retry_on_error may re-run a failed sample twice): 2 inspect
    # attempts x (1 + 2 openai-SDK retries)
    assert 0 < rejected <= 3 * 2 * 3


# ---- a large run split over several processes, each with its own log folder --------------------------------


def test_split_runs_are_merged_by_the_results_reader(app, tmp_path, monkeypatch):
    from prefdisco.results.logs import results_from_logs

    scenarios = tagged_scenarios(4)
    with MockOpenAI() as mock:
        mock_env(monkeypatch, mock, tmp_path)
        for part in (0, 1):
            bench = write_scenarios(tmp_path / f"part{part}" / "scenarios.jsonl", scenarios[part::2])
            result = run_eval(app, mock, bench, tmp_path / "runs" / f"part{part}", "--modes", "baseline")
            assert result.exit_code == 0, result.output
    merged = results_from_logs(tmp_path / "runs").results
    assert sorted(merged["scenario_id"]) == [s.id for s in scenarios]


# ---- a run whose logs were lost, rerun: every paid call replays from the cache, the SimpleQA grader's included --


def test_rerun_of_a_finished_run_makes_no_model_call(app, tmp_path, monkeypatch):
    """The logs of a finished run are deleted (as a crash before they were written would lose them), so every
    sample runs again: each call — assistant, user, judge, audit and the SimpleQA grader — must come from the
    run-scoped cache."""
    from prefdisco.schema import Problem

    scenarios = tagged_scenarios(3)
    graded = []
    for s in scenarios[:2]:  # two of them as SimpleQA problems, so the correctness grader is called
        problem = Problem.model_validate(
            {**s.problem.model_dump(exclude={"answer_spec"}), "benchmark": "simpleqa", "answer_type": "free_text"}
        )
        graded.append(s.model_copy(update={"problem": problem}))
    scenarios = [*graded, *scenarios[2:]]
    bench = write_scenarios(tmp_path / "scenarios.jsonl", scenarios)
    with MockOpenAI(MockConfig(questions=2)) as mock:
        mock_env(monkeypatch, mock, tmp_path)
        first = run_eval(app, mock, bench, tmp_path / "run")
        assert first.exit_code == 0, first.output
        before = mock.stats()
        logs = list((tmp_path / "run").rglob("*.eval"))
        assert len(logs) == len(MODES)
        for log in logs:
            log.unlink()
        second = run_eval(app, mock, bench, tmp_path / "run")
        after = mock.stats()
    assert second.exit_code == 0, second.output
    assert before["by_role"].get("grader", 0) == 2 * len(MODES)  # the SimpleQA grader ran once per sample
    assert before["by_role"].get("user", 0) > 0 and before["by_role"].get("judge", 0) > 0
    assert after["completions"] == before["completions"]  # the rerun asked the server nothing
    results = pd.read_csv(tmp_path / "run" / "results.csv")
    assert len(results) == len(scenarios) * len(MODES) and (results["failed"] == 0).all()
