"""The negative control ``wrong_persona`` and the control gap: the oracle prompt filled with another scenario's
profile and persona, scored against the scenario's own rubric; oracle − wrong_persona per (model, task)."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval

from mock_openai import MockOpenAI, tagged_scenarios, write_scenarios
from prefdisco.analysis.report.build import build_report, make_report
from prefdisco.analysis.stats.trials import average_trials
from prefdisco.analysis.validity.control import control_table
from prefdisco.dialogue.decoys import DECOY_ID_KEY, choose_decoys, decoy_index
from prefdisco.errors import UserError
from prefdisco.evaluation.run import run_conditions
from prefdisco.evaluation.running.evalset import build_tasks
from prefdisco.evaluation.running.task import build_task
from prefdisco.evaluation.scaleout import blocks as blocks_module
from prefdisco.evaluation.scaleout import workers as workers_module
from prefdisco.evaluation.settings.config import RunConfig
from prefdisco.results.contract import ATTRIBUTE_COLUMNS, RESULT_COLUMNS
from prefdisco.results.logs import Tables, results_from_logs, write_tables
from prefdisco.results.table import load_results
from prefdisco.schema import Mode, Problem
from prefdisco.seeds import seed_scope
from scripted import Call, Scripted, constant, make_persona, make_scenario, run_eval_set
from test_reliability import app, mock_env, run_eval  # noqa: F401  (app is a fixture)
from test_report import HEADER, write_csv

# ---- scenarios: two problems, two personas each --------------------------------------------------------------


def problem(pid: str, question: str) -> Problem:
    return Problem(
        id=pid, benchmark="demo", domain="math", question=question, choices=["2", "3", "4", "5"], answer="B",
        answer_type="letter",
    )  # fmt: skip


P1 = problem("prob-1", "A ferry carries 12 cars per trip. How many trips for 30 cars?")
P2 = problem("prob-2", "What is 9 / 3?")
# s-a and s-b share the weight-0.5 value, s-c and s-d the weight-0.3 one; nothing else is shared
VALUES = {
    "s-a": (P1, "Ada Okoye", ("alpha-depth", "alpha-analogy", "alpha-vocab")),
    "s-b": (P1, "Bo Lindqvist", ("alpha-depth", "beta-analogy", "beta-vocab")),
    "s-c": (P2, "Cai Moreno", ("gamma-depth", "gamma-analogy", "gamma-vocab")),
    "s-d": (P2, "Dee Tanaka", ("delta-depth", "gamma-analogy", "delta-vocab")),
}


def four_scenarios():
    return [
        make_scenario(sid, persona=make_persona(f"persona-{sid}", name), values=values, problem=prob)
        for sid, (prob, name, values) in VALUES.items()
    ]


def config_for(log_dir: Path, **settings: object) -> RunConfig:
    """A run judged by ``judge_by_value`` (the rubric only: no quality call)."""
    return RunConfig(
        models=["mockllm/model"], user_model="mockllm/model", grader_model="mockllm/model", log_dir=log_dir,
        **{"quality": False, **settings},
    )  # fmt: skip


# ---- scripted models: the assistant echoes the values in its system prompt, the judge looks for them -----------

VALUE_LINE = re.compile(r"^- .*?: (.+?) \[importance", re.MULTILINE)


def echo_values(call: Call, i: int) -> str:
    """The answer B, followed by every preferred value the system prompt lists (none in baseline)."""
    return "ANSWER: B. " + "; ".join(VALUE_LINE.findall(call.system))


def judge_by_value(call: Call, i: int) -> str:
    """5 when the criterion's preferred value appears in the graded response, else 2."""
    preferred = re.search(r"The person's preferred value: (.+)", call.text).group(1).strip()
    response = re.search(r"<response>\n(.*)\n</response>", call.text, re.DOTALL).group(1)
    return json.dumps({"score": 5 if preferred in response else 2})


def run_scripted(log_dir: Path, config: RunConfig, scenarios, assistant, grader) -> None:
    assert run_eval_set(build_tasks(scenarios, config), log_dir, assistant, Scripted(constant("Short.")), grader)


# ---- decoy choice ---------------------------------------------------------------------------------------------


def sha_pick(scope: str, sid: str, n: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{scope}\x1f{sid}\x1fdecoy".encode()).digest()[:8], "big") % n


def test_the_decoy_is_another_persona_of_the_same_problem_chosen_by_sha256_of_scope_and_id():
    # problem 1 has three personas, problem 2 one: s-e falls back to another problem of the benchmark
    base = four_scenarios()
    third = make_scenario("s-x", persona=make_persona("persona-x", "Xu Li"), values=("x1", "x2", "x3"), problem=P1)
    lone = make_scenario("s-e", persona=make_persona("persona-e", "Eve"), values=("e1", "e2", "e3"), problem=P2)
    pool = [base[0], base[1], third, lone]
    scope = seed_scope(0)
    decoys = choose_decoys(pool, scope)
    # s-a's candidates, in id order: s-b, s-x
    assert decoys["s-a"].id == ["s-b", "s-x"][sha_pick(scope, "s-a", 2)]
    assert decoys["s-b"].id == ["s-a", "s-x"][sha_pick(scope, "s-b", 2)]
    assert decoys["s-x"].id == ["s-a", "s-b"][sha_pick(scope, "s-x", 2)]
    # s-e has no other persona of its problem: one of the benchmark's other problems' scenarios, in (problem, id)
    # order with its own problem left out: s-a, s-b, s-x (all prob-1)
    assert decoys["s-e"].id == ["s-a", "s-b", "s-x"][sha_pick(scope, "s-e", 3)]
    assert decoy_index(scope, "s-e", 3) == sha_pick(scope, "s-e", 3)
    # deterministic, independent of the input order; another seed scope can choose otherwise
    assert {k: v.id for k, v in choose_decoys(list(reversed(pool)), scope).items()} == {
        k: v.id for k, v in decoys.items()
    }
    other = next(s for s in range(50) if sha_pick(seed_scope(s), "s-a", 2) != sha_pick(scope, "s-a", 2))
    assert choose_decoys(pool, seed_scope(other))["s-a"].id != decoys["s-a"].id
    # a same-persona scenario of the same problem is not a decoy
    twin = make_scenario("s-a2", persona=base[0].persona, values=("t1", "t2", "t3"), problem=P1)
    assert choose_decoys([base[0], twin, base[1]], scope)["s-a"].id == "s-b"


def test_the_mode_is_refused_when_a_scenario_has_no_decoy(tmp_path):
    one = [make_scenario("only")]
    with pytest.raises(UserError, match=r"--modes wrong_persona: scenario only has no decoy") as e:
        build_task(one, mode="wrong_persona")
    assert "\n" not in str(e.value)
    # same persona, same problem: still no decoy; the refusal comes before the run folder is made
    twin = make_scenario("twin", values=("t1", "t2", "t3"))
    config = config_for(tmp_path / "run", modes=["baseline", "wrong_persona"])
    with pytest.raises(UserError, match="scenario only has no decoy"):
        run_conditions([one[0], twin], config)
    assert not (tmp_path / "run").exists()
    # the other modes still run a single scenario
    assert build_task(one, mode="oracle").dataset[0].id == "only"


def test_wrong_persona_is_an_accepted_mode_and_the_default_modes_are_the_papers_three(tmp_path):
    config_for(tmp_path, modes=["baseline", "discovery", "oracle", "wrong_persona"]).validate()
    assert config_for(tmp_path).modes == ["baseline", "discovery", "oracle"]
    with pytest.raises(UserError, match=r"unknown mode\(s\) oracel; expected baseline, discovery, oracle, wrong"):
        config_for(tmp_path, modes=["oracel"]).validate()


class SerialPool:
    """ProcessPoolExecutor's stand-in: runs the workers one after the other in this process."""

    def __init__(self, *args, **kwargs) -> None:
        pass

    def __enter__(self) -> SerialPool:
        return self

    def __exit__(self, *exc) -> None:
        return None

    def map(self, fn, *iterables):
        return [fn(*args) for args in zip(*iterables, strict=True)]


def test_a_scenarios_decoy_does_not_depend_on_the_worker_split_or_the_limit(tmp_path, monkeypatch):
    base = four_scenarios()
    third = make_scenario("s-x", persona=make_persona("persona-x", "Xu Li"), values=("x1", "x2", "x3"), problem=P1)
    lone = make_scenario("s-e", persona=make_persona("persona-e", "Eve"), values=("e1", "e2", "e3"), problem=P2)
    pool = [*base, third, lone]
    seen: dict[str, dict[str, str]] = {}

    def fake_run_eval_set(selected, config, decoys=None):
        """Build the tasks as the eval-set would and record each wrong_persona sample's decoy."""
        [task] = [t for t in build_tasks(selected, config, decoys) if t.metadata["prefdisco_mode"] == "wrong_persona"]
        seen.setdefault(str(config.log_dir), {}).update({str(s.id): s.metadata[DECOY_ID_KEY] for s in task.dataset})
        empty = pd.DataFrame(columns=list(RESULT_COLUMNS))
        return Tables(empty, pd.DataFrame(columns=list(ATTRIBUTE_COLUMNS)), pd.DataFrame())

    monkeypatch.setattr(blocks_module, "run_eval_set", fake_run_eval_set)
    monkeypatch.setattr(blocks_module, "run_block", fake_run_eval_set)
    monkeypatch.setattr(workers_module, "run_eval_set", fake_run_eval_set)
    monkeypatch.setattr(workers_module, "ProcessPoolExecutor", SerialPool)
    modes = ["oracle", "wrong_persona"]
    run_conditions(pool, config_for(tmp_path / "one", modes=modes))
    run_conditions(pool, config_for(tmp_path / "split", modes=modes, workers=3))
    run_conditions(pool, config_for(tmp_path / "limited", modes=modes, limit=2))
    monkeypatch.setattr(blocks_module, "SCENARIOS_PER_BLOCK", 2)  # a large run in one process: blocks of 2
    run_conditions(pool, config_for(tmp_path / "blocks", modes=modes))

    expected = {k: v.id for k, v in choose_decoys(pool, seed_scope(0)).items()}
    assert seen[str(tmp_path / "one")] == expected
    split = {k: v for folder, found in seen.items() if "/split/worker-" in folder for k, v in found.items()}
    assert len([f for f in seen if "/split/worker-" in f]) == 3 and split == expected
    assert seen[str(tmp_path / "limited")] == {sid: expected[sid] for sid in ("s-a", "s-b")}
    cut = {k: v for folder, found in seen.items() if "/blocks/block-" in folder for k, v in found.items()}
    assert len([f for f in seen if "/blocks/block-" in f]) == 3 and cut == expected
    # worker 3 holds s-c alone (round-robin): chosen from its own shard, it would have no decoy at all
    with pytest.raises(UserError, match="has no decoy"):
        choose_decoys([pool[2]], seed_scope(0))


# ---- a scripted run: the gap is the hand-computed one -----------------------------------------------------------

# oracle: every own value is echoed, 5 on every criterion → 5.0. wrong_persona echoes the decoy's values: s-a/s-b
# share only the weight-0.5 value → 0.5·5 + 0.3·2 + 0.2·2 = 3.5; s-c/s-d only the weight-0.3 one →
# 0.5·2 + 0.3·5 + 0.2·2 = 2.9. Gaps 1.5, 1.5, 2.1, 2.1: mean 1.8. A bootstrap mean of four draws from these is
# 1.5 + 0.15·k, k ~ Binomial(4, 1/2), so P(1.5) = P(2.1) = 1/16 > 2.5 %: the 95 % interval is [1.5, 2.1].
EXPECTED_WRONG = {"s-a": 3.5, "s-b": 3.5, "s-c": 2.9, "s-d": 2.9}


def test_a_scripted_run_measures_the_hand_computed_control_gap(tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    log_dir = tmp_path / "run"
    config = config_for(log_dir, modes=["baseline", "oracle", "wrong_persona"])
    config.validate()
    assistant, grader = Scripted(echo_values), Scripted(judge_by_value)
    run_scripted(log_dir, config, four_scenarios(), assistant, grader)
    tables = results_from_logs(log_dir)
    results = tables.results
    assert (results["failed"] == 0).all()
    pref = results.set_index(["scenario_id", "mode"])["pref_align"]
    for sid in VALUES:
        assert pref[(sid, "baseline")] == pytest.approx(2.0)
        assert pref[(sid, "oracle")] == pytest.approx(5.0)
        assert pref[(sid, "wrong_persona")] == pytest.approx(EXPECTED_WRONG[sid])
    # the decoy is the other persona of the same problem; recorded on wrong_persona rows only
    decoy = results.set_index(["scenario_id", "mode"])["decoy_scenario_id"]
    assert {sid: decoy[(sid, "wrong_persona")] for sid in VALUES} == {
        "s-a": "s-b",
        "s-b": "s-a",
        "s-c": "s-d",
        "s-d": "s-c",
    }
    assert decoy.drop(index="wrong_persona", level="mode").isna().all()
    # the wrong_persona prompt is exactly the decoy's oracle prompt; the user message is the same problem
    texts = tables.transcripts.set_index(["scenario_id", "mode"])["messages"]
    for sid, other in (("s-a", "s-b"), ("s-c", "s-d")):
        assert texts[(sid, "wrong_persona")][:2] == texts[(other, "oracle")][:2]
        assert texts[(sid, "wrong_persona")][0]["role"] == "system"
    assert all(c.config.seed is not None for c in assistant.calls)

    write_tables(tables, log_dir)
    assert "decoy_scenario_id" in pd.read_csv(log_dir / "results.csv").columns
    report, written = make_report(log_dir, tmp_path / "report", n_boot=1000)
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert summary["control_gap"] == {"mockllm/model": {"demo": pytest.approx(1.8)}}
    assert summary["control_gap_ci"]["mockllm/model"]["demo"] == pytest.approx([1.5, 2.1])
    assert summary["control_gap_flagged"] == {"mockllm/model": {"demo": False}}
    [cell] = report.part("control").to_dict("records")
    assert (cell["n"], cell["mean_oracle"], cell["mean_wrong_persona"]) == (4, 5.0, pytest.approx(3.2))
    assert "rewards the true profile" in cell["reading"]
    assert tmp_path / "report" / "table_control_gap.csv" in written
    # Table 1 and accuracy read only the paper's conditions: no wrong_persona in them
    assert set(report.accuracy["mode"]) == {"baseline", "oracle"}
    assert report.cells["normalign"].isna().all() and "discovery" in report.cells["reason"].iloc[0]


def test_the_paper_preset_shows_the_decoys_persona_in_the_oracle_template(tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    scenarios = four_scenarios()[:2]
    config = RunConfig(preset="paper", audit=False, quality=False)  # judge_by_value scores the rubric only
    task = build_task(scenarios, config, "wrong_persona")
    oracle_task = build_task(scenarios, config, "oracle")
    assistant, grader = Scripted(echo_values), Scripted(judge_by_value)
    user = Scripted(lambda call, i: "Short.")
    logs = inspect_eval(
        [task, oracle_task],
        log_dir=str(tmp_path / "logs"),
        model=assistant.model,
        model_roles={"user": user.model, "grader": grader.model},
        display="none",
    )
    system = {
        (log.eval.metadata["prefdisco_mode"], s.id): s.messages[0].text for log in logs for s in log.samples or []
    }
    assert "Bo Lindqvist" in system[("wrong_persona", "s-a")] and "Ada Okoye" not in system[("wrong_persona", "s-a")]
    assert system[("wrong_persona", "s-a")] == system[("oracle", "s-b")]
    assert "tailors explanations" in system[("wrong_persona", "s-a")]  # the paper's oracle template


# ---- the control gap from a hand-made table ---------------------------------------------------------------------


def rows(mode: str, prefs: dict[str, float], model: str = "m-a") -> list[list]:
    return [[model, "openai", "t1", sid, mode, "", pa, 1, 0, 0, 100, 50, 0] for sid, pa in prefs.items()]


BASE = {"s1": 2.0, "s2": 2.5, "s3": 3.0, "s4": 2.0}
DISC = {"s1": 3.0, "s2": 3.0, "s3": 3.5, "s4": 2.5}
ORACLE = {"s1": 4.0, "s2": 4.5, "s3": 4.0, "s4": 3.5}


def test_a_gap_whose_interval_reaches_zero_is_flagged_and_table_1_is_untouched(tmp_path):
    # gaps s1..s4: 0.5, −0.5, 0.2, −0.1 (s5's wrong_persona failed: left out) → mean (0.5 − 0.5 + 0.2 − 0.1)/4
    wrong = {"s1": 3.5, "s2": 5.0, "s3": 3.8, "s4": 3.6}
    table = rows("baseline", BASE) + rows("discovery", DISC) + rows("oracle", ORACLE) + rows("wrong_persona", wrong)
    table.append(["m-a", "openai", "t1", "s5", "wrong_persona", "", "", "", 0, 0, 100, 50, 1])
    with_control = build_report(
        load_results(write_csv(tmp_path / "with.csv", HEADER, table)), n_boot=500, figures=False
    )
    without = build_report(
        load_results(write_csv(tmp_path / "without.csv", HEADER, table[:12])), n_boot=500, figures=False
    )

    [cell] = with_control.part("control").to_dict("records")
    assert cell["n"] == 4
    assert cell["gap"] == pytest.approx((0.5 - 0.5 + 0.2 - 0.1) / 4)
    assert cell["mean_oracle"] == pytest.approx((4.0 + 4.5 + 4.0 + 3.5) / 4)
    assert cell["ci_low"] < 0 < cell["ci_high"]
    assert cell["ci_low"] >= -0.5 and cell["ci_high"] <= 0.5  # a mean of gaps in [−0.5, 0.5]
    assert cell["flagged"] and "cannot tell personalization from generic quality" in cell["reading"]
    assert with_control.summary["control_gap_flagged"] == {"m-a": {"t1": True}}
    assert with_control.summary["control_gap_ci"]["m-a"]["t1"] == [cell["ci_low"], cell["ci_high"]]
    # the same seed gives the same interval
    again = build_report(load_results(tmp_path / "with.csv"), n_boot=500, figures=False).part("control")
    assert again.loc[0, "ci_low"] == cell["ci_low"]

    # NormAlign = 100·(mean disc − mean base)/(mean oracle − mean base) = 100·(3.0 − 2.375)/(4.0 − 2.375)
    assert with_control.cells.loc[0, "normalign"] == pytest.approx(100 * 0.625 / 1.625)
    for name in ("cells", "scenarios", "accuracy", "fixed_k"):
        pd.testing.assert_frame_equal(getattr(with_control, name), getattr(without, name))
    pd.testing.assert_frame_equal(with_control.questions.per_cell, without.questions.per_cell)
    for key in ("normalign", "normalign_ci", "accuracy", "accuracy_overall", "n_scenarios", "pct_negative"):
        assert with_control.summary[key] == without.summary[key]
    assert set(with_control.accuracy["mode"]) == {"baseline", "discovery", "oracle"}

    # a run without wrong_persona rows: no table, empty summary keys
    assert without.part("control") is None and "table_control_gap.csv" not in without.tables
    assert (without.summary["control_gap"], without.summary["control_gap_ci"]) == ({}, {})
    assert without.summary["control_gap_flagged"] == {}


def test_a_cell_without_paired_scenarios_is_flagged_with_no_interval(tmp_path):
    # model m-b ran wrong_persona but no oracle; m-a has one paired scenario (gap 1.0): one scenario is too few for
    # an interval (it used to be the one-point interval [1.0, 1.0], read as "the judge rewards the true profile")
    table = rows("oracle", {"s1": 4.0}) + rows("wrong_persona", {"s1": 3.0}) + rows("wrong_persona", {"s1": 3.0}, "m-b")
    results = average_trials(load_results(write_csv(tmp_path / "r.csv", HEADER, table)).results)
    control = control_table(results, seed=0, n_boot=200).set_index("model")
    assert control.loc["m-a", "gap"] == 1.0
    assert pd.isna(control.loc["m-a", "ci_low"]) and pd.isna(control.loc["m-a", "ci_high"])
    assert control.loc["m-a", "flagged"]
    assert control.loc["m-a", "reading"] == (
        "oracle − wrong_persona = +1.00 (too few scenarios (n = 1)): the judge is not checked here"
    )
    assert control.loc["m-b", "n"] == 0 and control.loc["m-b", "flagged"]
    assert pd.isna(control.loc["m-b", "gap"]) and "not checked" in control.loc["m-b", "reading"]
    assert control_table(results.loc[results["mode"] != Mode.WRONG_PERSONA.value], seed=0, n_boot=200) is None


# ---- the CLI on the mock server -----------------------------------------------------------------------------------


def test_the_cli_runs_wrong_persona_on_the_mock_and_writes_the_decoy_column(app, tmp_path, monkeypatch):  # noqa: F811
    scenarios = tagged_scenarios(4)
    bench = write_scenarios(tmp_path / "scenarios.jsonl", scenarios)
    with MockOpenAI() as mock:
        mock_env(monkeypatch, mock, tmp_path)
        result = run_eval(app, mock, bench, tmp_path / "run", "--modes", "baseline,oracle,wrong_persona")
    assert result.exit_code == 0, result.output
    results = pd.read_csv(tmp_path / "run" / "results.csv")
    assert sorted(results["mode"].unique()) == ["baseline", "oracle", "wrong_persona"]
    assert (results["failed"] == 0).all() and len(results) == 3 * 4
    # every tagged scenario is its own problem: the decoy is another problem's scenario of the benchmark
    expected = {k: v.id for k, v in choose_decoys(scenarios, seed_scope(0)).items()}
    wrong = results.loc[results["mode"] == "wrong_persona"]
    assert dict(zip(wrong["scenario_id"], wrong["decoy_scenario_id"], strict=True)) == expected
    assert all(expected[s] != s for s in expected)
    assert results.loc[results["mode"] != "wrong_persona", "decoy_scenario_id"].isna().all()
    run_json = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run_json["modes"] == ["baseline", "oracle", "wrong_persona"]


@pytest.mark.slow
def test_the_cli_refuses_wrong_persona_on_a_single_scenario_in_one_line(tmp_path):
    bench = write_scenarios(tmp_path / "one.jsonl", tagged_scenarios(1))
    args = ["eval", str(bench), "--model", "mockllm/model", "--log-dir", str(tmp_path / "run")]
    result = subprocess.run(
        [sys.executable, "-m", "prefdisco", *args, "--modes", "oracle,wrong_persona"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "error: --modes wrong_persona: scenario c0000 has no decoy (no other persona of problem "
        "demo-math-02-c0000 and no other problem of benchmark demo); the negative control needs another scenario "
        "of the same problem or benchmark"
    )
    assert not (tmp_path / "run").exists()


def test_run_json_records_the_decoys_so_a_changed_decoy_beyond_the_limit_is_refused(tmp_path):
    """With --limit the decoys may come from scenarios the run does not evaluate: run.json records a hash of
    every selected scenario's decoy (id, persona, profile), so a benchmark edited beyond the limit is refused."""
    from prefdisco.evaluation.running.evalset import decoys_hash

    pool = four_scenarios()
    decoys = choose_decoys(pool, seed_scope(0))
    selected = pool[:2]
    same = decoys_hash(selected, decoys)
    assert same == decoys_hash(list(reversed(selected)), decoys)
    edited = dict(decoys)
    victim = decoys["s-a"]
    edited["s-a"] = victim.model_copy(update={"profile": pool[2].profile})
    assert decoys_hash(selected, edited) != same
    assert decoys_hash(pool[2:], decoys) != same
