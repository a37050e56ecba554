"""The tool-call protocol (``--protocol tools``) and the bring-your-own assistant (``--solver``).

The tool protocol must count what the text protocol counts on the same dialogue: the same scripted questions and
answers, once as ``QUESTION:`` / ``ANSWER:`` turns and once as ``ask_user`` calls and plain turns, give the same
turns, questions and stop reason (the expected values are written out by hand). A ``--solver`` assistant asks
through the same tool, under the same budget, and its response is scored like the model's own.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ModelOutput,
    ModelUsage,
    execute_tools,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState
from inspect_ai.tool import ToolCall
from inspect_ai.util import Store
from typer.testing import CliRunner

from mock_openai import MockOpenAI, tagged_scenarios, write_scenarios
from prefdisco.dialogue.byo import parse_solver_args, resolve_solver
from prefdisco.dialogue.dialogue_state import DialogueRules
from prefdisco.dialogue.drive import play
from prefdisco.dialogue.engine import Dialogue
from prefdisco.dialogue.presets import DialogueStyle
from prefdisco.dialogue.state import DialogueRecord
from prefdisco.dialogue.tool_protocol import tools_style
from prefdisco.dialogue.user_reply import UserReply
from prefdisco.errors import UserError
from prefdisco.evaluation.protocol.protocols import protocol_id
from prefdisco.evaluation.running.task import build_task
from prefdisco.evaluation.settings.config import RunConfig
from prefdisco.policies.fit import fit_policy
from prefdisco.policies.model import write_policy
from prefdisco.prompts import render
from prefdisco.results.protocol_record import differences, read_record
from scripted import Scripted, constant, make_scenario
from test_reliability import app, mock_env, run_eval  # noqa: F401  (app is a fixture)

Reply = str | ModelOutput
LAST_NOTE = "(You have used all 2 of your questions. Now give your complete response to the task, without a tool call.)"


def ask(*questions: str, text: str = "") -> ModelOutput:
    """An assistant turn calling ``ask_user`` once per question (ids c1, c2, …), with ``text`` beside the calls."""
    calls = [ToolCall(id=f"c{i}", function="ask_user", arguments={"question": q}) for i, q in enumerate(questions, 1)]
    message = ChatMessageAssistant(content=text, tool_calls=calls, model="mockllm")
    return ModelOutput(model="mockllm", choices=[ChatCompletionChoice(message=message, stop_reason="tool_calls")])


@dataclass
class Seen:
    messages: list[ChatMessage]
    tools: list[str]
    tool_choice: Any


@dataclass
class Tooled:
    """A mockllm assistant replying ``script[i]`` (the last repeated): text, or a ModelOutput with tool calls; every
    request is kept with the tools and tool choice it offered."""

    script: list[Reply]
    calls: list[Seen] = field(default_factory=list)

    def __post_init__(self) -> None:
        def outputs(input: list[ChatMessage], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
            self.calls.append(Seen(list(input), [t.name for t in tools], tool_choice))
            reply = self.script[min(len(self.calls) - 1, len(self.script) - 1)]
            out = ModelOutput.from_content("mockllm", reply) if isinstance(reply, str) else reply.model_copy(deep=True)
            out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)  # no tiktoken (offline)
            return out

        self.model = get_model("mockllm/model", custom_outputs=outputs, memoize=False)


@dataclass
class FakeUser:
    """A simulated user replying ``R1``, ``R2``, … to the questions it is asked (kept in ``asked``)."""

    history: list[ChatMessage] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)

    async def reply(self, question: str) -> UserReply:
        self.asked.append(question)
        return UserReply(f"R{len(self.asked)}", None)


def dialogue(protocol: str, script: list[Reply], limit: int = 5, forced: bool = False):
    """Play ``script`` under ``protocol`` against a FakeUser through the engine: (record, assistant, user,
    messages)."""
    assistant, user = Tooled(script), FakeUser()
    style = tools_style(DialogueStyle()) if protocol == "tools" else DialogueStyle()
    rules = DialogueRules(condition="discovery", ask=protocol, limit=limit, forced=forced, style=style)
    messages: list[ChatMessage] = [ChatMessageSystem(content="rules"), ChatMessageUser(content="the problem")]
    played = asyncio.run(play(Dialogue.start("s1", rules, messages, user), assistant.model))
    return played.state.record(), assistant, user, played.messages


def shape(outcome: DialogueRecord) -> list[tuple[str, str]]:
    return [(t.kind, t.content) for t in outcome.turns]


def same_counts(
    text_script: list[Reply], tools_script: list[Reply], **budget: Any
) -> tuple[DialogueRecord, DialogueRecord]:
    text, _, text_user, _ = dialogue("text", text_script, **budget)
    tools, _, tools_user, _ = dialogue("tools", tools_script, **budget)
    assert shape(tools) == shape(text)
    assert tools.stop_reason == text.stop_reason
    assert tools.final_response == text.final_response
    assert tools_user.asked == text_user.asked
    return text, tools


# --- the tool protocol counts what the text protocol counts -------------------------------------------------


def test_discovery_questions_then_answer_count_the_same():
    text, tools = same_counts(
        ["QUESTION: Analogies?", "QUESTION: Depth?", "ANSWER: It takes 3 trips."],
        [ask("Analogies?"), ask("Depth?"), "It takes 3 trips."],
    )
    assert shape(tools) == [
        ("question", "Analogies?"),
        ("reply", "R1"),
        ("question", "Depth?"),
        ("reply", "R2"),
        ("answer", "It takes 3 trips."),
    ]
    assert tools.stop_reason == "answered" and tools.unmarked_turns == text.unmarked_turns == 0


def test_the_reply_is_the_tool_result_and_the_tool_is_offered_natively():
    _, assistant, _, messages = dialogue("tools", [ask("Analogies?"), "It takes 3 trips."])
    first, second = assistant.calls
    assert first.tools == ["ask_user"] and first.tool_choice == "auto"
    [result] = [m for m in second.messages if isinstance(m, ChatMessageTool)]
    assert result.tool_call_id == "c1" and result.function == "ask_user" and result.text == "R1"
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool", "assistant"]


def test_budget_hit_counts_the_same_and_the_tool_is_withdrawn():
    text, tools = same_counts(
        ["QUESTION: More?", "QUESTION: More?", "ANSWER: Done."], [ask("More?"), ask("More?"), "Done."], limit=2
    )
    assert [k for k, _ in shape(tools)] == ["question", "reply", "question", "reply", "answer"]
    assert tools.stop_reason == text.stop_reason == "budget"
    _, assistant, _, _ = dialogue("tools", [ask("More?"), ask("More?"), "Done."], limit=2)
    # the reply to the second (last) question carries the text protocol's note, worded for the tool
    last_result = assistant.calls[2].messages[-1]
    assert isinstance(last_result, ChatMessageTool)
    assert last_result.text == f"R2\n\n{LAST_NOTE}"
    # after the budget the tool is withdrawn: tool_choice none, and inspect drops the definitions for mockllm
    assert [c.tool_choice for c in assistant.calls] == ["auto", "auto", "none"]
    assert assistant.calls[2].tools == []


def test_a_call_after_the_budget_is_a_violation_and_its_question_is_the_answer():
    text, tools = same_counts(["QUESTION: Depth?"], [ask("Depth?")], limit=1)
    # text: the turn after the last question is the answer whatever it says ("Depth?", marker stripped)
    assert shape(tools) == [("question", "Depth?"), ("reply", "R1"), ("answer", "Depth?")]
    assert text.unmarked_turns == 0 and tools.unmarked_turns == 1  # the tool had been withdrawn


def test_an_early_answer_counts_the_same():
    _, tools = same_counts(["ANSWER: B: 3 trips."], ["B: 3 trips."])
    assert shape(tools) == [("answer", "B: 3 trips.")]
    assert tools.stop_reason == "answered" and tools.unmarked_turns == 0


def test_fixed_k_counts_the_same_and_a_turn_without_a_call_is_a_question_and_a_violation():
    text, tools = same_counts(
        ["ANSWER: 3", "QUESTION: Depth?", "QUESTION: Tone?", "ANSWER: 3 trips"],
        ["3", ask("Depth?"), ask("Tone?"), "3 trips"],
        limit=3,
        forced=True,
    )
    assert shape(tools) == [
        ("question", "3"),
        ("reply", "R1"),
        ("question", "Depth?"),
        ("reply", "R2"),
        ("question", "Tone?"),
        ("reply", "R3"),
        ("answer", "3 trips"),
    ]
    assert tools.stop_reason == "budget"
    assert text.unmarked_turns == 0 and tools.unmarked_turns == 1
    *_, messages = dialogue("tools", ["3", ask("Depth?"), ask("Tone?"), "3 trips"], limit=3, forced=True)
    # the question without a call is answered as a user message; the others as tool results with the K note
    assert [m.role for m in messages[2:]] == [
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert messages[5].text == "R2\n\n(This was question 2 of 3. Ask your next question with the ask_user tool.)"


def test_several_calls_in_one_turn_ask_the_first_and_count_one_violation():
    text, tools = same_counts(["QUESTION: Depth?", "ANSWER: 3 trips"], [ask("Depth?", "Tone?"), "3 trips"])
    assert shape(tools) == [("question", "Depth?"), ("reply", "R1"), ("answer", "3 trips")]
    assert text.unmarked_turns == 0 and tools.unmarked_turns == 1
    _, _, user, messages = dialogue("tools", [ask("Depth?", "Tone?"), "3 trips"])
    assert user.asked == ["Depth?"]
    results = [(m.tool_call_id, m.text) for m in messages if isinstance(m, ChatMessageTool)]
    assert results == [("c1", "R1"), ("c2", render("protocol_one_question_tools").strip())]


def test_a_call_without_a_question_asks_the_turn_text_and_is_a_violation():
    bad = ask("x")
    bad.message.tool_calls = [ToolCall(id="c1", function="ask_user", arguments={})]
    bad.message.content = "How long may it be?"
    outcome, _, user, _ = dialogue("tools", [bad, "Done."])
    assert user.asked == ["How long may it be?"] and outcome.unmarked_turns == 1 and outcome.final_response == "Done."


# --- the tool protocol through the task ------------------------------------------------------------------


def run_task(assistant, tmp_path: Path, user=None, mode: str = "baseline", **settings: Any):
    user = user or Scripted(constant("Short, please."))
    grader = Scripted(constant('{"score": 4}'))
    task = build_task([make_scenario()], RunConfig(audit=False, **settings), mode)
    [log] = inspect_eval(
        task,
        model=assistant.model,
        model_roles={"user": user.model, "grader": grader.model},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    [sample] = log.samples
    return sample, DialogueRecord(store=Store(sample.store))


def test_discovery_under_tools_is_scored_like_the_text_protocol(tmp_path):
    assistant = Tooled([ask("Do you like analogies?"), "The answer is B: 3 trips."])
    sample, record = run_task(assistant, tmp_path, mode="discovery", ask="tools")
    score = sample.scores["prefdisco_scorer"]
    assert score.value["n_questions"] == 1 and score.value["correct"] == 1
    assert score.answer == "The answer is B: 3 trips."
    assert record.stop_reason == "answered" and record.unmarked_turns == 0
    system = assistant.calls[0].messages[0].text
    assert system == render("assistant_discovery_tools", max_questions=5)
    assert "QUESTION:" not in system and "ask_user tool" in system


def test_tools_refuses_what_it_cannot_follow():
    with pytest.raises(UserError, match="--ask: unknown 'json'"):
        build_task([make_scenario()], RunConfig(ask="json"), "discovery")
    with pytest.raises(UserError, match="--preset paper asks in its own text prompts"):
        build_task([make_scenario()], RunConfig(ask="tools", preset="paper"), "discovery")
    with pytest.raises(UserError, match="--constrain-ask"):
        build_task([make_scenario()], RunConfig(ask="tools", constrain_ask=True), "discovery")


# --- bring your own assistant ----------------------------------------------------------------------------


def looping_agent(rounds: int = 8) -> Solver:
    """The example of docs/agents.md: generate with the state's tools, run the calls, until a turn calls none."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        for _ in range(rounds):
            output = await model.generate(state.messages, tools=state.tools)
            state.messages.append(output.message)
            state.output = output
            if not output.message.tool_calls:
                break  # a turn without a tool call is the answer
            result = await execute_tools(state.messages, state.tools)
            state.messages.extend(result.messages)
        return state

    return solve


def not_a_solver() -> int:
    return 3


def test_own_solver_records_its_questions_respects_the_budget_and_is_scored(tmp_path):
    # three questions against a budget of two: the third is refused inside the tool, the user is not called
    assistant = Tooled([ask("Depth?"), ask("Analogies?"), ask("Jargon?"), "The answer is B: 3 trips, step by step."])
    user = Scripted(constant("Step by step, please."))
    sample, record = run_task(
        assistant,
        tmp_path,
        user,
        mode="discovery",
        max_questions=2,
        solver="test_tools_protocol:looping_agent",
        solver_args={"rounds": 6},
    )
    assert len(user.calls) == 2
    assert [(t.kind, t.content) for t in record.turns] == [
        ("question", "Depth?"),
        ("reply", "Step by step, please."),
        ("question", "Analogies?"),
        ("reply", "Step by step, please."),
        ("answer", "The answer is B: 3 trips, step by step."),
    ]
    assert record.stop_reason == "budget" and record.unmarked_turns == 1
    tool_results = [m.text for m in assistant.calls[3].messages if isinstance(m, ChatMessageTool)]
    assert tool_results[1] == f"Step by step, please.\n\n{LAST_NOTE}"
    assert tool_results[2] == render("protocol_no_more_questions_tools", max_questions=2).strip()
    score = sample.scores["prefdisco_scorer"]
    assert score.value["n_questions"] == 2 and score.value["correct"] == 1
    assert score.answer == "The answer is B: 3 trips, step by step."
    # it started from the discovery state: the tool prompt, then the problem
    first = assistant.calls[0]
    assert first.tools == ["ask_user"]
    assert first.messages[0].text == render("assistant_discovery_tools", max_questions=2)
    assert first.messages[1].text == make_scenario().problem.prompt_text()


def test_a_registered_agent_gets_the_tool(tmp_path):
    """inspect's own ``react`` by name: it is handed ``ask_user`` and its submitted answer is the response."""
    submit = ask("x")
    submit.message.tool_calls = [ToolCall(id="s1", function="submit", arguments={"answer": "B: 3 trips."})]
    assistant = Tooled([ask("Depth?"), submit])
    _, record = run_task(assistant, tmp_path, mode="discovery", solver="react")
    assert [(t.kind, t.content) for t in record.turns] == [
        ("question", "Depth?"),
        ("reply", "Short, please."),
        ("answer", "B: 3 trips."),
    ]
    assert record.stop_reason == "answered" and record.final_response == "B: 3 trips."
    assert "ask_user" in assistant.calls[0].tools


def strategy_policy(tmp_path: Path) -> str:
    """A policy fitted on two scenarios of other problems of make_scenario's benchmark (demo): depth in both,
    analogies in one — so a checklist of K=2 asks about depth, then analogies."""
    train = [
        make_scenario("t1", weights=(0.6, 0.4), problem=make_scenario().problem.model_copy(update={"id": "p-t1"})),
        make_scenario("t2", weights=(1.0,), problem=make_scenario().problem.model_copy(update={"id": "p-t2"})),
    ]
    path = tmp_path / "policy.json"
    write_policy(fit_policy(train, fraction=1.0, seed=0, source="train", hash_="sha256:0"), path)
    return str(path)


def test_a_strategy_solver_by_name_gets_the_run_settings_and_its_metadata(tmp_path):
    policy = strategy_policy(tmp_path)
    assistant = Scripted(constant("The answer is B: 3 trips, step by step."))
    user = Scripted(constant("Step by step."))
    grader = Scripted(constant('{"score": 4}'))
    task = build_task(
        [make_scenario()],
        RunConfig(
            audit=False, user_type="cooperative", solver="prefdisco/checklist", solver_args={"policy": policy, "k": 2}
        ),
        "discovery",
    )
    assert task.metadata["prefdisco_strategy"] == "checklist" and task.metadata["prefdisco_strategy_k"] == 2
    assert task.metadata["prefdisco_solver"] == "prefdisco/checklist"
    [log] = inspect_eval(
        task,
        model=assistant.model,
        model_roles={"user": user.model, "grader": grader.model},
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success", log.error
    record = DialogueRecord(store=Store(log.samples[0].store))
    assert record.condition == "checklist_k2" and record.n_questions == 2 and record.stop_reason == "budget"
    # the run's user type reached the strategy solver: the cooperative user's prompt played the person
    assert "volunteer at most ONE other preference" in user.calls[0].system
    # a scenario of the policy's own training problems is refused when the task is built
    trained = make_scenario("t1", problem=make_scenario().problem.model_copy(update={"id": "p-t1"}))
    with pytest.raises(UserError, match="t1"):
        build_task([trained], RunConfig(solver="prefdisco/checklist", solver_args={"policy": policy}), "discovery")


def test_solver_names_that_cannot_be_used_are_refused(tmp_path):
    with pytest.raises(UserError, match="not a registered inspect solver or agent"):
        resolve_solver("no_such_solver")
    with pytest.raises(UserError, match="has no function missing"):
        resolve_solver("test_tools_protocol:missing")
    with pytest.raises(UserError, match="expected it to make an inspect Solver or Agent, got int"):
        resolve_solver("test_tools_protocol:not_a_solver")
    with pytest.raises(UserError, match="the -S args do not fit"):
        resolve_solver("test_tools_protocol:looping_agent", {"turns": 3})
    with pytest.raises(UserError, match="no file"):
        resolve_solver(f"{tmp_path}/absent.py:agent")
    agent_file = tmp_path / "my_agent.py"
    agent_file.write_text(
        "async def _solve(state, generate):\n    return state\n\n\ndef agent():\n    return _solve\n", encoding="utf-8"
    )
    assert resolve_solver(f"{agent_file}:agent").__name__ == "_solve"


def test_solver_args_are_json_values_else_strings():
    assert parse_solver_args(["k=3", "policy=policy.json", "on=true", "xs=[1, 2]", "name-x=a b"]) == {
        "k": 3,
        "policy": "policy.json",
        "on": True,
        "xs": [1, 2],
        "name_x": "a b",
    }
    with pytest.raises(UserError, match="expected key=value"):
        parse_solver_args(["k"])


def config(tmp_path: Path, **settings: Any) -> RunConfig:
    return RunConfig(models=["m/a"], user_model="m/u", grader_model="m/g", log_dir=tmp_path, **settings)


def test_run_json_records_protocol_and_solver_only_when_given(tmp_path):
    plain = config(tmp_path).fingerprint("set", 1)
    assert not {"ask", "protocol", "solver", "solver_args"} & set(plain)
    tools = config(tmp_path, ask="tools").fingerprint("set", 1)
    assert tools["ask"] == "tools" and "solver" not in tools
    assert tools["prompt_templates"] != plain["prompt_templates"]  # the tool prompts are hashed too
    own = config(tmp_path, solver="test_tools_protocol:looping_agent", solver_args={"rounds": 3})
    own.validate()
    recorded = own.fingerprint("set", 1)
    assert recorded["solver"] == "test_tools_protocol:looping_agent" and recorded["solver_args"] == {"rounds": 3}
    assert "ask" not in recorded
    with pytest.raises(UserError, match="plays discovery: add discovery to --modes"):
        config(tmp_path, solver="react", modes=["baseline"]).validate()
    with pytest.raises(UserError, match="-S: solver args without --solver"):
        config(tmp_path, solver_args={"k": 1}).validate()


def test_a_custom_protocol_keeps_its_id_under_the_ask_channels_new_name(tmp_path):
    """The ids the version before the rename gave these settings (``protocol="tools"``, ``constrain_protocol=True``,
    each with user temperature 0.5): renaming a setting changes no protocol's id."""
    assert protocol_id(config(tmp_path, ask="tools", user_temperature=0.5)) == "custom-5a3d2f56"
    assert protocol_id(config(tmp_path, constrain_ask=True, user_temperature=0.5)) == "custom-0bab4703"


# --- CLI runs on the fault mock --------------------------------------------------------------------------


def test_cli_tools_protocol_on_the_mock(app, tmp_path, monkeypatch):  # noqa: F811
    bench = write_scenarios(tmp_path / "scenarios.jsonl", tagged_scenarios(2))
    run = tmp_path / "run"
    with MockOpenAI(questions=2) as mock:
        mock_env(monkeypatch, mock, tmp_path)
        result = run_eval(app, mock, bench, run, "--modes", "discovery", "--fixed-k", "3", "--protocol", "tools")
        assert result.exit_code == 0, result.output
        # the same folder without --protocol tools (the older name of --ask) is another run
        again = run_eval(app, mock, bench, run, "--modes", "discovery", "--fixed-k", "3")
        assert again.exit_code != 0 and 'ask = "tools", not "text"' in again.output
        record = json.loads((run / "protocol.json").read_text())
        assert record["settings"]["ask"] == "tools" and "protocol" not in record["settings"]

        # the folder as a version before the ask channel had its own name wrote it (run.json, protocol.json and
        # config.toml under "protocol" / "constrain_protocol") resumes from its config file without a call
        renames = [('"ask"', '"protocol"'), ("constrain_ask", "constrain_protocol"), ("\nask = ", "\nprotocol = ")]
        for name in ("run.json", "protocol.json", "config.toml"):
            text = (run / name).read_text()
            for new, old in [*renames, ("constrain-ask", "constrain-protocol")]:
                text = text.replace(new, old)
            (run / name).write_text(text)
        assert '"protocol": "tools"' in (run / "run.json").read_text()
        assert '"constrain_protocol": false' in (run / "protocol.json").read_text()
        assert '\nprotocol = "tools"' in (run / "config.toml").read_text()
        older = read_record(run)
        calls = mock.stats()["completions"]
        resumed = CliRunner().invoke(app, ["eval", "--config", str(run / "config.toml")])
        assert resumed.exit_code == 0, resumed.output
        assert mock.stats()["completions"] == calls
    assert older is not None and older.settings["ask"] == "tools" and "protocol" not in older.settings
    assert differences(older, read_record(run)) == [] and read_record(run).id == record["id"]
    recorded = json.loads((run / "run.json").read_text())
    assert recorded["ask"] == "tools" and "solver" not in recorded
    results = pd.read_csv(run / "results.csv")
    # the mock asks 2 questions through the tool and then answers: discovery stops after 2 of its 5; fixed-K 3
    # gets a third turn without a call, which is asked all the same
    by_mode = results.groupby("mode")["n_questions"].apply(list).to_dict()
    assert by_mode == {"discovery": [2, 2], "fixed_k": [3, 3]}
    assert (results["failed"] == 0).all()


def test_cli_own_solver_on_the_mock(app, tmp_path, monkeypatch):  # noqa: F811
    bench = write_scenarios(tmp_path / "scenarios.jsonl", tagged_scenarios(2))
    run = tmp_path / "run"
    with MockOpenAI(questions=2) as mock:
        mock_env(monkeypatch, mock, tmp_path)
        result = run_eval(
            app,
            mock,
            bench,
            run,
            "--modes",
            "baseline,discovery",
            "--solver",
            "test_tools_protocol:looping_agent",
            "-S",
            "rounds=8",
        )
        stats = mock.stats()
    assert result.exit_code == 0, result.output
    recorded = json.loads((run / "run.json").read_text())
    assert recorded["solver"] == "test_tools_protocol:looping_agent" and recorded["solver_args"] == {"rounds": 8}
    results = pd.read_csv(run / "results.csv")
    assert results.set_index("mode")["n_questions"].groupby(level=0).apply(list).to_dict() == {
        "baseline": [0, 0],
        "discovery": [2, 2],
    }
    assert (results["failed"] == 0).all() and results["pref_align"].notna().all()
    assert stats["by_role"]["user"] == 4  # two questions per scenario reached the simulated user
