"""PrefDisco as an RL environment: the episode, its reward against what ``prefdisco eval`` records, the split by
problem, and the gymnasium and verl adapters — all on scripted models (tests/scripted.py)."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import inspect
import json
import math
import sys
import types
import warnings
from pathlib import Path

import gymnasium
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessageAssistant, ContentReasoning, ContentText, ModelOutput

import prefdisco.env
from prefdisco.env import Episode, RewardComponents, RewardConfig, split_scenarios
from prefdisco.env.gym import AnyText, PrefDiscoEnv
from prefdisco.env.roles import ROLE_DEFAULTS
from prefdisco.env.verl import INTERACTION_NAME, PrefDiscoInteraction, episode_reward
from prefdisco.errors import UserError
from prefdisco.evaluation.running.task import build_task
from prefdisco.evaluation.settings.config import RunConfig
from prefdisco.schema import Problem
from prefdisco.training.export import VERL_INTERACTION, verl_rows
from prefdisco.training.runs import Trial
from scripted import Call, Scripted, constant, make_persona, make_scenario, replies

# The judge's level per criterion: PrefAlign = 0.5·5 + 0.3·3 + 0.2·2 = 3.8 (make_scenario's weights).
LEVELS = {"Explanation depth": 5, "Use of analogies": 3, "Technical vocabulary": 2}
PREF_ALIGN = 3.8
# The audit of a two-question dialogue: turn 1 helped with the task (critical), turn 2 is clean.
AUDIT = {
    "t1": {
        "asked": {"a1": True, "a2": False, "a3": False},
        "revealed": {"a1": True, "a2": False, "a3": False},
        "hallucinated": False,
        "contradicted": False,
        "helped_task": True,
        "broke_character": False,
    },
    "t2": {
        "asked": {"a1": False, "a2": True, "a3": False},
        "revealed": {"a1": False, "a2": True, "a3": False},
        "hallucinated": False,
        "contradicted": False,
        "helped_task": False,
        "broke_character": False,
    },
}
TURNS = (
    "<think>SECRET-THOUGHT-1: they look like a mechanic</think>QUESTION: How detailed should I be?",
    "QUESTION: Do you like analogies?",
    "<think>SECRET-THOUGHT-2</think>ANSWER: The answer is B: 3 trips.",
)
WEIGHTS = RewardConfig(w_pref=1.0, w_correct=0.5, w_questions=-0.1, w_critical=-0.25)
# by hand: (3.8 - 1) / 4 = 0.7; + 0.5 · 1 (correct) - 0.1 · 2 (questions) - 0.25 · 1 (critical turn) = 0.75
REWARD = 0.75


def grading(call: Call, index: int) -> str:
    """The judge: a level per criterion, the audit above for the audit prompt, and the response's quality."""
    if "checking a conversation" in call.text:
        return json.dumps(AUDIT)
    if '{"reasoning": N, "completeness": N, "facts": N}' in call.text:
        return json.dumps({"reasoning": 4, "completeness": 4, "facts": 5})
    for attribute, level in LEVELS.items():
        if f"The preference: {attribute}" in call.text:
            return json.dumps({"score": level})
    raise AssertionError("unexpected grader call")


def models():
    return Scripted(replies("Very detailed, please.", "Yes, machine ones.")), Scripted(grading)


def gymnasium_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if "gymnasium" in w.filename]


def make_env(scenarios, user, grader, **options) -> gymnasium.Env:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gymnasium.make(
            "PrefDisco-v0", scenarios=scenarios, user_model=user.model, judge_model=grader.model, **options
        )
    assert gymnasium_warnings(caught) == []  # gymnasium's checks of the spaces found nothing
    return env


def play(env, turns, **reset):
    obs, info = env.reset(**reset)
    steps = []
    for turn in turns:
        steps.append(env.step(turn))
        if steps[-1][2]:
            break
    return obs, info, steps


# -- the episode against prefdisco eval ----------------------------------------------------------------------


def test_reward_parts_equal_what_prefdisco_eval_records(tmp_path):
    scenario = make_scenario()
    user, grader = models()
    env = make_env([scenario], user, grader, reward=WEIGHTS)
    _, _, steps = play(env, TURNS)
    assert [s[2] for s in steps] == [False, False, True] and not any(s[3] for s in steps)
    obs, reward, _, _, info = steps[-1]
    assert obs == "" and reward == pytest.approx(REWARD)
    assert info["masked"] is False and info["mask_reason"] is None
    parts = info["reward_components"]
    assert parts["pref_align"] == pytest.approx(PREF_ALIGN)
    assert (parts["correct"], parts["n_questions"], parts["user_critical_errors"]) == (1, 2, 1)
    assert parts["weights"] == {
        "w_pref": 1.0, "w_correct": 0.5, "w_questions": -0.1, "w_critical": -0.25, "w_held": 0.0,
    }  # fmt: skip
    assert parts["correct_after_pushback"] is None  # no pushback: not measured, and not weighed

    # the same turns through prefdisco eval: the same scenario, the same user and judge scripts
    eval_user, eval_grader = models()
    [log] = inspect_eval(
        build_task([scenario], mode="discovery"),
        model=Scripted(replies(*TURNS)).model,
        model_roles={"user": eval_user.model, "grader": eval_grader.model},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    recorded = log.samples[0].scores["prefdisco_scorer"]
    for key in ("pref_align", "correct", "n_questions", "user_critical_errors"):
        assert recorded.value[key] == pytest.approx(parts[key]), key
    assert info["score"] == recorded.value  # every column of the score, elicitation metrics included
    assert info["final_response"] == recorded.answer == "The answer is B: 3 trips."
    assert info["turns"] == recorded.metadata["turns"]
    # the user was asked the same questions with the same prompts
    assert [c.text for c in user.calls] == [c.text for c in eval_user.calls]
    env.close()


def test_the_opening_is_the_discovery_prompt_and_the_problem():
    scenario = make_scenario()
    user, grader = models()
    episode = Episode(scenario, user.model, grader.model, max_questions=3)
    opening = episode.reset()
    assert [m["role"] for m in opening] == ["system", "user"]
    assert "at most 3 questions" in opening[0]["content"] and "QUESTION:" in opening[0]["content"]
    assert opening[1]["content"] == scenario.problem.prompt_text()
    episode.close()


def test_reasoning_is_removed_before_the_user_and_the_judge_see_a_turn():
    user, grader = models()
    env = make_env([make_scenario()], user, grader, reward=WEIGHTS)
    play(env, TURNS)
    assert [c.messages[-1].text for c in user.calls] == ["How detailed should I be?", "Do you like analogies?"]
    seen = "\n".join(c.text for c in user.calls + grader.calls)
    assert "SECRET-THOUGHT" not in seen
    assert "The answer is B: 3 trips." in seen  # the judge did see the visible answer
    # the assistant's own history keeps its turns as sent
    assert env.unwrapped.episode.messages[2]["content"] == TURNS[0]
    env.close()


def test_reasoning_blocks_of_a_model_output_never_reach_the_user():
    user, grader = models()
    episode = Episode(make_scenario(), user.model, grader.model)
    episode.reset()
    message = ChatMessageAssistant(
        content=[ContentReasoning(reasoning="BLOCK-THOUGHT"), ContentText(text="QUESTION: Steps or summary?")]
    )
    result = episode.step(ModelOutput.from_message(message))
    assert result.observation == "Very detailed, please." and not result.done
    assert "BLOCK-THOUGHT" not in user.calls[0].text
    episode.close()


def test_the_budget_ends_the_episode_whatever_the_last_turn_says():
    user, grader = Scripted(constant("Short.")), Scripted(grading)
    env = make_env([make_scenario()], user, grader, max_questions=2)
    _, _, steps = play(env, ["QUESTION: Depth?", "QUESTION: Analogies?", "QUESTION: One more?"])
    assert [s[2] for s in steps] == [False, False, True]
    assert steps[0][0] == "Short."
    assert "used all 2 of your questions" in steps[1][0]
    info = steps[2][4]
    assert info["stop_reason"] == "budget" and info["n_questions"] == 2 and len(user.calls) == 2
    assert info["final_response"] == "One more?"  # the turn after the budget is the answer, markers stripped
    with pytest.raises(RuntimeError, match="reset"):
        env.unwrapped.episode.step("ANSWER: again")
    env.close()


def test_an_invalid_judgement_masks_the_reward_and_never_scores_it():
    user, grader = Scripted(constant("Short.")), Scripted(constant("no json here"))
    episode = Episode(make_scenario(), user.model, grader.model)
    episode.reset()
    result = episode.step("ANSWER: B")
    assert result.done and result.reward is None
    assert result.info["masked"] is True and "PrefAlign" in result.info["mask_reason"]
    assert result.info["reward_components"]["pref_align"] is None
    # gymnasium always gets a finite float: masked_reward (default 0.0), and info says it was masked
    for options, expected in (({}, 0.0), ({"masked_reward": -1.0}, -1.0)):
        env = make_env([make_scenario()], user, grader, **options)  # gymnasium's checker warns of no NaN
        env.reset(seed=0)
        _, reward, terminated, _, info = env.step("ANSWER: B")
        assert terminated and reward == expected and isinstance(reward, float) and info["masked"] is True
        env.close()
    with pytest.raises(UserError, match="masked_reward: expected a finite number, got nan"):
        make_env([make_scenario()], user, grader, masked_reward=math.nan)


def test_reward_arithmetic_and_masking_rules():
    config = RewardConfig(w_pref=2.0, w_correct=1.0, w_questions=-0.5, w_critical=-1.0)
    # 2 · (5 - 1) / 4 + 1 · 0 - 0.5 · 3 - 1 · 2 = 2 - 1.5 - 2 = -1.5
    assert config.reward(RewardComponents(5.0, 0, 3, 2)).value == pytest.approx(-1.5)
    # no question: nothing to audit, so critical errors are 0, not missing: 2 · 0.5 + 1 = 2
    assert config.reward(RewardComponents(3.0, 1, 0, None)).value == pytest.approx(2.0)
    assert "audit" in (config.reward(RewardComponents(3.0, 1, 1, None)).mask_reason or "")
    assert "correctness" in (config.reward(RewardComponents(3.0, None, 1, 0)).mask_reason or "")
    # a part with weight 0 is not needed: (3 - 1) / 4 = 0.5
    assert RewardConfig(w_correct=0.0).reward(RewardComponents(3.0, None, 1, None)).value == pytest.approx(0.5)
    with pytest.raises(UserError, match=r"^reward: w_prefalign: Extra inputs are not permitted"):
        RewardConfig.parse({"w_prefalign": 1.0})


# -- the split by problem ------------------------------------------------------------------------------------


def four_problems():
    """Four problems of one benchmark, two personas each."""
    out = []
    for p in range(4):
        problem = Problem(
            id=f"prob-{p}", benchmark="demo", domain="math", question=f"Q{p}?", choices=["2", "3"], answer="B",
            answer_type="letter",
        )  # fmt: skip
        for q in range(2):
            out.append(make_scenario(f"s{p}-{q}", persona=make_persona(f"p{q}"), problem=problem))
    return out


def hand_train_problems(seed: int, ids: list[str], k: int) -> set[str]:
    rank = {i: int.from_bytes(hashlib.sha256(f"{seed}\x1fdemo\x1f{i}".encode()).digest()[:8], "big") for i in ids}
    return set(sorted(ids, key=lambda i: rank[i])[:k])


def test_split_is_by_problem_seeded_and_independent_of_order():
    scenarios = four_problems()
    split = split_scenarios(scenarios, 0.5, seed=3)
    expected = hand_train_problems(3, [f"prob-{p}" for p in range(4)], 2)  # floor(0.5 · 4) = 2 problems
    assert {s.problem.id for s in split.train} == expected
    assert {s.problem.id for s in split.eval} == {f"prob-{p}" for p in range(4)} - expected
    assert len(split.train) == len(split.eval) == 4  # both personas of a problem on one side
    again = split_scenarios(list(reversed(scenarios)), 0.5, seed=3)
    assert {s.id for s in again.train} == {s.id for s in split.train}
    assert split.record()["train_problems"] == [f"demo/{p}" for p in sorted(expected)]
    with pytest.raises(UserError, match=r"^train_fraction: expected a fraction in \(0, 1\], got 0"):
        split_scenarios(scenarios, 0)


def test_a_training_env_refuses_evaluation_scenarios_and_records_the_side():
    scenarios = four_problems()
    split = split_scenarios(scenarios, 0.5, seed=3)
    user, grader = Scripted(constant("Short.")), Scripted(grading)
    env = make_env(scenarios, user, grader, train_fraction=0.5, split_seed=3, split="train")
    train_ids = {s.id for s in split.train}
    for seed in range(8):
        _, info = env.reset(seed=seed)
        assert info["scenario_id"] in train_ids and info["split"] == "train"
    held = split.eval[0]
    refusal = rf"^scenario {held.id} \(problem demo/{held.problem.id}\) is on the evaluation side of the split"
    with pytest.raises(UserError, match=refusal):
        env.reset(options={"scenario_id": held.id})
    with pytest.raises(UserError, match="training: a training episode needs the split"):
        Episode(held, user.model, grader.model, training=True)
    # without a side, every scenario plays and info records its side
    open_env = make_env(scenarios, user, grader, train_fraction=0.5, split_seed=3)
    _, info = open_env.reset(options={"scenario_id": held.id})
    assert info["split"] == "eval"
    _, _, _, _, info = open_env.step("ANSWER: B")
    assert info["split"] == "eval"
    env.close()
    open_env.close()


# -- gymnasium -----------------------------------------------------------------------------------------------


def test_gymnasium_make_works_after_importing_prefdisco_env(tmp_path):
    assert prefdisco.env.ENV_ID in gymnasium.registry
    path = tmp_path / "scenarios.jsonl"
    path.write_text(make_scenario().model_dump_json() + "\n")
    user, grader = models()
    env = make_env(str(path), user, grader)
    assert isinstance(env.unwrapped, PrefDiscoEnv)
    assert isinstance(env.observation_space, AnyText) and env.observation_space.contains("ünïcode — text\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first, info = env.reset(seed=1)
        obs, reward, terminated, truncated, info_step = env.step("QUESTION: Steps?")
    assert gymnasium_warnings(caught) == []  # the passive checker looks at the first reset and step
    assert first == "\n\n".join(m["content"] for m in info["messages"])
    info = info_step
    assert (obs, reward, terminated, truncated) == ("Very detailed, please.", 0.0, False, False)
    assert info["questions_left"] == 4
    with pytest.raises(UserError, match="reset options: unknown persona"):
        env.reset(options={"persona": "p1"})
    env.close()


def test_bad_options_fail_when_the_env_is_made():
    user, grader = models()
    with pytest.raises(UserError, match=r"^max_questions: expected 0..5"):
        make_env([make_scenario()], user, grader, max_questions=9)
    with pytest.raises(UserError, match=r"^user_type: expected one of passive"):
        make_env([make_scenario()], user, grader, user_type="chatty")
    with pytest.raises(UserError, match=r"^user_model: expected an inspect model or a 'provider/name' string"):
        gymnasium.make("PrefDisco-v0", scenarios=[make_scenario()], user_model="gpt", judge_model=grader.model)


def test_the_sync_api_refuses_a_running_loop():
    user, grader = models()
    episode = Episode(make_scenario(), user.model, grader.model)

    async def inside() -> None:
        with pytest.raises(RuntimeError, match="await areset"):
            episode.reset()
        await episode.areset()
        assert not (await episode.astep("QUESTION: Steps?")).done

    asyncio.run(inside())


def test_role_defaults_are_prefdisco_evals():
    config = RunConfig(models=["m/a"], user_model="m/u", grader_model="m/g", log_dir=Path("x"))
    assert ROLE_DEFAULTS["user"]["temperature"] == config.role_config("user").temperature
    assert ROLE_DEFAULTS["grader"]["temperature"] == config.role_config("grader").temperature


# -- verl ----------------------------------------------------------------------------------------------------


def test_the_verl_adapter_meets_basinteractions_interface():
    # verl is not installed in the tests: the adapter stands on its own with the same methods
    assert importlib.util.find_spec("verl") is None and PrefDiscoInteraction.__mro__[1] is object
    for name in ("start_interaction", "generate_response", "calculate_score", "finalize_interaction"):
        assert inspect.iscoroutinefunction(getattr(PrefDiscoInteraction, name)), name
    params = {
        name: list(inspect.signature(getattr(PrefDiscoInteraction, name)).parameters)
        for name in ("__init__", "start_interaction", "generate_response", "calculate_score", "finalize_interaction")
    }
    assert params == {
        "__init__": ["self", "config"],
        "start_interaction": ["self", "instance_id", "kwargs"],
        "generate_response": ["self", "instance_id", "messages", "kwargs"],
        "calculate_score": ["self", "instance_id", "kwargs"],
        "finalize_interaction": ["self", "instance_id", "kwargs"],
    }
    start = inspect.signature(PrefDiscoInteraction.start_interaction).parameters["instance_id"]
    assert start.default is None


def test_a_verl_rollout_of_an_exported_row_scores_like_the_episode(tmp_path):
    scenario = make_scenario()
    path = tmp_path / "scenarios.jsonl"
    path.write_text(scenario.model_dump_json() + "\n")
    user, grader = models()
    config = {
        "name": INTERACTION_NAME, "scenarios": str(path), "user_model": user.model, "judge_model": grader.model,
        "reward": {"w_pref": 1.0, "w_correct": 0.5, "w_questions": -0.1, "w_critical": -0.25},
    }  # fmt: skip
    interaction = PrefDiscoInteraction(config)
    assert interaction.name == "prefdisco" and interaction.config == config

    # the row prefdisco export-training --format verl writes for this scenario
    opening = Episode(scenario, user.model, grader.model).opening()
    trial = Trial("m", "t", scenario.id, "discovery", None, 1, 4.0, True, False, [*opening], "B")
    [row] = verl_rows([trial], {scenario.id: scenario}, None, "discovery").rows
    kwargs = row["extra_info"]["interaction_kwargs"]
    assert kwargs == {"name": INTERACTION_NAME, "scenario_id": scenario.id} and VERL_INTERACTION == INTERACTION_NAME

    async def rollout() -> list[tuple]:
        instance = await interaction.start_interaction("req-1", **kwargs)
        assert instance == "req-1"
        messages = list(row["prompt"])
        out = []
        for turn in TURNS:
            messages.append({"role": "assistant", "content": turn})
            out.append(await interaction.generate_response(instance, messages, **kwargs))
            messages.append({"role": "user", "content": out[-1][1]})
        out.append((await interaction.calculate_score(instance),))
        await interaction.finalize_interaction(instance)
        out.append((await interaction.calculate_score(instance),))
        return out

    first, second, last, (score,), (after,) = asyncio.run(rollout())
    assert first[:3] == (False, "Very detailed, please.", None) and first[3]["opening_matches"] is True
    assert second[0] is False and second[2] is None
    done, response, reward, metadata = last
    assert done is True and response == "" and reward == pytest.approx(REWARD) and score == reward
    assert metadata["reward_components"]["n_questions"] == 2 and metadata["masked"] is False
    assert after is None
    # verl's reward manager hands the reward function extra_info["turn_scores"]: only the final score is there
    assert episode_reward({"turn_scores": [reward]}) == pytest.approx(REWARD)
    assert episode_reward({"turn_scores": []}) is None


def test_the_verl_adapter_refuses_bad_config_and_unknown_scenarios(tmp_path):
    path = tmp_path / "scenarios.jsonl"
    path.write_text(make_scenario().model_dump_json() + "\n")
    user, grader = models()
    base = {"scenarios": str(path), "user_model": user.model, "judge_model": grader.model}
    with pytest.raises(UserError, match=r"^prefdisco interaction config: max_turns: Extra inputs"):
        PrefDiscoInteraction({**base, "max_turns": 3})
    interaction = PrefDiscoInteraction(base)
    with pytest.raises(UserError, match=r"^interaction_kwargs.scenario_id: expected a scenario of"):
        asyncio.run(interaction.start_interaction("r", name="prefdisco", scenario_id="nope"))

    # rollouts verl abandons are not kept forever: beyond max_instances the oldest is dropped
    bounded = PrefDiscoInteraction({**base, "max_instances": 1})

    async def two() -> None:
        await bounded.start_interaction("a", scenario_id="s1")
        await bounded.start_interaction("b", scenario_id="s1")
        with pytest.raises(KeyError, match="no running prefdisco interaction 'a'"):
            await bounded.generate_response("a", [{"role": "assistant", "content": "ANSWER: B"}])
        done, _, _, _ = await bounded.generate_response("b", [{"role": "assistant", "content": "QUESTION: Steps?"}])
        assert done is False

    asyncio.run(two())


def test_a_preset_that_asks_again_follows_an_early_answer_with_the_final_instruction():
    user, grader = Scripted(constant("Short.")), Scripted(grading)
    episode = Episode(make_scenario(), user.model, grader.model, preset="paper")
    episode.reset()
    early = episode.step("ANSWER: B")
    assert not early.done and early.reward is None
    assert early.observation is not None and early.observation.startswith("(That is the end of the questions.")
    final = episode.step("QUESTION: Are you sure?")  # the turn after the instruction is the answer, whatever it says
    assert final.done and final.info["final_response"] == "Are you sure?" and final.info["stop_reason"] == "answered"
    assert final.info["n_questions"] == 0 and user.calls == []


def test_with_verl_installed_the_adapter_subclasses_its_baseinteraction(monkeypatch, tmp_path):
    """A stand-in for verl's ``verl/interactions/base.py`` (same constructor: ``config``, ``name``)."""

    class BaseInteraction:
        def __init__(self, config):
            self.config = config
            self.name = config.get("name", "interaction_agent")

    base = types.ModuleType("verl.interactions.base")
    base.BaseInteraction = BaseInteraction
    for name, module in (("verl", types.ModuleType("verl")), ("verl.interactions", types.ModuleType("x"))):
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setitem(sys.modules, "verl.interactions.base", base)
    source = Path(prefdisco.env.verl.__file__)
    spec = importlib.util.spec_from_file_location("prefdisco_env_verl_with_verl", source)
    assert spec is not None and spec.loader is not None
    copy = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, copy)  # pydantic resolves annotations through it
    spec.loader.exec_module(copy)
    assert issubclass(copy.PrefDiscoInteraction, BaseInteraction)
    path = tmp_path / "scenarios.jsonl"
    path.write_text(make_scenario().model_dump_json() + "\n")
    user, grader = models()
    made = copy.PrefDiscoInteraction(
        {"name": "prefdisco", "scenarios": str(path), "user_model": user.model, "judge_model": grader.model}
    )
    assert made.name == "prefdisco" and made.config["scenarios"] == str(path)
