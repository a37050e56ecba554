"""PrefDisco as an OpenEnv environment (``prefdisco.env.openenv``, ``prefdisco env serve``; the ``openenv`` extra),
tested against the real library: the real server (OpenEnv's own app, served by uvicorn on a free 127.0.0.1 port)
answers the library's own clients (``EnvClient`` subclassed, and its ``GenericEnvClient``) through a whole dialogue,
on a scripted simulated user and judge; the reward equals what PrefDisco's own ``Episode`` gives for the same
turns, and the value by hand. The command itself is run as a process on a mock OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from openenv.core import GenericEnvClient  # the openenv extra: make test installs it, so a missing one fails here

from hub_scripts import REWARD, TURNS, WEIGHTS, episode_result, roles
from mock_openai import MockOpenAI, tagged_scenarios, write_scenarios
from prefdisco.env import Episode
from prefdisco.env.openenv import PrefDiscoAction, PrefDiscoEnvClient, PrefDiscoOpenEnv, make_app
from prefdisco.errors import UserError
from scripted import Scripted, constant, make_persona, make_scenario

SRC = Path(__file__).resolve().parents[1] / "src"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def running(app: Any) -> Iterator[str]:
    """``app`` served by uvicorn on a free 127.0.0.1 port in a thread; its URL; shut down cleanly after."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        assert not thread.is_alive(), "the server did not shut down"


def test_the_server_plays_a_dialogue_for_the_librarys_client_with_the_episodes_reward():
    scenario, other = make_scenario("s1"), make_scenario("s2", persona=make_persona("p2", "Bo Lin"))
    user, grader = roles()
    app = make_app([scenario, other], user.model, grader.model, reward=WEIGHTS)
    with running(app) as url:
        assert httpx.get(f"{url}/health").status_code == 200
        schema = httpx.get(f"{url}/schema").json()
        assert "text" in schema["action"]["properties"] and "messages" in schema["observation"]["properties"]
        with PrefDiscoEnvClient(base_url=url) as env:
            first = env.reset(scenario_id=scenario.id, episode_id="ep-1")
            obs = first.observation
            opening = Episode(scenario, user.model, grader.model).opening()
            assert obs.messages == opening and obs.text == "\n\n".join(m["content"] for m in opening)
            assert (first.done, first.reward, obs.scenario_id, obs.trial, obs.kind) == (
                False,
                None,
                scenario.id,
                1,
                None,
            )
            steps = [env.step(PrefDiscoAction(text=turn)) for turn in TURNS]
            state = env.state()
            with pytest.raises(RuntimeError, match="the episode is over; reset to start another"):
                env.step(PrefDiscoAction(text="ANSWER: again"))
        assert [s.done for s in steps] == [False, False, True]
        assert [s.reward for s in steps[:2]] == [0.0, 0.0] and steps[-1].reward == pytest.approx(REWARD)
        assert steps[0].observation.text.startswith("Very detailed, please.")
        assert steps[0].observation.messages == [{"role": "user", "content": steps[0].observation.text}]
        assert [s.observation.kind for s in steps] == ["question", "question", "answer"]
        final = steps[-1].observation
        assert final.text == "" and final.messages == [] and final.masked is False
        assert final.info["reward_components"]["pref_align"] == pytest.approx(4.0)
        assert final.info["final_response"] == "The answer is B: 3 trips."
        assert (state.episode_id, state.step_count, state.scenario_id, state.trial) == ("ep-1", 3, scenario.id, 1)
        assert state.done and state.n_questions == 2 and state.reward == pytest.approx(REWARD)

        # the same turns through PrefDisco's own Episode, on fresh scripts: the same reward, score and prompts
        result, user2, grader2 = episode_result(scenario)
        assert steps[-1].reward == pytest.approx(result.reward)
        assert final.info["score"] == json.loads(json.dumps(result.info["score"], default=str))
        assert [c.text for c in user.calls] == [c.text for c in user2.calls]
        assert [c.text for c in grader.calls] == [c.text for c in grader2.calls]

        # OpenEnv's generic client (plain dicts) on the same server: the scenario's second trial
        with GenericEnvClient(base_url=url) as generic:
            again = generic.reset(scenario_id=scenario.id)
            assert again.observation["trial"] == 2
            reply = generic.step({"text": "ANSWER: The answer is B."})
            assert reply.done and isinstance(reply.reward, float)
            with pytest.raises(RuntimeError, match=r"reset scenario_id: no scenario 'nope'"):
                generic.reset(scenario_id="nope")


def test_a_seed_draws_the_same_scenarios_and_a_masked_episode_gets_masked_reward():
    scenarios = [make_scenario(f"s{i}") for i in range(5)]
    user, grader = Scripted(constant("Short.")), Scripted(constant("not json"))  # every judgement invalid
    app = make_app(scenarios, user.model, grader.model, masked_reward=-1.0, audit=False, max_questions=1)
    with running(app) as url, PrefDiscoEnvClient(base_url=url) as client:
        first = [client.reset(seed=11).observation.scenario_id]
        first += [client.reset().observation.scenario_id for _ in range(3)]
        second = [client.reset(seed=11).observation.scenario_id]
        second += [client.reset().observation.scenario_id for _ in range(3)]
        assert first == second
        client.step(PrefDiscoAction(text="QUESTION: Depth?"))
        last = client.step(PrefDiscoAction(text="QUESTION: More?"))  # past the budget: the answer
    assert last.done and last.reward == -1.0 and last.observation.masked is True
    assert last.observation.info["stop_reason"] == "budget"
    assert "PrefAlign was not measured" in last.observation.info["mask_reason"]


def test_bad_options_fail_before_anything_is_served():
    user, grader = roles()
    base = {"scenarios": [make_scenario()], "user_model": user.model, "judge_model": grader.model}
    with pytest.raises(UserError, match=r"^protocol: OpenEnv hands each assistant turn over as text"):
        make_app(**base, protocol="tools")
    with pytest.raises(UserError, match=r"^max_sessions: expected a number of sessions"):
        make_app(**base, max_sessions=0)
    with pytest.raises(UserError, match=r"^split: 'train' needs train_fraction"):
        make_app(**base, split="train")


def test_the_sync_api_plays_an_episode_without_a_server():
    scenario = make_scenario()
    user, grader = roles()
    from prefdisco.env.hubs import hub_roster

    roster = hub_roster(
        "OpenEnv", [scenario], user.model, grader.model, {"reward": WEIGHTS}, train_fraction=None, split_seed=0,
        split=None,
    )  # fmt: skip
    env = PrefDiscoOpenEnv(roster)
    env.reset(scenario_id=scenario.id)
    steps = [env.step(PrefDiscoAction(text=turn)) for turn in TURNS]
    env.close()
    assert steps[-1].done and steps[-1].reward == pytest.approx(REWARD)


# -- the command -------------------------------------------------------------------------------------------------


def test_prefdisco_env_serve_answers_a_client_and_stops_on_ctrl_c(tmp_path, monkeypatch):
    scenarios = tagged_scenarios(2)
    path = write_scenarios(tmp_path / "scenarios.jsonl", scenarios)
    port = free_port()
    with MockOpenAI() as mock:
        model = f"openai-api/mock/m{mock.port}"
        for key, value in mock.env("mock").items():
            monkeypatch.setenv(key, value)
        env = {**os.environ, **mock.env("mock"), "PYTHONPATH": str(SRC)}
        command = [
            sys.executable, "-m", "prefdisco", "env", "serve", str(path), "--user-model", model, "--judge-model",
            model, "--port", str(port), "--max-questions", "2", "--reward", "w_questions=-0.05", "--seed", "3",
        ]  # fmt: skip
        server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while True:
                assert server.poll() is None, server.communicate()
                try:
                    if httpx.get(f"{url}/health").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, "env serve did not start"
                time.sleep(0.1)
            turns = ("QUESTION: How much detail do you want?", "ANSWER: The answer is B.")
            with PrefDiscoEnvClient(base_url=url) as client:
                client.reset(scenario_id=scenarios[0].id)
                steps = [client.step(PrefDiscoAction(text=turn)) for turn in turns]
        finally:
            server.send_signal(signal.SIGINT)
            out, err = server.communicate(timeout=30)
        assert server.returncode == 0, err
        assert f"OpenEnv server on http://127.0.0.1:{port}" in " ".join(out.split())
        assert [s.done for s in steps] == [False, True] and steps[-1].observation.masked is False

        # the same turns through the Episode on the same mock (its replies are deterministic per request)
        episode = Episode(
            scenarios[0], model, model, max_questions=2, reward={"w_questions": -0.05}, seed=3
        )  # fmt: skip
        episode.reset()
        for turn in turns:
            result = episode.step(turn)
        episode.close()
    assert result.done and steps[-1].reward == pytest.approx(result.reward)
    assert steps[-1].observation.info["score"]["pref_align"] == pytest.approx(result.info["score"]["pref_align"])


def test_prefdisco_env_serve_refuses_a_busy_port_in_one_line(tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "prefdisco", "env", "serve", "--port", str(port), "--user-model", "mockllm/model",
             "--judge-model", "mockllm/model"],
            env={**os.environ, "PYTHONPATH": str(SRC)}, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        == f"error: --port {port}: 127.0.0.1:{port} is in use (another server?); give another --port"
    )


def test_pushback_challenges_are_observations_and_the_last_reply_is_rewarded():
    from test_env_pushback import HELD, HELD_REWARD, SCENARIO, TARGET, WEIGHTS, person
    from test_env_pushback import grading as pushback_grading

    user, grader = Scripted(person), Scripted(pushback_grading)
    app = make_app([SCENARIO], user.model, grader.model, pushback=2, audit=False, reward=WEIGHTS.weights())
    with running(app) as url, PrefDiscoEnvClient(base_url=url) as client:
        client.reset()
        steps = [client.step(PrefDiscoAction(text=turn)) for turn in HELD]
    assert [s.observation.kind for s in steps] == ["question", "pushback", "pushback", "reply"]
    assert steps[1].observation.text == f"No, I'm sure it's {TARGET} (push 1)." and not steps[1].done
    assert [s.reward for s in steps[:3]] == [0.0, 0.0, 0.0] and steps[-1].reward == pytest.approx(HELD_REWARD)
