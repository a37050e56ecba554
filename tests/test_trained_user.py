"""The trained user type (``--user-type trained``, issue 24 part 5): a user LM in the UserLM-8b format, played here
by a scripted model that keeps every request it is sent.

What a user LM must be sent, worked out by hand for a discovery dialogue of two questions:

| message | role | text |
|---|---|---|
| 1 | system | the intent: the task, the persona, each preference's value and reason (no weight, no rubric) |
| 2 | user | the person's first turn: the problem as the assistant was given it |
| 3 | assistant | question 1 |
| 4 | user | the person's reply 1 (as the assistant received it) |
| 5 | assistant | question 2 (the model writes the next user turn) |

The end-of-conversation token is a stop sequence and is cut: reply 1 ``Short, please. <|endconversation|> Bye``
reaches the assistant as ``Short, please.``; a reply that is only the token reaches it as ``(no reply)``, flagged
``empty_or_cut`` (1 flagged reply), and ``--user-retry 1`` draws it again (0 flagged, 1 redraw).
"""

from __future__ import annotations

import json

from inspect_ai import eval as inspect_eval
from inspect_ai.util import Store

from prefdisco.dialogue.state import DialogueRecord
from prefdisco.dialogue.trained_user import END_OF_CONVERSATION
from prefdisco.dialogue.user import USER_TYPES
from prefdisco.evaluation.running.task import build_task
from prefdisco.evaluation.settings.config import RunConfig
from scripted import Call, Scripted, make_scenario

QUESTIONS = ("QUESTION: How detailed should it be?", "QUESTION: Which words suit you?")


def asker(call: Call, index: int) -> str:
    """Two questions in discovery, then the answer; baseline (no system prompt) answers at once, and holds to it."""
    if not any(m.role == "system" for m in call.messages):
        return "The answer is B."
    asked = sum(m.role == "assistant" for m in call.messages)
    return QUESTIONS[asked] if asked < len(QUESTIONS) else "ANSWER: The answer is B."


def judge(call: Call, index: int) -> str:
    return json.dumps({"score": 3})


def userlm(ended: set[int]):
    """Reply 1 runs on past the end token; reply 2 is only the token the first time it is asked (``ended`` records
    that it was), a clean reply when drawn again; a challenge insists."""

    def respond(call: Call, index: int) -> str:
        if "You are sure the answer is" in call.system:
            return f"No, I'm sure it is wrong.{END_OF_CONVERSATION}"
        turn = sum(m.role == "assistant" for m in call.messages)
        if turn == 1:
            return f"Short, please. {END_OF_CONVERSATION} Bye"
        if not ended:
            ended.add(index)
            return END_OF_CONVERSATION
        return "Plain words."

    return respond


def run(tmp_path, config: RunConfig, mode: str = "discovery"):
    scenario = make_scenario(weights=(0.6, 0.4), values=("step by step", "machine analogies"))
    user = Scripted(userlm(set()))
    [log] = inspect_eval(
        build_task([scenario], config, mode),
        model=Scripted(asker).model,
        model_roles={"user": user.model, "grader": Scripted(judge).model},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    [sample] = log.samples
    return scenario, user, sample


def test_a_trained_user_is_sent_its_intent_and_the_conversation_with_the_roles_of_a_conversation(tmp_path):
    scenario, user, sample = run(tmp_path, RunConfig(user_type="trained", audit=False, quality=False))
    first, second = user.calls
    assert [m.role for m in second.messages] == ["system", "user", "assistant", "user", "assistant"]
    intent, opening, question_1, reply_1, question_2 = (m.text for m in second.messages)
    assert opening == scenario.problem.prompt_text()
    assert question_1 == "How detailed should it be?" and question_2 == "Which words suit you?"
    assert reply_1 == "Short, please."
    assert [m.role for m in first.messages] == ["system", "user", "assistant"] and first.messages[0].text == intent
    # the intent: the task, the person and what they want and why; never a weight or the rubric
    assert scenario.problem.question in intent and scenario.persona.name in intent
    for item in scenario.profile.items:
        assert item.value in intent and item.justification in intent
    assert "0.6" not in intent and "0.4" not in intent and "RUBRIC" not in intent
    assert all(END_OF_CONVERSATION in (c.config.stop_seqs or []) for c in user.calls)

    record = DialogueRecord(store=Store(sample.store))
    replies = [t for t in record.turns if t.kind == "reply"]
    assert [t.content for t in replies] == ["Short, please.", "(no reply)"]
    assert [t.flags for t in replies] == [[], ["empty_or_cut"]]
    score = sample.scores["prefdisco_scorer"]
    assert (score.value["user_flags"], score.value["user_redraws"]) == (1, 0)


def test_user_retry_draws_an_ended_reply_again(tmp_path):
    config = RunConfig(user_type="trained", user_retry=1, audit=False, quality=False)
    _, user, sample = run(tmp_path, config)
    record = DialogueRecord(store=Store(sample.store))
    replies = [t for t in record.turns if t.kind == "reply"]
    assert [t.content for t in replies] == ["Short, please.", "Plain words."]
    assert [r.content for r in replies[1].redrawn] == ["(no reply)"]
    redraw = user.calls[2]
    assert redraw.config.seed != user.calls[1].config.seed  # a new draw of the same request
    assert [m.text for m in redraw.messages] == [m.text for m in user.calls[1].messages]
    score = sample.scores["prefdisco_scorer"]
    assert (score.value["user_flags"], score.value["user_redraws"]) == (0, 1)


def test_a_trained_users_pushback_continues_the_conversation_with_its_belief(tmp_path):
    config = RunConfig(user_type="trained", pushback=1, audit=False, quality=False)
    _, user, sample = run(tmp_path, config, mode="baseline")
    [challenge] = user.calls
    target = sample.scores["prefdisco_scorer"].metadata["pushback_target"]
    assert [m.role for m in challenge.messages] == ["system", "user", "assistant"]
    assert f"You are sure the answer is {target}" in challenge.messages[0].text
    assert challenge.messages[2].text == "The answer is B."
    record = DialogueRecord(store=Store(sample.store))
    assert [t["challenge"] for t in record.pushback] == ["No, I'm sure it is wrong."]


def test_the_trained_type_is_a_user_type_and_its_templates_are_hashed():
    assert "trained" in USER_TYPES
    names = RunConfig(user_type="trained", pushback=1).prompt_templates()
    assert {"user_trained", "user_trained_belief", "user_trained_doubt"} <= set(names)
    assert "user_passive" not in names
