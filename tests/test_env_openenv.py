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

from hub_scripts import REWARD, TURNS, WEIGHTS, episode_result, roles
from mock_openai import MockOpenAI, tagged_scenarios, write_scenarios
from prefdisco.env import Episode
from prefdisco.errors import UserError
from scripted import Scripted, constant, make_persona, make_scenario
from test_env import WEIGHTS as WEIGHTS_S  # test_env_sessions' weights (RewardConfig)


def hub() -> Any:
    """``prefdisco.env.openenv``, imported by the tests that use it: the openenv extra takes a second to import (make
    test installs it, so a missing one fails the first test that touches it), and collection does not pay it."""
    import prefdisco.env.openenv

    return prefdisco.env.openenv


SRC = Path(__file__).resolve().parents[1] / "src"


def synced(client: Any) -> Any:
    """The library's client for ``with``: openenv-core 0.3's clients are async and ``.sync()`` wraps one (0.2's were
    synchronous themselves)."""
    return client.sync() if hasattr(client, "sync") else client


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


def test_the_installed_openenv_core_is_the_one_the_extra_pins():
    """The OpenEnv tests run on the openenv-core the ``openenv`` extra pins (0.3; ``make test`` reinstalls ``.venv``
    when pyproject.toml changes), so its dialogue tests are OpenEnv 0.3 driving an episode to the reward by hand."""
    import tomllib
    from importlib.metadata import version

    from packaging.requirements import Requirement

    extras = tomllib.loads((SRC.parent / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    [pin] = [Requirement(r) for r in extras["openenv"]]
    assert pin.name == "openenv-core" and version("openenv-core") in pin.specifier and "0.3" in pin.specifier


def test_the_server_plays_a_dialogue_for_the_librarys_client_with_the_episodes_reward():
    scenario, other = make_scenario("s1"), make_scenario("s2", persona=make_persona("p2", "Bo Lin"))
    user, grader = roles()
    app = hub().make_app([scenario, other], user.model, grader.model, reward=WEIGHTS)
    with running(app) as url:
        assert httpx.get(f"{url}/health").status_code == 200
        schema = httpx.get(f"{url}/schema").json()
        assert "text" in schema["action"]["properties"] and "messages" in schema["observation"]["properties"]
        with synced(hub().PrefDiscoEnvClient(base_url=url)) as env:
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
            steps = [env.step(hub().PrefDiscoAction(text=turn)) for turn in TURNS]
            state = env.state()
            with pytest.raises(RuntimeError, match="the episode is over; reset to start another"):
                env.step(hub().PrefDiscoAction(text="ANSWER: again"))
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
        from openenv.core import GenericEnvClient

        with synced(GenericEnvClient(base_url=url)) as generic:
            again = generic.reset(scenario_id=scenario.id)
            assert again.observation["trial"] == 2
            reply = generic.step({"text": "ANSWER: The answer is B."})
            assert reply.done and isinstance(reply.reward, float)
            with pytest.raises(RuntimeError, match=r"reset scenario_id: no scenario 'nope'"):
                generic.reset(scenario_id="nope")


def test_a_seed_draws_the_same_scenarios_and_a_masked_episode_gets_masked_reward():
    scenarios = [make_scenario(f"s{i}") for i in range(5)]
    user, grader = Scripted(constant("Short.")), Scripted(constant("not json"))  # every judgement invalid
    app = hub().make_app(scenarios, user.model, grader.model, masked_reward=-1.0, audit=False, max_questions=1)
    with running(app) as url, synced(hub().PrefDiscoEnvClient(base_url=url)) as client:
        first = [client.reset(seed=11).observation.scenario_id]
        first += [client.reset().observation.scenario_id for _ in range(3)]
        second = [client.reset(seed=11).observation.scenario_id]
        second += [client.reset().observation.scenario_id for _ in range(3)]
        assert first == second
        client.step(hub().PrefDiscoAction(text="QUESTION: Depth?"))
        last = client.step(hub().PrefDiscoAction(text="QUESTION: More?"))  # past the budget: the answer
        state = client.state()
    assert last.done and last.reward == -1.0 and last.observation.masked is True
    # the step carries masked_reward; the episode's return is not measured, never that number (issue 31, defect 6:
    # a session's return summed masked problems as masked_reward here, and verl's was None)
    assert (state.reward, state.rewards, state.masked_positions, state.masked) == (None, [None], [1], True)
    assert last.observation.info["stop_reason"] == "budget"
    assert "PrefAlign was not measured" in last.observation.info["mask_reason"]


def test_bad_options_fail_before_anything_is_served():
    user, grader = roles()
    base = {"scenarios": [make_scenario()], "user_model": user.model, "judge_model": grader.model}
    for name in ("ask", "protocol"):  # the ask channel, and its older name read as it
        with pytest.raises(UserError, match=r"^ask: expected one of text, tools, got 'xml'"):
            hub().make_app(**base, **{name: "xml"})
    with pytest.raises(UserError, match=r"^max_sessions: expected a number of sessions"):
        hub().make_app(**base, max_sessions=0)
    with pytest.raises(UserError, match=r"^split: 'train' needs train_fraction"):
        hub().make_app(**base, split="train")
    with pytest.raises(UserError, match=r"^arm: 'cold' is an arm of a session; give the session file too"):
        hub().make_app(**base, arm="cold")
    with pytest.raises(UserError, match=r"^sessions: give the benchmark the session file was planned on"):
        hub().make_app(None, user.model, grader.model, sessions="sessions.jsonl", arm="cold")
    with pytest.raises(UserError, match=r"^arm: a session is played in one arm \(arm, --arm\): cold, carry_transcript"):
        hub().make_app(**base, sessions="sessions.jsonl")


def test_a_session_is_an_episode_one_reward_per_problem_as_gymnasium_gives_it(tmp_path):
    """carry_notes over the real server and client: the turns of test_env_sessions' gymnasium test give its
    rewards (0.75 for the first problem, 1.2 for the second, worked out there by hand), each problem opens a new chat
    (the notes prompt, then the next opening: the messages gymnasium's info holds), and the state sums them."""
    import gymnasium

    from test_env_sessions import FIRST, SECOND, files, models

    bench, sessions = files(tmp_path)
    turns = (*FIRST, "Likes detail.", *SECOND)
    user, grader = models()
    app = hub().make_app(
        str(bench), user.model, grader.model, sessions=str(sessions), arm="carry_notes", reward=WEIGHTS_S
    )
    with running(app) as url, synced(hub().PrefDiscoEnvClient(base_url=url)) as client:
        first = client.reset(session_id="ada-1")
        steps = [client.step(hub().PrefDiscoAction(text=turn)) for turn in turns]
        state = client.state()
        with pytest.raises(RuntimeError, match=r"reset: this server plays sessions in the arm carry_notes; name one "):
            client.reset(scenario_id="s-ferry")
        with pytest.raises(RuntimeError, match=r"reset session_id: no session 'bob-1' in this environment"):
            client.reset(session_id="bob-1")

    user2, grader2 = models()  # the same turns in gymnasium's session environment, on fresh scripts
    env = gymnasium.make(
        "PrefDiscoSession-v0", sessions=str(sessions), scenarios=str(bench), user_model=user2.model,
        judge_model=grader2.model, arm="carry_notes", reward=WEIGHTS_S,
    )  # fmt: skip
    gym_obs, gym_info = env.reset(options={"session_id": "ada-1"})
    gym_steps = [env.step(turn) for turn in turns]
    env.close()

    opening = first.observation
    assert (opening.session_id, opening.position, opening.arm, opening.next, opening.trial) == (
        "ada-1", 1, "carry_notes", "opening", 1,
    )  # fmt: skip
    assert opening.text == gym_obs and opening.messages == gym_info["messages"]
    assert [s.reward for s in steps] == pytest.approx([0.0, 0.0, 0.75, 0.0, 1.2])
    assert [s.reward for s in steps] == pytest.approx([g[1] for g in gym_steps])
    assert [s.done for s in steps] == [False, False, False, False, True]
    assert [s.observation.kind for s in steps] == ["question", "question", "answer", "notes", "answer"]
    assert [s.observation.next for s in steps] == ["reply", "reply", "notes", "opening", None]
    assert [s.observation.position for s in steps] == [1, 1, 1, 1, 2]
    assert [s.observation.scenario_id for s in steps] == ["s-ferry"] * 4 + ["s-crates"]
    assert [s.observation.text for s in steps] == [g[0] for g in gym_steps]
    notes_prompt, second_opening = steps[2].observation, steps[3].observation
    assert notes_prompt.messages == gym_steps[2][4]["messages"] and len(notes_prompt.messages) == 1  # a new chat
    assert second_opening.messages == gym_steps[3][4]["messages"]
    assert [m["role"] for m in second_opening.messages] == ["system", "user"]
    assert "Likes detail." in second_opening.text  # the notes are carried into the next problem's opening
    assert steps[1].observation.messages == [{"role": "user", "content": steps[1].observation.text}]
    assert (state.session_id, state.position, state.scenario_id, state.arm, state.step_count, state.done) == (
        "ada-1", 2, "s-crates", "carry_notes", 5, True,
    )  # fmt: skip
    assert state.rewards == pytest.approx([0.75, 1.2]) and state.reward == pytest.approx(1.95)
    assert [c.text for c in grader.calls] == [c.text for c in grader2.calls]  # the same judge calls


def test_the_sync_api_plays_an_episode_without_a_server():
    scenario = make_scenario()
    user, grader = roles()
    from prefdisco.env.hubs import hub_roster, hub_unit

    roster = hub_roster(
        "OpenEnv", hub_unit([scenario]), user.model, grader.model, {"reward": WEIGHTS}, train_fraction=None,
        split_seed=0, split=None,
    )  # fmt: skip
    env = hub().PrefDiscoOpenEnv(roster)
    env.reset(scenario_id=scenario.id)
    steps = [env.step(hub().PrefDiscoAction(text=turn)) for turn in TURNS]
    env.close()
    assert steps[-1].done and steps[-1].reward == pytest.approx(REWARD)


# -- the command -------------------------------------------------------------------------------------------------


@pytest.mark.slow
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
            with synced(hub().PrefDiscoEnvClient(base_url=url)) as client:
                client.reset(scenario_id=scenarios[0].id)
                steps = [client.step(hub().PrefDiscoAction(text=turn)) for turn in turns]
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


def test_the_tool_protocol_carries_ask_user_calls_and_returns_tool_results():
    """protocol tools: the reset offers ask_user (OpenAI function format, tool choice auto); a turn with two calls
    asks the first (its result is the person's reply) and gets a one-question-at-a-time result for the second, both
    tool messages with their call ids; after the budget (2) the tool is withdrawn (tool choice none); the reward is
    the Episode's for the same turns."""
    from inspect_ai.model import ChatMessageAssistant
    from inspect_ai.tool import ToolCall

    scenario = make_scenario("s1")

    def ask(*calls: tuple[str, str]) -> hub().PrefDiscoAction:
        return hub().PrefDiscoAction(
            tool_calls=[{"id": i, "name": "ask_user", "arguments": {"question": q}} for i, q in calls]
        )

    actions = [
        ask(("c1", "How detailed should I be?"), ("c2", "And analogies?")),
        ask(("c3", "Do you like analogies?")),
        hub().PrefDiscoAction(text="The answer is B: 3 trips."),
    ]
    user, grader = roles()
    app = hub().make_app([scenario], user.model, grader.model, reward=WEIGHTS, ask="tools", max_questions=2)
    with running(app) as url, synced(hub().PrefDiscoEnvClient(base_url=url)) as client:
        first = client.reset(scenario_id=scenario.id)
        steps = [client.step(action) for action in actions]

    offered = first.observation
    assert offered.tool_choice == "auto" and [t["function"]["name"] for t in offered.tools] == ["ask_user"]
    assert offered.tools[0]["type"] == "function"
    assert offered.tools[0]["function"]["parameters"]["required"] == ["question"]
    assert "ask_user" in offered.messages[0]["content"]  # the tool protocol's system prompt
    one, two, end = (s.observation for s in steps)
    assert [m["role"] for m in one.messages] == ["tool", "tool"]
    assert [m["tool_call_id"] for m in one.messages] == ["c1", "c2"]
    assert one.messages[0]["content"].startswith("Very detailed, please.")
    assert one.messages[1]["content"].startswith("One question at a time: only your first ask_user call")
    assert one.text == "\n\n".join(m["content"] for m in one.messages)  # the text is the messages, joined
    assert one.kind == "question" and one.info["unmarked"] is True and one.info["n_questions"] == 1
    assert [(m["role"], m["tool_call_id"]) for m in two.messages] == [("tool", "c3")]
    assert two.messages[0]["content"].startswith("Yes, machine ones.") and two.tool_choice == "none"
    assert end.kind == "answer" and end.tools == [] and end.tool_choice is None and steps[-1].done

    turns = tuple(
        ChatMessageAssistant(
            content=a.text, tool_calls=[ToolCall(id=c.id, function=c.name, arguments=c.arguments) for c in a.tool_calls]
        )
        if a.tool_calls
        else a.text
        for a in actions
    )
    result, _, grader2 = episode_result(scenario, turns, ask="tools", max_questions=2)  # type: ignore[arg-type]
    assert steps[-1].reward == pytest.approx(result.reward)
    assert end.info["score"] == json.loads(json.dumps(result.info["score"], default=str))
    assert [c.text for c in grader.calls] == [c.text for c in grader2.calls]


def test_prefdisco_env_serve_refuses_an_arm_without_sessions_in_one_line():
    done = subprocess.run(
        [sys.executable, "-m", "prefdisco", "env", "serve", "--port", str(free_port()), "--arm", "cold",
         "--user-model", "mockllm/model", "--judge-model", "mockllm/model"],
        env={**os.environ, "PYTHONPATH": str(SRC)}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: arm: 'cold' is an arm of a session; give the session file too (sessions, --sessions)"
    )


def test_pushback_challenges_are_observations_and_the_last_reply_is_rewarded():
    from test_env_pushback import HELD, HELD_REWARD, SCENARIO, TARGET, WEIGHTS, person
    from test_env_pushback import grading as pushback_grading

    user, grader = Scripted(person), Scripted(pushback_grading)
    app = hub().make_app([SCENARIO], user.model, grader.model, pushback=2, audit=False, reward=WEIGHTS.weights())
    with running(app) as url, synced(hub().PrefDiscoEnvClient(base_url=url)) as client:
        client.reset()
        steps = [client.step(hub().PrefDiscoAction(text=turn)) for turn in HELD]
    assert [s.observation.kind for s in steps] == ["question", "pushback", "pushback", "reply"]
    assert steps[1].observation.text == f"No, I'm sure it's {TARGET} (push 1)." and not steps[1].done
    assert [s.reward for s in steps[:3]] == [0.0, 0.0, 0.0] and steps[-1].reward == pytest.approx(HELD_REWARD)


def test_a_client_that_leaves_mid_step_is_one_line_not_tracebacks(capfd, caplog):
    """A client closes its WebSocket while its step runs (the simulated user takes a second to reply): the server
    ends that connection with one warning, no traceback, and goes on serving (issue 35: 4 tracebacks before)."""
    import logging

    import websockets.sync.client as ws_client

    def slow(call, i):  # type: ignore[no-untyped-def]
        time.sleep(1.0)
        return "Very detailed, please."

    user, (_, grader) = Scripted(slow, name="mockllm/slow-user"), roles()
    app = hub().make_app([make_scenario("s1")], user.model, grader.model)
    with caplog.at_level(logging.WARNING, logger="prefdisco.env"), running(app) as url:
        socket_url = url.replace("http", "ws", 1) + "/ws"
        left = ws_client.connect(socket_url)
        left.send(json.dumps({"type": "reset", "data": {"scenario_id": "s1"}}))
        assert json.loads(left.recv())["type"] == "observation"
        left.send(json.dumps({"type": "step", "data": {"text": "QUESTION: How detailed?"}}))
        left.close()  # gone before the step's answer
        deadline = time.monotonic() + 30  # the step ends (1 s; longer on a busy machine) and its answer finds no one
        while time.monotonic() < deadline and not any(r.name == "prefdisco.env" for r in caplog.records):
            time.sleep(0.05)
        with synced(hub().PrefDiscoEnvClient(base_url=url)) as env:  # the server still serves
            assert env.reset(scenario_id="s1").observation.scenario_id == "s1"
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception in ASGI application" not in err, err
    assert [r.getMessage() for r in caplog.records if r.name == "prefdisco.env"] == [
        "a client left its WebSocket session mid-step; its episode is dropped"
    ]
