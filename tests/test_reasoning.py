"""Reasoning models: their thinking stays in their own history and reaches no reader (user, parser, judge, audit)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    Content,
    ContentReasoning,
    ContentText,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
)

from prefdisco.dialogue.visible import strip_reasoning, visible_text
from prefdisco.evaluation.running.task import build_task
from prefdisco.evaluation.settings.config import RunConfig
from scripted import Scripted, constant, make_scenario

Turn = str | list[Content]


@dataclass
class Thinker:
    """A mock model replying with ``turns`` in order (the last one repeated); a turn may hold reasoning blocks."""

    turns: Sequence[Turn]
    calls: list[list[ChatMessage]] = field(default_factory=list)
    model: Model = field(init=False)

    def __post_init__(self) -> None:
        def outputs(
            input: list[ChatMessage], tools: object, tool_choice: object, config: GenerateConfig
        ) -> ModelOutput:
            self.calls.append(list(input))
            content = self.turns[min(len(self.calls) - 1, len(self.turns) - 1)]
            output = ModelOutput.from_content(model="mockllm", content=content)
            output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # offline: no tiktoken
            return output

        self.model = get_model("mockllm/model", custom_outputs=outputs, memoize=False)


def thought(secret: str, text: str, signature: str | None = None) -> list[Content]:
    return [ContentReasoning(reasoning=secret, signature=signature), ContentText(text=text)]


def run(mode, assistant, user=None, grader=None, tmp_path=None, k=None, **settings):
    user = user or Scripted(constant("I like short answers."))
    grader = grader or Scripted(constant('{"score": 4}'))
    [log] = inspect_eval(
        build_task([make_scenario()], RunConfig(**settings), mode, k),
        model=assistant.model,
        model_roles={"user": user.model, "grader": grader.model},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    return log


def answer_of(log) -> str:
    return log.samples[0].scores["prefdisco_scorer"].answer


def reasoning_blocks(message: ChatMessage) -> list[ContentReasoning]:
    content = message.content if isinstance(message.content, list) else []
    return [c for c in content if isinstance(c, ContentReasoning)]


def test_reasoning_blocks_stay_in_the_history_and_reach_no_reader(tmp_path):
    assistant = Thinker(
        [
            thought("THOUGHT-1: they may like analogies", "QUESTION: Do you like analogies?", signature="sig-1"),
            thought("THOUGHT-2", "<think>THOUGHT-INLINE</think>ANSWER: It takes 3 trips."),
        ]
    )
    user, grader = Scripted(constant("Yes, machines.")), Scripted(constant('{"score": 4}'))
    log = run("discovery", assistant, user, grader, tmp_path=tmp_path)

    # turn 2 is sent the turn-1 message as the provider returned it: reasoning block and signature included
    [earlier] = [m for m in assistant.calls[1] if isinstance(m, ChatMessageAssistant)]
    [block] = reasoning_blocks(earlier)
    assert (block.reasoning, block.signature) == ("THOUGHT-1: they may like analogies", "sig-1")
    assert earlier.text == "QUESTION: Do you like analogies?"
    # so is the log's view of the dialogue
    logged = [m for m in log.samples[0].messages if isinstance(m, ChatMessageAssistant)]
    assert [len(reasoning_blocks(m)) for m in logged] == [1, 1]

    # the user, the judged answer, the judge and the audit see none of it
    [user_call] = user.calls
    assert user_call.messages[-1].text == "Do you like analogies?"
    assert "THOUGHT" not in user_call.text
    assert answer_of(log) == "It takes 3 trips."
    assert grader.calls and not any("THOUGHT" in c.text for c in grader.calls)
    turns = log.samples[0].scores["prefdisco_scorer"].metadata["turns"]
    assert not any("THOUGHT" in t["content"] for t in turns)


def test_inline_think_is_kept_for_the_model_and_stripped_for_the_user(tmp_path):
    assistant = Thinker(["<think>INLINE-1 ask about depth</think>\nQUESTION: How deep should I go?", "ANSWER: 3"])
    user = Scripted(constant("Not deep."))
    run("discovery", assistant, user, tmp_path=tmp_path)
    [earlier] = [m for m in assistant.calls[1] if isinstance(m, ChatMessageAssistant)]
    assert earlier.text.startswith("<think>INLINE-1")
    assert user.calls[0].messages[-1].text == "How deep should I go?"
    assert "INLINE-1" not in user.calls[0].text


@pytest.mark.parametrize(
    ("turn", "questions"),
    [
        ("<think>QUESTION: should I ask about depth?</think>It takes 3 trips.", 0),
        ("<think>ANSWER: 3 would do</think>QUESTION: How deep?", 1),
        (thought("QUESTION: maybe ask first?", "It takes 3 trips."), 0),
    ],
)
def test_a_marker_inside_reasoning_is_not_read(tmp_path, turn, questions):
    user = Scripted(constant("Not deep."))
    log = run("discovery", Thinker([turn, "ANSWER: It takes 3 trips."]), user, tmp_path=tmp_path)
    value = log.samples[0].scores["prefdisco_scorer"].value
    assert value["n_questions"] == questions and len(user.calls) == questions
    assert answer_of(log) == "It takes 3 trips."


def test_fixed_k_question_is_its_visible_text(tmp_path):
    user = Scripted(constant("Fine."))
    run("fixed_k", Thinker(["<think>SECRET</think>QUESTION: Depth?", "ANSWER: 3"]), user, tmp_path=tmp_path, k=1)
    assert user.calls[0].messages[-1].text == "Depth?"


@pytest.mark.parametrize("mode", ["baseline", "oracle"])
def test_single_reply_is_judged_on_its_visible_text(tmp_path, mode):
    grader = Scripted(constant('{"score": 4}'))
    assistant = Thinker([thought("SECRET-BLOCK", "<think>SECRET-INLINE B is wrong</think>The answer is B.")])
    log = run(mode, assistant, grader=grader, tmp_path=tmp_path)
    assert answer_of(log) == "The answer is B."
    assert log.samples[0].scores["prefdisco_scorer"].value["correct"] == 1
    assert not any("SECRET" in c.text for c in grader.calls)
    assert reasoning_blocks(log.samples[0].messages[-1])  # the conversation keeps it


def test_a_reasoning_user_model_shows_the_assistant_only_its_reply(tmp_path):
    user = Thinker([thought("USER-THOUGHT", "<think>USER-INLINE I am secretly impatient</think>Short, please.")])
    assistant = Scripted(lambda call, i: "QUESTION: How detailed?" if i == 0 else "ANSWER: 3")
    log = run("discovery", assistant, user, tmp_path=tmp_path)
    assert assistant.calls[1].messages[-1].text == "Short, please."
    assert "USER-" not in assistant.calls[1].text
    turns = log.samples[0].scores["prefdisco_scorer"].metadata["turns"]
    assert turns[1]["content"] == "Short, please."


@pytest.mark.parametrize(
    ("text", "visible"),
    [
        ("ANSWER: 3", "ANSWER: 3"),
        ("<think>a</think>ANSWER: 3", "ANSWER: 3"),
        ("<THINK attr='x'>a\nb</THINK>\n\nANSWER: 3", "ANSWER: 3"),
        ("<thinking>a</thinking>ANSWER: 3", "ANSWER: 3"),
        ("ANSWER: 3 <think>cut off while thinking", "ANSWER: 3"),
        ("<think>cut off while thinking", ""),
        ("reasoning opened by the chat template</think>ANSWER: 3", "ANSWER: 3"),
        ("<think>x<think>nested</think>y</think>ANSWER: 3", "ANSWER: 3"),
        ("<think>one</think>QUESTION: a?<think>two</think>", "QUESTION: a?"),
    ],
)
def test_strip_reasoning(text, visible):
    assert strip_reasoning(text) == visible


def test_visible_text_of_messages_outputs_and_strings():
    message = ChatMessageAssistant(content=thought("hidden", "<think>also hidden</think>shown"))
    assert visible_text(message) == "shown"
    assert visible_text(ModelOutput.from_content(model="m", content=message.content)) == "shown"
    assert visible_text(ModelOutput(model="m")) == ""
    assert visible_text(" <think>x</think> plain ") == "plain"
