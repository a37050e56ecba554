"""The thin client of ``prefdisco env serve`` (``client/prefdisco_client``) against the server's app on the scripted
simulated user and judge of every hub test: a whole episode to the reward by hand, the server's refusals as
``ServerError`` with the server's message, and a base URL that is no server's refused in one line. (Its use from an
environment without PrefDisco, under verifiers 0.4, is tests/test_env_verifiers04.py.)"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from hub_scripts import REWARD, TURNS, WEIGHTS, roles
from prefdisco.env import Episode
from scripted import make_scenario
from test_env_masks import REPLIES
from test_env_openenv import hub, running

CLIENT = Path(__file__).resolve().parents[1] / "client"


def client_module() -> Any:
    if str(CLIENT) not in sys.path:
        sys.path.insert(0, str(CLIENT))
    import prefdisco_client

    return prefdisco_client


def test_the_client_plays_an_episode_to_the_reward_by_hand():
    pc = client_module()
    scenario = make_scenario()
    user, grader = roles()
    app = hub().make_app([scenario], user.model, grader.model, reward=WEIGHTS)

    async def play(url: str) -> tuple[Any, list[Any], dict[str, Any]]:
        async with pc.PrefDiscoClient(url) as env:
            first = await env.reset(scenario_id=scenario.id)
            steps = [await env.step(turn) for turn in TURNS]
            return first, steps, await env.state()

    with running(app) as url:
        first, steps, state = asyncio.run(play(url))
    opening = Episode(scenario, user.model, grader.model).opening()
    assert [(m["role"], m["content"]) for m in first.messages] == [(m["role"], m["content"]) for m in opening]
    assert (first.reward, first.done, first.scenario_id, first.trial) == (None, False, scenario.id, 1)
    assert [s.kind for s in steps] == ["question", "question", "answer"] and [s.done for s in steps] == [0, 0, 1]
    assert [s.messages[0]["role"] for s in steps[:2]] == ["user", "user"]
    assert [any(r in s.text for r in REPLIES) for s in steps[:2]] == [True, True]
    assert steps[-1].reward == pytest.approx(REWARD) and steps[-1].masked is False
    assert steps[-1].info["reward_components"]["n_questions"] == 2
    assert state["reward"] == pytest.approx(REWARD) and state["n_questions"] == 2


def test_the_servers_refusals_come_back_as_server_errors():
    pc = client_module()
    scenario = make_scenario()
    user, grader = roles()
    app = hub().make_app([scenario], user.model, grader.model, reward=WEIGHTS)

    async def refused(url: str) -> list[str]:
        messages = []
        async with pc.PrefDiscoClient(url) as env:
            for request in (env.reset(scenario_id="nope"), env.step("ANSWER: 3")):
                try:
                    await request
                except pc.ServerError as err:
                    messages.append(str(err))
        return messages

    with running(app) as url:
        unknown, early = asyncio.run(refused(url))
    assert "no scenario 'nope' in this environment" in unknown
    assert "no episode in this session; reset first" in early


@pytest.mark.parametrize("url", ["127.0.0.1:8000", "ftp://host/", ""])
def test_a_base_url_that_is_no_servers_is_refused_in_one_line(url):
    pc = client_module()
    with pytest.raises(ValueError, match=r"^base_url: expected http\(s\)://HOST:PORT of a prefdisco env serve, got "):
        pc.PrefDiscoClient(url)
