"""A synthetic world with planted effects: the proof that the validity instruments measure what they claim.

Scripted assistant, simulated user and judge, each with one planted behaviour:

* the assistant answers B and then echoes every preferred value it has seen — in its system prompt (oracle: the
  scenario's own profile; wrong_persona: the decoy's) or in the user's replies (discovery); in discovery it asks
  one question, about explanation depth;
* the targeted user's question mapper (the grader) maps that question to "Explanation depth" only, and the user
  model replies with exactly the values its system prompt shows it;
* the judge scores 5 when a criterion's preferred value appears in the response and 2 otherwise.

Four scenarios (two problems × two personas), criteria weights 0.5 (depth), 0.3 (analogies), 0.2 (vocabulary).
By hand:

* baseline: no value → 2 on every criterion → PrefAlign 2.0;
* oracle: every own value → 5.0;
* discovery: only the depth value was revealed → 0.5·5 + 0.3·2 + 0.2·2 = 3.5;
  NormAlign = 100·(3.5 − 2)/(5 − 2) = 50; elicited_weight = 0.5, elicited_count 1, question_hit_rate 1,
  first_hit_turn 1, volunteered_count 0;
* wrong_persona: the decoy is the other persona of the same problem; s-a/s-b share only the depth value →
  0.5·5 + 0.5·2 = 3.5, s-c/s-d only the analogies value → 0.3·5 + 0.7·2 = 2.9; control gap per scenario 1.5, 1.5,
  2.1, 2.1 → mean 1.8; a bootstrap mean of four draws is 1.5 + 0.15·k, k ~ Binomial(4, ½), and P(k = 0) = 1/16 >
  2.5 %, so the 95 % interval is [1.5, 2.1]: not flagged.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from prefdisco.analysis.report import make_report
from prefdisco.evaluation.config import RunConfig
from prefdisco.evaluation.evalset import build_tasks
from prefdisco.results.logs import results_from_logs, write_tables
from prefdisco.schema import Problem
from scripted import Call, Scripted, make_persona, make_scenario, run_eval_set

P1 = Problem(
    id="prob-1", benchmark="demo", domain="math", question="A ferry carries 12 cars per trip. How many trips for 30?",
    choices=["2", "3", "4", "5"], answer="B", answer_type="letter",
)  # fmt: skip
P2 = Problem(
    id="prob-2", benchmark="demo", domain="math", question="What is 9 / 3?", choices=["2", "3", "4", "5"],
    answer="B", answer_type="letter",
)  # fmt: skip
WORLD = {
    "s-a": (P1, "Ada Okoye", ("alpha-depth", "alpha-analogy", "alpha-vocab")),
    "s-b": (P1, "Bo Lindqvist", ("alpha-depth", "beta-analogy", "beta-vocab")),
    "s-c": (P2, "Cai Moreno", ("gamma-depth", "gamma-analogy", "gamma-vocab")),
    "s-d": (P2, "Dee Tanaka", ("delta-depth", "gamma-analogy", "delta-vocab")),
}
ORACLE_LINE = re.compile(r"^- .*?: (.+?) \[importance", re.MULTILINE)
USER_LINE = re.compile(r"^- [^:\n]+: (.+?)\. Why:", re.MULTILINE)


def world_scenarios():
    return [
        make_scenario(sid, persona=make_persona(f"persona-{sid}", name), values=values, problem=problem)
        for sid, (problem, name, values) in WORLD.items()
    ]


def assistant(call: Call, i: int) -> str:
    if "QUESTION:" in call.system:  # discovery: one question, then the values the user revealed
        replies = [m.text for m in call.messages if m.role == "user"][1:]
        if not replies:
            return "QUESTION: How deep should the explanation go?"
        return "ANSWER: B. " + " ".join(replies)
    return "ANSWER: B. " + "; ".join(ORACLE_LINE.findall(call.system))  # oracle / wrong_persona; baseline: none


def user(call: Call, i: int) -> str:
    """Exactly the values the targeted user was shown."""
    return "What I want: " + "; ".join(USER_LINE.findall(call.system))


def grader(call: Call, i: int) -> str:
    text = call.text
    if "The assistant's question:" in text:  # the targeted user's question mapper
        question = text.split("The assistant's question:")[1].split("List the name")[0]
        return json.dumps({"about": ["Explanation depth"] if "deep" in question else ["vague"]})
    preferred = re.search(r"The person's preferred value: (.+)", text).group(1).strip()
    response = re.search(r"<response>\n(.*)\n</response>", text, re.DOTALL).group(1)
    return json.dumps({"score": 5 if preferred in response else 2})


def test_the_instruments_measure_the_planted_effects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    log_dir = tmp_path / "run"
    config = RunConfig(
        models=["mockllm/model"], user_model="mockllm/model", grader_model="mockllm/model", log_dir=log_dir,
        modes=["baseline", "discovery", "oracle", "wrong_persona"], user_type="targeted", audit=False,
    )  # fmt: skip
    config.validate()
    models = Scripted(assistant), Scripted(user), Scripted(grader)
    assert run_eval_set(build_tasks(world_scenarios(), config), log_dir, *models)
    tables = results_from_logs(log_dir)
    write_tables(tables, log_dir)
    results = tables.results.set_index(["scenario_id", "mode"])
    assert (results["failed"] == 0).all()

    # PrefAlign per scenario and condition, as computed by hand
    wrong = {"s-a": 3.5, "s-b": 3.5, "s-c": 2.9, "s-d": 2.9}
    for sid in WORLD:
        assert results.at[(sid, "baseline"), "pref_align"] == pytest.approx(2.0)
        assert results.at[(sid, "oracle"), "pref_align"] == pytest.approx(5.0)
        assert results.at[(sid, "discovery"), "pref_align"] == pytest.approx(3.5)
        assert results.at[(sid, "wrong_persona"), "pref_align"] == pytest.approx(wrong[sid])
        # what the dialogue elicited: one question, about the weight-0.5 attribute, answered with its value only
        row = results.loc[(sid, "discovery")]
        assert (row["n_questions"], row["elicited_weight"], row["elicited_count"]) == (1, pytest.approx(0.5), 1)
        assert (row["question_hit_rate"], row["first_hit_turn"], row["volunteered_count"]) == (1.0, 1, 0)
    # the targeted user was shown the depth value only: the other values never reached a user call
    shown = "\n".join(c.system for c in models[1].calls)
    assert "alpha-depth" in shown and not any(v in shown for v in ("alpha-analogy", "beta-vocab", "gamma-analogy"))

    report, _ = make_report(log_dir, tmp_path / "report", n_boot=200)
    s = report.summary
    [model] = s["models"]
    assert s["normalign"][model]["demo"] == pytest.approx(50.0)
    assert s["control_gap"][model]["demo"] == pytest.approx(1.8)
    assert s["control_gap_ci"][model]["demo"] == pytest.approx([1.5, 2.1])
    assert s["control_gap_flagged"][model]["demo"] is False
    assert s["elicitation"][model]["demo"]["discovery"]["elicited_weight"] == pytest.approx(0.5)
    assert s["elicitation"][model]["demo"]["discovery"]["question_hit_rate"] == pytest.approx(1.0)
    # the Validity section reads the planted world right
    readings = {r["instrument"]: r for r in s["validity"]}
    control = readings["Negative control (oracle − wrong_persona PrefAlign)"]
    assert control["reading"].startswith("in every cell the judge scores the true profile above another user's")
    assert "Validity" in (tmp_path / "report" / "report.md").read_text()


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
    assert len(instruments) == 8 and instruments[0].startswith("Negative control")
    html = (tmp_path / "rep" / "report.html").read_text()
    assert 'id="validity"' in html and "Judge agreement" in html
