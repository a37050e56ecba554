"""`prefdisco eval --judge later` then `prefdisco judge RUN_DIR`: the same scores as an inline run, resumable,
idempotent, and a second judge added without rerunning the assistant or the user.

Every run talks to the fault-free ``MockOpenAI``, whose judge replies are a hash of the judge prompt: the same
dialogue judged in two folders gets the same scores, so a deferred judging must equal an inline one exactly. Two
scenarios, the first a SimpleQA problem (its correctness is a grader call, so it is deferred too), in baseline and
discovery.
"""

from __future__ import annotations

import json
import math
import shutil

import pandas as pd
import pytest

from mock_openai import MockOpenAI, tagged_scenarios, write_scenarios
from prefdisco.schema import Problem
from test_judge_panel import assert_pref_align_is_its_judgements
from test_reliability import app, mock_env, run_eval  # noqa: F401  (app is a fixture)

# under xdist the module's tests stay on one worker, which builds its module fixture (the later-judged evals) once
pytestmark = pytest.mark.xdist_group("test_deferred_judging")

MODES = ("baseline", "discovery")
GRADER_ROLES = ("judge", "audit", "grader", "quality")  # the mock's rubric, audit, SimpleQA and quality calls
SCORE_COLUMNS = ["scenario_id", "mode", "pref_align", "correct", "n_questions", "judge_invalid", "user_turns"]
SCORE_COLUMNS += ["user_leaks", "elicited_weight", "elicited_count", "grader_input_tokens", "grader_output_tokens"]
SCORE_COLUMNS += ["quality"]


def _scenarios():
    first, second = tagged_scenarios(2)
    data = {**first.problem.model_dump(exclude={"answer_spec"}), "benchmark": "simpleqa", "answer_type": "free_text"}
    return [first.model_copy(update={"problem": Problem.model_validate(data)}), second]


def _judge(app, run_dir, *extra):  # noqa: F811
    from typer.testing import CliRunner

    return CliRunner().invoke(app, ["judge", str(run_dir), *extra])


def _calls(mock, before=None):
    now = mock.stats()["by_role"]
    before = before or {}
    return {role: now.get(role, 0) - before.get(role, 0) for role in {*now, *before}}


def _results(run_dir):
    return pd.read_csv(run_dir / "results.csv").sort_values(["scenario_id", "mode"]).reset_index(drop=True)


def _attributes(run_dir):
    keys = ["scenario_id", "mode", "attribute", "judge", "repeat"]
    return pd.read_csv(run_dir / "attributes.csv").sort_values(keys).reset_index(drop=True)


def _grader_seeds(run_dir):
    """(scenario, mode, seed) of every grader-role call the logs recorded."""
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import list_eval_logs, read_eval_log

    seeds = []
    for info in list_eval_logs(str(run_dir)):
        log = read_eval_log(info)
        for sample in log.samples or []:
            for event in sample.events:
                if isinstance(event, ModelEvent) and event.role == "grader":
                    seeds.append((str(sample.id), log.eval.metadata["prefdisco_mode"], event.config.seed))
    return sorted(seeds)


@pytest.fixture(scope="module")
def runs(app, tmp_path_factory):  # noqa: F811
    """An inline run and a ``--judge later`` run of the same command, then ``prefdisco judge`` on the second;
    yields the folders, the mock (still running) and the calls each step made."""
    tmp = tmp_path_factory.mktemp("deferred")
    monkeypatch = pytest.MonkeyPatch()
    scenarios = _scenarios()
    bench = write_scenarios(tmp / "scenarios.jsonl", scenarios)
    common = ("--modes", ",".join(MODES))
    with MockOpenAI() as mock:
        mock_env(monkeypatch, mock, tmp)
        inline = run_eval(app, mock, bench, tmp / "inline", *common)
        assert inline.exit_code == 0, inline.output
        before = mock.stats()["by_role"]
        later = run_eval(app, mock, bench, tmp / "later", *common, "--judge", "later")
        assert later.exit_code == 0, later.output
        later_calls = _calls(mock, before)
        pending = _results(tmp / "later")
        shutil.copytree(tmp / "later", tmp / "pending-copy")  # the logs as they were before judging
        before = mock.stats()["by_role"]
        judged = _judge(app, tmp / "later")
        assert judged.exit_code == 0, judged.output
        yield {
            "tmp": tmp,
            "mock": mock,
            "scenarios": scenarios,
            "bench": bench,
            "later_calls": later_calls,
            "later_output": later.output,
            "pending": pending,
            "judge_calls": _calls(mock, before),
            "judge_output": judged.output,
        }
    monkeypatch.undo()


@pytest.mark.slow
def test_a_later_run_makes_no_grader_call_and_its_rows_are_pending_not_failed(runs):
    calls, pending, scenarios = runs["later_calls"], runs["pending"], runs["scenarios"]
    assert all(calls.get(role, 0) == 0 for role in GRADER_ROLES), calls
    assert calls["assistant"] > 0 and calls["user"] > 0
    assert len(pending) == len(scenarios) * len(MODES)
    assert (pending["failed"] == 0).all() and (pending["judged"] == 0).all() and pending["error"].isna().all()
    assert pending["pref_align"].isna().all() and (pending["judge_invalid"] == 0).all()
    assert pending["quality"].isna().all()  # judged with the rubric, by prefdisco judge
    # correctness without a grader is known now (the mock answers B; the demo problem c0001's gold is B), the
    # SimpleQA answer waits for its grader
    by_id = pending.set_index(["scenario_id", "mode"])["correct"]
    assert all(math.isnan(by_id[("c0000", m)]) for m in MODES)
    assert all(by_id[("c0001", m)] == (scenarios[1].problem.answer == "B") for m in MODES)
    # the dialogue facts are recorded: two questions in discovery (the mock asks two), none in baseline
    assert pending.set_index(["scenario_id", "mode"])["n_questions"].to_dict() == {
        (s, m): 2 if m == "discovery" else 0 for s in ("c0000", "c0001") for m in MODES
    }
    run = json.loads((runs["tmp"] / "later" / "run.json").read_text())
    assert run["judge"] == "later"
    assert f"prefdisco judge {runs['tmp'] / 'later'}" in runs["later_output"]


@pytest.mark.slow
def test_the_report_says_how_many_rows_wait_for_their_judge(runs, app, tmp_path):  # noqa: F811
    from typer.testing import CliRunner

    pending_run = tmp_path / "pending"
    shutil.copytree(runs["tmp"] / "pending-copy", pending_run)
    n_rows = len(runs["scenarios"]) * len(MODES)
    made = CliRunner().invoke(
        app, ["report", str(pending_run), "--out", str(tmp_path / "r1"), "--bootstrap", "0", "--no-figures"]
    )
    assert made.exit_code == 0, made.output
    assert f"not judged yet: {n_rows} of {n_rows} trial rows" in made.output, made.output
    assert json.loads((tmp_path / "r1" / "summary.json").read_text())["trials"]["not_judged"] == n_rows
    assert f"Not judged yet: {n_rows} of {n_rows} trial rows" in (tmp_path / "r1" / "report.md").read_text()
    assert "Not judged yet" in (tmp_path / "r1" / "report.html").read_text()
    judged = CliRunner().invoke(
        app, ["report", str(runs["tmp"] / "later"), "--out", str(tmp_path / "r2"), "--bootstrap", "0", "--no-figures"]
    )
    assert judged.exit_code == 0, judged.output
    assert "not judged" not in judged.output
    assert json.loads((tmp_path / "r2" / "summary.json").read_text())["trials"]["not_judged"] == 0
    assert "Not judged yet" not in (tmp_path / "r2" / "report.html").read_text()


@pytest.mark.slow
def test_deferred_judging_equals_inline_judging(runs):
    tmp, scenarios = runs["tmp"], runs["scenarios"]
    calls = runs["judge_calls"]
    assert calls.get("assistant", 0) == 0 and calls.get("user", 0) == 0  # the dialogues were not rerun
    n_criteria = sum(len(s.rubric) for s in scenarios) * len(MODES)
    assert calls["judge"] == n_criteria  # one call per criterion per sample
    assert calls["grader"] == len(MODES)  # the SimpleQA problem's grader, once per mode
    assert calls["audit"] == len(scenarios)  # one audit per discovery dialogue
    assert calls["quality"] == len(scenarios) * len(MODES)  # one quality judgement per response
    inline, later = _results(tmp / "inline"), _results(tmp / "later")
    assert (later["judged"] == 1).all() and (later["failed"] == 0).all()
    assert later["pref_align"].notna().all()
    # the SimpleQA grader says CORRECT; the letter problem's answer B is right iff its gold is B
    gold_b = int(scenarios[1].problem.answer == "B")
    assert later.set_index("scenario_id")["correct"].to_dict() == {"c0000": 1, "c0001": gold_b}
    pd.testing.assert_frame_equal(inline[SCORE_COLUMNS], later[SCORE_COLUMNS])
    pd.testing.assert_frame_equal(_attributes(tmp / "inline"), _attributes(tmp / "later"))
    assert len(_attributes(tmp / "later")) == n_criteria
    # the same seeds on every grader call (a provider that honours seeds answers the same)
    seeds = _grader_seeds(tmp / "inline")
    # the judge's, the audits', the SimpleQA grader's and the quality judge's
    assert len(seeds) == n_criteria + len(scenarios) + len(MODES) + len(scenarios) * len(MODES)
    assert all(seed is not None for _, _, seed in seeds)
    assert seeds == _grader_seeds(tmp / "later")
    judgings = json.loads((tmp / "later" / "judgings.json").read_text())["judgings"]
    assert [(j["score"], j["judge"], j["logs"], j["inline"]) for j in judgings] == [
        ("prefdisco_scorer", "per_criterion", len(MODES), False)
    ]


@pytest.mark.slow
def test_rerunning_judge_makes_no_call_and_changes_nothing(runs, app):  # noqa: F811
    tmp, mock = runs["tmp"], runs["mock"]
    results, attributes = (tmp / "later" / "results.csv").read_text(), (tmp / "later" / "attributes.csv").read_text()
    before = mock.stats()["completions"]
    again = _judge(app, tmp / "later")
    assert again.exit_code == 0, again.output
    assert mock.stats()["completions"] == before
    assert f"judged 0 log(s), {len(MODES)} already judged" in again.output
    assert (tmp / "later" / "results.csv").read_text() == results
    assert (tmp / "later" / "attributes.csv").read_text() == attributes
    # rerunning the eval itself finds its logs finished (judging left their task identity alone): no call, and
    # the tables it rewrites are the judged ones
    rerun = run_eval(app, mock, runs["bench"], tmp / "later", "--modes", ",".join(MODES), "--judge", "later")
    assert rerun.exit_code == 0, rerun.output
    assert mock.stats()["completions"] == before and len(list((tmp / "later").glob("*.eval"))) == len(MODES)
    assert (tmp / "later" / "results.csv").read_text() == results


@pytest.mark.slow
def test_a_judging_a_crash_lost_replays_from_the_cache(runs, app):  # noqa: F811
    """The judged logs are replaced by the pending ones (as if the judge had crashed before writing them): the
    rerun judges them again, every call from the run's cache, to the same scores."""
    tmp, mock = runs["tmp"], runs["mock"]
    judged = _results(tmp / "later")
    for log in (tmp / "later").glob("*.eval"):
        shutil.copy(tmp / "pending-copy" / log.name, log)
    before = mock.stats()["completions"]
    rerun = _judge(app, tmp / "later")
    assert rerun.exit_code == 0, rerun.output
    assert f"judged {len(MODES)} log(s), 0 already judged" in rerun.output
    assert mock.stats()["completions"] == before
    replayed = _results(tmp / "later")
    tokens = ["grader_input_tokens", "grader_output_tokens"]  # a cached call uses no tokens (inline reruns alike)
    assert (replayed[tokens] == 0).all().all() and (judged[tokens] > 0).all().all()
    # ... so the judges' part of the cost is nothing (the mock's model has no price: unknown when it used tokens)
    assert (replayed["grader_cost_usd"] == 0).all() and judged["grader_cost_usd"].isna().all()
    tokens += ["grader_cost_usd"]
    pd.testing.assert_frame_equal(judged.drop(columns=tokens), replayed.drop(columns=tokens))


@pytest.mark.slow
def test_a_second_judge_adds_its_rows_without_rerunning_the_dialogues(runs, app):  # noqa: F811
    tmp, mock, scenarios = runs["tmp"], runs["mock"], runs["scenarios"]
    first_results, first_attributes = _results(tmp / "later"), _attributes(tmp / "later")
    other = f"openai-api/mock/other{mock.port}"
    mock.reset()  # so the most judge calls in flight at once are this judging's
    added = _judge(app, tmp / "later", "--judge-model", other, "--batch", "--judge-max-connections", "1")
    calls = _calls(mock)
    assert added.exit_code == 0, added.output
    assert "--batch: inspect has no batch API for openai-api" in added.output
    n_criteria = sum(len(s.rubric) for s in scenarios) * len(MODES)
    assert calls == {**{role: 0 for role in calls}, "judge": n_criteria}  # the rubric only, nothing else
    assert mock.max_in_flight_of({"judge"}) == 1
    attributes = _attributes(tmp / "later")
    first, second = attributes[attributes["judge"] != other], attributes[attributes["judge"] == other]
    pd.testing.assert_frame_equal(first.reset_index(drop=True), first_attributes)  # the first judge untouched
    assert len(second) == n_criteria
    # the mock's judge replies depend on the prompt only, so the second judge gives each criterion the same score
    keys = ["scenario_id", "mode", "attribute"]
    pd.testing.assert_frame_equal(
        second[[*keys, "score"]].reset_index(drop=True), first_attributes[[*keys, "score"]].reset_index(drop=True)
    )
    # results rows stay the first judge's, but for the judges' cost, which now includes the second judge's calls
    # (its model has no price here, so the part is unknown; priced below)
    now = _results(tmp / "later")
    assert now["grader_cost_usd"].isna().all()
    pd.testing.assert_frame_equal(now.drop(columns="grader_cost_usd"), first_results.drop(columns="grader_cost_usd"))
    # PrefAlign is made of the first judging's rows (in_pref_align 1); the other judge's are beside it (0)
    assert set(first["in_pref_align"]) == {1} and set(second["in_pref_align"]) == {0}
    assert assert_pref_align_is_its_judgements(first_results, attributes) == len(first_results) > 0
    judgings = json.loads((tmp / "later" / "judgings.json").read_text())["judgings"]
    assert [(j["score"], j["models"]) for j in judgings] == [
        ("prefdisco_scorer", [f"openai-api/mock/m{mock.port}"]),
        ("prefdisco_judge", [other]),
    ]
    # the second judge's tokens are in cost_usd: priced at 1 USD per 1M tokens (everything else free), the rows'
    # costs add up to its judging's own token total
    from prefdisco.results.logs import results_from_logs

    free = {m: {"input": 0.0, "output": 0.0} for m in (f"openai-api/mock/m{mock.port}", other)}
    priced = {**free, other: {"input": 1.0, "output": 1.0}}
    costs = results_from_logs(tmp / "later", priced).results["cost_usd"]
    judges = results_from_logs(tmp / "later", priced).results["grader_cost_usd"]
    assert judges.tolist() == pytest.approx(costs.tolist())  # all of it is the judges' (the rest is free)
    assert (results_from_logs(tmp / "later", free).results["cost_usd"] == 0).all()
    from inspect_ai.log import list_eval_logs, read_eval_log

    from prefdisco.results.judgings import recorded_judgings

    records = [
        r
        for info in list_eval_logs(str(tmp / "later"))
        for r in recorded_judgings(read_eval_log(info, header_only=True).eval)
        if r["score"] != "prefdisco_scorer"
    ]
    assert len(records) == len(MODES) and all(r["input_tokens"] > 0 for r in records)
    expected = sum(r["input_tokens"] + r["output_tokens"] for r in records) / 1_000_000
    assert costs.sum() == pytest.approx(expected)
    assert (costs > 0).all()  # every row was judged again, so every row pays for it
    # the same second judge again: nothing to do
    before = mock.stats()["completions"]
    again = _judge(app, tmp / "later", "--judge-model", other)
    assert again.exit_code == 0 and mock.stats()["completions"] == before


@pytest.mark.slow
def test_judging_an_inline_run_with_its_own_judge_makes_no_call(runs, app):  # noqa: F811
    tmp, mock = runs["tmp"], runs["mock"]
    before = mock.stats()["completions"]
    result = _judge(app, tmp / "inline")
    assert result.exit_code == 0, result.output
    assert mock.stats()["completions"] == before
    assert f"judged 0 log(s), {len(MODES)} already judged" in result.output
    # the same judge model with another judge kind would repeat its attribute rows: refused in one line
    refused = _judge(app, tmp / "inline", "--judge", "structured")
    assert refused.exit_code == 2 and mock.stats()["completions"] == before
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "already judged this log as" in lines[0], refused.stderr


@pytest.mark.slow
def test_bad_run_folders_are_refused_in_one_line(runs, app, tmp_path):  # noqa: F811
    (tmp_path / "empty").mkdir()
    (tmp_path / "nologs").mkdir()
    shutil.copy(runs["tmp"] / "later" / "run.json", tmp_path / "nologs" / "run.json")
    cases = {
        tmp_path / "missing": "no such run folder",
        tmp_path / "empty": "no run.json",
        tmp_path / "nologs": "no prefdisco eval logs to judge",
    }
    for folder, expected in cases.items():
        result = _judge(app, folder)
        lines = result.stderr.strip().splitlines()
        assert result.exit_code == 2, result.output
        assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], result.stderr
    bad_kind = _judge(app, runs["tmp"] / "later", "--judge", "later")
    assert bad_kind.exit_code == 2 and "--judge: unknown 'later'" in bad_kind.stderr


@pytest.mark.slow
def test_a_split_later_run_is_judged_per_worker_folder(runs, app):  # noqa: F811
    """A split run's layout (``--workers 2``: ``workers.json`` in the parent, a run folder per worker with its own
    ``run.json``, scenario set and cache scope), made here by two single-process runs of the two shards: judging
    the parent judges both folders, each with its own settings, to the scores of the inline single-process run."""
    tmp, mock, scenarios = runs["tmp"], runs["mock"], runs["scenarios"]
    split = tmp / "split"
    for k, shard in enumerate(([scenarios[0]], [scenarios[1]]), 1):
        bench = write_scenarios(tmp / f"shard-{k}.jsonl", shard)
        done = run_eval(app, mock, bench, split / f"worker-{k}", "--modes", "baseline", "--judge", "later")
        assert done.exit_code == 0, done.output
    (split / "workers.json").write_text(json.dumps({"workers": 2, "scenario_set": "whole"}))
    before = mock.stats()["by_role"]
    judged = _judge(app, split)
    calls = _calls(mock, before)
    assert judged.exit_code == 0, judged.output
    assert calls.get("assistant", 0) == 0 and calls["judge"] == sum(len(s.rubric) for s in scenarios)
    assert sorted(str(p.relative_to(split)) for p in split.glob("*/judgings.json")) == [
        "worker-1/judgings.json",
        "worker-2/judgings.json",
    ]
    cols = ["scenario_id", "mode", "pref_align", "correct", "judged", "failed"]
    inline = _results(tmp / "inline").query("mode == 'baseline'").reset_index(drop=True)
    pd.testing.assert_frame_equal(inline[cols], _results(split)[cols])


def test_dry_run_of_a_later_run_plans_no_grader_call(app, tmp_path):  # noqa: F811
    from typer.testing import CliRunner

    bench = write_scenarios(tmp_path / "scenarios.jsonl", tagged_scenarios(1))
    args = ["eval", str(bench), "--model", "openai/gpt-4.1", "--log-dir", str(tmp_path / "run"), "--dry-run"]
    planned = CliRunner().invoke(app, [*args, "--judge", "later", "--preset", "paper"])
    assert planned.exit_code == 0, planned.output
    assert not any(line.lstrip().startswith("grader") for line in planned.output.splitlines()), planned.output
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_a_judging_by_batch_is_recorded_and_priced_where_the_provider_batches(runs, app):  # noqa: F811
    """``prefdisco judge --batch``: the first judging's rewrite of each log says its judge calls went by batch
    (``prefdisco_batched``), as an inline ``--batch`` run's task does; the rows price them at the batch share only
    where the judge's provider has a batch API (this mock's ``openai-api`` has none: the rows say none went, at full
    price); a rerun without ``--batch`` judges nothing again and leaves that record as it is."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    from prefdisco.results.contract import BATCHED_KEY

    tmp = runs["tmp"]
    dest = tmp / "batched"
    shutil.copytree(tmp / "pending-copy", dest)
    assert _judge(app, dest, "--batch").exit_code == 0
    for info in list_eval_logs(str(dest)):
        assert read_eval_log(info, header_only=True).eval.metadata[BATCHED_KEY] == ["grader"]
    rows = _results(dest)
    assert rows["batched"].isna().all()  # openai-api: sent one by one, billed in full
    assert _judge(app, dest).exit_code == 0  # again without it: already judged, nothing rejudged, still by batch
    for info in list_eval_logs(str(dest)):
        assert read_eval_log(info, header_only=True).eval.metadata[BATCHED_KEY] == ["grader"]
