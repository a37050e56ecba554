"""General quality (issue 23 part 5): every judged response of every condition gets one task-independent quality
judgement (correct reasoning shown, completeness, no invented facts; 1-5 each) on the first judge; ``quality`` is
their mean, None (never 0) when the reply stayed invalid, and ``--no-quality`` makes no such call."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from inspect_ai import eval as inspect_eval

from mock_openai import MockOpenAI, tagged_scenarios, write_scenarios
from prefdisco.analysis.stats.trials import average_trials
from prefdisco.errors import UserError
from prefdisco.evaluation.running.task import build_task
from prefdisco.evaluation.settings.config import RunConfig
from prefdisco.results.logs import results_from_logs
from prefdisco.results.table import validate_results
from prefdisco.scoring import scorer as scorer_module
from prefdisco.seeds import TrialSeeds
from scripted import Call, Scripted, make_scenario, run_eval_set
from test_reliability import app, mock_env, run_eval  # noqa: F401  (app is a fixture)

QUALITY_ASK = '{"reasoning": N, "completeness": N, "facts": N}'
"""What the quality prompt asks for (and no other grader prompt does)."""
SCORES = {
    "baseline": {"reasoning": 5, "completeness": 4, "facts": 2},
    "oracle": {"reasoning": 2, "completeness": 3, "facts": 3},
}
"""The scripted judge's quality scores of each condition's response; by hand their means are 11/3 and 8/3."""
HAND_MEAN = {"baseline": 11 / 3, "oracle": 8 / 3}


def is_quality(call: Call) -> bool:
    return QUALITY_ASK in call.text


def assistant(call: Call, index: int) -> str:
    """Marks its response with the condition (the oracle has a system prompt), so the judge can tell them apart."""
    return ("ORACLE-RESPONSE" if call.system else "BASELINE-RESPONSE") + " The answer is B: 3 trips."


def judge(call: Call, index: int) -> str:
    if is_quality(call):
        which = "oracle" if "ORACLE-RESPONSE" in call.text else "baseline"
        return json.dumps(SCORES[which])
    return json.dumps({"score": 4})


def invalid_quality(call: Call, index: int) -> str:
    return "It reads well enough, I suppose." if is_quality(call) else json.dumps({"score": 4})


def test_quality_is_the_mean_of_the_judges_three_scores_in_the_score_and_the_results(tmp_path):
    grader = Scripted(judge)
    config = RunConfig(audit=False)
    tasks = [build_task([make_scenario()], config, mode, cache_scope=f"q-{tmp_path}") for mode in SCORES]
    assert run_eval_set(tasks, tmp_path / "run", Scripted(assistant), Scripted(lambda c, i: "ok"), grader)
    quality_calls = [c for c in grader.calls if is_quality(c)]
    assert len(quality_calls) == 2  # one per response
    assert len(grader.calls) == 2 * 3 + 2  # three criteria per response, and the quality call
    # the quality prompt shows the task and the response, never the persona, the profile or the rubric
    assert all("3 trips" in c.text and "SECRET-JUSTIFICATION" not in c.text for c in quality_calls)
    assert all("RUBRIC-" not in c.text and "ferry engineer" not in c.text for c in quality_calls)

    results = results_from_logs(tmp_path / "run").results.set_index("mode")
    for mode, mean in HAND_MEAN.items():
        assert results.loc[mode, "quality"] == pytest.approx(mean)
        assert results.loc[mode, "pref_align"] == pytest.approx(4.0)  # the rubric is judged as before
    # the quality call is the sample's grader call: it carries the trial's grader seed
    seeds = {c.config.seed for c in quality_calls}
    assert seeds == {int(results.loc[mode, "grader_seed"]) for mode in SCORES}

    from inspect_ai.log import list_eval_logs, read_eval_log

    for info in list_eval_logs(str(tmp_path / "run")):
        log = read_eval_log(info)
        [sample] = log.samples
        score = sample.scores["prefdisco_scorer"]
        mode = log.eval.metadata["prefdisco_mode"]
        assert score.value["quality"] == pytest.approx(HAND_MEAN[mode])
        assert score.metadata["quality_scores"] == SCORES[mode]
        assert score.metadata["quality_error"] is None
        assert sample.store_as(TrialSeeds).grader in seeds

    # cached under its own role: the same cache scope in another folder replays every grader call, quality too
    again = Scripted(judge)
    tasks = [build_task([make_scenario()], config, mode, cache_scope=f"q-{tmp_path}") for mode in SCORES]
    assert run_eval_set(tasks, tmp_path / "again", Scripted(assistant), Scripted(lambda c, i: "ok"), again)
    assert again.calls == []
    replayed = results_from_logs(tmp_path / "again").results.set_index("mode")
    assert all(replayed.loc[m, "quality"] == pytest.approx(v) for m, v in HAND_MEAN.items())


def test_the_quality_call_is_cached_under_the_quality_role(tmp_path, monkeypatch):
    seen = []
    real = scorer_module.judge_quality

    async def spy(grader, problem, response, **kwargs):
        seen.append(kwargs["cache"])
        return await real(grader, problem, response, **kwargs)

    monkeypatch.setattr(scorer_module, "judge_quality", spy)
    task = build_task([make_scenario()], RunConfig(audit=False), "baseline", cache_scope="scope-x")
    assert run_eval_set([task], tmp_path, Scripted(assistant), Scripted(lambda c, i: "ok"), Scripted(judge))
    [policy] = seen
    assert policy.scopes == {"run": "scope-x", "scenario": "s1", "condition": "baseline", "role": "quality"}


def test_an_invalid_quality_reply_is_none_never_zero(tmp_path):
    grader = Scripted(invalid_quality)
    task = build_task([make_scenario()], RunConfig(audit=False), "baseline")
    assert run_eval_set([task], tmp_path, Scripted(assistant), Scripted(lambda c, i: "ok"), grader)
    assert sum(is_quality(c) for c in grader.calls) == 3  # the call and its two re-asks
    from inspect_ai.log import list_eval_logs, read_eval_log

    [info] = list_eval_logs(str(tmp_path))
    score = read_eval_log(info).samples[0].scores["prefdisco_scorer"]
    assert score.value["quality"] is None and score.value["pref_align"] == pytest.approx(4.0)
    assert score.metadata["quality_scores"] is None
    assert score.metadata["quality_error"].startswith("no valid quality reply")
    [row] = results_from_logs(tmp_path).results.to_dict("records")
    assert row["quality"] is None or math.isnan(row["quality"])  # empty, not 0
    assert row["failed"] == 0


def results_table(**columns: list[str]) -> pa.Table:
    base = {
        "model": ["m", "m", "m", "m"],
        "family": ["mock"] * 4,
        "task": ["t"] * 4,
        "scenario_id": ["s1", "s1", "s2", "s2"],
        "mode": ["baseline"] * 4,
        "fixed_k": [""] * 4,
        "epoch": ["1", "2", "1", "2"],
        "pref_align": ["3"] * 4,
        "correct": ["1"] * 4,
        "n_questions": ["0"] * 4,
        "judge_invalid": ["0"] * 4,
        "input_tokens": ["10"] * 4,
        "output_tokens": ["10"] * 4,
    }
    return pa.table({**base, **columns})


def test_the_trial_average_keeps_quality_and_leaves_an_unmeasured_trial_out():
    # s1: trials 4 and (invalid) → 4, never 2; s2: trials 2 and 3 → 2.5
    frame = validate_results(results_table(quality=["4", "", "2", "3"]), "results.csv")
    averaged = average_trials(frame).set_index("scenario_id")
    assert averaged["quality"].to_dict() == {"s1": 4.0, "s2": 2.5}
    with pytest.raises(UserError, match=r"results.csv.*quality"):
        validate_results(results_table(quality=["4", "0", "2", "3"]), "results.csv")  # 1-5, never 0


def test_no_quality_makes_no_quality_call_and_the_inspect_task_takes_it_too(tmp_path):
    scenario = make_scenario()
    path = tmp_path / "scenarios.jsonl"
    path.write_text(scenario.model_dump_json() + "\n")
    counts = {}
    for quality in (True, False):
        grader = Scripted(judge)
        args = {"scenarios": str(path), "mode": "oracle", "audit": False, **({} if quality else {"quality": False})}
        [log] = inspect_eval(
            "prefdisco/prefdisco",
            task_args=args,
            model=Scripted(assistant).model,
            model_roles={"user": Scripted(lambda c, i: "ok").model, "grader": grader.model},
            log_dir=str(tmp_path / str(quality)),
            display="none",
        )
        assert log.status == "success", log.error
        value = log.samples[0].scores["prefdisco_scorer"].value
        counts[quality] = (len(grader.calls), sum(is_quality(c) for c in grader.calls), value["quality"])
    assert counts[True][:2] == (3 + 1, 1) and counts[True][2] == pytest.approx(HAND_MEAN["oracle"])
    assert counts[False] == (3, 0, None)  # the three criteria only


def _calls(mock) -> dict[str, int]:
    return dict(mock.stats()["by_role"])


def test_the_cli_flag_run_json_the_dry_run_and_resuming(app, tmp_path, monkeypatch):  # noqa: F811
    """On the mock: the dry run plans one quality call per response and the run makes exactly those; ``--no-quality``
    plans and makes none, records ``quality: false`` in run.json (a run with it on records nothing) and hashes
    no quality template; a folder is resumed only with the setting it was run with (an older run.json without
    the key: as it was run, without quality)."""
    bench = write_scenarios(tmp_path / "scenarios.jsonl", tagged_scenarios(2))
    modes = ("--modes", "baseline,oracle")  # single turns: the plan is exact
    with MockOpenAI() as mock:
        mock_env(monkeypatch, mock, tmp_path)
        planned = {}
        made = {}
        for name, flags in (("on", ()), ("off", ("--no-quality",))):
            dry = run_eval(app, mock, bench, tmp_path / name, *modes, *flags, "--dry-run")
            assert dry.exit_code == 0, dry.output
            planned[name] = dry.output
            before = mock.stats()
            real = run_eval(app, mock, bench, tmp_path / name, *modes, *flags)
            assert real.exit_code == 0, real.output
            after = mock.stats()
            made[name] = {
                "total": after["completions"] - before["completions"],
                **{r: n - before["by_role"].get(r, 0) for r, n in after["by_role"].items()},
            }
        assert made["on"]["quality"] == 2 * 2 and made["off"].get("quality", 0) == 0  # scenarios x conditions
        for name in ("on", "off"):
            lines = planned[name].splitlines()
            assert int(lines[0].removesuffix(" model calls")) == made[name]["total"]
            rows = {(c[0], c[1]): int(c[3]) for c in (ln.split() for ln in lines[2:]) if c and c[0] == "grader"}
            assert rows.get(("grader", "quality"), 0) == made[name].get("quality", 0)
            assert rows[("grader", "judge")] == made[name]["judge"]

        on, off = (json.loads((tmp_path / n / "run.json").read_text()) for n in ("on", "off"))
        assert "quality" not in on and off["quality"] is False
        assert on["prompt_templates"] != off["prompt_templates"]
        results = {n: pd.read_csv(tmp_path / n / "results.csv") for n in ("on", "off")}
        assert results["off"]["quality"].isna().all()
        assert results["on"]["quality"].between(1, 5).all()

        calls = mock.stats()["completions"]
        switched = run_eval(app, mock, bench, tmp_path / "on", *modes, "--no-quality")
        assert switched.exit_code == 2 and "prompt_templates" in switched.output
        assert run_eval(app, mock, bench, tmp_path / "off", *modes).exit_code == 2
        # an older run.json (before quality: no key) resumes as it was run, with --no-quality, and makes no call
        (tmp_path / "off" / "run.json").write_text(json.dumps({k: v for k, v in off.items() if k != "quality"}))
        resumed = run_eval(app, mock, bench, tmp_path / "off", *modes, "--no-quality")
        assert resumed.exit_code == 0, resumed.output
        assert mock.stats()["completions"] == calls


def test_a_later_run_judges_quality_with_prefdisco_judge_unless_it_was_off(app, tmp_path, monkeypatch):  # noqa: F811
    from typer.testing import CliRunner

    bench = write_scenarios(tmp_path / "scenarios.jsonl", tagged_scenarios(2))
    modes = ("--modes", "baseline,discovery")
    with MockOpenAI() as mock:
        mock_env(monkeypatch, mock, tmp_path)
        for name, flags in (("on", ()), ("off", ("--no-quality",))):
            later = run_eval(app, mock, bench, tmp_path / name, *modes, "--judge", "later", *flags)
            assert later.exit_code == 0, later.output
            pending = pd.read_csv(tmp_path / name / "results.csv")
            assert pending["quality"].isna().all() and (pending["judged"] == 0).all()
            before = _calls(mock)
            judged = CliRunner().invoke(app, ["judge", str(tmp_path / name)])
            assert judged.exit_code == 0, judged.output
            quality = _calls(mock).get("quality", 0) - before.get("quality", 0)
            results = pd.read_csv(tmp_path / name / "results.csv")
            assert (results["judged"] == 1).all()
            if name == "on":
                assert quality == 2 * 2  # one per response
                assert results["quality"].between(1, 5).all()
            else:
                assert quality == 0 and results["quality"].isna().all()


def test_the_rl_environment_reward_info_has_the_quality():
    from prefdisco.env.episode import Episode

    grader = Scripted(judge)
    episode = Episode(make_scenario(), Scripted(lambda c, i: "ok").model, grader.model)
    episode.reset()
    result = episode.step("ANSWER: BASELINE-RESPONSE The answer is B.")
    assert result.done
    assert result.info["score"]["quality"] == pytest.approx(HAND_MEAN["baseline"])
    assert result.info["quality_scores"] == {"reasoning": 5, "completeness": 4, "facts": 2}


def test_the_embedded_demo_runs_without_quality_and_a_real_model_with_it(tmp_path, monkeypatch):
    from prefdisco import demo

    seen = []

    class Stop(Exception):
        pass

    def capture(scenarios, config, label="eval"):
        seen.append(config)
        raise Stop

    monkeypatch.setattr(demo, "run_conditions", capture)
    for model in (demo.DEMO_MODEL, "openai/gpt-4.1"):
        with pytest.raises(Stop):
            demo.run_demo(out=tmp_path / Path(model).name, model=model)
    assert [c.quality for c in seen] == [False, True]
