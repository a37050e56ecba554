"""A synthetic world with planted effects: the proof that the validity instruments measure what they claim.

Scripted assistant, simulated user and two judges, each with planted behaviour; every figure below is worked out
by hand from the plant, never from the code's own formulas.

Four scenarios (two problems × two personas) that differ in their weights (depth, analogies, vocabulary):
s-a 0.5/0.4/0.1, s-b 0.4/0.4/0.2, s-c 0.5/0.3/0.2, s-d 0.3/0.6/0.1. s-a and s-b share their depth value, s-c and
s-d their analogy value (the wrong_persona decoy is the other persona of the same problem). Two trials (epochs),
told apart by the seed each call carries. Conditions baseline, discovery, oracle, wrong_persona; the passive user;
the audit on; judges A (``grader``) and B (``grader_2``), two repeats each.

* The assistant answers B and echoes the preferred values it has seen — its system prompt's (oracle: its own;
  wrong_persona: the decoy's) or the user's replies (discovery, after one question about depth); baseline sees
  none. Trial variance: in trial 2 it leaves out the vocabulary value of its system prompt. Every final response
  is padded to a length fixed by the scenario: s-a 1000, s-b 800, s-c 600, s-d 400 characters.
* The simulated user answers the depth question with its depth value; it leaks on known turns: in trial 2 of s-a,
  s-c and s-d the reply also gives the analogy value (not asked), and in trial 2 of s-d it also gives the task's
  answer away (a critical error). The audit (judge A) marks a preference asked when the question names it, revealed
  when the reply holds its value, helped_task when the reply holds the answer.
* Judge B scores 5 when a criterion's preferred value appears in the response, 2 otherwise, in both repeats. Judge
  A scores the same in repeat 1 and one point less where the value appears (4) in repeat 2: disagreement and noise
  of 0.5 and 1 point on the present criteria. Panel score: present (A (5 + 4)/2 = 4.5, B 5) → 4.75, absent → 2.

So PrefAlign = 2 + 2.75 · W, W the weight of the criteria whose value the response holds:

| | trial 1 W | trial 2 W |
|---|---|---|
| baseline | 0 | 0 |
| oracle | 1 | 1 − w_vocab: s-a .9, s-b .8, s-c .8, s-d .9 |
| discovery | w_depth: .5 .4 .5 .3 | s-a .9, s-b .4, s-c .8, s-d .9 (depth + the leaked analogies) |
| wrong_persona | the shared value: s-a .5, s-b .4, s-c .3, s-d .6 | the same |
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from prefdisco.analysis.report.build import make_report
from prefdisco.evaluation.running.evalset import build_tasks
from prefdisco.evaluation.settings.config import RunConfig
from prefdisco.results.logs import results_from_logs, write_tables
from prefdisco.schema import Problem
from prefdisco.seeds import call_seed, seed_scope
from scripted import Call, Scripted, make_persona, make_scenario, run_eval_set
from test_judge_panel import assert_pref_align_is_its_judgements

P1 = Problem(
    id="prob-1", benchmark="demo", domain="math", question="A ferry carries 12 cars per trip. How many trips for 30?",
    choices=["2", "3", "4", "5"], answer="B", answer_type="letter",
)  # fmt: skip
P2 = Problem(
    id="prob-2", benchmark="demo", domain="math", question="What is 9 / 3?", choices=["2", "3", "4", "5"],
    answer="B", answer_type="letter",
)  # fmt: skip
WORLD = {
    "s-a": (P1, "Ada Okoye", ("alpha-depth", "alpha-analogy", "alpha-vocab"), (0.5, 0.4, 0.1), 1000),
    "s-b": (P1, "Bo Lindqvist", ("alpha-depth", "beta-analogy", "beta-vocab"), (0.4, 0.4, 0.2), 800),
    "s-c": (P2, "Cai Moreno", ("gamma-depth", "gamma-analogy", "gamma-vocab"), (0.5, 0.3, 0.2), 600),
    "s-d": (P2, "Dee Tanaka", ("delta-depth", "gamma-analogy", "delta-vocab"), (0.3, 0.6, 0.1), 400),
}
MODES = ("baseline", "discovery", "oracle", "wrong_persona")
LEAKS = {"s-a", "s-c", "s-d"}  # trial 2: the reply also gives the analogy value
HELPS = {"s-d"}  # trial 2: the reply also gives the answer away
SCOPE = seed_scope(0)
ORACLE_LINE = re.compile(r"^- (.+?) \(.*?\): (.+?) \[importance", re.MULTILINE)
USER_LINE = re.compile(r"^- (.+?) \(.*?\): (.+?)\. Why:", re.MULTILINE)
AUDIT_ATTRIBUTE = re.compile(r"^- (a\d+) — (.+?): .*The user wants: (.+)$", re.MULTILINE)
AUDIT_TURN = re.compile(r"^(t\d+)\nAssistant asked: (.*)\nUser replied: (.*)$", re.MULTILINE)


def world_scenarios():
    return [
        make_scenario(sid, persona=make_persona(f"persona-{sid}", name), values=values, weights=w, problem=problem)
        for sid, (problem, name, values, w, _) in WORLD.items()
    ]


def trials(role: str) -> dict[int, tuple[str, int]]:
    """seed → (scenario, trial) of ``role``'s calls in every condition (``prefdisco.seeds``)."""
    return {call_seed(SCOPE, sid, mode, e, role): (sid, e) for sid in WORLD for mode in MODES for e in (1, 2)}


ASSISTANT, USER = trials("assistant"), trials("user")
REPEAT_2 = set(trials("grader#2"))  # judge A's second repeat


def assistant(call: Call, i: int) -> str:
    sid, epoch = ASSISTANT[call.config.seed]
    if "QUESTION:" in call.system:  # discovery: one question, then the values the user revealed
        replies = [m.text for m in call.messages if m.role == "user"][1:]
        if not replies:
            return "QUESTION: How deep should the explanation go?"
        content = "B. " + " ".join(replies)
    else:  # oracle / wrong_persona: the values of the system prompt (trial 2: not the vocabulary's); baseline: none
        shown = ORACLE_LINE.findall(call.system)
        content = "B. " + "; ".join(v for a, v in shown if not (epoch == 2 and a == "Technical vocabulary"))
    return "ANSWER: " + content.ljust(WORLD[sid][4], ".")


def user(call: Call, i: int) -> str:
    sid, epoch = USER[call.config.seed]
    values = dict(USER_LINE.findall(call.system))
    reply = f"I want {values['Explanation depth']}."
    if epoch == 2 and sid in LEAKS:
        reply += f" I also like {values['Use of analogies']}."
    if epoch == 2 and sid in HELPS:
        reply += " And the answer is B, by the way."
    return reply


def judged(text: str) -> int:
    """5 when the criterion's preferred value appears in the response, 2 otherwise."""
    preferred = re.search(r"The person's preferred value: (.+)", text).group(1).strip()
    response = re.search(r"<response>\n(.*)\n</response>", text, re.DOTALL).group(1)
    return 5 if preferred in response else 2


def audit(text: str) -> str:
    attributes = AUDIT_ATTRIBUTE.findall(text)
    reply = {}
    for turn, question, answer in AUDIT_TURN.findall(text):
        reply[turn] = {
            "asked": {a: name == "Explanation depth" and "deep" in question for a, name, _ in attributes},
            "revealed": {a: value.strip() in answer for a, _, value in attributes},
            "hallucinated": False,
            "contradicted": False,
            "helped_task": "the answer is B" in answer,
            "broke_character": False,
        }
    return json.dumps(reply)


def judge_a(call: Call, i: int) -> str:
    if "You are checking a conversation" in call.text:
        return audit(call.text)
    score = judged(call.text)
    return json.dumps({"score": score - 1 if score == 5 and call.config.seed in REPEAT_2 else score})


def judge_b(call: Call, i: int) -> str:
    return json.dumps({"score": judged(call.text)})


@pytest.mark.slow
def test_the_instruments_measure_the_planted_effects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    log_dir = tmp_path / "run"
    config = RunConfig(
        models=["mockllm/model"], user_model="mockllm/model", grader_model="mockllm/model", log_dir=log_dir,
        modes=list(MODES), user_type="passive", audit=True, epochs=2, judge_panel=["mockllm/b"], judge_repeats=2,
        quality=False,  # the planted judges score the rubric only
    )  # fmt: skip
    config.validate()
    models = Scripted(assistant), Scripted(user), Scripted(judge_a)
    assert run_eval_set(
        build_tasks(world_scenarios(), config),
        log_dir,
        *models,
        panel={"grader_2": Scripted(judge_b, name="mockllm/b")},
    )
    tables = results_from_logs(log_dir)
    write_tables(tables, log_dir)
    results = tables.results.set_index(["scenario_id", "mode", "epoch"])
    assert (results["failed"] == 0).all() and (results["judge_invalid"] == 0).all()

    # PrefAlign per scenario, condition and trial: 2 + 2.75 W (the table of the module docstring)
    w = {sid: dict(zip(("depth", "analogy", "vocab"), spec[3], strict=True)) for sid, spec in WORLD.items()}
    shared = {"s-a": "depth", "s-b": "depth", "s-c": "analogy", "s-d": "analogy"}
    for sid in WORLD:
        planted = {
            ("baseline", 1): 0, ("baseline", 2): 0,
            ("oracle", 1): 1, ("oracle", 2): 1 - w[sid]["vocab"],
            ("discovery", 1): w[sid]["depth"],
            ("discovery", 2): w[sid]["depth"] + (w[sid]["analogy"] if sid in LEAKS else 0),
            ("wrong_persona", 1): w[sid][shared[sid]], ("wrong_persona", 2): w[sid][shared[sid]],
        }  # fmt: skip
        for (mode, epoch), weight in planted.items():
            assert results.at[(sid, mode, epoch), "pref_align"] == pytest.approx(2 + 2.75 * weight), (sid, mode)
            assert results.at[(sid, mode, epoch), "pref_align_coverage"] == pytest.approx(1.0)
    # ... and every row's PrefAlign is exactly its in_pref_align judgements (here every judgement: no further judge)
    assert assert_pref_align_is_its_judgements(tables.results, tables.attributes) == 4 * 4 * 2

    # the simulator, per dialogue: one question, about depth; the leaks and the give-away on their known turns
    for sid in WORLD:
        for epoch in (1, 2):
            row = results.loc[(sid, "discovery", epoch)]
            leak = epoch == 2 and sid in LEAKS
            assert (row["n_questions"], row["user_turns"], row["user_leaks"]) == (1, 1, int(leak))
            assert row["elicited_weight"] == pytest.approx(w[sid]["depth"] + (w[sid]["analogy"] if leak else 0))
            assert (row["question_hit_rate"], row["first_hit_turn"], row["volunteered_count"]) == (1.0, 1, int(leak))
            assert row["user_critical_errors"] == int(epoch == 2 and sid in HELPS)

    report, _ = make_report(log_dir, tmp_path / "report", n_boot=200, figures=False)
    s = report.summary
    [model] = s["models"]
    # NormAlign over the trial means. oracle: (4.75 + 4.475) / 2 = 4.6125, 4.475, 4.475, 4.6125 -> 4.54375;
    # discovery: (3.375 + 4.475) / 2 = 3.925, 3.1, (3.375 + 4.2) / 2 = 3.7875, (2.825 + 4.475) / 2 = 3.65
    # -> 3.615625; baseline 2 -> 100 * 1.615625 / 2.54375 = 100 * 47 / 74
    assert s["normalign"][model]["demo"] == pytest.approx(100 * 47 / 74)
    # control gap per scenario: 4.6125 - 3.375, 4.475 - 3.1, 4.475 - 2.825, 4.6125 - 3.65 = 1.2375, 1.375, 1.65,
    # 0.9625 -> mean 1.30625; a bootstrap mean lies between the smallest and the largest gap
    assert s["control_gap"][model]["demo"] == pytest.approx(1.30625)
    low, high = s["control_gap_ci"][model]["demo"]
    assert 0.9625 <= low <= high <= 1.65 and s["control_gap_flagged"][model]["demo"] is False
    # elicitation, trials averaged per scenario: s-a (.5 + .9) / 2, s-b .4, s-c (.5 + .8) / 2, s-d (.3 + .9) / 2
    elicited = s["elicitation"][model]["demo"]["discovery"]
    assert elicited == {
        "elicited_weight": pytest.approx((0.7 + 0.4 + 0.65 + 0.6) / 4),
        "question_hit_rate": 1.0,
        "n": 4,
    }
    # a critical error in one of s-d's two dialogues: s-d 0.5, the others 0
    assert s["simulator_errors"][model]["demo"]["discovery"] == {"critical_share": pytest.approx(0.125), "n": 4}

    # judges. A unit is one criterion of one response: 4 scenarios x 4 conditions x 2 trials x 3 criteria = 96;
    # the value is present in P = 20 (oracle: 3 x 4 + 2 x 4) + 11 (discovery: 4 + 7) + 8 (wrong_persona) = 39.
    # Agreement: A's repeat-mean (4.5 present, 2 absent) vs B (5, 2); noise of A: repeat 1 (5, 2) vs repeat 2 (4, 2).
    # Both are ordinal alpha of P units (x, y), x < y adjacent levels, and Q = 57 units (2, 2): level counts
    # n_2 = 114, n_x = n_y = 39, n = 192; delta(x, y) = 39^2, delta(2, x) = 76.5^2, delta(2, y) = 115.5^2;
    # alpha = 1 - (n - 1) * 2 * 39 * 39^2 / (2 * (114 * 39 * (76.5^2 + 115.5^2) + 39^2 * 39^2)).
    alpha = 1 - 191 * 2 * 39 * 39**2 / (2 * (114 * 39 * (76.5**2 + 115.5**2) + 39**2 * 39**2))
    assert alpha == pytest.approx(0.870727, abs=1e-6)
    assert s["judge_agreement"][model]["demo"] == {"alpha": pytest.approx(alpha), "n_units": 96, "reason": None}
    judge_a_name, judge_b_name = "mockllm/model", "mockllm/b"
    assert s["judge_noise"][judge_a_name]["alpha"] == pytest.approx(alpha)
    # A's per-unit SD: 1 / sqrt 2 on the 39 present units, 0 on the others; B never differs from itself
    assert s["judge_noise"][judge_a_name]["mean_sd"] == pytest.approx(39 / 96 / math.sqrt(2))
    assert s["judge_noise"][judge_b_name] == {"alpha": pytest.approx(1.0), "mean_sd": 0.0, "reason": None}
    # length bias, per judge and condition, one point per response (mean criterion score vs length). Discovery:
    # lengths 1000 / 800 / 600 / 400 (ranks 7.5 5.5 3.5 1.5, each twice), present values 1 then 2 (s-a, s-c, s-d)
    # or 1 and 1 (s-b): 1 -> rank 3, 2 -> rank 7. Centred ranks: x = 3 3 1 1 -1 -1 -3 -3, y = -1.5 2.5 -1.5 -1.5
    # -1.5 2.5 -1.5 2.5; sum xy = -4, sum x^2 = 40, sum y^2 = 30 -> rho = -4 / sqrt(1200).
    # Oracle: 3 present values in trial 1, 2 in trial 2, at every length -> rho 0. Baseline, wrong_persona: one
    # score throughout.
    for judge in (judge_a_name, judge_b_name):
        bias = s["length_bias"][judge]
        assert bias["discovery"]["n"] == 8 and bias["discovery"]["spearman"] == pytest.approx(-4 / math.sqrt(1200))
        assert bias["oracle"]["n"] == 8 and bias["oracle"]["spearman"] == pytest.approx(0.0, abs=1e-12)
        assert bias["baseline"]["spearman"] is None and "no variation" in bias["baseline"]["reason"]
        assert bias["wrong_persona"]["spearman"] is None and "no variation" in bias["wrong_persona"]["reason"]

    # variance by source, per condition. Judge: repeat 1 gives PrefAlign 2 + 3 W, repeat 2 (A 4, B 5) 2 + 2.5 W,
    # so their sample variance is (0.5 W)^2 / 2 and judge = mean over trials of W^2 / 8 / R = mean W^2 / 16.
    # Between: per scenario the two trials differ by 2.75 dW; variance (2.75 dW)^2 / 2, mean over scenarios.
    variance = s["variance"][model]["demo"]
    oracle_judge = (4 * 1 + 0.81 + 0.64 + 0.64 + 0.81) / 8 / 16
    oracle_between = (0.275**2 + 0.55**2 + 0.55**2 + 0.275**2) / 2 / 4
    assert variance["oracle"]["judge"] == pytest.approx(oracle_judge)  # 0.05390625
    assert variance["oracle"]["between"] == pytest.approx(oracle_between)  # 0.09453125
    assert variance["oracle"]["assistant"] == pytest.approx(oracle_between - oracle_judge)  # 0.040625
    assert variance["oracle"]["simulator"] == 0.0 and variance["oracle"]["split"] == "no simulated user"
    disc_judge = (0.25 + 0.16 + 0.25 + 0.09 + 0.81 + 0.16 + 0.64 + 0.81) / 8 / 16
    disc_between = (1.1**2 + 0 + 0.825**2 + 1.65**2) / 2 / 4  # s-a .4 s-c .3 s-d .6 of analogy leaked
    assert variance["discovery"]["judge"] == pytest.approx(disc_judge)  # 0.024765625
    assert variance["discovery"]["between"] == pytest.approx(disc_between)  # 0.576640625
    assert variance["discovery"]["assistant"] == pytest.approx(oracle_between - oracle_judge)
    assert variance["discovery"]["simulator"] == pytest.approx(disc_between - disc_judge - 0.040625)  # 0.51125
    assert variance["wrong_persona"]["between"] == 0.0 and variance["wrong_persona"]["assistant"] == 0.0
    assert variance["wrong_persona"]["judge"] == pytest.approx(2 * (0.25 + 0.16 + 0.09 + 0.36) / 8 / 16)
    assert variance["baseline"]["judge"] == 0.0 and variance["baseline"]["between"] == 0.0
    assert all(v["epochs"] == 2 and v["repeats"] == 2 and v["n_scenarios"] == 4 for v in variance.values())

    # the Validity section reads the planted world right: all three parts measured, so the shares are given.
    # assistant 0.040625 x 2, simulator 0.51125, judge 0.05390625 + 0.024765625 + 0.0134375 of 0.684609375
    readings = {r["instrument"]: r for r in s["validity"]}
    assert readings["Variance by source (assistant / simulator / judge)"]["finding"] == (
        "assistant 12 %, simulator 75 %, judge 13 %"
    )
    control = readings["Negative control (oracle − wrong_persona PrefAlign)"]
    assert control["reading"].startswith("in every cell the judge scores the true profile above another user's")
    assert "Validity" in (tmp_path / "report" / "report.md").read_text()
    # the attribute table agrees with PrefAlign: discovery depth is present in every dialogue -> 4.75
    scores = pd.read_csv(tmp_path / "report" / "table_attribute_scores.csv").set_index(["mode", "attribute"])
    assert scores.at[("discovery", "Explanation depth"), "mean_score"] == pytest.approx(4.75)


@pytest.mark.slow
def test_the_full_validity_run_on_the_mock_writes_every_instrument(tmp_path: Path, monkeypatch) -> None:
    """The issue's run: all four modes, the targeted user, two judges, on the fault mock; ``prefdisco report``
    writes the control gap, judge agreement, elicitation, simulator errors, the variance parts and the Validity
    section."""
    from typer.testing import CliRunner

    import prefdisco.cli as cli
    from mock_openai import MockOpenAI, tagged_scenarios, write_scenarios

    cli._register()
    bench = write_scenarios(tmp_path / "scenarios.jsonl", tagged_scenarios(6))
    with MockOpenAI() as mock:
        for key, value in mock.env("mock").items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))
        first, second = f"openai-api/mock/m{mock.port}", f"openai-api/mock/j{mock.port}"
        args = ["eval", str(bench), "--model", first, "--log-dir", str(tmp_path / "run"), "--display", "none"]
        args += ["--modes", "baseline,discovery,oracle,wrong_persona", "--user-type", "targeted"]
        args += ["--judge-model", first, "--judge-model", second]
        result = CliRunner().invoke(cli.app, args)
    assert result.exit_code == 0, result.output
    report = CliRunner().invoke(cli.app, ["report", str(tmp_path / "run"), "--out", str(tmp_path / "rep")])
    assert report.exit_code == 0, report.output
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())
    [model] = summary["models"]
    [task] = summary["tasks"]
    assert summary["control_gap"][model][task] is not None
    assert len(summary["control_gap_ci"][model][task]) == 2
    agreement = summary["judge_agreement"][model][task]
    assert agreement["n_units"] > 0 and (agreement["alpha"] is not None or agreement["reason"])
    assert "discovery" in summary["elicitation"][model][task]
    assert set(summary["variance"][model][task]) == {"baseline", "discovery", "oracle", "wrong_persona"}
    instruments = [r["instrument"] for r in summary["validity"]]
    # control, simulator, clean turns, refused and empty responses, agreement, noise, length bias, position effect,
    # effective judges, calibration, variance parts, detectable difference
    assert len(instruments) == 12 and instruments[0].startswith("Negative control")
    assert "Clean simulated turns" in instruments  # every simulated reply screened (dialogue/hygiene.py)
    [ended] = [r for r in summary["validity"] if r["instrument"] == "Refused and empty responses"]
    assert ended["finding"].startswith("none of ")  # the mock answers every scenario
    assert 0 <= summary["simulator_flags"][model][task]["discovery"] <= 1
    assert any(i.startswith("Judge position effect") for i in instruments)
    assert any(i.startswith("Effective number of judges") for i in instruments)
    html = (tmp_path / "rep" / "report.html").read_text()
    assert 'id="validity"' in html and "Judge agreement" in html
