"""PrefDisco as a verifiers environment (``prefdisco.env.verifiers``, the ``verifiers`` extra), tested against the
real library: ``load_environment`` through verifiers' own evaluation entry point (``Environment.evaluate``), with a
scripted policy behind verifiers' own OpenAI chat-completions client (a fake ``AsyncOpenAI`` that answers each
request with the script's next turn), the simulated user and the judge scripted as in every env test. The reward
equals what PrefDisco's own ``Episode`` gives for the same turns, and the value by hand."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from hub_scripts import REWARD, TURNS, WEIGHTS, episode_result, roles
from prefdisco.env import Episode
from prefdisco.errors import UserError
from scripted import Scripted, constant, make_scenario
from test_env import four_problems


def load_environment(**kwargs: Any) -> Any:
    """``prefdisco.env.verifiers.load_environment``, imported when a test calls it: verifiers (the verifiers extra,
    which make test installs: a missing one fails here) takes seconds to import, so collection does not."""
    from prefdisco.env.verifiers import load_environment as load

    return load(**kwargs)


class ScriptedOpenAI:
    """What verifiers' chat-completions client calls on an ``AsyncOpenAI``: ``post`` of a chat completion, answered
    with the script's next turn (per scenario: the turn after the assistant turns the request already holds)."""

    base_url = "http://scripted.invalid/v1"

    def __init__(self, turns: tuple[str | dict[str, Any], ...]) -> None:
        self.turns = turns
        self.requests: list[dict[str, Any]] = []

    async def post(self, path: str, *, body: dict[str, Any], cast_to: Any, options: Any = None) -> httpx.Response:
        assert path == "/chat/completions"
        self.requests.append(body)
        done = sum(1 for m in body["messages"] if m["role"] == "assistant")
        turn = self.turns[min(done, len(self.turns) - 1)]
        message = {"role": "assistant", "content": turn} if isinstance(turn, str) else {"role": "assistant", **turn}
        completion = {
            "id": f"scripted-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    "message": message,
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        return httpx.Response(200, json=completion)

    async def close(self) -> None:
        pass


def evaluate(
    env: Any, turns: tuple[str | dict[str, Any], ...], rollouts: int = 1, **kwargs: Any
) -> tuple[dict[str, Any], ScriptedOpenAI]:
    from verifiers.clients import OpenAIChatCompletionsClient

    policy = ScriptedOpenAI(turns)
    client = OpenAIChatCompletionsClient(policy)
    results = asyncio.run(
        env.evaluate(
            client, "scripted-policy", num_examples=-1, rollouts_per_example=rollouts, max_concurrent=1,
            state_columns=["prefdisco"], on_progress=lambda *a, **k: None, **kwargs,
        )
    )  # fmt: skip
    return results, policy


def test_load_environment_runs_an_episode_through_verifiers_evaluate_with_the_episodes_reward():
    scenario = make_scenario()
    user, grader = roles()
    import verifiers as vf

    from prefdisco.env.verifiers import PrefDiscoVerifiersEnv

    env = load_environment(scenarios=[scenario], user_model=user.model, judge_model=grader.model, reward=WEIGHTS)
    assert isinstance(env, vf.MultiTurnEnv) and isinstance(env, PrefDiscoVerifiersEnv)
    results, policy = evaluate(env, TURNS)
    [output] = results["outputs"]
    assert output["reward"] == pytest.approx(REWARD)
    assert output["metrics"]["prefdisco_reward"] == pytest.approx(REWARD)
    assert output["metrics"]["pref_align"] == pytest.approx(4.0)
    assert output["metrics"]["prefdisco_masked"] == 0.0 and output["metrics"]["n_questions"] == 2.0
    assert output["error"] is None and output["stop_condition"] == "has_final_env_response"
    record = output["prefdisco"]
    assert (record["scenario_id"], record["trial"], record["opening_matches"]) == (scenario.id, 1, True)
    assert [s["kind"] for s in record["steps"]] == ["question", "question", "answer"]
    assert record["masked"] is False and record["reward_components"]["pref_align"] == pytest.approx(4.0)

    # the policy saw the episode's opening, then the simulated user's replies as user messages
    opening = Episode(scenario, user.model, grader.model).opening()
    first = policy.requests[0]["messages"]
    assert [(m["role"], m["content"]) for m in first] == [(m["role"], m["content"]) for m in opening]
    last = policy.requests[-1]["messages"]
    assert [m["role"] for m in last[2:]] == ["assistant", "user", "assistant", "user"]
    assert last[3]["content"].startswith("Very detailed, please.")
    assert [c.messages[-1].text for c in user.calls] == ["How detailed should I be?", "Do you like analogies?"]
    # the completion verifiers records is the dialogue after the opening, ending with the answer
    assert [m["role"] for m in output["completion"]][-1] == "assistant"
    assert output["completion"][-1]["content"] == TURNS[-1]

    # the same turns through PrefDisco's own Episode, on fresh scripts: the same reward and score
    result, user2, grader2 = episode_result(scenario)
    assert result.done and result.reward == pytest.approx(REWARD)
    assert output["reward"] == pytest.approx(result.reward)
    assert record["score"] == json.loads(json.dumps(result.info["score"], default=str))
    assert [c.text for c in user.calls] == [c.text for c in user2.calls]
    assert [c.text for c in grader.calls] == [c.text for c in grader2.calls]


def asks(*calls: tuple[str, str]) -> dict[str, Any]:
    """An assistant message of ``ask_user`` calls, as a chat completion carries them."""
    return {
        "content": None,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "ask_user", "arguments": json.dumps({"question": q})}}
            for i, q in calls
        ],
    }


def test_the_tool_protocol_asks_through_ask_user_and_withdraws_it_after_the_budget():
    """protocol tools through verifiers' own evaluate: the policy is offered ask_user, its first turn calls it twice
    (the first asked, the second answered one-question-at-a-time), its second once; the budget (2) is then spent, so
    the last request offers no tool, and the answer ends the rollout with the Episode's reward for the same turns."""
    from inspect_ai.model import ChatMessageAssistant
    from inspect_ai.tool import ToolCall

    scenario = make_scenario()
    user, grader = roles()
    env = load_environment(
        scenarios=[scenario], user_model=user.model, judge_model=grader.model, reward=WEIGHTS, ask="tools",
        max_questions=2,
    )  # fmt: skip
    turns = (
        asks(("c1", "How detailed should I be?"), ("c2", "And analogies?")),
        asks(("c3", "Do you like analogies?")),
        "The answer is B: 3 trips.",
    )
    results, policy = evaluate(env, turns)
    [output] = results["outputs"]
    assert output["error"] is None and output["stop_condition"] == "has_final_env_response"
    offered = [[t["function"]["name"] for t in r.get("tools") or []] for r in policy.requests]
    assert offered == [["ask_user"], ["ask_user"], []]  # withdrawn once the budget is spent
    assert "ask_user" in policy.requests[0]["messages"][0]["content"]  # the tool protocol's system prompt
    last = policy.requests[-1]["messages"]
    assert [m["role"] for m in last[2:]] == ["assistant", "tool", "tool", "assistant", "tool"]
    assert [m["tool_call_id"] for m in last if m["role"] == "tool"] == ["c1", "c2", "c3"]
    assert last[3]["content"].startswith("Very detailed, please.")
    assert last[4]["content"].startswith("One question at a time: only your first ask_user call")
    assert last[6]["content"].startswith("Yes, machine ones.")
    record = output["prefdisco"]
    assert [s["kind"] for s in record["steps"]] == ["question", "question", "answer"]
    assert record["steps"][0]["unmarked"] is True and record["n_questions"] == 2

    def as_turn(turn: str | dict[str, Any]) -> Any:  # the same turn as PrefDisco's engine takes it
        if isinstance(turn, str):
            return turn
        calls = [
            ToolCall(id=c["id"], function=c["function"]["name"], arguments=json.loads(c["function"]["arguments"]))
            for c in turn["tool_calls"]
        ]
        return ChatMessageAssistant(content="", tool_calls=calls)

    as_turns = tuple(as_turn(t) for t in turns)
    result, _, grader2 = episode_result(scenario, as_turns, ask="tools", max_questions=2)  # type: ignore[arg-type]
    assert output["reward"] == pytest.approx(result.reward)
    assert record["score"] == json.loads(json.dumps(result.info["score"], default=str))
    assert [c.text for c in grader.calls] == [c.text for c in grader2.calls]


def test_the_budget_ends_the_rollout_and_a_masked_episode_gets_masked_reward():
    user, grader = Scripted(constant("Short.")), Scripted(constant("not json"))  # every judgement invalid
    env = load_environment(
        scenarios=[make_scenario()], user_model=user.model, judge_model=grader.model, max_questions=1,
        masked_reward=-1.0, audit=False,
    )  # fmt: skip
    results, policy = evaluate(env, ("QUESTION: Depth?", "QUESTION: Analogies?"))
    [output] = results["outputs"]
    record = output["prefdisco"]
    assert [s["kind"] for s in record["steps"]][-1] == "answer" and len(record["steps"]) == 2
    assert record["steps"][-1]["stop_reason"] == "budget" and len(user.calls) == 1
    assert record["masked"] is True and "PrefAlign was not measured" in record["mask_reason"]
    assert output["reward"] == -1.0 and output["metrics"]["prefdisco_masked"] == 1.0
    # not measured is missing, never 0 on a 1-5 scale (issue 31, defect 6: it was 0.0, and vf-eval averaged it in)
    assert output["metrics"]["pref_align"] is None
    assert len(policy.requests) == 2


def test_a_split_gives_verifiers_a_train_and_an_eval_dataset():
    scenarios = four_problems()
    user, grader = roles()
    env = load_environment(
        scenarios=scenarios, user_model=user.model, judge_model=grader.model, train_fraction=0.5, split_seed=3
    )
    train, held_out = env.get_dataset(), env.get_eval_dataset()
    assert len(train) + len(held_out) == len(scenarios) and len(train) and len(held_out)
    assert {row["info"]["split"] for row in train} == {"train"}
    assert {row["info"]["split"] for row in held_out} == {"eval"}
    only_train = load_environment(
        scenarios=scenarios, user_model=user.model, judge_model=grader.model, train_fraction=0.5, split_seed=3,
        split="train",
    )  # fmt: skip
    assert sorted(r["info"]["scenario_id"] for r in only_train.get_dataset()) == sorted(
        r["info"]["scenario_id"] for r in train
    )
    assert env.split_record is not None and env.split_record["seed"] == 3


def test_options_are_refused_in_one_line():
    user, grader = roles()
    base = {"scenarios": [make_scenario()], "user_model": user.model, "judge_model": grader.model}
    for name in ("ask", "protocol"):  # the ask channel, and its older name read as it
        with pytest.raises(UserError, match=r"^ask: expected one of text, tools, got 'xml'"):
            load_environment(**base, **{name: "xml"})
    with pytest.raises(UserError, match=r"^trial: set by the environment"):
        load_environment(**base, trial=2)
    with pytest.raises(UserError, match=r"^masked_reward: expected a finite number"):
        load_environment(**base, masked_reward=float("nan"))
    with pytest.raises(UserError, match=r"^user_model: expected an inspect model"):
        load_environment(scenarios=[make_scenario()], judge_model=grader.model)
    with pytest.raises(UserError, match=r"^sessions: a verifiers rollout is one chat .* OpenEnv"):
        load_environment(**base, sessions="sessions.jsonl", arm="cold")


def test_verifiers_own_loader_finds_the_entry_point():
    from verifiers.utils.env_utils import load_environment as vf_load

    from prefdisco.env.verifiers import PrefDiscoVerifiersEnv

    user, grader = roles()
    env = vf_load("prefdisco.env.verifiers", scenarios=[make_scenario()], user_model=user.model,
                  judge_model=grader.model)  # fmt: skip
    assert isinstance(env, PrefDiscoVerifiersEnv) and env.env_id == "prefdisco"


@pytest.mark.slow
def test_vf_eval_runs_the_package_level_entry_point_in_its_own_workers(tmp_path, monkeypatch):
    """The hub's command line, ``vf-eval prefdisco``, offline: a mock OpenAI-compatible server plays the policy, the
    simulated user and the judge; verifiers loads ``prefdisco.load_environment`` again in its environment worker.
    Each rollout's reward is what PrefDisco's own Episode gives for the same turns on the same mock."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    from mock_openai import MockOpenAI
    from prefdisco.demo import demo_scenarios

    vf_eval = shutil.which("vf-eval") or str(Path(sys.executable).parent / "vf-eval")
    src = Path(__file__).resolve().parents[1] / "src"
    with MockOpenAI() as mock:
        model = f"openai-api/mock/m{mock.port}"
        args = {"user_model": model, "judge_model": model, "max_questions": 2, "seed": 0}
        env = {**os.environ, **mock.env("mock"), "PYTHONPATH": str(src), "POLICY_KEY": "sk-mock-key"}
        command = [
            vf_eval, "prefdisco", "-a", json.dumps(args), "-m", "policy", "-b", mock.base_url, "-k", "POLICY_KEY",
            "-n", "2", "-r", "1", "-c", "1", "-s", "-C", "prefdisco", "-o", str(tmp_path / "out"),
        ]  # fmt: skip
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        [results] = (tmp_path / "out").rglob("results.jsonl")
        rows = [json.loads(line) for line in results.read_text().splitlines()]
        assert len(rows) == 2
        scenarios = {s.id: s for s in demo_scenarios()}
        for key, value in mock.env("mock").items():
            monkeypatch.setenv(key, value)  # the Episode's roles, in this process
        for row in rows:
            record = row["prefdisco"]
            assert row["stop_condition"] == "has_final_env_response" and record["masked"] is False
            turns = [m["content"] for m in row["completion"] if m["role"] == "assistant"]
            episode = Episode(scenarios[record["scenario_id"]], model, model, max_questions=2, seed=0)
            episode.reset()
            for turn in turns:
                result = episode.step(turn)
            episode.close()
            assert result.done and row["reward"] == pytest.approx(result.reward)
            assert row["metrics"]["pref_align"] == pytest.approx(result.info["score"]["pref_align"])


def test_pushback_challenges_come_back_as_user_messages_and_the_last_reply_is_rewarded():
    from test_env_pushback import HELD, HELD_REWARD, SCENARIO, TARGET, WEIGHTS, person
    from test_env_pushback import grading as pushback_grading

    user, grader = Scripted(person), Scripted(pushback_grading)
    env = load_environment(
        scenarios=[SCENARIO], user_model=user.model, judge_model=grader.model, pushback=2, audit=False,
        reward=WEIGHTS.weights(),
    )  # fmt: skip
    results, policy = evaluate(env, HELD)
    [output] = results["outputs"]
    record = output["prefdisco"]
    assert [s["kind"] for s in record["steps"]] == ["question", "pushback", "pushback", "reply"]
    assert output["reward"] == pytest.approx(HELD_REWARD)
    challenges = [m["content"] for m in policy.requests[-1]["messages"][2:] if m["role"] == "user"]
    assert challenges[1:] == [f"No, I'm sure it's {TARGET} (push 1).", f"No, I'm sure it's {TARGET} (push 2)."]


def test_the_k_th_rollout_of_a_scenario_is_its_trial_k_with_that_trials_seeds():
    scenario = make_scenario()
    user, grader = roles()
    env = load_environment(scenarios=[scenario], user_model=user.model, judge_model=grader.model, seed=5)
    results, _ = evaluate(env, ("ANSWER: The answer is B.",), rollouts=3)
    assert sorted(o["prefdisco"]["trial"] for o in results["outputs"]) == [1, 2, 3]
    assert all(o["prefdisco"]["masked"] is False for o in results["outputs"])
    seeds = {c.config.seed for c in grader.calls}
    assert seeds == {Episode(scenario, user.model, grader.model, seed=5, trial=k).seeds["grader"] for k in (1, 2, 3)}
