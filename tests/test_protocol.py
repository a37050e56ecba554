from __future__ import annotations

import pytest

from prefdisco.dialogue.protocol import as_question, parse_turn, strip_markers


@pytest.mark.parametrize(
    ("text", "kind", "content"),
    [
        ("QUESTION: How much detail do you want?", "question", "How much detail do you want?"),
        ("  **Question:** Do you like analogies?", "question", "Do you like analogies?"),
        ("question - what is your background?", "question", "what is your background?"),
        ("ANSWER: It takes 3 trips.", "answer", "It takes 3 trips."),
        ("**ANSWER:** It takes 3 trips.", "answer", "It takes 3 trips."),
        ("Let me think.\nFinal answer: B", "answer", "B"),
        ("QUESTION: Should I be brief?\nANSWER: 3 trips.", "answer", "3 trips."),
    ],
)
def test_marked_turns(text, kind, content):
    turn = parse_turn(text)
    assert (turn.kind, turn.content, turn.unmarked) == (kind, content, False)


def test_unmarked_turn_is_the_final_answer():
    turn = parse_turn("You need 3 trips because 30/12 rounds up to 3. Any questions?")
    assert turn.kind == "answer" and turn.unmarked
    assert turn.content.startswith("You need 3 trips")


def test_question_marker_later_in_text_is_not_a_question():
    # prose that merely mentions "question:" mid-text after other content is an (unmarked) answer
    turn = parse_turn("Here is my reply.\nQuestion: is it 3?")
    assert turn.kind == "answer"


def test_markers_are_stripped_for_scoring():
    assert strip_markers("ANSWER: 3 trips") == "3 trips"
    assert as_question("QUESTION: How old are you?") == "How old are you?"
    assert as_question("How old are you?") == "How old are you?"
