"""The loss masks of the RL adapters: for verl, verifiers and OpenEnv, one episode with a scripted policy, the
conversation assembled as that framework assembles it from what the adapter hands back, and the framework's own rule
for what is trained applied to it: exactly the policy's own turns are trainable, never a simulated-user reply, the
judge's text or the opening prompt.

The rules, each the framework's:

* verl (its multi-turn rollout): the row's ``prompt`` is the prompt, outside the response; the response is the
  assistant's turns (``response_mask`` 1) and what ``generate_response`` answers, added as a user message
  (``response_mask`` 0); the messages verl holds are read by their roles when it builds the request;
* verifiers (0.3, in process: ``prefdisco.env.verifiers``): the rollout's ``completion`` messages, of which only the
  ``assistant`` ones are the completion mask's 1s (the ``prompt`` is never trained);
* OpenEnv (``prefdisco.env.openenv``, what a trainer reaches through OpenEnv's client from the server): the reset's
  ``messages`` are the prompt; after each action the trainer appends its own turn as the assistant and the observation's
  ``messages`` with the roles the server gives them, and trains on the assistant's messages (assistant-only loss).

Each test has a negative case: the adapter patched so that the simulated user's reply comes back as the assistant's
(the one way an adapter can put it in the loss); the same check must then fail. The verifiers 0.4 client's mask is
checked in ``tests/test_env_verifiers04.py``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from hub_scripts import TURNS, WEIGHTS, roles
from prefdisco.env import Episode
from scripted import make_scenario
from test_env import AUDIT

REPLIES = ("Very detailed, please.", "Yes, machine ones.")
"""The scripted simulated user's replies (hub_scripts.roles)."""

Transcript = list[tuple[str, str, bool]]
"""What the trainer holds: (role, text, trainable) per message, the prompt first."""


def tokens(text: str) -> list[str]:
    return text.split()


def check_only_policy_trainable(transcript: Transcript, opening: list[dict[str, Any]], grader: Any) -> None:
    """Exactly the policy's turns are trainable (token for token, in order); every simulated-user reply, the opening
    and the judge's findings are outside the trainable tokens."""
    trainable = [t for _, text, on in transcript if on for t in tokens(text)]
    assert trainable == [t for turn in TURNS for t in tokens(turn)], "trainable tokens are not the policy's turns"
    trained_text = " ".join(text for _, text, on in transcript if on)
    held_out = " ".join(text for _, text, on in transcript if not on)
    for reply in REPLIES:
        assert reply in held_out and reply not in trained_text, f"the user's reply {reply!r} is trainable"
    for message in opening:
        assert message["content"] in held_out and message["content"] not in trained_text
    for text in judge_texts(grader):  # the judge's instructions and its findings reach no trainer
        assert text not in trained_text and text not in held_out


def judge_texts(grader: Any) -> list[str]:
    """What the judge read as its instructions (each call's first line) and what it answered (the audit's JSON)."""
    assert grader.calls, "the episode was never judged"
    return [json.dumps(AUDIT), *{call.text.strip().splitlines()[0] for call in grader.calls}]


@pytest.fixture(params=["policy only", "user reply made trainable"])
def leak(request: pytest.FixtureRequest) -> bool:
    """False: the adapter as shipped; True: patched to return the user's reply as the assistant's (must fail)."""
    return request.param != "policy only"


def outcome(leak: bool, check: Any) -> None:
    if leak:
        with pytest.raises(AssertionError, match="trainable"):  # the leaked reply, not another fault
            check()
    else:
        check()


# -- verl ------------------------------------------------------------------------------------------------------


def test_verl_response_mask_holds_only_the_policys_turns(leak, monkeypatch):
    from prefdisco.env import verl as verl_adapter

    scenario = make_scenario()
    user, grader = roles()
    interaction = verl_adapter.PrefDiscoInteraction(
        {"scenarios": [scenario], "user_model": user.model, "judge_model": grader.model, "reward": WEIGHTS}
    )
    if leak:  # the reply written into the assistant's own message, nothing returned as the interaction's
        shipped = verl_adapter.PrefDiscoInteraction.generate_response

        async def leaking(self: Any, instance_id: str, messages: list[dict[str, Any]], **kw: Any) -> Any:
            done, response, score, meta = await shipped(self, instance_id, messages, **kw)
            messages[-1]["content"] += "\n" + response
            return done, "", score, meta

        monkeypatch.setattr(verl_adapter.PrefDiscoInteraction, "generate_response", leaking)
    row = interaction.row(scenario.id)

    async def rollout() -> tuple[list[dict[str, Any]], list[tuple[str, bool]], float | None]:
        """verl's multi-turn loop: the prompt, then per turn the policy's message (mask 1) and the interaction's
        response as a user message (mask 0); the response part is re-read from the messages by role."""
        messages = [dict(m) for m in row["prompt"]]
        prompt_len = len(messages)
        instance = await interaction.start_interaction(**row["extra_info"]["interaction_kwargs"])
        for turn in TURNS:
            messages.append({"role": "assistant", "content": turn})
            done, response, _, _ = await interaction.generate_response(instance, messages)
            if response:
                messages.append({"role": "user", "content": response})
            if done:
                break
        response_part = [(m["content"], m["role"] == "assistant") for m in messages[prompt_len:]]
        return messages[:prompt_len], response_part, await interaction.calculate_score(instance)

    prompt, response_part, score = asyncio.run(rollout())
    transcript = [(m["role"], m["content"], False) for m in prompt]
    transcript += [("response", text, on) for text, on in response_part]
    opening = Episode(scenario, user.model, grader.model).opening()
    assert [m["content"] for m in prompt] == [m["content"] for m in opening]  # the opening is the prompt
    assert score is not None
    outcome(leak, lambda: check_only_policy_trainable(transcript, opening, grader))


# -- verifiers (0.3, in process) -----------------------------------------------------------------------------------


def test_verifiers_completion_mask_holds_only_the_policys_turns(leak, monkeypatch):
    import verifiers as vf

    from prefdisco.env import verifiers as vf_adapter
    from test_env_verifiers import evaluate

    if leak:
        monkeypatch.setattr(vf_adapter, "_vf_message", lambda m: vf.AssistantMessage(content=m["content"]))
    scenario = make_scenario()
    user, grader = roles()
    env = vf_adapter.load_environment(
        scenarios=[scenario], user_model=user.model, judge_model=grader.model, reward=WEIGHTS
    )
    results, _ = evaluate(env, TURNS)
    [output] = results["outputs"]
    transcript = [(m["role"], m["content"], False) for m in output["prompt"]]
    transcript += [(m["role"], m["content"] or "", m["role"] == "assistant") for m in output["completion"]]
    opening = Episode(scenario, user.model, grader.model).opening()
    outcome(leak, lambda: check_only_policy_trainable(transcript, opening, grader))


# -- OpenEnv -------------------------------------------------------------------------------------------------------


def test_openenv_observations_keep_the_users_reply_out_of_the_assistants_turns(leak, monkeypatch):
    from prefdisco.env import openenv as oe
    from test_env_openenv import running, synced

    if leak:
        shipped = oe._chat

        def leaking(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
            chat = shipped(messages)
            replies = [m for m in chat if m["role"] == "user" and any(r in m["content"] for r in REPLIES)]
            return [{**m, "role": "assistant"} if m in replies else m for m in chat]

        monkeypatch.setattr(oe, "_chat", leaking)
    scenario = make_scenario()
    user, grader = roles()
    app = oe.make_app([scenario], user.model, grader.model, reward=WEIGHTS)
    with running(app) as url, synced(oe.PrefDiscoEnvClient(base_url=url)) as env:  # what a trainer reaches
        first = env.reset(scenario_id=scenario.id).observation
        transcript: Transcript = [(m["role"], m["content"], False) for m in first.messages]
        for turn in TURNS:
            transcript.append(("assistant", turn, True))
            result = env.step(oe.PrefDiscoAction(text=turn))
            transcript += [(m["role"], m["content"], m["role"] == "assistant") for m in result.observation.messages]
    assert result.done and result.reward is not None
    # the judge's findings travel only in info, which no trainer tokenizes
    assert json.dumps(result.observation.info["score"]) not in " ".join(text for _, text, _ in transcript)
    opening = Episode(scenario, user.model, grader.model).opening()
    outcome(leak, lambda: check_only_policy_trainable(transcript, opening, grader))
