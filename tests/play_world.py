"""A scripted world for the play-the-user study (``tests/test_annotate_play*.py``): one scenario, an assistant
that asks two questions then answers, a judge, and a simulated user for the simulated run of the same scenario.

Registered as ``scripted/<name>`` models (``transfer_world``'s model API), so a server, ``prefdisco eval`` and the
tests call them by name; nothing leaves the process. Each reports its usage as a provider would, a token a word
(``words``): the input's words over every message, the reply's words as output, so a test can count tokens by
hand.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatCompletionChoice, ChatMessage, ChatMessageAssistant, ModelOutput, ModelUsage
from inspect_ai.tool import ToolCall

from scripted import make_scenario
from transfer_world import SCRIPTS

QUESTIONS = ("How detailed should I be?", "Do you like analogies?")
ANSWER = "The answer is B: 3 trips."
LEVELS = {"Explanation depth": 5, "Use of analogies": 3, "Technical vocabulary": 2}
PREF_ALIGN = 0.5 * 5 + 0.3 * 3 + 0.2 * 2  # make_scenario's weights: 3.8
AUDIT = {
    f"t{n}": {
        "asked": {"a1": n == 1, "a2": n == 2, "a3": False},
        "revealed": {"a1": n == 1, "a2": n == 2, "a3": False},
        "hallucinated": False,
        "contradicted": False,
        "helped_task": False,
        "broke_character": False,
    }
    for n in (1, 2)
}


def assistant(messages: list[ChatMessage]) -> str:
    """Two questions, then the answer; a single-turn condition (no system prompt with questions) answers at once."""
    system = "\n".join(m.text for m in messages if m.role == "system")
    if "QUESTION:" not in system:
        return ANSWER
    asked = sum(m.role == "assistant" for m in messages)
    return f"QUESTION: {QUESTIONS[asked]}" if asked < len(QUESTIONS) else f"ANSWER: {ANSWER}"


def judge(messages: list[ChatMessage]) -> str:
    text = "\n".join(m.text for m in messages)
    if "checking a conversation" in text:
        return json.dumps(AUDIT)
    if "Person A replied:" in text:  # simfidelity's value agreement: both want the same
        return json.dumps({key: "same" for key in re.findall(r"^- (a\d+) — ", text, flags=re.MULTILINE)})
    if '{"reasoning": N, "completeness": N, "facts": N}' in text:
        return json.dumps({"reasoning": 4, "completeness": 4, "facts": 5})
    for attribute, level in LEVELS.items():
        if f"The preference: {attribute}" in text:
            return json.dumps({"score": level})
    raise AssertionError("unexpected judge call")


def tool_assistant(messages: list[ChatMessage]) -> str | ModelOutput:
    """``assistant`` under the tool protocol: two ``ask_user`` calls, then the answer as plain text; a single-turn
    condition (its system prompt offers no tool) answers at once."""
    system = "\n".join(m.text for m in messages if m.role == "system")
    if "ask_user" not in system:
        return ANSWER
    asked = sum(m.role == "assistant" for m in messages)
    if asked >= len(QUESTIONS):
        return ANSWER
    call = ToolCall(id=f"call-{asked + 1}", function="ask_user", arguments={"question": QUESTIONS[asked]})
    message = ChatMessageAssistant(content="", tool_calls=[call], model=TOOL_MODEL)
    return ModelOutput(model=TOOL_MODEL, choices=[ChatCompletionChoice(message=message, stop_reason="tool_calls")])


def user(messages: list[ChatMessage]) -> str:
    return "Very detailed, please." if len(messages) <= 2 else "Yes, machine ones."


def eager(messages: list[ChatMessage]) -> str:
    """A simulated user that says far more than asked (for simfidelity beside the person)."""
    return "Very detailed, please, step by step, with machine analogies and plain words throughout the answer."


def words(text: str) -> int:
    return len(text.split())


def metered(
    name: str, script: Callable[[list[ChatMessage]], str | ModelOutput]
) -> Callable[[list[ChatMessage]], ModelOutput]:
    """``script``, its reply carrying its usage: a token a word of every input message, a token a word of the reply
    (of a tool call: of its question)."""

    def call(messages: list[ChatMessage]) -> ModelOutput:
        reply = script(messages)
        output = reply if isinstance(reply, ModelOutput) else ModelOutput.from_content(model=name, content=reply)
        message = output.message
        said = message.text + " ".join(str(c.arguments.get("question", "")) for c in message.tool_calls or [])
        n_in = sum(words(m.text) for m in messages)
        output.usage = ModelUsage(input_tokens=n_in, output_tokens=words(said), total_tokens=n_in + words(said))
        return output

    return call


TOOL_MODEL = "scripted/play-tool-assistant"
PLAYERS = {
    "play-assistant": assistant,
    "play-tool-assistant": tool_assistant,
    "play-judge": judge,
    "play-user": user,
    "play-eager": eager,
}
SCRIPTS |= {name: metered(name, script) for name, script in PLAYERS.items()}
MODEL, JUDGE, USER = "scripted/play-assistant", "scripted/play-judge", "scripted/play-user"
EAGER = "scripted/play-eager"


def play_scenario():  # type: ignore[no-untyped-def]
    return make_scenario("play-1")


def simulated_run(folder: Path, user: str = USER, name: str = "sim") -> Path:
    """``prefdisco eval``'s three conditions on the play scenario with ``user`` as the simulated user, in
    ``folder / name``."""
    from prefdisco.evaluation.run import run_conditions
    from prefdisco.evaluation.settings.config import RunConfig

    config = RunConfig(
        models=[MODEL],
        user_model=user,
        grader_model=JUDGE,
        log_dir=folder / name,
        modes=["baseline", "discovery", "oracle"],
        display="none",
    )
    config.validate()
    run_conditions([play_scenario()], config)
    return config.log_dir


def shared_run(world: Any, user: str = USER, name: str = "sim") -> Path:
    """``simulated_run`` of the test session's planted worlds (``conftest.World``): built once, read-only."""
    return world.get(f"play-{name}", lambda folder: simulated_run(folder, user, name))
