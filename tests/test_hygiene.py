"""The simulated-user hygiene checks: each planted fault is caught with its reason, and clean replies pass."""

from __future__ import annotations

import pytest

from prefdisco.dialogue.hygiene import FAULTS, check_reply, shares_run
from scripted import make_scenario

LEVEL_5 = "The response explains every step in full detail and checks each calculation against the question."
_BASE = make_scenario()  # "A ferry carries 12 cars per trip. How many trips for 30 cars?"
SCENARIO = _BASE.model_copy(
    update={
        "rubric": [
            _BASE.rubric[0].model_copy(update={"levels": {**_BASE.rubric[0].levels, 5: LEVEL_5}}),
            *_BASE.rubric[1:],
        ]
    }
)

CLEAN = [
    "Very detailed, please.",
    "Yes, machine ones. I fix engines all day, so gears and pistons make sense to me.",
    "I like short, concrete explanations with one worked example, please.",
    "Plain words, please. I never liked jargon at school.",
    "Step by step is best for me; I lose track when things jump ahead.",
    "I'd rather you kept it brief, I'm between shifts.",
    "Honestly I have no particular view on that.",
]

FAULTY = [
    ("role_inversion", "I think the answer is 3 trips, since 30 divided by 12 is 2.5."),
    ("role_inversion", "First, you need to divide 30 by 12 and round up."),
    ("role_inversion", "As your assistant, you should answer with a table."),
    ("restart", "Hello! How can I help you today?"),
    ("restart", "A ferry carries 12 cars per trip. How many trips for 30 cars? That's my question."),
    ("reasoning_leak", "As an AI, I don't have personal preferences."),
    ("reasoning_leak", "Let's think step by step about what I would want."),
    ("empty_or_cut", "(no reply)"),
    ("profile_echo", "Explanation depth: step by step. Use of analogies: machine analogies."),
    ("profile_echo", "Use analogies please, importance 0.30 for me."),
    ("profile_echo", "I want a response that explains every step in full detail and checks each one."),
]


@pytest.mark.parametrize("reply", CLEAN)
def test_a_clean_reply_is_not_flagged(reply):
    assert check_reply(reply, reply, SCENARIO).reasons == ()


@pytest.mark.parametrize(("fault", "reply"), FAULTY)
def test_each_planted_fault_is_caught_with_its_reason(fault, reply):
    flags = check_reply(reply, reply, SCENARIO)
    assert fault in flags.reasons and flags.flagged
    assert set(flags.reasons) <= set(FAULTS)


def test_reasoning_in_the_raw_reply_and_a_cut_off_reply_are_caught_though_the_visible_text_is_clean():
    visible = "Short answers, please."
    assert check_reply(visible, "<think>they want me to act tired</think>Short answers, please.", SCENARIO).reasons == (
        "reasoning_leak",
    )
    assert check_reply(visible, visible, SCENARIO, cut_off=True).reasons == ("empty_or_cut",)


def test_a_run_of_words_is_counted_whole_words_case_and_punctuation_aside():
    source = "one two three four five six seven eight nine"
    assert shares_run("... Two, THREE four five six seven eight nine!", source, 8)
    assert not shares_run("two three four five six seven eight", source, 8)  # seven words
    assert not shares_run("anything", "too short", 8)
