"""``--preset paper``: the paper's evaluator protocol as data — its settings, its prompts, its end rule."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset
from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput, ModelUsage, get_model

from prefdisco.demo import demo_scenarios
from prefdisco.dialogue.conditions import baseline, discovery, fixed_k, oracle
from prefdisco.dialogue.presets import PAPER, PRESETS
from prefdisco.dialogue.scenario import scenario_sample
from prefdisco.errors import UserError
from prefdisco.evaluation.running.evalset import build_tasks
from prefdisco.evaluation.running.guard import RUN_FILE, guard_run
from prefdisco.evaluation.running.task import build_task
from prefdisco.evaluation.settings.config import RunConfig
from prefdisco.evaluation.settings.preset_rules import preset_settings
from prefdisco.scoring.scorer import prefdisco_scorer
from scripted import Scripted, constant, make_scenario, replies


def config_for(preset: str, tmp_path: Path, **given: object) -> RunConfig:
    config = RunConfig(
        models=["m/a"], user_model="m/u", grader_model="m/g", log_dir=tmp_path, **preset_settings(preset, given)
    )
    config.validate()
    return config


def run_task(task: Task, assistant, user=None, grader=None, tmp_path=None):
    user = user or Scripted(constant("Short."))
    grader = grader or Scripted(constant('{"score": 4}'))
    [log] = inspect_eval(
        task,
        model=assistant.model,
        model_roles={"user": user.model, "grader": grader.model},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    return log


def solver_task(solver) -> Task:
    """A one-scenario task around a condition solver (the paper's style is the solvers' ``preset`` argument)."""
    return Task(dataset=MemoryDataset([scenario_sample(make_scenario())]), solver=solver, scorer=prefdisco_scorer())


def score_of(log):
    return log.samples[0].scores["prefdisco_scorer"]


# --- settings ------------------------------------------------------------------------------------------------


def test_default_preset_changes_nothing(tmp_path):
    assert config_for("default", tmp_path) == RunConfig(
        models=["m/a"], user_model="m/u", grader_model="m/g", log_dir=tmp_path
    )
    assert PRESETS["default"].settings == {}


def test_paper_temperatures_reach_the_roles_generate_config(tmp_path):
    config = config_for("paper", tmp_path)
    assert config.role_config("assistant").temperature == 0.7
    assert config.role_config("user").temperature == 0.4
    assert config.role_config("grader").temperature == 0.1
    default = config_for("default", tmp_path)
    assert (default.role_config("user").temperature, default.role_config("grader").temperature) == (0.7, 0.0)


@dataclass
class Recording:
    """A mock model built with a role's GenerateConfig, keeping the config each call arrived with."""

    config: GenerateConfig
    reply: str
    configs: list[GenerateConfig] = field(default_factory=list)
    model: Model = field(init=False)

    def __post_init__(self) -> None:
        def outputs(
            input: list[ChatMessage], tools: object, tool_choice: object, config: GenerateConfig
        ) -> ModelOutput:
            self.configs.append(config)
            output = ModelOutput.from_content(model="mockllm", content=self.reply)
            output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
            return output

        self.model = get_model("mockllm/model", config=self.config, custom_outputs=outputs, memoize=False)


def test_paper_temperatures_arrive_at_the_user_and_judge_calls(tmp_path):
    config = config_for("paper", tmp_path / "cfg")
    user = Recording(config.role_config("user"), "Short.")
    grader = Recording(config.role_config("grader"), '{"score": 4}')
    assistant = Scripted(replies("QUESTION: How deep?", "ANSWER: 3"))
    task = build_task([make_scenario()], RunConfig(user_type=config.user_type, audit=False), "discovery")
    run_task(task, assistant, user, grader, tmp_path=tmp_path)
    assert [c.temperature for c in user.configs] == [0.4]
    assert grader.configs and {c.temperature for c in grader.configs} == {0.1}


def test_a_flag_that_agrees_with_the_preset_is_accepted_one_that_contradicts_it_refused(tmp_path):
    assert config_for("paper", tmp_path, user_temperature=0.4, temperature=0.7).user_temperature == 0.4
    with pytest.raises(UserError, match=r"--user-temperature 0.9 contradicts --preset paper, which fixes it to 0.4"):
        preset_settings("paper", {"user_temperature": 0.9})
    with pytest.raises(UserError, match=r"--judge-temperature 0.5 contradicts --preset paper, which fixes it to 0.1"):
        preset_settings("paper", {"grader_temperature": 0.5})
    assert config_for("default", tmp_path, grader_temperature=0.5).role_config("grader").temperature == 0.5
    with pytest.raises(UserError, match=r"--user-type cooperative contradicts --preset paper"):
        preset_settings("paper", {"user_type": "cooperative"})
    with pytest.raises(UserError, match=r"--judge structured contradicts"):
        preset_settings("paper", {"judge": "structured"})
    # settings the preset does not fix stay free; under default every flag is free
    assert config_for("paper", tmp_path, logprobs=None).max_tokens is None
    assert config_for("default", tmp_path, user_temperature=0.9, user_type="cooperative").user_temperature == 0.9


def test_a_hand_built_config_that_contradicts_its_preset_is_refused(tmp_path):
    config = RunConfig(models=["m/a"], user_model="m/u", grader_model="m/g", log_dir=tmp_path, preset="paper")
    with pytest.raises(UserError, match="contradicts --preset paper"):
        config.validate()
    with pytest.raises(UserError, match="--preset: unknown 'nosuch'"):
        preset_settings("nosuch", {})


def test_run_json_records_the_preset_and_refuses_another_one(tmp_path):
    paper = config_for("paper", tmp_path)
    guard_run(tmp_path, paper.fingerprint("set-1", 1))
    recorded = json.loads((tmp_path / RUN_FILE).read_text())
    assert recorded["preset"] == "paper"
    assert (recorded["user_type"], recorded["user_temperature"], recorded["grader_temperature"]) == (
        "paper_passive",
        0.4,
        0.1,
    )
    # the same settings chosen by hand under default are still another protocol (its prompts differ)
    by_hand = config_for("default", tmp_path, **dict(PAPER.settings))
    with pytest.raises(UserError, match='preset = "paper", not "default"'):
        guard_run(tmp_path, by_hand.fingerprint("set-1", 1))


def test_the_cli_refuses_a_contradicting_flag_in_one_line(tmp_path):
    scenarios = tmp_path / "s.jsonl"
    scenarios.write_text(demo_scenarios()[0].model_dump_json() + "\n")
    args = ["eval", str(scenarios), "--model", "mockllm/model", "--log-dir", str(tmp_path / "run")]
    result = subprocess.run(
        [sys.executable, "-m", "prefdisco", *args, "--preset", "paper", "--user-temperature", "0.9"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "error: --user-temperature 0.9 contradicts --preset paper, which fixes it to 0.4; "
        "drop the flag, or use --preset default to choose it yourself"
    )
    assert not (tmp_path / "run").exists()


def test_a_runs_tasks_follow_its_preset(tmp_path):
    """``prefdisco eval --preset paper`` builds its tasks from the config: the paper's framing and end rule reach
    the dialogue, and the task records the preset; under ``default`` the toolkit's own protocol runs."""
    scenario = make_scenario()
    openings = {"paper": "Could you help me with this task?", "default": scenario.problem.prompt_text()}
    for preset, opening in openings.items():
        config = config_for(preset, tmp_path / preset, modes=["discovery"])
        [task] = build_tasks([scenario], config)
        assert task.metadata["prefdisco_preset"] == preset
        assistant = Scripted(replies("QUESTION: How deep?", "ANSWER: draft", "Final: 3"))
        log = run_task(task, assistant, tmp_path=tmp_path / preset / "logs")
        assert assistant.calls[0].messages[-1].text.startswith(opening)
        expected = "Final: 3" if preset == "paper" else "draft"  # paper: an early answer is asked again
        assert score_of(log).answer == expected


# --- the simulated user --------------------------------------------------------------------------------------


def test_the_paper_user_does_not_see_the_problem_the_default_user_does(tmp_path):
    scenario = make_scenario()
    systems = {}
    for preset in ("default", "paper"):
        user = Scripted(constant("Short."))
        user_type = config_for(preset, tmp_path).user_type
        task = build_task([scenario], RunConfig(user_type=user_type, audit=False), "discovery")
        run_task(task, Scripted(replies("QUESTION: How deep?", "ANSWER: 3")), user, tmp_path=tmp_path / preset)
        systems[preset] = user.calls[0].system
    assert scenario.problem.question in systems["default"]
    paper = systems["paper"]
    assert scenario.problem.question not in paper and "12 cars" not in paper
    assert not any(choice in paper.splitlines() for choice in ("A. 2", "B. 3"))
    # it still knows who it is and what it wants
    assert scenario.persona.name in paper
    assert all(item.value in paper for item in scenario.profile.items)
    assert "0.5" not in paper and "RUBRIC" not in paper


# --- the paper's prompts and end rule -------------------------------------------------------------------------


def test_paper_discovery_asks_again_after_an_early_answer_and_scores_the_reply(tmp_path):
    assistant = Scripted(replies("QUESTION: How deep?", "ANSWER: draft", "Here it is: 3 trips."))
    solver = discovery(user_type="paper_passive", preset="paper")
    log = run_task(solver_task(solver), assistant, tmp_path=tmp_path)
    assert len(assistant.calls) == 3
    first = assistant.calls[0].messages
    assert first[0].text.startswith("You are an assistant helping a person")
    assert first[-1].text.startswith("Could you help me with this task?")
    assert make_scenario().problem.question in first[-1].text
    closing = assistant.calls[2].messages[-1]
    assert closing.role == "user" and closing.text.startswith("(That is the end of the questions.")
    score = score_of(log)
    assert score.answer == "Here it is: 3 trips."  # the reply to the final instruction, not the early draft
    assert [t["kind"] for t in score.metadata["turns"]] == ["question", "reply", "answer", "answer"]
    assert score.value["n_questions"] == 1


def test_paper_budget_ends_with_the_final_instruction(tmp_path):
    assistant = Scripted(replies("QUESTION: One?", "QUESTION: Two?", "ANSWER: 3"))
    log = run_task(solver_task(discovery(max_questions=2, preset="paper")), assistant, tmp_path=tmp_path)
    assert len(assistant.calls) == 3
    last = assistant.calls[2].messages[-1].text
    assert last.startswith("Short.\n\n(That is the end of the questions.")
    assert score_of(log).answer == "3"


def test_paper_fixed_k_and_single_reply_conditions_use_the_paper_prompts(tmp_path):
    assistant = Scripted(replies("QUESTION: One?", "QUESTION: Two?", "ANSWER: 3"))
    log = run_task(solver_task(fixed_k(k=2, preset="paper")), assistant, tmp_path=tmp_path / "k")
    assert "exactly 2 clarifying questions" in assistant.calls[0].system
    assert "question 1 of 2" in assistant.calls[1].messages[-1].text
    assert "end of the questions" in assistant.calls[2].messages[-1].text
    assert score_of(log).answer == "3"

    scenario = make_scenario()
    oracle_model = Scripted(constant("B"))
    run_task(solver_task(oracle(preset="paper")), oracle_model, tmp_path=tmp_path / "o")
    system = oracle_model.calls[0].system
    assert scenario.persona.name in system and scenario.persona.backstory in system  # the persona, as in the paper
    assert all(item.value in system for item in scenario.profile.items) and "RUBRIC" not in system

    base = Scripted(constant("B"))
    run_task(solver_task(baseline(preset="paper")), base, tmp_path=tmp_path / "b")
    [message] = base.calls[0].messages
    assert message.role == "user" and message.text.startswith("Could you help me with this task?")


def test_the_default_style_is_the_toolkits_own(tmp_path):
    assistant = Scripted(replies("QUESTION: How deep?", "ANSWER: 3"))
    run_task(solver_task(discovery()), assistant, tmp_path=tmp_path)
    first = assistant.calls[0].messages
    assert first[-1].text == make_scenario().problem.prompt_text()
    assert "You may ask at most 5 questions" in first[0].text
    assert PAPER.style.ask_again and not PRESETS["default"].style.ask_again
