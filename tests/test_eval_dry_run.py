"""``prefdisco eval --dry-run``: the planned calls, tokens and USD per role, before anything is spent.

The counts are checked against hand-counted plans (conditions x scenarios x trials x models, the question budget,
the judge kind and panel, the audit, the user type) and against what a real run of the same command makes on the
fault mock; the dry run itself makes no call and writes nothing.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from mock_openai import MockConfig, MockOpenAI, tagged_scenarios, write_scenarios
from prefdisco.dialogue.openings import oracle_preferences
from prefdisco.evaluation.estimate.plan import RunEstimate, estimate_run
from prefdisco.evaluation.estimate.text import render_estimate
from prefdisco.evaluation.settings.config import RunConfig
from prefdisco.prompts import render
from prefdisco.schema import Problem
from test_reliability import app, mock_env, run_eval  # noqa: F401  (app is a fixture)

SCENARIOS = tagged_scenarios(3)  # rubrics of 5, 4 and 5 criteria; letter answers (no correctness grader)
CRITERIA = 5 + 4 + 5


def plan(tmp_path: Path, scenarios=SCENARIOS, **settings: Any) -> RunEstimate:
    base: dict[str, Any] = {"models": ["m/a"], "user_model": "m/u", "grader_model": "m/g", "log_dir": tmp_path}
    config = RunConfig(**{**base, **settings})
    return estimate_run(scenarios, config)


def line(estimate: RunEstimate, role: str, part: str, model: str | None = None):
    found = [ln for ln in estimate.lines if ln.role == role and ln.part == part and model in (None, ln.model)]
    assert len(found) == 1, (role, part, model, estimate.lines)
    return found[0]


def test_counts_of_the_default_run_with_fixed_k(tmp_path):
    assert [len(s.rubric) for s in SCENARIOS] == [5, 4, 5]
    estimate = plan(tmp_path, fixed_k=[2])
    # per scenario: baseline 1, oracle 1, discovery 5 questions + the answer, fixed_k=2 2 questions + the answer
    assert line(estimate, "assistant", "baseline").calls == 3
    assert line(estimate, "assistant", "oracle").calls == 3
    assert line(estimate, "assistant", "discovery").calls == 3 * 6
    assert line(estimate, "assistant", "fixed_k=2").calls == 3 * 3
    assert line(estimate, "user", "discovery").calls == 3 * 5 and line(estimate, "user", "fixed_k=2").calls == 3 * 2
    judge = line(estimate, "grader", "judge")
    assert judge.calls == 4 * CRITERIA  # per_criterion: every criterion of each of the 4 conditions' responses
    assert judge.output_tokens == judge.bound == 16 * judge.calls  # the judge's max_tokens
    assert line(estimate, "grader", "audit").calls == 3 * 2  # the two dialogues per scenario
    assert line(estimate, "grader", "quality").calls == 4 * 3  # the first judge, once per response
    grader_parts = {ln.part for ln in estimate.lines if ln.role == "grader"}
    assert grader_parts == {"judge", "audit", "quality"}  # no mapper, no grading
    assert estimate.calls == 3 + 3 + 18 + 9 + 15 + 6 + 4 * CRITERIA + 6 + 4 * 3
    assert plan(tmp_path, fixed_k=[2], quality=False).calls == estimate.calls - 4 * 3  # --no-quality
    assert line(estimate, "user", "discovery").bound == 15 * 160  # the user's default reply budget


def test_counts_of_panel_repeats_epochs_models_targeted_structured_control(tmp_path):
    estimate = plan(
        tmp_path,
        models=["m/a", "m/b"],
        modes=["baseline", "discovery", "oracle", "wrong_persona"],
        fixed_k=[1],
        max_questions=3,
        user_type="targeted",
        judge="structured",
        judge_panel=["m/j2"],
        judge_repeats=2,
        epochs=2,
        audit=False,
    )
    for model in ("m/a", "m/b"):  # each model: 3 scenarios x 2 trials
        assert line(estimate, "assistant", "wrong_persona", model).calls == 6
        assert line(estimate, "assistant", "discovery", model).calls == 6 * 4  # 3 questions + the answer
        assert line(estimate, "assistant", "fixed_k=1", model).calls == 6 * 2
    samples = 3 * 2 * 2  # scenarios x trials x models
    assert line(estimate, "user", "discovery").calls == samples * 3
    assert line(estimate, "grader", "mapper", "m/g").calls == samples * (3 + 1)  # one mapping per question
    for judge in ("m/g", "m/j2"):  # structured: one call per response, each judge twice
        assert line(estimate, "grader", "judge", judge).calls == samples * 5 * 2
    assert not [ln for ln in estimate.lines if ln.part == "audit"]
    # the structured judge asks the general quality in the first judge's first call: no quality call of its own,
    # that judging's prompts longer by the quality criteria (once per response), the other judge's not
    assert not [ln for ln in estimate.lines if ln.part == "quality"]
    first, other = line(estimate, "grader", "judge", "m/g"), line(estimate, "grader", "judge", "m/j2")
    extra = (first.input_tokens - other.input_tokens) / (samples * 5)
    assert 150 < extra < 400, extra
    assert line(plan(tmp_path, judge="structured", quality=False), "grader", "judge").input_tokens < (
        line(plan(tmp_path, judge="structured"), "grader", "judge").input_tokens
    )
    per_criterion = plan(tmp_path, modes=["baseline"])
    assert line(per_criterion, "grader", "quality").calls == 3  # its own call, once per response
    assert estimate.role_calls("assistant") == 2 * 6 * (1 + 1 + 1 + 4 + 2)


def test_a_model_graded_answer_adds_the_correctness_grader_and_tools_plan_the_same_calls(tmp_path):
    first = SCENARIOS[0]
    data = {**first.problem.model_dump(exclude={"answer_spec"}), "benchmark": "simpleqa", "answer_type": "free_text"}
    graded = first.model_copy(update={"problem": Problem.model_validate(data)})
    estimate = plan(tmp_path, scenarios=[graded, *SCENARIOS[1:]])
    assert line(estimate, "grader", "correctness").calls == 3  # its 3 conditions
    text, tools = plan(tmp_path), plan(tmp_path, ask="tools")
    assert [(ln.part, ln.calls) for ln in tools.lines] == [(ln.part, ln.calls) for ln in text.lines]
    assert line(tools, "assistant", "discovery").input_tokens != line(text, "assistant", "discovery").input_tokens


def test_tokens_come_from_the_rendered_prompts_and_prices_give_usd(tmp_path):
    prices = {"m/a": {"input": 2.0, "output": 8.0}}
    estimate = plan(tmp_path, modes=["baseline", "oracle", "discovery"], max_tokens=100, prices=prices)
    problems = [s.problem.prompt_text() for s in SCENARIOS]
    baseline = line(estimate, "assistant", "baseline")
    assert baseline.input_tokens == sum(math.ceil(len(p) / 4) for p in problems)  # the problem alone
    assert baseline.output_tokens == baseline.bound == 3 * 100  # a typical answer (600) capped by --max-tokens
    oracle_chars = [
        len(render("assistant_oracle", preferences=oracle_preferences(s.profile), persona=s.persona.profile_text()))
        + len(p)
        for s, p in zip(SCENARIOS, problems, strict=True)
    ]
    assert line(estimate, "assistant", "oracle").input_tokens == sum(math.ceil(c / 4) for c in oracle_chars)
    assert line(estimate, "assistant", "discovery").output_tokens == 3 * (5 * 40 + 100)  # questions + answer
    assert baseline.usd == (baseline.input_tokens * 2.0 + baseline.output_tokens * 8.0) / 1_000_000
    assert line(estimate, "user", "discovery").usd is None  # m/u has no price
    text = render_estimate(estimate)
    assert text.splitlines()[0] == f"{estimate.calls} model calls"
    assert "USD" in text.splitlines()[1] and "no price for m/g, m/u" in text


@pytest.mark.slow
def test_dry_run_makes_no_call_writes_nothing_and_plans_what_the_run_makes(app, tmp_path, monkeypatch):  # noqa: F811
    """On the fault mock, whose discovery assistant asks exactly the budget's 5 questions (so the dialogue length
    is deterministic), the dry run's total is within 25 % of the calls the same command then makes."""
    scenarios = tagged_scenarios(4)
    bench = write_scenarios(tmp_path / "bench" / "scenarios.jsonl", scenarios)
    prices = tmp_path / "prices.json"
    command = ("--modes", "baseline,discovery,oracle", "--fixed-k", "2", "--prices", str(prices))
    run = tmp_path / "run"
    with MockOpenAI(MockConfig(questions=5)) as mock:
        mock_env(monkeypatch, mock, tmp_path)
        prices.write_text(json.dumps({f"openai-api/mock/m{mock.port}": {"input": 1.0, "output": 2.0}}))
        dry = run_eval(app, mock, bench, run, *command, "--dry-run")
        before = mock.stats()
        assert not run.exists()  # no run folder, no run.json, no log
        real = run_eval(app, mock, bench, run, *command)
        after = mock.stats()

    assert dry.exit_code == 0, dry.output
    assert before["received"] == 0 and before["completions"] == 0
    lines = dry.output.splitlines()
    planned = int(lines[0].removesuffix(" model calls"))
    assert lines[0] == f"{planned} model calls"
    assert real.exit_code == 0, real.output
    made = after["completions"]
    assert abs(planned - made) <= 0.25 * made, (planned, made)
    rubric = sum(len(s.rubric) for s in scenarios)
    # assistant, user, judge, audit, quality (one per response)
    assert made == 4 * (1 + 1 + 6 + 3) + 4 * (5 + 2) + 4 * rubric + 4 * 2 + 4 * 4
    assert lines[1].split() == ["role", "part", "model", "calls", "input", "tokens", "output", "tokens", "bound", "USD"]
    roles = dict.fromkeys(("assistant", "user", "grader"), 0)
    for row in lines[2:]:
        cells = row.split()
        if cells[0] in roles:
            roles[cells[0]] += int(cells[3])
            assert cells[-1] not in ("-", "0.0000"), row  # one model for every role: each line is priced
    assert roles["user"] == after["by_role"]["user"]
    assert roles["grader"] == after["by_role"]["judge"] + after["by_role"]["audit"] + after["by_role"]["quality"]
    assert roles["assistant"] == after["by_role"]["assistant"]


def test_the_dry_run_refuses_what_the_run_refuses_with_the_same_line(app, tmp_path, monkeypatch):  # noqa: F811
    """A folder holding another run, another split, a bad --ray address: the dry run exits 2 with the run's own
    error line, writes nothing, and a folder it accepts is one the run starts in."""
    bench = write_scenarios(tmp_path / "bench" / "scenarios.jsonl", tagged_scenarios(2))
    other = write_scenarios(tmp_path / "other" / "scenarios.jsonl", tagged_scenarios(3))
    run = tmp_path / "run"
    with MockOpenAI() as mock:
        mock_env(monkeypatch, mock, tmp_path)
        first = run_eval(app, mock, bench, run, "--modes", "baseline")
        assert first.exit_code == 0, first.output
        recorded = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
        cases = [
            ((other, run, "--modes", "baseline"), "holds a run of a different scenario set"),
            ((bench, run, "--modes", "baseline", "--user-type", "cooperative"), 'user_type = "passive", not "cooper'),
            ((bench, run, "--modes", "baseline", "--workers", "2"), "holds a single-process run"),
            ((bench, tmp_path / "fresh", "--ray", "nowhere"), "--ray 'nowhere': expected local, auto or the ADDRESS"),
        ]
        for args, message in cases:
            dry = run_eval(app, mock, *args, "--dry-run")
            assert dry.exit_code == 2 and message in " ".join(dry.output.split()), (args, dry.output)
            real = run_eval(app, mock, *args)
            assert real.exit_code == 2, real.output
            assert [ln for ln in dry.output.splitlines() if "error" in ln] == [
                ln for ln in real.output.splitlines() if "error" in ln
            ]
        assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == recorded  # nothing written
        assert not (tmp_path / "fresh").exists()
        # the folder it holds, with the same settings: the dry run passes, and the run resumes with no call
        assert run_eval(app, mock, bench, run, "--modes", "baseline", "--dry-run").exit_code == 0
        calls = mock.stats()["completions"]
        assert run_eval(app, mock, bench, run, "--modes", "baseline").exit_code == 0
        assert mock.stats()["completions"] == calls


@pytest.mark.slow
@pytest.mark.parametrize("pushback", [0, 1])
def test_the_dry_run_of_a_sessions_run_plans_the_carry_arms_and_the_real_run_makes_those_calls(
    app,  # noqa: F811
    tmp_path,
    monkeypatch,
    pushback,
):
    """Two sessions of two positions: per position a discovery dialogue per carry arm (5 questions, the answer), a
    notes call in carry_notes but after a session's last position; the carried prompts grow. On the mock (5
    questions asked) the run makes them all. With ``--pushback 1`` every dialogue adds a challenge and a reply, the
    carry arms' too (issue 31, defect 4: the dry run planned the carry arms without their pushback, its own copy of
    their rules)."""
    from test_sessions_eval import session_bench

    bench, sessions, _ = session_bench(tmp_path)
    command = ("--sessions", str(sessions), "--modes", "discovery,carry_transcript,carry_notes")
    command += ("--pushback", str(pushback))
    run = tmp_path / "run"
    with MockOpenAI(MockConfig(questions=5)) as mock:
        mock_env(monkeypatch, mock, tmp_path)
        dry = run_eval(app, mock, bench, run, *command, "--dry-run")
        assert dry.exit_code == 0, dry.output
        assert mock.stats()["received"] == 0 and not run.exists()
        real = run_eval(app, mock, bench, run, *command)
        made = mock.stats()["completions"]
    assert real.exit_code == 0, real.output
    table = [r.split() for r in dry.output.splitlines()[2:]]
    rows = {(c[0], c[1]): c for c in table if c and c[0] in ("assistant", "user", "grader")}
    calls = {key: int(cells[3]) for key, cells in rows.items()}
    turns = 6 + pushback  # 5 questions, the answer, the replies to pushback
    assert calls[("assistant", "discovery")] == calls[("assistant", "carry_transcript")] == 4 * turns
    # notes after position 1 of each session, none after its last (as the RL session environment asks them)
    assert calls[("assistant", "carry_notes")] == 4 * turns and calls[("assistant", "notes")] == 2
    assert calls[("user", "carry_transcript")] == calls[("user", "carry_notes")] == 4 * (5 + pushback)
    tokens = {key: int(cells[4]) for key, cells in rows.items()}
    assert tokens[("assistant", "carry_transcript")] > tokens[("assistant", "carry_notes")]
    assert tokens[("assistant", "carry_notes")] > tokens[("assistant", "discovery")]
    planned = int(dry.output.splitlines()[0].removesuffix(" model calls"))
    assert planned == made  # the mock asks the whole budget: the plan is exact
