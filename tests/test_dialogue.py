"""The three conditions, the simulated user and the judge, run through inspect with scripted models."""

from __future__ import annotations

import json
import math

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage
from inspect_ai.util import Store

from prefdisco.dialogue.budget import QuestionBudget
from prefdisco.dialogue.state import DialogueRecord
from prefdisco.dialogue.user import USERS, UserReply
from prefdisco.evaluation.running.task import build_task
from prefdisco.evaluation.settings.config import RunConfig
from scripted import Scripted, constant, listed_criteria, make_persona, make_scenario, replies, structured_reply


def run(scenarios, mode, assistant, user=None, grader=None, tmp_path=None, cache_scope=None, k=None, **settings):
    user = user or Scripted(constant("I like short answers."))
    grader = grader or Scripted(constant('{"score": 4}'))
    task = build_task(scenarios, RunConfig(**settings), mode, k, cache_scope=cache_scope)
    [log] = inspect_eval(
        task,
        model=assistant.model,
        model_roles={"user": user.model, "grader": grader.model},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    return log


def score_of(sample):
    return sample.scores["prefdisco_scorer"]


def test_discovery_stops_at_five_questions(tmp_path):
    assistant = Scripted(constant("QUESTION: How do you like explanations?"))
    user = Scripted(constant("Short, please."))
    log = run([make_scenario()], "discovery", assistant, user, tmp_path=tmp_path)
    value = score_of(log.samples[0]).value
    assert value["n_questions"] == 5
    assert len(user.calls) == 5
    # five questions, then one more assistant turn which is the final answer whatever it says
    assert len(assistant.calls) == 6
    assert "used all 5 of your questions" in assistant.calls[5].messages[-1].text
    assert score_of(log.samples[0]).answer == "How do you like explanations?"


def test_discovery_stops_on_answer(tmp_path):
    assistant = Scripted(replies("QUESTION: Analogies?", "QUESTION: Depth?", "ANSWER: It takes 3 trips."))
    log = run([make_scenario()], "discovery", assistant, tmp_path=tmp_path)
    score = score_of(log.samples[0])
    assert score.value["n_questions"] == 2
    assert len(assistant.calls) == 3
    assert score.answer == "It takes 3 trips."
    turns = score.metadata["turns"]
    assert [t["kind"] for t in turns] == ["question", "reply", "question", "reply", "answer"]


def test_model_that_just_answers_is_scored_on_its_answer(tmp_path):
    assistant = Scripted(constant("The answer is B: 3 trips."))
    log = run([make_scenario()], "discovery", assistant, tmp_path=tmp_path)
    score = score_of(log.samples[0])
    assert score.value["n_questions"] == 0
    assert score.value["correct"] == 1
    assert score.metadata["unmarked_turns"] == 1


def test_fixed_k_asks_exactly_k(tmp_path):
    # the model tries to answer early; in fixed-K its first K turns are questions regardless
    assistant = Scripted(replies("ANSWER: 3", "QUESTION: Depth?", "QUESTION: Tone?", "ANSWER: 3 trips"))
    user = Scripted(constant("Fine."))
    log = run([make_scenario()], "fixed_k", assistant, user, tmp_path=tmp_path, k=3)
    assert score_of(log.samples[0]).value["n_questions"] == 3
    assert len(user.calls) == 3
    assert len(assistant.calls) == 4
    assert "question 1 of 3" in assistant.calls[1].messages[-1].text


def test_user_simulator_receives_only_what_it_should(tmp_path):
    scenario = make_scenario()
    assistant = Scripted(replies("QUESTION: How detailed should I be?", "QUESTION: Analogies?", "ANSWER: 3"))
    user = Scripted(replies("Very detailed.", "Yes, machines."))
    run([scenario], "discovery", assistant, user, tmp_path=tmp_path)
    first, second = user.calls
    system = first.system
    # persona, problem and preference values are there ...
    assert scenario.persona.name in system
    assert scenario.problem.question in system
    for item in scenario.profile.items:
        assert item.value in system and item.justification in system
    # ... but never weights, the rubric, or the assistant's instructions
    assert "RUBRIC" not in first.text and "0.5" not in system and "importance" not in system.lower()
    assert "QUESTION:" not in first.text
    # the simulator sees only the questions and its own replies
    assert [m.role for m in second.messages] == ["system", "user", "assistant", "user"]
    assert [m.text for m in second.messages[1:]] == [
        "How detailed should I be?",
        "Very detailed.",
        "Analogies?",
    ]


def test_oracle_prompt_has_profile_but_never_rubric(tmp_path):
    scenario = make_scenario()
    assistant = Scripted(constant("It takes 3 trips (B)."))
    run([scenario], "oracle", assistant, tmp_path=tmp_path)
    [call] = assistant.calls
    for item in scenario.profile.items:
        assert item.attribute in call.system and item.value in call.system
    assert "RUBRIC" not in call.text


def test_baseline_sees_only_the_problem(tmp_path):
    scenario = make_scenario()
    assistant = Scripted(constant("B"))
    run([scenario], "baseline", assistant, tmp_path=tmp_path)
    [call] = assistant.calls
    assert [m.role for m in call.messages] == ["user"]
    assert scenario.problem.question in call.text and "B. 3" in call.text
    assert not any(item.value in call.text for item in scenario.profile.items)


def test_two_personas_on_one_problem_are_two_calls(tmp_path):
    a = make_scenario("s-a", persona=make_persona("p-a", "Ada Okoye"))
    b = make_scenario("s-b", persona=make_persona("p-b", "Ben Lund"), values=("brief", "none", "jargon ok"))
    assistant = Scripted(constant("B"))
    log = run([a, b], "baseline", assistant, tmp_path=tmp_path)
    assert len(assistant.calls) == 2
    assert {s.id for s in log.samples} == {"s-a", "s-b"}


def test_judge_sees_one_criterion_and_computes_pref_align(tmp_path):
    scenario = make_scenario()

    def grade(call, i):
        # score by attribute so PrefAlign is checkable: depth 5, analogies 2, vocabulary 3
        for name, score in (("Explanation depth", 5), ("Use of analogies", 2), ("Technical vocabulary", 3)):
            if f"The preference: {name}" in call.text:
                return json.dumps({"score": score})
        raise AssertionError("judge prompt names no criterion")

    grader = Scripted(grade)
    log = run([scenario], "baseline", Scripted(constant("ANSWER: B")), grader=grader, tmp_path=tmp_path, quality=False)
    score = score_of(log.samples[0])
    assert score.value["pref_align"] == pytest.approx(0.5 * 5 + 0.3 * 2 + 0.2 * 3)
    assert score.value["judge_invalid"] == 0
    judge_calls = [c for c in grader.calls if "The preference:" in c.text]
    assert len(judge_calls) == 3
    for call in judge_calls:
        named = [c.attribute for c in scenario.rubric if f"The preference: {c.attribute}" in call.text]
        assert len(named) == 1
        others = [c for c in scenario.rubric if c.attribute != named[0]]
        assert not any(f"RUBRIC-LEVEL-1 for {o.attribute}" in call.text for o in others)
        assert scenario.persona.name not in call.text
        assert "SECRET-JUSTIFICATION" not in call.text
        assert "ANSWER:" not in call.text  # protocol markers stripped before judging
        assert call.config.temperature == 0.0
        assert call.config.response_schema is not None


def test_unparseable_judgement_is_retried_then_invalid_never_a_number(tmp_path):
    scenario = make_scenario()
    seen: dict[str, int] = {}

    def grade(call, i):
        if "The preference: Explanation depth" in call.text:
            return "I cannot decide."  # always garbage
        if "The preference: Use of analogies" in call.text:
            seen["analogies"] = seen.get("analogies", 0) + 1
            return "hmm" if seen["analogies"] == 1 else '{"score": 2}'  # garbage once, then valid
        return '{"score": 3}'

    grader = Scripted(grade)
    log = run([scenario], "baseline", Scripted(constant("B")), grader=grader, tmp_path=tmp_path)
    score = score_of(log.samples[0])
    judgements = {j["attribute"]: j for j in score.metadata["judgements"]}
    depth = judgements["Explanation depth"]
    assert depth["valid"] is False and depth["score"] is None and depth["attempts"] == 3
    assert judgements["Use of analogies"]["attempts"] == 2 and judgements["Use of analogies"]["score"] == 2
    assert score.value["judge_invalid"] == 1
    # PrefAlign over the valid weights only: (0.3*2 + 0.2*3) / 0.5
    assert score.value["pref_align"] == pytest.approx((0.3 * 2 + 0.2 * 3) / 0.5)


def test_all_judgements_invalid_gives_no_pref_align(tmp_path):
    log = run(
        [make_scenario()],
        "baseline",
        Scripted(constant("B")),
        grader=Scripted(constant("nope")),
        tmp_path=tmp_path,
    )
    value = score_of(log.samples[0]).value
    assert value["pref_align"] is None and value["judge_invalid"] == 3
    # "not measured" stays out of the metric: no valid judgement means no mean, not a mean of 0
    metrics = {k.split("/")[-1]: m.value for k, m in log.results.scores[0].metrics.items()}
    assert math.isnan(metrics["pref_align_mean"])
    assert metrics["judge_invalid_total"] == 3


def test_structured_judge_scores_all_criteria_in_one_call(tmp_path):
    planted = {"Explanation depth": 5, "Use of analogies": 2, "Technical vocabulary": 3}
    grader = Scripted(lambda call, i: structured_reply(call, planted))  # by name, wherever the shuffle lists it
    settings = {"judge": "structured", "quality": False}  # the rubric's call alone
    log = run([make_scenario()], "baseline", Scripted(constant("B")), grader=grader, tmp_path=tmp_path, **settings)
    value = score_of(log.samples[0]).value
    assert value["pref_align"] == pytest.approx(0.5 * 5 + 0.3 * 2 + 0.2 * 3)
    [call] = grader.calls  # baseline: no dialogue, so no audit call either
    schema = call.config.response_schema.json_schema
    assert schema.required == ["c1", "c2", "c3"]
    assert schema.properties["c1"].enum == [1, 2, 3, 4, 5]
    assert "SECRET-JUSTIFICATION" not in call.text and "Ada Okoye" not in call.text


def test_structured_judge_retries_partial_replies_and_marks_the_rest_invalid(tmp_path):
    grader = Scripted(replies('{"c1": 5}', '{"c1": 4, "c2": 9}', "garbage"))
    settings = {"judge": "structured", "quality": False}  # the rubric's calls alone
    log = run([make_scenario()], "baseline", Scripted(constant("B")), grader=grader, tmp_path=tmp_path, **settings)
    score = score_of(log.samples[0])
    judgements = {j["attribute"]: j for j in score.metadata["judgements"]}
    assert len(grader.calls) == 3
    first, second, third = listed_criteria(grader.calls[0])  # c1, c2, c3 in the order the (shuffled) call lists them
    assert judgements[first]["score"] == 5  # the first attempt's valid c1 is kept
    assert judgements[second]["valid"] is False  # 9 is not a level
    assert judgements[third]["valid"] is False
    assert score.value["judge_invalid"] == 2
    weight = {"Explanation depth": 0.5, "Use of analogies": 0.3, "Technical vocabulary": 0.2}[first]
    assert score.value["pref_align_coverage"] == pytest.approx(weight)
    # one valid criterion: PrefAlign is its score when it covers at least half of the weight, else unscored
    assert score.value["pref_align"] == (pytest.approx(5.0) if weight >= 0.5 else None)


def test_user_audit_counts_replies_that_reveal_unasked_preferences(tmp_path):
    scenario = make_scenario()

    def flags(*on):
        return {f"a{i}": i in on for i in (1, 2, 3)}  # a1 depth, a2 analogies, a3 vocabulary

    no_errors = dict.fromkeys(("hallucinated", "contradicted", "helped_task", "broke_character"), False)
    audit = {
        "t1": {"asked": flags(1), "revealed": flags(1), **no_errors},
        "t2": {"asked": flags(2), "revealed": flags(2, 3), **no_errors},
    }

    def grade(call, i):
        return json.dumps(audit) if "simulated user" in call.text else '{"score": 3}'

    assistant = Scripted(replies("QUESTION: How deep?", "QUESTION: Analogies?", "ANSWER: 3 trips"))
    log = run([scenario], "discovery", assistant, grader=Scripted(grade), tmp_path=tmp_path)
    score = score_of(log.samples[0])
    assert score.value["user_turns"] == 2 and score.value["user_leaks"] == 1
    assert score.metadata["user_audit"]["leaked_attributes"] == [[], ["Technical vocabulary"]]
    metrics = {k.split("/")[-1]: m.value for k, m in log.results.scores[0].metrics.items()}
    assert metrics["user_leak_rate"] == pytest.approx(0.5)


def test_user_audit_schema_is_bounded_and_invalid_replies_are_not_counted(tmp_path):
    from prefdisco.scoring.audit import audit_reply_model
    from prefdisco.structured import parse_reply, response_schema

    schema = response_schema(audit_reply_model(3, 2)).json_schema
    assert schema.required == ["t1", "t2"]
    assert schema.properties["t1"].properties["asked"].required == ["a1", "a2", "a3"]
    with pytest.raises(ValueError):  # incomplete flags
        parse_reply('{"t1": {"asked": {"a1": true}}}', audit_reply_model(3, 1))
    grader = Scripted(lambda call, i: "not json" if "simulated user" in call.text else '{"score": 3}')
    assistant = Scripted(replies("QUESTION: How deep?", "ANSWER: 3 trips"))
    log = run([make_scenario()], "discovery", assistant, grader=grader, tmp_path=tmp_path)
    score = score_of(log.samples[0])
    assert score.value["user_turns"] is None and score.value["user_leaks"] is None
    assert score.metadata["user_audit"]["audit_valid"] is False


def test_cooperative_user_is_told_to_volunteer_one_preference(tmp_path):
    user = Scripted(constant("Detailed, and I like analogies."))
    assistant = Scripted(replies("QUESTION: How deep?", "ANSWER: 3"))
    run([make_scenario()], "discovery", assistant, user, tmp_path=tmp_path, user_type="cooperative")
    assert "volunteer at most ONE" in user.calls[0].system
    passive = Scripted(constant("Detailed."))
    run(
        [make_scenario()],
        "discovery",
        Scripted(replies("QUESTION: How deep?", "ANSWER: 3")),
        passive,
        tmp_path=tmp_path,
    )
    assert "Do not volunteer preferences" in passive.calls[0].system


def test_cache_is_scoped_per_scenario_and_replays_only_the_same_sample(tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    a = make_scenario("s-a", persona=make_persona("p-a", "Ada Okoye"))
    b = make_scenario("s-b", persona=make_persona("p-b", "Ben Lund"), values=("brief", "none", "jargon ok"))
    first = Scripted(constant("B"))
    run([a, b], "baseline", first, tmp_path=tmp_path / "r1", cache_scope="run-1")
    # identical baseline prompts of two personas are still two calls: the cache never crosses scenarios
    assert len(first.calls) == 2
    again = Scripted(constant("B"))
    run([a, b], "baseline", again, tmp_path=tmp_path / "r2", cache_scope="run-1")
    assert len(again.calls) == 0  # same run scope, same samples: replayed, nothing paid twice
    other_run = Scripted(constant("B"))
    run([a, b], "baseline", other_run, tmp_path=tmp_path / "r3", cache_scope="run-2")
    assert len(other_run.calls) == 2


def record_of(sample) -> DialogueRecord:
    """The DialogueRecord the solver left in the sample's store, read back from the log."""
    return DialogueRecord(store=Store(sample.store))


def test_budget_rule_by_hand():
    free, forced = QuestionBudget(2), QuestionBudget(2, forced=True)
    assert [free.must_ask(n) for n in range(3)] == [False, False, False]
    assert [forced.must_ask(n) for n in range(3)] == [True, True, False]
    assert [free.must_answer(n) for n in range(3)] == [False, False, True]
    assert free.note("Short.", 1) == "Short."  # discovery: the reply alone until the budget is used up
    assert "question 1 of 2" in forced.note("Short.", 1)
    for budget in (free, forced):
        last = budget.note("Short.", 2)
        assert last.startswith("Short.") and "used all 2 of your questions" in last


def test_record_says_why_each_dialogue_ended(tmp_path):
    cases = [
        ("discovery", {}, replies("QUESTION: Depth?", "ANSWER: 3"), "answered", 1, 0),
        ("discovery", {}, constant("It is 3."), "unmarked", 0, 1),
        ("discovery", {"max_questions": 1}, constant("QUESTION: Depth?"), "budget", 1, 0),
        ("fixed_k", {"k": 2}, replies("Q1?", "Q2?", "ANSWER: 3"), "budget", 2, 0),
        ("baseline", {}, constant("3"), "single_turn", 0, 0),
    ]
    for i, (mode, args, script, reason, questions, unmarked) in enumerate(cases):
        log = run([make_scenario()], mode, Scripted(script), tmp_path=tmp_path / str(i), **args)
        [sample] = log.samples
        record = record_of(sample)
        assert (record.stop_reason, record.n_questions, record.unmarked_turns) == (reason, questions, unmarked), mode
        assert score_of(sample).value["n_questions"] == questions
        assert score_of(sample).answer == record.final_response
        assert record.condition == ("fixed_k2" if mode == "fixed_k" else mode)


def test_zero_question_budget_makes_the_first_turn_the_answer(tmp_path):
    user = Scripted(constant("Short."))
    log = run(
        [make_scenario()], "discovery", Scripted(constant("QUESTION: Depth?")), user, tmp_path=tmp_path, max_questions=0
    )
    score = score_of(log.samples[0])
    assert score.value["n_questions"] == 0 and len(user.calls) == 0
    assert score.answer == "Depth?"


def test_a_new_user_type_is_one_class_and_one_registry_line(tmp_path, monkeypatch):
    class EchoUser:  # a rule-based user: no model call
        def __init__(self, model, scenario, cache=False):
            self.history: list[ChatMessage] = []

        async def reply(self, question: str) -> UserReply:
            return UserReply(f"echo {len(self.history)}: {question}", None)

    monkeypatch.setitem(USERS, "echo", EchoUser)
    user = Scripted(constant("unused"))
    assistant = Scripted(replies("QUESTION: Depth?", "ANSWER: 3"))
    log = run([make_scenario()], "discovery", assistant, user, tmp_path=tmp_path, user_type="echo")
    assert len(user.calls) == 0
    assert assistant.calls[1].messages[-1].text == "echo 0: Depth?"
    assert record_of(log.samples[0]).turns[1].content == "echo 0: Depth?"


def test_unknown_user_type_fails_when_the_task_is_built():
    with pytest.raises(ValueError, match="chatty"):
        build_task([make_scenario()], RunConfig(user_type="chatty"), "discovery")
