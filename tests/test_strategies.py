"""Strategy solvers (``prefdisco/checklist``, ``prefdisco/infogain``) and their comparison.

One small fitted prior (family ``alpha``, five training scenarios written as a benchmark folder), scripted models
for the assistant, the simulated user and the grader, and every choice worked out by hand from the counts below.

Training profiles (one problem each):  t1 {A, B, C}, t2 {A, B}, t3 {A, D}, t4 {C, D}, t5 {B, D}
with A = Analogies, B = Brevity, C = Context, D = Depth (alphabetical, so ties by name go A, B, C, D). Of n = 5:

    P(A) = P(B) = P(D) = 3/5, P(C) = 2/5;  P(A,B) = 2/5, every other pair 1/5.

Most frequent values: A "many analogies" (2 of 3), B "short" (2 of 3), C "real-world context" (2 of 2),
D "deep" (2 of 3).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai._util.registry import registry_lookup
from inspect_ai.dataset import MemoryDataset
from typer.testing import CliRunner

import prefdisco.cli as cli
from prefdisco.analysis.strategies.compare import read_run, strategy_table
from prefdisco.benchio import write_bench
from prefdisco.dialogue.scenario import scenario_sample
from prefdisco.dialogue.strategies import check_strategy_scenarios, checklist, infogain, learn
from prefdisco.dialogue.strategy_record import StrategyRecord, strategy_task_metadata
from prefdisco.errors import UserError
from prefdisco.evaluation.running.task import build_task
from prefdisco.evaluation.settings.config import RunConfig
from prefdisco.policies.choice import binary_entropy, expected_reduction
from prefdisco.policies.fit import fit_source
from prefdisco.policies.model import read_policy, write_policy
from prefdisco.results.logs import results_from_logs
from prefdisco.schema import Attribute, PreferenceItem, PreferenceProfile, Problem, RubricCriterion, Scenario
from prefdisco.scoring.scorer import prefdisco_scorer
from scripted import Call, Scripted, constant, make_persona

A, B, C, D = "Analogies", "Brevity", "Context", "Depth"
QUESTION_MARK = "What you want to find out about: "


def scenario(sid: str, profile: dict[str, str], weights: tuple[float, ...] | None = None, bench: str = "alpha"):
    weights = weights or tuple([1 / len(profile)] * len(profile))
    items = [
        PreferenceItem(attribute=a, value=v, weight=w, description=f"PROFILE-DESC {a}")
        for (a, v), w in zip(profile.items(), weights, strict=True)
    ]
    rubric = [
        RubricCriterion(attribute=a, preferred_value=v, description=f"{a}?", levels={i: f"L{i}" for i in range(1, 6)})
        for a, v in profile.items()
    ]
    problem = Problem(
        id=sid,
        benchmark=bench,
        question=f"PROBLEM-{sid}: trips for 30 cars, 12 a trip?",
        answer="3",
        answer_type="integer",
    )
    return Scenario(
        id=sid, problem=problem, persona=make_persona(), profile=PreferenceProfile(items=items), rubric=rubric
    )


TRAIN = [
    scenario("t1", {A: "many analogies", B: "short", C: "real-world context"}),
    scenario("t2", {A: "many analogies", B: "short"}),
    scenario("t3", {A: "one analogy", D: "deep"}),
    scenario("t4", {C: "real-world context", D: "deep"}),
    scenario("t5", {B: "very short", D: "step by step"}),
]
H1 = scenario("h1", {A: "lots of analogies", C: "everyday context"}, (0.7, 0.3))  # held out, no D
H2 = scenario("h2", {D: "very deep", B: "terse"}, (0.5, 0.5))  # held out, has D


@pytest.fixture
def policy_path(tmp_path: Path) -> str:
    bench = tmp_path / "bench"
    catalogue = [
        Attribute(name=n, category="communication", description=f"CATALOGUE {n} meaning", value_space=["lo", "hi"])
        for n in (A, B, C, D)
    ]
    write_bench(bench, TRAIN, [make_persona()], catalogue)
    path = tmp_path / "policy.json"
    write_policy(fit_source(bench, fraction=1.0), path)
    return str(path)


# ---- scripted models ----------------------------------------------------------------------------------------


def assistant_reply(call: Call, i: int) -> str:
    """Words a strategy question from the attribute in its prompt; answers by condition otherwise."""
    if QUESTION_MARK in call.text:
        attribute = call.text.split(QUESTION_MARK, 1)[1].split(" — ", 1)[0]
        return f"QUESTION: Tell me about {attribute.lower()} for you?"
    if "you believe the following" in call.system:
        return "ANSWER: STRAT 3 trips."
    if "how much it matters to them" in call.system:
        return "ORACLE 3 trips."
    return "BASE 3 trips."


def grader_reply(call: Call, i: int) -> str:
    """Maps a targeted user's question to the profile names it contains; judges by the response's tag."""
    text = call.text
    if "The assistant's question:" in text:
        listed = text.split("(name: what it means):", 1)[1].split("The assistant's question:", 1)[0]
        names = [line[2:].split(":", 1)[0] for line in listed.strip().splitlines()]
        question = text.split("The assistant's question:", 1)[1].split("List the name", 1)[0].lower()
        return json.dumps({"about": [n for n in names if n.lower() in question] or ["none"]})
    response = text.split("<response>", 1)[-1]
    score = 5 if "ORACLE" in response else 4 if "STRAT" in response else 2
    return json.dumps({"score": score})


def strategy_task(solver, scenarios, strategy: str, k: int, name: str) -> Task:
    return Task(
        name=name,
        dataset=MemoryDataset([scenario_sample(s) for s in scenarios]),
        solver=solver,
        scorer=prefdisco_scorer(audit=False),
        metadata={"prefdisco_mode": "discovery", "prefdisco_fixed_k": None, **strategy_task_metadata(strategy, k)},
    )


def run(task: Task, log_dir: Path, user: Scripted | None = None):
    assistant, grader = Scripted(assistant_reply), Scripted(grader_reply)
    user = user or Scripted(constant("Yes, that matters to me."))
    [log] = inspect_eval(
        task,
        model=assistant.model,
        model_roles={"user": user.model, "grader": grader.model},
        log_dir=str(log_dir),
        display="none",
    )
    return log, assistant, user


def wording_calls(assistant: Scripted) -> list[Call]:
    return [c for c in assistant.calls if QUESTION_MARK in c.text]


def asked_attributes(assistant: Scripted) -> list[str]:
    return [c.text.split(QUESTION_MARK, 1)[1].split(" — ", 1)[0] for c in wording_calls(assistant)]


# ---- the hand computation of information gain ----------------------------------------------------------------


def test_the_hand_computed_information_gains(policy_path):
    prior = read_policy(Path(policy_path)).family("alpha")
    h = binary_entropy
    # no answer yet: H = 3·H(.6) + H(.4). Asking D: present (.6) leaves A, B, C at 1/3 each; absent (.4) settles
    # A and B at (0.6 − 0.2)/0.4 = 1 and leaves C at (0.4 − 0.2)/0.4 = 0.5
    now = 3 * h(0.6) + h(0.4)
    assert expected_reduction(prior, {}, D) == pytest.approx(now - (0.6 * 3 * h(1 / 3) + 0.4 * 1.0))  # 1.8309
    # asking A: present leaves B at 2/3, C and D at 1/3; absent leaves B, C at 0.5 and settles D at 1
    assert expected_reduction(prior, {}, A) == pytest.approx(now - (0.6 * 3 * h(1 / 3) + 0.4 * 2.0))  # 1.4309
    # asking C: present leaves A, B, D at 0.5; absent leaves them at 2/3
    assert expected_reduction(prior, {}, C) == pytest.approx(now - (0.4 * 3.0 + 0.6 * 3 * h(2 / 3)))  # 1.0309
    # so the first question is about D (B is A's mirror image: 1.4309)
    # after D absent: A, B settled at 1, C at 0.5. Asking C removes its whole bit; asking A (certainly present)
    # moves C's odds by odds(P(C|A) = 1/3) / odds(0.4) = 0.75, to 3/7, leaving H(3/7)
    absent = {D: False}
    assert expected_reduction(prior, absent, C) == pytest.approx(1.0)
    assert expected_reduction(prior, absent, A) == pytest.approx(1.0 - h(3 / 7))  # 0.0148
    # after D absent and C present only the settled A and B are left: no gain either way, A by name
    assert expected_reduction(prior, {D: False, C: True}, A) == pytest.approx(0.0)
    # after D present: A, B, C at 1/3. Asking A (q = 1/3): present gives B odds 1.5·(1/3)·(4/3) → 0.4 and C odds
    # (2/3)·0.75·0.75 → 3/11; absent gives B odds 1.5·(1/3)·(2/3) → 0.25 and C odds (2/3)·0.75·1.5 → 3/7
    present = {D: True}
    gain_a = 3 * h(1 / 3) - (1 / 3 * (h(0.4) + h(3 / 11)) + 2 / 3 * (h(0.25) + h(3 / 7)))
    # asking C (q = 1/3): present gives A, B odds 1.5·(1/3)·(2/3) → 0.25 each; absent 1.5·(1/3)·(4/3) → 0.4 each
    gain_c = 3 * h(1 / 3) - (1 / 3 * 2 * h(0.25) + 2 / 3 * 2 * h(0.4))
    assert expected_reduction(prior, present, A) == pytest.approx(gain_a)  # 0.9518
    assert expected_reduction(prior, present, C) == pytest.approx(gain_c)  # 0.9194
    assert gain_a > gain_c  # so A (tied with its mirror B, first by name)


# ---- the solvers in a run ----------------------------------------------------------------------------------


def test_the_solvers_are_registered():
    assert registry_lookup("solver", "prefdisco/checklist") is checklist
    assert registry_lookup("solver", "prefdisco/infogain") is infogain


def test_checklist_asks_the_k_most_likely_attributes_in_order(policy_path, tmp_path):
    task = strategy_task(checklist(policy=policy_path, k=3, user_type="targeted"), [H1], "checklist", 3, "cl")
    log, assistant, _ = run(task, tmp_path / "run")
    assert log.status == "success", log.error
    # P(A) = P(B) = P(D) = 0.6 > P(C) = 0.4: A, B, D by name, whatever the answers
    assert asked_attributes(assistant) == [A, B, D]
    sample = log.samples[0]
    record = sample.store_as(StrategyRecord)
    assert (record.strategy, record.k, record.family, record.asked) == ("checklist", 3, "alpha", [A, B, D])
    assert record.answers == {A: True, B: False, D: False}  # the targeted user revealed A only
    # C's odds (2/3) times 0.75 (A present: P(C|A) = 1/3), 1.5 (B absent: 0.5), 1.5 (D absent: 0.5) = 1.125
    assert [(i.attribute, i.value, i.confirmed) for i in record.inferred] == [
        (A, "many analogies", True),
        (C, "real-world context", False),
    ]
    assert record.inferred[1].probability == pytest.approx(1.125 / 2.125)
    assert (record.precision, record.recall) == (1.0, 1.0)
    score = sample.scores["prefdisco_scorer"]
    # only the reply about A revealed anything: weight 0.7 of the profile, 1 of 3 questions hit, the first
    assert score.value["n_questions"] == 3
    assert score.value["elicited_weight"] == pytest.approx(0.7)
    assert (score.value["elicited_count"], score.value["first_hit_turn"]) == (1, 1)
    assert score.value["question_hit_rate"] == pytest.approx(1 / 3)
    assert score.value["pref_align"] == pytest.approx(4.0)  # the final response was STRAT's
    turns = score.metadata["turns"]
    assert [(t["kind"], t["revealed"], t["mapping"]) for t in turns] == [
        ("question", None, None),
        ("reply", [A], "attributes"),
        ("question", None, None),
        ("reply", [], "none"),
        ("question", None, None),
        ("reply", [], "none"),
        ("answer", None, None),
    ]
    assert turns[-1]["content"] == "STRAT 3 trips."  # markers stripped


def test_the_model_under_test_words_every_question_and_answers_from_the_inferred_profile(policy_path, tmp_path):
    task = strategy_task(checklist(policy=policy_path, k=3, user_type="targeted"), [H1], "checklist", 3, "cl")
    log, assistant, user = run(task, tmp_path / "run")
    calls = wording_calls(assistant)
    assert len(calls) == 3 and len(assistant.calls) == 4  # three wordings and the final response
    for call, name in zip(calls, (A, B, D), strict=True):
        assert len(call.messages) == 1 and call.messages[0].role == "user"
        assert "PROBLEM-h1" in call.text and f"{QUESTION_MARK}{name} — CATALOGUE {name} meaning" in call.text
        assert "PROFILE-DESC" not in call.text and "lots of analogies" not in call.text  # nothing of the profile
    questions = [t["content"] for t in log.samples[0].scores["prefdisco_scorer"].metadata["turns"][::2][:3]]
    assert questions == [f"Tell me about {n.lower()} for you?" for n in (A, B, D)]  # the model's words, unmarked
    # the targeted user was called for the question its mapping hit (A), with the model's own question
    assert [c.messages[-1].text for c in user.calls] == ["Tell me about analogies for you?"]
    final = assistant.calls[-1]
    assert final.messages[0].role == "system"
    assert "- Analogies (CATALOGUE Analogies meaning): many analogies [confirmed]" in final.system
    assert "- Context (CATALOGUE Context meaning): real-world context [likely]" in final.system
    assert "Brevity" not in final.system and "Depth" not in final.system
    assert "lots of analogies" not in final.system  # the true profile never reaches the assistant
    assert [m.role for m in final.messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert final.messages[1].text.startswith("PROBLEM-h1")
    assert final.messages[2].text == "Tell me about analogies for you?"
    assert final.messages[3].text == "Yes, that matters to me."


def test_infogain_picks_what_the_hand_computation_picks_after_each_answer(policy_path, tmp_path):
    task = strategy_task(infogain(policy=policy_path, k=3, user_type="targeted"), [H1], "infogain", 3, "ig")
    log, assistant, _ = run(task, tmp_path / "h1")
    assert log.status == "success", log.error
    # D first; H1 has no D, so A and B are settled and C is asked; then A (zero gain, tied with B, by name)
    assert asked_attributes(assistant) == [D, C, A]
    record = log.samples[0].store_as(StrategyRecord)
    assert record.answers == {D: False, C: True, A: True}
    # B is settled at 1 by D absent (unasked, not confirmed): inferred {A, B, C}, two of them true. In floating
    # point (0.6 − 0.2) / 0.4 is a hair below 1, so B follows the two confirmed attributes
    assert [(i.attribute, i.confirmed) for i in record.inferred] == [(A, True), (C, True), (B, False)]
    assert record.inferred[2].probability == pytest.approx(1.0)
    assert record.precision == pytest.approx(2 / 3) and record.recall == 1.0
    value = log.samples[0].scores["prefdisco_scorer"].value
    assert value["elicited_weight"] == pytest.approx(1.0) and value["first_hit_turn"] == 2
    assert value["question_hit_rate"] == pytest.approx(2 / 3)

    # H2 has D: after D present the gain of A (0.9518) beats C's (0.9194); A ties B, first by name
    task = strategy_task(infogain(policy=policy_path, k=2, user_type="targeted"), [H2], "infogain", 2, "ig2")
    log, assistant, _ = run(task, tmp_path / "h2")
    assert asked_attributes(assistant) == [D, A]
    assert log.samples[0].store_as(StrategyRecord).answers == {D: True, A: False}


def test_a_user_that_records_nothing_confirms_each_asked_attribute(policy_path, tmp_path):
    # K defaults to the run's budget (max_questions 2); the passive user does not say what it revealed
    task = strategy_task(checklist(policy=policy_path, max_questions=2), [H1], "checklist", 2, "cl")
    log, assistant, user = run(task, tmp_path / "run", Scripted(constant("Sure.")))
    assert asked_attributes(assistant) == [A, B]
    assert [c.messages[-1].text for c in user.calls] == [f"Tell me about {n.lower()} for you?" for n in (A, B)]
    record = log.samples[0].store_as(StrategyRecord)
    assert record.answers == {A: True, B: True} and record.k == 2
    # C: odds (2/3)·0.75·0.75 → 3/11; D: odds 1.5·(1/3)·(1/3) → 1/7; neither reaches 0.5
    assert [i.attribute for i in record.inferred] == [A, B]
    assert (record.precision, record.recall) == (0.5, 0.5)
    value = log.samples[0].scores["prefdisco_scorer"].value
    assert value["n_questions"] == 2 and value["elicited_weight"] is None  # no audit, no record: not measured


def test_the_presence_rule():
    answers: dict[str, bool] = {}
    learn(answers, D, None)  # a user that records nothing: confirmed
    learn(answers, A, ())  # revealed nothing: absent
    learn(answers, B, (C, B))  # revealed the asked one and another
    learn(answers, C, ())  # C was already known present; asking again settles it by the reply
    assert answers == {D: True, A: False, B: True, C: False}
    assert list(answers) == [D, A, B, C]


def test_a_training_scenario_or_an_unknown_family_is_refused(policy_path, tmp_path):
    with pytest.raises(UserError, match=r"scenario t1 \(problem alpha/t1\) is in the policy's training split"):
        check_strategy_scenarios(policy_path, [H1, TRAIN[0]])
    with pytest.raises(UserError, match=r"scenario b1 is of task family 'beta', which the policy has no prior"):
        check_strategy_scenarios(policy_path, [scenario("b1", {A: "x"}, bench="beta")], strict=True)
    assert check_strategy_scenarios(policy_path, [H1, H2]).families["alpha"].n_scenarios == 5
    # the solver guards its own sample too
    task = strategy_task(checklist(policy=policy_path, k=1), [TRAIN[0]], "checklist", 1, "cl")
    log, assistant, _ = run(task, tmp_path / "run")
    assert log.status == "error" and "training split" in log.error.message
    assert assistant.calls == []
    with pytest.raises(UserError, match=r"-S k: expected a question budget 0\.\.5, got 6"):
        checklist(policy=policy_path, k=6)
    with pytest.raises(UserError, match="no such policy file"):
        infogain(policy=str(tmp_path / "missing.json"))


def test_an_unknown_family_falls_back_to_the_pooled_prior_says_so_and_records_it(policy_path, tmp_path, capsys):
    beta = scenario("b1", {C: "real-world context", D: "deep"}, bench="beta")
    check_strategy_scenarios(policy_path, [beta, H1])
    [line] = capsys.readouterr().err.splitlines()
    assert "no prior for task family beta (it has alpha)" in line and "--strict-policy refuses" in line
    # the pooled prior of a one-family policy is that family's prior: the checklist asks alpha's top 2, in order
    # (P: A .6, B .6, D .6, C .4; ties by name)
    task = strategy_task(checklist(policy=policy_path, k=2), [beta], "checklist", 2, "cl")
    log, assistant, _ = run(task, tmp_path / "run")
    assert log.status == "success", log.error
    assert asked_attributes(assistant) == [A, B]
    [row] = results_from_logs(tmp_path / "run").results.to_dict("records")
    assert (row["strategy"], row["strategy_prior"]) == ("checklist", "pooled")
    # a scenario of a known family records its own family's prior
    task = strategy_task(checklist(policy=policy_path, k=2), [H1], "checklist", 2, "cl2")
    run(task, tmp_path / "run2")
    [row] = results_from_logs(tmp_path / "run2").results.to_dict("records")
    assert row["strategy_prior"] == "family"
    # --strict-policy (-S strict_policy=true) keeps the refusal, in the solver too
    task = strategy_task(checklist(policy=policy_path, k=2, strict_policy=True), [beta], "checklist", 2, "cl3")
    log, assistant, _ = run(task, tmp_path / "run3")
    assert log.status == "error" and "task family 'beta'" in log.error.message and assistant.calls == []


# ---- results columns and the comparison ---------------------------------------------------------------------


def test_the_results_table_carries_the_strategy_columns(policy_path, tmp_path):
    task = strategy_task(infogain(policy=policy_path, k=3, user_type="targeted"), [H1], "infogain", 3, "ig")
    run(task, tmp_path / "run")
    [row] = results_from_logs(tmp_path / "run").results.to_dict("records")
    assert (row["mode"], row["strategy"], row["strategy_k"], row["n_questions"]) == ("discovery", "infogain", 3, 3)
    assert json.loads(row["strategy_asked"]) == [D, C, A]
    assert json.loads(row["inferred_attributes"]) == [A, C, B]  # most probable first
    assert row["inferred_precision"] == pytest.approx(2 / 3) and row["inferred_recall"] == 1.0
    # a row of the model's own discovery leaves them empty
    run(build_task([H1], RunConfig(audit=False), "baseline"), tmp_path / "base")
    [base] = results_from_logs(tmp_path / "base").results.to_dict("records")
    assert base["strategy"] is None and base["inferred_precision"] is None


def rows(mode: str, values: dict[str, float | None], **extra) -> list[dict]:
    return [
        {"model": "m", "family": "mock", "task": "alpha", "scenario_id": sid, "mode": mode, "pref_align": v,
         "correct": 1, "n_questions": 0, "judge_invalid": 0, "input_tokens": 1, "output_tokens": 1, **extra}
        for sid, v in values.items()
    ]  # fmt: skip


def write_run(folder: Path, frame_rows: list[dict]) -> Path:
    folder.mkdir(parents=True)
    frame = pd.DataFrame(frame_rows)
    if "fixed_k" not in frame.columns:
        frame["fixed_k"] = None
    frame.to_csv(folder / "results.csv", index=False)
    return folder


def hand_runs(tmp_path: Path) -> list[Path]:
    naive = write_run(
        tmp_path / "naive",
        rows("baseline", {"s1": 2.0, "s2": 3.0})
        + rows("oracle", {"s1": 4.0, "s2": 5.0})
        + [
            {**r, "fixed_k": 1, "elicited_weight": w}
            for r, w in zip(rows("fixed_k", {"s1": 2.5, "s2": 3.5}), (0.2, 0.4), strict=True)
        ]
        + [{**r, "fixed_k": 2, "elicited_weight": 0.5} for r in rows("fixed_k", {"s1": 3.0, "s2": 3.0})]
        + [
            {**r, "elicited_weight": w}
            for r, w in zip(rows("discovery", {"s1": 3.0, "s2": 4.0}), (0.6, 0.8), strict=True)
        ],
    )
    strategy = {"strategy": "checklist", "strategy_k": 1}
    # one run folder per strategy and K (rows of two K would share a results key: model, task, scenario, mode, trial)
    checklist_k1 = write_run(
        tmp_path / "checklist_k1",
        [
            {**r, **strategy, "elicited_weight": w, "inferred_precision": p, "inferred_recall": 0.5}
            for r, w, p in zip(rows("discovery", {"s1": 3.0, "s2": 4.0}), (0.5, 0.7), (1.0, 0.5), strict=True)
        ],
    )
    checklist_k2 = write_run(
        tmp_path / "checklist_k2",
        [  # s1 in two trials (averaged), s2 failed
            {**r, "strategy": "checklist", "strategy_k": 2, "elicited_weight": w, "epoch": e}
            for r, w, e in zip(
                rows("discovery", {"s1": 3.5}) + rows("discovery", {"s1": 2.5}), (0.4, 0.6), (1, 2), strict=True
            )
        ]
        + [{**rows("discovery", {"s2": None})[0], "strategy": "checklist", "strategy_k": 2, "failed": 1, "epoch": 1,
            "elicited_weight": 0.9}],
    )  # fmt: skip
    infogain_run = write_run(
        tmp_path / "infogain",
        [  # s2's judgement invalid (no PrefAlign) but not failed: its elicited weight counts
            {**r, "strategy": "infogain", "strategy_k": 1, "elicited_weight": w}
            for r, w in zip(rows("discovery", {"s1": 4.0, "s2": None}), (0.7, 0.9), strict=True)
        ],
    )
    return [naive, checklist_k1, checklist_k2, infogain_run]


def test_the_comparison_table_by_hand(tmp_path):
    paths = hand_runs(tmp_path)
    table = strategy_table(pd.concat([read_run(p) for p in paths], ignore_index=True))
    got = {
        (r.strategy, None if pd.isna(r.k) else int(r.k)): (r.n, r.n_both, r.normalign, r.mean_elicited_weight)
        for r in table.itertuples()
    }
    # baseline 2.5 and oracle 4.5 over s1, s2: NormAlign = 100 · (mean − 2.5) / 2
    assert got[("naive", 1)] == (2, 2, pytest.approx(25.0), pytest.approx(0.3))
    assert got[("naive", 2)] == (2, 2, pytest.approx(25.0), pytest.approx(0.5))
    assert got[("checklist", 1)] == (2, 2, pytest.approx(50.0), pytest.approx(0.6))
    # K = 2: only s1 (trials 3.5 and 2.5 → 3.0; weights 0.4, 0.6 → 0.5) against its own ends 2 and 4
    assert got[("checklist", 2)] == (1, 1, pytest.approx(50.0), pytest.approx(0.5))
    # s1 alone is scored: (4 − 2) / (4 − 2); both weights count (0.7, 0.9)
    assert got[("infogain", 1)] == (1, 1, pytest.approx(100.0), pytest.approx(0.8))
    assert got[("discovery", None)] == (2, 2, pytest.approx(50.0), pytest.approx(0.7))
    assert list(zip(table["strategy"], table["k"].astype(object).where(table["k"].notna(), None), strict=True)) == [
        ("naive", 1), ("naive", 2), ("checklist", 1), ("checklist", 2), ("infogain", 1), ("discovery", None)
    ]  # fmt: skip
    cl = table.set_index(["strategy", "k"]).loc[("checklist", 1)]
    assert cl["mean_precision_at_k"] == pytest.approx(0.75) and cl["mean_recall_at_k"] == pytest.approx(0.5)
    assert table.set_index(["strategy", "k"]).loc[("checklist", 2)]["n_elicited"] == 1
    assert table.loc[table["strategy"] == "naive", "mean_precision_at_k"].isna().all()


def test_compare_strategies_writes_the_csv_and_the_figure(tmp_path):
    cli._register()
    paths = hand_runs(tmp_path)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli.app, ["compare-strategies", *map(str, paths), "--out", str(out)])
    assert result.exit_code == 0, result.output
    written = pd.read_csv(out / "strategies.csv")
    assert len(written) == 6 and written.loc[written["strategy"] == "infogain", "normalign"].item() == 100.0
    assert (out / "fig_strategies.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    again = CliRunner().invoke(cli.app, ["compare-strategies", str(paths[0]), str(paths[0]), "--out", str(out)])
    assert again.exit_code == 2 and "given twice" in again.output


def test_a_malformed_strategy_row_is_one_line_naming_it(tmp_path):
    bad = write_run(tmp_path / "bad", [{**rows("fixed_k", {"s1": 3.0})[0], "fixed_k": 1, "strategy": "checklist",
                                        "strategy_k": 1}])  # fmt: skip
    with pytest.raises(
        UserError, match=r"results.csv: data row 1: column strategy: is 'checklist' but mode is fixed_k"
    ):
        read_run(bad)
    empty_k = write_run(tmp_path / "nok", [{**rows("discovery", {"s1": 3.0})[0], "strategy": "infogain"}])
    with pytest.raises(UserError, match=r"data row 1: column strategy_k: is empty"):
        read_run(empty_k)


def test_a_strategy_run_from_its_logs_compares_with_the_naive_run(policy_path, tmp_path):
    """End to end: baseline and oracle logged by the built-in task, infogain by the strategy solver."""
    run(build_task([H1], RunConfig(audit=False), "baseline"), tmp_path / "naive")
    run(build_task([H1], RunConfig(audit=False), "oracle"), tmp_path / "naive")
    task = strategy_task(infogain(policy=policy_path, k=2, user_type="targeted"), [H1], "infogain", 2, "ig")
    run(task, tmp_path / "ig")
    table = strategy_table(pd.concat([read_run(tmp_path / "naive"), read_run(tmp_path / "ig")], ignore_index=True))
    [row] = table.to_dict("records")
    # judged 2 (BASE), 5 (ORACLE), 4 (STRAT): 100 · (4 − 2) / (5 − 2); asked D (absent), C (present, weight 0.3)
    assert (row["strategy"], row["k"], row["n_both"]) == ("infogain", 2, 1)
    assert row["normalign"] == pytest.approx(200 / 3) and row["mean_elicited_weight"] == pytest.approx(0.3)
    # after D absent and C present, A and B are settled at 1: inferred {A, B, C}, A and C true
    assert row["mean_precision_at_k"] == pytest.approx(2 / 3) and row["mean_recall_at_k"] == 1.0
    assert math.isclose(row["mean_questions"], 2.0)


def test_an_inferred_attribute_without_a_value_reads_back_from_the_log_store():
    """inspect leaves None fields out of a sample's stored JSON: an attribute the prior never saw (value None)
    must still read back (found by a run on the embedded model, where the results reader failed)."""
    from inspect_ai.log import EvalSample

    from prefdisco.dialogue.strategy_record import StrategyRecord

    sample = EvalSample(
        id="s1", epoch=1, input="q", target="",
        store={"StrategyRecord:inferred": [{"attribute": "Self-checks", "probability": 1.0, "confirmed": True}]},
    )  # fmt: skip
    [item] = sample.store_as(StrategyRecord).inferred
    assert (item.attribute, item.value, item.confirmed) == ("Self-checks", None, True)
