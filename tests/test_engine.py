"""The one dialogue engine: the same assistant turns through every driver give the same dialogue and the same score.

Drivers: the condition solvers of ``prefdisco eval`` (text and tool protocols, discovery, fixed-K, the paper
preset's ask-again), a bring-your-own solver calling ``ask_user``, the RL episode (``prefdisco.env.Episode``), the
gymnasium environment, the verl interaction, and the engine driven by hand. Each case also states by hand what
the dialogue must be (turns, stop reason, violations), so the drivers agree on the right answer, not only with
each other. Then: a dialogue saved mid-way and restored goes on as if never stopped; a reply can come later (a
person); the targeted user maps questions with the environment's own seeded judge.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from dataclasses import dataclass, replace
from typing import Any

import gymnasium
import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput
from inspect_ai.util import Store

import prefdisco.env  # noqa: F401  (registers PrefDisco-v0)
from prefdisco.dialogue.dialogue_state import DialogueRules, DialogueState
from prefdisco.dialogue.drive import play
from prefdisco.dialogue.engine import Dialogue
from prefdisco.dialogue.openings import discovery_opening
from prefdisco.dialogue.presets import DialogueStyle, preset_named
from prefdisco.dialogue.state import DialogueRecord
from prefdisco.dialogue.tool_protocol import tools_style
from prefdisco.dialogue.user import build_user
from prefdisco.env import Episode
from prefdisco.env.verl import PrefDiscoInteraction
from prefdisco.evaluation.running.task import build_task
from prefdisco.evaluation.settings.config import RunConfig
from prefdisco.scoring.non_answer import RESPONSE_STOP
from prefdisco.seeds import call_seed, seed_scope
from scripted import Call, Scripted, make_scenario
from test_tools_protocol import Tooled, ask

LEVELS = {"Explanation depth": 5, "Use of analogies": 3, "Technical vocabulary": 2}
FINAL = "The answer is B: 3 trips."


def grading(call: Call, index: int) -> str:
    """The judge: a fixed level per criterion (PrefAlign 0.5·5 + 0.3·3 + 0.2·2 = 3.8), and the response's quality."""
    for attribute, level in LEVELS.items():
        if f"The preference: {attribute}" in call.text:
            return json.dumps({"score": level})
    if '{"reasoning": N, "completeness": N, "facts": N}' in call.text:
        return json.dumps({"reasoning": 4, "completeness": 5, "facts": 5})
    raise AssertionError(f"unexpected grader call: {call.text[:200]}")


def user_reply(call: Call, index: int) -> str:
    return f"Reply {sum(m.role == 'user' for m in call.messages)}."


@dataclass(frozen=True)
class Expected:
    """What the dialogue must be, worked out by hand from the rules."""

    turns: list[tuple[str, str]]
    stop_reason: str
    violations: int


@dataclass(frozen=True)
class Case:
    """One dialogue: its condition, budget and preset, and the assistant's turns under each protocol with what they
    must give."""

    mode: str
    limit: int
    scripts: dict[str, tuple[list[Any], Expected]]
    preset: str = "default"
    own_agent: bool = False
    """Also played by a bring-your-own agent calling ``ask_user`` (its tools script)."""


TWO_QUESTIONS = [
    ("question", "How detailed?"),
    ("reply", "Reply 1."),
    ("question", "Analogies?"),
    ("reply", "Reply 2."),
]
ONE_QUESTION = [("question", "How detailed?"), ("reply", "Reply 1.")]
CASES = {
    "questions then an answer": Case(
        "discovery",
        5,
        {
            "text": (
                ["QUESTION: How detailed?", "<think>hidden</think>QUESTION: Analogies?", f"ANSWER: {FINAL}"],
                Expected([*TWO_QUESTIONS, ("answer", FINAL)], "answered", 0),
            ),
            "tools": (
                [ask("How detailed?"), ask("Analogies?"), FINAL],
                Expected([*TWO_QUESTIONS, ("answer", FINAL)], "answered", 0),
            ),
        },
        own_agent=True,
    ),
    "the budget ends it": Case(
        "discovery",
        1,
        {
            "text": (
                ["QUESTION: How detailed?", f"QUESTION: {FINAL}"],
                Expected([*ONE_QUESTION, ("answer", FINAL)], "budget", 0),
            ),
            # a call after the tool was withdrawn breaks the protocol; its question is the answer
            "tools": ([ask("How detailed?"), ask(FINAL)], Expected([*ONE_QUESTION, ("answer", FINAL)], "budget", 1)),
        },
    ),
    "a turn without a marker or a call is the answer": Case(
        "discovery",
        5,
        {
            "text": ([FINAL], Expected([("answer", FINAL)], "unmarked", 1)),
            "tools": ([FINAL], Expected([("answer", FINAL)], "answered", 0)),
        },
        own_agent=True,
    ),
    "several calls ask the first": Case(
        "discovery",
        5,
        {
            "tools": (
                [ask("How detailed?", "Analogies?"), FINAL],
                Expected([*ONE_QUESTION, ("answer", FINAL)], "answered", 1),
            )
        },
    ),
    "fixed-K asks exactly K": Case(
        "fixed_k",
        2,
        {
            # the first two turns are questions whatever they say (markers stripped); the answer without its
            # marker is still the answer, and one violation
            "text": (
                ["ANSWER: How detailed?", "QUESTION: Analogies?", FINAL],
                Expected([*TWO_QUESTIONS, ("answer", FINAL)], "budget", 1),
            ),
            # a turn without a call asks its text, and breaks the protocol
            "tools": (
                ["How detailed?", ask("Analogies?"), FINAL],
                Expected([*TWO_QUESTIONS, ("answer", FINAL)], "budget", 1),
            ),
        },
    ),
    "the paper preset asks again": Case(
        "discovery",
        5,
        # an early answer brings the final-answer instruction; the next turn is the response whatever it says
        {
            "text": (
                ["ANSWER: early", f"QUESTION: {FINAL}"],
                Expected([("answer", "early"), ("answer", FINAL)], "answered", 0),
            )
        },
        preset="paper",
    ),
}


@dataclass(frozen=True)
class Played:
    turns: list[tuple[str, str]]
    stop_reason: str | None
    violations: int
    final: str | None
    score: dict[str, Any] | None
    user_saw: list[str]
    generation_end: str | None = None
    """How the final response's generation ended (the score metadata's ``RESPONSE_STOP``): a driver that steps the
    engine with the model's output knows it (``stop``), one handing over text (the RL episode's action) does not."""


def _played(record: DialogueRecord, score: dict[str, Any] | None, user: Scripted, ended: str | None = None) -> Played:
    return Played(
        [(t.kind, t.content) for t in record.turns],
        record.stop_reason,
        record.unmarked_turns,
        record.final_response,
        score,
        [c.messages[-1].text for c in user.calls],
        ended,
    )


@dataclass
class Solved:
    """One dialogue played by ``prefdisco eval``'s solvers: its task, and the user whose calls it records."""

    task: Task
    user: Scripted


def solver_task(case: Case, protocol: str, script: list[Any], solver: str | None = None) -> Solved:
    """The task ``prefdisco eval`` runs for ``case`` under ``protocol`` (its assistant the script, its user and
    judge scripted), or with an own ``solver`` in the assistant's seat."""
    user, grader = Scripted(user_reply), Scripted(grading)
    extra = {"solver": solver, "solver_args": {"rounds": 8}} if solver else {}
    config = RunConfig(
        max_questions=case.limit if case.mode == "discovery" else 5,
        audit=False,
        preset=case.preset,
        ask=protocol,
        **extra,
    )
    task = build_task([make_scenario()], config, case.mode, case.limit if case.mode == "fixed_k" else None)
    task.model = Tooled(script).model
    task.model_roles = {"user": user.model, "grader": grader.model}
    return Solved(task, user)


def solved_together(tmp_path, plays: dict[Any, Solved]) -> dict[Any, Played]:
    """Every task of ``plays`` as one inspect eval (each task with its own models): their dialogues and scores."""
    keys = list(plays)
    logs = inspect_eval([plays[k].task for k in keys], log_dir=str(tmp_path), display="none", max_tasks=len(keys))
    out = {}
    for key, log in zip(keys, logs, strict=True):
        assert log.status == "success", log.error
        [sample] = log.samples
        record = DialogueRecord(store=Store(sample.store))
        scored = sample.scores["prefdisco_scorer"]
        out[key] = _played(record, scored.value, plays[key].user, (scored.metadata or {}).get(RESPONSE_STOP))
    return out


@pytest.fixture(scope="module")
def by_solver(tmp_path_factory) -> dict[Any, Played]:
    """Every case of ``PLAYS`` through ``prefdisco eval``'s solvers (and an own agent where the case has one), as
    the tasks of one inspect eval: ``(name, protocol, "own" or "eval") -> Played``."""
    plays = {}
    for name, protocol in PLAYS:
        case = CASES[name]
        script = case.scripts[protocol][0]
        plays[(name, protocol, "eval")] = solver_task(case, protocol, script)
        if case.own_agent and protocol == "tools":  # an agent asks through the ask_user tool
            plays[(name, protocol, "own")] = solver_task(case, protocol, script, "test_tools_protocol:looping_agent")
    return solved_together(tmp_path_factory.mktemp("solvers"), plays)


def as_turn(item: Any) -> Any:
    """A script item as an episode takes it: text, or the assistant message of a tool-call output."""
    return item.message if isinstance(item, ModelOutput) else item


def via_episode(case: Case, protocol: str, script: list[Any]) -> Played:
    user, grader = Scripted(user_reply), Scripted(grading)
    episode = Episode(
        make_scenario(),
        user.model,
        grader.model,
        max_questions=case.limit,
        preset=case.preset,
        ask=protocol,
        audit=False,
    )
    episode.reset()
    result = None
    for item in script:
        result = episode.step(as_turn(item))
        if result.done:
            break
    assert result is not None and result.done
    episode.close()
    return _played(episode.dialogue.state.record(), result.info["score"], user)


def via_gym(case: Case, script: list[Any]) -> Played:
    user, grader = Scripted(user_reply), Scripted(grading)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = gymnasium.make(
            "PrefDisco-v0",
            scenarios=[make_scenario()],
            user_model=user.model,
            judge_model=grader.model,
            max_questions=case.limit,
            preset=case.preset,
            audit=False,
        )
    env.reset(seed=0)
    for item in script:
        _, _, terminated, _, info = env.step(item)
        if terminated:
            break
    assert terminated
    record = env.unwrapped.episode.dialogue.state.record()
    env.close()
    return _played(record, info["score"], user)


def via_verl(tmp_path, case: Case, script: list[Any]) -> Played:
    user, grader = Scripted(user_reply), Scripted(grading)
    path = tmp_path / "scenarios.jsonl"
    path.write_text(make_scenario().model_dump_json() + "\n")
    interaction = PrefDiscoInteraction(
        {
            "scenarios": str(path),
            "user_model": user.model,
            "judge_model": grader.model,
            "max_questions": case.limit,
            "preset": case.preset,
            "audit": False,
        }
    )

    async def rollout() -> dict[str, Any]:
        await interaction.start_interaction("i1", scenario_id="s1")
        messages: list[dict[str, str]] = []
        for item in script:
            messages.append({"role": "assistant", "content": item})
            done, response, _, meta = await interaction.generate_response("i1", messages)
            messages.append({"role": "user", "content": response})
            if done:
                return meta
        raise AssertionError("the rollout did not end")

    meta = asyncio.run(rollout())
    record = DialogueRecord(
        store=Store(),
        turns=meta["turns"],
        stop_reason=meta["stop_reason"],
        final_response=meta["final_response"],
        unmarked_turns=meta["unmarked_turns"],
    )
    return _played(record, meta["score"], user)


def via_engine(case: Case, protocol: str, script: list[Any]) -> Played:
    """The engine driven by hand, scored by nobody: the dialogue only."""
    user = Scripted(user_reply)
    style = preset_named(case.preset).style
    style = tools_style(style) if protocol == "tools" else style
    rules = DialogueRules(
        condition=case.mode, ask=protocol, limit=case.limit, forced=case.mode == "fixed_k", style=style
    )
    scenario = make_scenario()
    dialogue = Dialogue.start(
        scenario.id,
        rules,
        discovery_opening(scenario.problem, style, case.limit),
        build_user("passive", user.model, scenario),
    )
    asyncio.run(play(dialogue, Tooled(script).model))
    return _played(dialogue.state.record(), None, user)


def check(played: Played, expected: Expected) -> None:
    assert played.turns == expected.turns
    assert (played.stop_reason, played.violations) == (expected.stop_reason, expected.violations)
    assert played.final == expected.turns[-1][1]
    assert played.user_saw == [content for kind, content in expected.turns if kind == "question"]


PLAYS = [(name, protocol) for name, case in CASES.items() for protocol in case.scripts]


@pytest.mark.parametrize(("name", "protocol"), PLAYS)
def test_every_driver_plays_the_same_dialogue_and_gives_the_same_score(tmp_path, by_solver, name, protocol):
    case = CASES[name]
    script, expected = case.scripts[protocol]
    reference = by_solver[(name, protocol, "eval")]
    check(reference, expected)
    assert reference.score is not None and reference.score["pref_align"] == pytest.approx(3.8)
    assert reference.score["n_questions"] == sum(k == "question" for k, _ in expected.turns)
    assert reference.generation_end in ("stop", "tool_calls")  # eval steps the engine with the model's output
    check(via_engine(case, protocol, script), expected)
    if case.mode == "discovery":  # the RL environment plays discovery (text actions only in gymnasium and verl)
        as_text = replace(reference, generation_end=None)  # an action is text: how it was generated is not known
        assert via_episode(case, protocol, script) == as_text
        if protocol == "text":
            assert via_gym(case, script) == as_text
            assert via_verl(tmp_path, case, script) == as_text
    if case.own_agent and protocol == "tools":  # an agent asks through the ask_user tool
        assert by_solver[(name, protocol, "own")] == reference


def test_the_protocols_score_one_dialogue_alike(by_solver):
    """The same dialogue (questions, replies, answer) under either protocol has the same score."""
    text, tools = (by_solver[("questions then an answer", p, "eval")] for p in ("text", "tools"))
    assert text.turns == tools.turns and text.score == tools.score


# -- a dialogue is one serialisable record ------------------------------------------------------------------------


def discovery_rules(protocol: str = "text", limit: int = 3) -> DialogueRules:
    style = tools_style(DialogueStyle()) if protocol == "tools" else DialogueStyle()
    return DialogueRules(condition="discovery", ask=protocol, limit=limit, style=style)


def test_a_saved_dialogue_restored_goes_on_as_if_it_had_never_stopped():
    scenario = make_scenario()
    script = ["QUESTION: How detailed?", "QUESTION: Analogies?", f"ANSWER: {FINAL}"]
    opening = discovery_opening(scenario.problem, DialogueStyle(), 3)

    whole_user = Scripted(user_reply)
    whole = Dialogue.start(scenario.id, discovery_rules(), opening, build_user("passive", whole_user.model, scenario))
    for turn in script:
        asyncio.run(whole.step(turn))

    first_user = Scripted(user_reply)
    first = Dialogue.start(scenario.id, discovery_rules(), opening, build_user("passive", first_user.model, scenario))
    asyncio.run(first.step(script[0]))
    saved = first.state.model_dump_json()  # e.g. between two web requests, or across a crash

    second_user = Scripted(user_reply)
    state = DialogueState.model_validate_json(saved)
    resumed = Dialogue.restore(state, build_user("passive", second_user.model, scenario))
    for turn in script[1:]:
        asyncio.run(resumed.step(turn))

    def seen(state: DialogueState) -> tuple:
        """The state with each message as role and text (inspect gives every message object its own id)."""
        return state.model_dump(exclude={"messages"}), [(m.role, m.text) for m in state.messages]

    assert seen(resumed.state) == seen(whole.state)
    assert resumed.state.final == FINAL and resumed.state.asked == 2
    # the user model rebuilt from the turns was sent what the uninterrupted one was sent: the earlier exchange too
    assert [c.text for c in second_user.calls] == [c.text for c in whole_user.calls[1:]]
    assert "How detailed?" in second_user.calls[0].text and "Reply 1." in second_user.calls[0].text


def test_a_reply_can_come_later_and_the_pending_question_survives_a_save():
    scenario = make_scenario()
    dialogue = Dialogue.start(
        scenario.id, discovery_rules("tools", limit=1), discovery_opening(scenario.problem, DialogueStyle(), 1)
    )
    asked = asyncio.run(dialogue.step(ask("How detailed?", "Analogies?").message))
    assert (asked.pending, asked.kind, asked.messages) == ("How detailed?", "question", ())
    with pytest.raises(RuntimeError, match="waiting for the user's reply"):
        asyncio.run(dialogue.step(FINAL))
    restored = Dialogue.restore(DialogueState.model_validate_json(dialogue.state.model_dump_json()))
    answered = asyncio.run(restored.reply("Step by step, please."))  # typed by a person, say
    first, second = answered.messages
    assert (first.role, first.tool_call_id, second.tool_call_id) == ("tool", "c1", "c2")
    assert first.text.startswith("Step by step, please.\n\n(You have used all 1 of your questions.")
    assert restored.hints().tool_choice == "none"  # the budget is spent: the tool is withdrawn
    assert asyncio.run(restored.step(FINAL)).done
    record = restored.state.record()
    assert [(t.kind, t.content) for t in record.turns] == [
        ("question", "How detailed?"),
        ("reply", "Step by step, please."),
        ("answer", FINAL),
    ]
    assert (record.stop_reason, record.violations) == ("budget", ["several calls"])
    with pytest.raises(RuntimeError, match="has ended"):
        asyncio.run(restored.step(FINAL))


def test_a_question_asked_past_the_budget_is_refused_without_calling_the_user():
    scenario = make_scenario()
    user = Scripted(user_reply)
    dialogue = Dialogue.start(
        scenario.id, discovery_rules("tools", limit=1), [], build_user("passive", user.model, scenario)
    )
    assert asyncio.run(dialogue.ask_for_tool("Depth?")).startswith("Reply 1.\n\n(You have used all 1")
    refused = asyncio.run(dialogue.ask("Analogies?"))
    assert refused.refused and len(user.calls) == 1
    assert (
        refused.text == "No more questions: you have used all 1 of them, and this one was not asked. Answer now: "
        "give your complete response to the task, without a tool call."
    )
    dialogue.finish(f"ANSWER: {FINAL}")
    record = dialogue.state.record()
    assert (record.stop_reason, record.unmarked_turns, record.final_response) == ("budget", 1, FINAL)


def test_the_targeted_user_in_the_environment_maps_with_the_episodes_own_seeded_judge():
    def judge(call: Call, index: int) -> str:
        if "The assistant's question:" in call.text:
            return json.dumps({"about": ["Explanation depth"]})
        return grading(call, index)

    user, grader = Scripted(user_reply), Scripted(judge)
    episode = Episode(make_scenario(), user.model, grader.model, user_type="targeted", seed=7, audit=False)
    episode.reset()
    asked = episode.step("QUESTION: How detailed should it be?")
    assert asked.info["revealed"] == ["Explanation depth"]
    done = episode.step(f"ANSWER: {FINAL}")
    assert done.done and done.info["score"]["pref_align"] == pytest.approx(3.8)
    mapping = [c for c in grader.calls if "The assistant's question:" in c.text]
    assert len(mapping) == 1
    grader_seed = call_seed(seed_scope(7), "s1", "discovery", 1, "grader")
    assert mapping[0].config.seed == grader_seed
    # the user model was shown only the mapped attribute
    assert "Explanation depth" in user.calls[0].system and "Use of analogies" not in user.calls[0].system
    episode.close()
