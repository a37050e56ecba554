"""Trials and seeds: ``--epochs N`` runs N independent trials per sample, each with seeds derived from (run,
scenario, condition, epoch, role); tables key rows by epoch; reports average the trials."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from mock_openai import MockOpenAI, tagged_scenarios, write_scenarios
from prefdisco.analysis.report.build import make_report
from prefdisco.errors import UserError
from prefdisco.evaluation.running.evalset import build_tasks
from prefdisco.evaluation.running.guard import guard_run
from prefdisco.evaluation.scaleout.workers import worker_plan
from prefdisco.evaluation.settings.config import UNCOMPARED_SETTINGS, RunConfig
from prefdisco.results.logs import results_from_logs
from prefdisco.results.table import load_results
from prefdisco.schema import Problem
from prefdisco.seeds import SEED_MODULUS, call_seed, seed_scope
from scripted import Call, Scripted, constant, make_scenario, run_eval_set
from test_reliability import app, mock_env, run_eval  # noqa: F401  (app is a fixture)
from test_report import HEADER, write_csv

# ---- the seed derivation ------------------------------------------------------------------------------------


def test_call_seed_is_sha256_of_its_five_parts_and_differs_in_each():
    digest = hashlib.sha256(b"run-a\x1fs1\x1fdiscovery\x1f2\x1fuser").digest()
    assert call_seed("run-a", "s1", "discovery", 2, "user") == int.from_bytes(digest[:8], "big") % 2**31
    base = ("run-a", "s1", "discovery", 2, "user")
    variants = [
        ("run-b", "s1", "discovery", 2, "user"),
        ("run-a", "s2", "discovery", 2, "user"),
        ("run-a", "s1", "oracle", 2, "user"),
        ("run-a", "s1", "fixed_k2", 2, "user"),
        ("run-a", "s1", "discovery", 3, "user"),
        ("run-a", "s1", "discovery", 2, "assistant"),
    ]
    seeds = {call_seed(*v) for v in [base, *variants]}
    assert len(seeds) == 7
    assert all(0 <= s < SEED_MODULUS for s in seeds)
    assert call_seed(*base) == call_seed(*base)  # no state: the same parts give the same seed


def test_seeds_come_from_the_runs_seed_not_its_folder_or_split(tmp_path):
    config = RunConfig(models=["m/a"], user_model="m/u", grader_model="m/g", log_dir=tmp_path / "run", workers=2)
    worker = worker_plan(tagged_scenarios(6), config)[1].config
    assert worker.log_dir == tmp_path / "run" / "worker-2" and worker.seed == config.seed == 0
    moved = RunConfig(models=["m/a"], user_model="m/u", grader_model="m/g", log_dir=tmp_path / "elsewhere")
    assert seed_scope(moved.seed) == seed_scope(worker.seed) != seed_scope(7)
    # the seed is a result-changing setting: recorded, and another one refused in the same folder
    guard_run(config.log_dir, config.fingerprint("set", 2), UNCOMPARED_SETTINGS)
    config.seed = 7
    with pytest.raises(UserError, match=r"holds a run with seed = 0, not 7"):
        guard_run(config.log_dir, config.fingerprint("set", 2), UNCOMPARED_SETTINGS)


def test_epochs_are_recorded_in_run_json_and_a_change_is_refused(tmp_path):
    def fingerprint(epochs: int) -> dict:
        config = RunConfig(models=["m/a"], user_model="m/u", grader_model="m/g", log_dir=tmp_path, epochs=epochs)
        config.validate()
        return config.fingerprint("set-1", 3)

    guard_run(tmp_path, fingerprint(3), UNCOMPARED_SETTINGS)
    assert json.loads((tmp_path / "run.json").read_text())["epochs"] == 3
    guard_run(tmp_path, fingerprint(3), UNCOMPARED_SETTINGS)  # the same setting resumes
    with pytest.raises(UserError, match="epochs = 3, not 1"):
        guard_run(tmp_path, fingerprint(1), UNCOMPARED_SETTINGS)
    with pytest.raises(UserError, match="--epochs: expected at least 1"):
        fingerprint(0)


# ---- three trials through inspect with scripted models ------------------------------------------------------


def scenario(sid: str, question: str):
    problem = Problem(
        id=f"prob-{sid}",
        benchmark="demo",
        domain="math",
        question=question,
        choices=["2", "3", "4", "5"],
        answer="B",
        answer_type="letter",
    )
    return make_scenario(sid, problem=problem)


QUESTIONS = {"s1": "A ferry carries 12 cars per trip. How many trips for 30 cars?", "s2": "What is 9 / 3?"}


def sample_of(call: Call) -> str:
    return next(sid for sid, q in QUESTIONS.items() if q in call.text)


def assistant_reply(call: Call, i: int) -> str:
    """A different reply on every call: a question first in discovery, then an answer."""
    if "QUESTION:" in call.system and not any(m.role == "assistant" for m in call.messages):
        return f"QUESTION: how deep ({i})?"
    return f"ANSWER: B, reply number {i}"


def run_three_trials(log_dir: Path, assistant: Scripted, user: Scripted, grader: Scripted) -> bool:
    scenarios = [scenario(sid, q) for sid, q in QUESTIONS.items()]
    config = RunConfig(
        models=["mockllm/model"],
        user_model="mockllm/model",
        grader_model="mockllm/model",
        log_dir=log_dir,
        modes=["baseline", "discovery"],
        epochs=3,
    )
    return run_eval_set(build_tasks(scenarios, config), log_dir, assistant, user, grader)


def test_three_trials_are_independent_seeded_calls_and_a_rerun_makes_none(tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    assistant, user, grader = (
        Scripted(assistant_reply),
        Scripted(constant("Short, please.")),
        Scripted(constant('{"score": 4}')),
    )
    log_dir = tmp_path / "run"
    assert run_three_trials(log_dir, assistant, user, grader)
    tables = results_from_logs(log_dir)
    results, transcripts = tables.results, tables.transcripts

    # one row per (scenario, mode, epoch), epochs 1..3, keyed by epoch
    assert len(results) == 2 * 2 * 3
    assert not results.duplicated(["model", "task", "scenario_id", "mode", "fixed_k", "epoch"]).any()
    assert sorted(results.groupby(["scenario_id", "mode"])["epoch"].apply(sorted)) == [[1, 2, 3]] * 4
    assert (results["failed"] == 0).all()
    assert set(tables.attributes["epoch"]) == {1, 2, 3} and set(transcripts["epoch"]) == {1, 2, 3}

    # each trial is its own call: 3 different responses and 3 different seeds per (scenario, mode)
    scope = seed_scope(0)
    for (sid, mode), rows in transcripts.groupby(["scenario_id", "mode"]):
        assert rows["final_response"].nunique() == 3, rows["final_response"].tolist()
        assert rows["assistant_seed"].nunique() == 3 and rows["user_seed"].nunique() == 3
        for row in rows.itertuples():
            assert row.assistant_seed == call_seed(scope, sid, mode, row.epoch, "assistant")
            assert row.user_seed == call_seed(scope, sid, mode, row.epoch, "user")
            assert row.assistant_seed != row.user_seed
    key, cols = ["scenario_id", "mode", "epoch"], ["assistant_seed", "user_seed"]
    pd.testing.assert_frame_equal(
        results.set_index(key)[cols].sort_index(), transcripts.set_index(key)[cols].sort_index(), check_dtype=False
    )
    assert len(assistant.calls) == 2 * 3 + 2 * 3 * 2  # baseline: one reply; discovery: a question and an answer

    # every call carried its own sample's seed (no sample saw another's, though they ran at once)
    for model, role in ((assistant, "assistant"), (user, "user")):
        sent: dict[tuple[str, str], set[int]] = {}
        for call in model.calls:
            mode = "discovery" if role == "user" or "QUESTION:" in call.system else "baseline"
            assert call.config.seed is not None
            sent.setdefault((sample_of(call), mode), set()).add(call.config.seed)
        for (sid, mode), got in sent.items():
            assert got == {call_seed(scope, sid, mode, e, role) for e in (1, 2, 3)}, (role, sid, mode)
    assert len(user.calls) == 2 * 3  # one question per discovery trial
    # every grader call (judge, audit) carried its trial's grader seed, recorded with the row
    for row in results.itertuples():
        assert row.grader_seed == call_seed(scope, row.scenario_id, row.mode, row.epoch, "grader")
    modes, epochs = ("baseline", "discovery"), (1, 2, 3)
    expected = {call_seed(scope, sid, m, e, "grader") for sid in QUESTIONS for m in modes for e in epochs}
    assert grader.calls and {call.config.seed for call in grader.calls} == expected

    # a rerun of the finished run makes no call and reads back the same table
    before = (len(assistant.calls), len(user.calls), len(grader.calls))
    assert run_three_trials(log_dir, assistant, user, grader)
    assert (len(assistant.calls), len(user.calls), len(grader.calls)) == before
    pd.testing.assert_frame_equal(results_from_logs(log_dir).results, results)


# ---- the report averages the trials -------------------------------------------------------------------------

EPOCH_HEADER = [*HEADER[:6], "epoch", *HEADER[6:]]


def row(sid: str, mode: str, epoch: int, pref: object, correct: object, nq: object = 0, failed: int = 0) -> list:
    return ["m-a", "openai", "t1", sid, mode, "", epoch, pref, correct, nq, 0, 100, 50, failed]


# two trials per scenario and condition; trial 2 of s2/baseline failed, s2/discovery has an unscored trial 1 and
# an unjudged trial 2, and every trial of s3/baseline failed
TWO_TRIALS = [
    row("s1", "baseline", 1, 2, 1),
    row("s1", "baseline", 2, 3, 0),
    row("s1", "discovery", 1, 3, 1, nq=2),
    row("s1", "discovery", 2, 4, 1, nq=4),
    row("s1", "oracle", 1, 4, 1),
    row("s1", "oracle", 2, 5, 1),
    row("s2", "baseline", 1, 2, 0),
    row("s2", "baseline", 2, 5, 1, failed=1),
    row("s2", "discovery", 1, "", 1, nq=1),
    row("s2", "discovery", 2, 3, "", nq=3),
    row("s2", "oracle", 1, 4, 1),
    row("s2", "oracle", 2, 3, 0),
    row("s3", "baseline", 1, 4, 1, failed=1),
    row("s3", "baseline", 2, 4, 1, failed=1),
]
ATTR_HEADER = ["model", "task", "scenario_id", "mode", "fixed_k", "epoch", "attribute", "weight", "score"]
TWO_TRIAL_ATTRIBUTES = [
    ["m-a", "t1", "s1", "discovery", "", 1, "clarity", 0.5, 2],
    ["m-a", "t1", "s1", "discovery", "", 2, "clarity", 0.5, 4],
    ["m-a", "t1", "s1", "discovery", "", 1, "depth", 0.5, ""],
    ["m-a", "t1", "s1", "discovery", "", 2, "depth", 0.5, 5],
    ["m-a", "t1", "s2", "baseline", "", 1, "clarity", 1.0, 3],
    ["m-a", "t1", "s2", "baseline", "", 2, "clarity", 1.0, 1],  # its trial failed: left out
]


def test_two_trials_are_averaged_before_every_statistic(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    write_csv(run / "results.csv", EPOCH_HEADER, TWO_TRIALS)
    write_csv(run / "attributes.csv", ATTR_HEADER, TWO_TRIAL_ATTRIBUTES)
    report, _ = make_report(run, tmp_path / "out", seed=1, n_boot=200, n_examples=0, figures=False)
    s = report.summary

    # per scenario (b, d, o): s1 (2.5, 3.5, 4.5) from both trials; s2 (2, 3, 3.5): the failed and the unscored
    # trial are left out. Means over s1, s2: 2.25, 3.25, 4.0; NormAlign = 100 * 1 / 1.75
    assert s["n_scenarios"]["m-a"]["t1"] == 2
    assert s["normalign"]["m-a"]["t1"] == pytest.approx(100 / 1.75)
    cell = report.cells.iloc[0]
    assert (cell["mean_baseline"], cell["mean_discovery"], cell["mean_oracle"]) == pytest.approx((2.25, 3.25, 4.0))
    per = report.scenarios.set_index("scenario_id")["normalign"]
    assert per["s1"] == pytest.approx(50.0) and per["s2"] == pytest.approx(100 / 1.5)
    assert s["normalign_scenarios"]["m-a"]["t1"]["median"] == pytest.approx((50.0 + 100 / 1.5) / 2)

    # correctness: the share of judged trials per scenario, then over scenarios (s3 failed in every trial)
    assert s["accuracy"]["m-a"]["t1"] == {"baseline": 0.25, "discovery": 1.0, "oracle": 0.75}
    assert s["accuracy_n"]["m-a"]["t1"] == {"baseline": 2, "discovery": 2, "oracle": 2}
    acc = report.accuracy.set_index(["model", "task", "mode"]).loc[("m-a", "t1", "baseline")]
    assert acc["n_correct"] == 0.5
    from statsmodels.stats.proportion import proportion_confint  # a second to import: not at collection

    assert (acc["ci_low"], acc["ci_high"]) == pytest.approx(proportion_confint(0.5, 2, method="wilson"))

    # questions: the mean of the trials that did not fail (s1: 3, s2: 2), then over scenarios
    assert s["mean_questions"] == {"m-a": 2.5}
    assert sorted(report.questions.points["n_questions"]) == [2.0, 3.0]

    # rows are results rows (trials averaged); trials says what they average
    assert s["rows"] == {"total": 7, "failed": 1, "scored": 6}
    assert s["trials"] == {
        "per_result_min": 2,
        "per_result_max": 2,
        "total": 14,
        "failed": 3,
        "scored": 10,
        "not_judged": 0,
    }

    # per-attribute: the mean valid score over the trials that did not fail
    scores = report.attribute_scores.set_index(["mode", "attribute"])["mean_score"]
    assert scores[("discovery", "clarity")] == 3.0 and scores[("discovery", "depth")] == 5.0
    assert scores[("baseline", "clarity")] == 3.0
    quality = report.quality.iloc[0]
    assert (quality["rows"], quality["failed"], quality["trials_per_result"]) == (14, 3, 2)


def test_n_identical_trials_give_the_numbers_of_one(tmp_path):
    one_trial = [r for r in TWO_TRIALS if r[6] == 1]
    one, three = tmp_path / "one", tmp_path / "three"
    one.mkdir()
    three.mkdir()
    write_csv(one / "results.csv", EPOCH_HEADER, one_trial)
    write_csv(three / "results.csv", EPOCH_HEADER, [[*r[:6], e, *r[7:]] for e in (2, 3, 1) for r in one_trial])
    a, _ = make_report(one, tmp_path / "a", seed=3, n_boot=200, n_examples=1, figures=False)
    b, _ = make_report(three, tmp_path / "b", seed=3, n_boot=200, n_examples=1, figures=False)
    assert a.summary["trials"]["per_result_max"] == 1 and b.summary["trials"]["per_result_max"] == 3
    # the variance parts measure the trials themselves: unknown from one trial, exactly 0 from identical ones
    drop = ("source", "protocols", "trials", "variance", "validity")  # protocols: each names its run's folder
    assert {k: v for k, v in a.summary.items() if k not in drop} == {
        k: v for k, v in b.summary.items() if k not in drop
    }
    for mode, parts in b.summary["variance"]["m-a"]["t1"].items():
        assert a.summary["variance"]["m-a"]["t1"][mode]["between"] is None
        assert (parts["between"], parts["assistant"], parts["epochs"]) == (0.0, 0.0, 3), mode
    assert not math.isnan(a.summary["normalign"]["m-a"]["t1"])
    for name in ("table1_normalign.csv", "table_accuracy.csv", "table_questions_per_cell.csv"):
        pd.testing.assert_frame_equal(a.tables[name], b.tables[name])


def test_a_table_without_epoch_is_one_trial_and_a_bad_epoch_is_named(tmp_path):
    plain = [[*r[:6], *r[7:]] for r in TWO_TRIALS if r[6] == 1]
    path = write_csv(tmp_path / "results.csv", HEADER, plain)
    data = load_results(path)
    assert (data.results["epoch"] == 1).all() and len(data.results) == len(plain)
    for value, message in (("", "column epoch: is empty"), ("0", "column epoch: 0 is not an integer >= 1")):
        rows = [list(r) for r in TWO_TRIALS]
        rows[3][6] = value
        bad = write_csv(tmp_path / "bad.csv", EPOCH_HEADER, rows)
        with pytest.raises(UserError, match=f"data row 4: {message}"):
            load_results(bad)


# ---- end to end: `prefdisco eval --epochs` against the deterministic mock server ----------------------------


@pytest.mark.slow
def test_cli_epochs_give_one_trials_report_and_resume_without_calls(app, tmp_path, monkeypatch):  # noqa: F811
    bench = write_scenarios(tmp_path / "scenarios.jsonl", tagged_scenarios(3))
    with MockOpenAI() as mock:
        mock_env(monkeypatch, mock, tmp_path)
        one = run_eval(app, mock, bench, tmp_path / "one", "--max-connections", "8")
        assert one.exit_code == 0, one.output
        calls_one = mock.stats()["completions"]
        two = run_eval(app, mock, bench, tmp_path / "two", "--epochs", "2", "--max-connections", "8")
        assert two.exit_code == 0, two.output
        calls_two = mock.stats()["completions"] - calls_one
        again = run_eval(app, mock, bench, tmp_path / "two", "--epochs", "2")
        calls_again = mock.stats()["completions"] - calls_one - calls_two
        other = run_eval(app, mock, bench, tmp_path / "two", "--epochs", "3")

    assert calls_two == 2 * calls_one  # every trial makes its own calls
    assert again.exit_code == 0 and calls_again == 0
    assert other.exit_code == 2 and "epochs = 2, not 3" in other.output
    assert json.loads((tmp_path / "two" / "run.json").read_text())["epochs"] == 2
    results = pd.read_csv(tmp_path / "two" / "results.csv")
    assert sorted(set(results["epoch"])) == [1, 2] and len(results) == 2 * 3 * 3
    a, _ = make_report(tmp_path / "one", tmp_path / "ra", seed=0, n_boot=200, n_examples=0, figures=False)
    b, _ = make_report(tmp_path / "two", tmp_path / "rb", seed=0, n_boot=200, n_examples=0, figures=False)
    # the judge-reliability statistics count units per trial (analysis/validity/judges.py), so their n doubles too;
    # the run
    # time is each run's own clock (the samples of two trials are twice as many)
    drop = ("source", "protocols", "trials", "judge_agreement", "judge_noise", "length_bias", "variance", "validity")
    drop += ("run_time",)
    assert b.summary["run_time"]["n_samples"] == 2 * a.summary["run_time"]["n_samples"] == 2 * 3 * 3
    assert {k: v for k, v in a.summary.items() if k not in drop} == {
        k: v for k, v in b.summary.items() if k not in drop
    }
    [judge] = a.summary["length_bias"]
    for condition, bias in a.summary["length_bias"][judge].items():  # one point per response: per trial
        assert b.summary["length_bias"][judge][condition]["n"] == 2 * bias["n"] == 2 * 3
    assert b.summary["trials"]["total"] == 2 * a.summary["trials"]["total"] == 2 * 9


def test_one_unmeasured_trial_leaves_the_reduced_score_and_the_headline_to_the_measured_one(tmp_path, monkeypatch):
    """Trial 1 judged 4 on every criterion, trial 2 not judged at all (every reply unparseable): the sample's reduced
    score (what ``inspect view`` shows) and the log's headline are trial 1's 4.0, as the report's, never NaN."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    config = RunConfig(
        models=["mockllm/model"], user_model="mockllm/model", grader_model="mockllm/model", log_dir=tmp_path / "run",
        modes=["baseline"], audit=False, epochs=2,
    )  # fmt: skip
    second = call_seed(seed_scope(0), "s1", "baseline", 2, "grader")
    grader = Scripted(lambda call, i: "no idea" if call.config.seed == second else '{"score": 4}')
    models = Scripted(constant("B: 3 trips.")), Scripted(constant("Short.")), grader
    assert run_eval_set(build_tasks([make_scenario()], config), tmp_path / "run", *models)
    [info] = list_eval_logs(str(tmp_path / "run"))
    log = read_eval_log(info)
    assert [s.scores["prefdisco_scorer"].value["pref_align"] for s in log.samples] == [4.0, None]
    [reduction] = log.reductions
    assert reduction.samples[0].value["pref_align"] == 4.0 and reduction.samples[0].value["judge_invalid"] == 1.5
    assert log.results.scores[0].metrics["pref_align_mean"].value == 4.0
    from prefdisco.analysis.stats.trials import average_trials

    [row] = average_trials(load_results(tmp_path / "run").results).to_dict("records")  # the report's row
    assert (row["pref_align"], row["n_trials"], row["n_scored_trials"]) == (4.0, 2, 1)


def test_the_reduced_score_is_the_trials_mean_without_one_trials_judgements():
    """A reduced score holds no trial's metadata (inspect's mean keeps the first trial's judgements, which the
    log's header and the eval-set's logs.json then hold again for every sample): PrefAlign (4 + 2) / 2 = 3.0, an
    unmeasured trial left out of ``correct`` (1.0), and no metadata."""
    from inspect_ai.scorer import Score

    from prefdisco.scoring.metrics import none_aware_reducer

    judgements = {"judgements": [{"attribute": "tone", "score": 4.0, "rationale": "x" * 500}]}
    trials = [
        Score(value={"pref_align": 4.0, "correct": 1.0}, metadata=judgements),
        Score(value={"pref_align": 2.0, "correct": None}, metadata={"judgements": []}),
    ]
    reduced = none_aware_reducer()(trials)
    assert reduced.value == {"pref_align": 3.0, "correct": 1.0}
    assert reduced.metadata is None
