"""PrefDisco as a verifiers 0.4 environment (taskset id ``prefdisco-verifiers``), on the thin client of ``prefdisco
env serve`` (``prefdisco_client``): the simulated user and the judge run in PrefDisco's server, the trainer's process
holds only verifiers and the client.

verifiers 0.4 loads a taskset by id from the module of that name and its environment from the same module's
``__all__``: ``vf-eval prefdisco-verifiers --env.taskset.base-url http://HOST:PORT --env.taskset.scenario-ids '[...]'
-m MODEL``.

* ``PrefDiscoTaskset``: one task per scenario id of the server's benchmark (``scenario_ids``); the task carries no
  prompt, the server's opening is the prompt;
* ``PrefDiscoEnv``: one agent, ``policy``, the trained one. ``run`` opens a session of the server, resets it on the
  task's scenario, hands the policy the opening (its system prompt as the policy's system prompt, the problem as its
  first user turn), sends each policy reply to the server as the episode's next turn and hands the observation (the
  simulated user's reply with the budget's note, or a pushback challenge) back to the policy as its next user turn,
  until the server says the episode is done. The simulated user is no agent here: its replies reach the policy as
  user turns of the policy's own interaction, never as the policy's samples, so verifiers trains only what the policy
  generated. The reward is the server's (``prefdisco_reward``: the episode's reward, ``masked_reward`` when the
  episode was masked or stopped before its end); ``prefdisco_masked`` and ``n_questions`` are metrics.

Only the text protocol (``QUESTION:`` / ``ANSWER:``) is played: a server started with ``--ask tools`` is refused.
"""

from __future__ import annotations

from typing import Any

import verifiers.v1 as vf
from prefdisco_client import PrefDiscoClient, Step
from pydantic import Field

__all__ = ["PrefDiscoEnv", "PrefDiscoTaskset"]

REWARD = "prefdisco_reward"


class PrefDiscoData(vf.TaskData):
    base_url: str
    scenario_id: str
    masked_reward: float = 0.0


class PrefDiscoConfig(vf.TasksetConfig):
    base_url: str = "http://127.0.0.1:8000"
    """The PrefDisco server (``prefdisco env serve``)."""
    scenario_ids: list[str] = Field(default_factory=list)
    """The scenarios to play: one task each (``-r N`` rollouts of a task are trials 1..N of its scenario); at least
    one (verifiers' command line validates a taskset's config before its flags, so the check is ``load``'s)."""
    masked_reward: float = 0.0
    """The reward of an episode whose reward was masked, or that stopped before its end."""


class PrefDiscoTask(vf.Task[PrefDiscoData]):
    pass


class PrefDiscoTaskset(vf.Taskset[PrefDiscoTask, PrefDiscoConfig]):
    def load(self) -> Any:
        config = self.config
        if not config.scenario_ids:
            raise ValueError("scenario_ids: name the server's scenarios to play (--env.taskset.scenario-ids '[...]')")
        for scenario_id in config.scenario_ids:
            data = PrefDiscoData(
                name=scenario_id,
                prompt=None,
                base_url=config.base_url,
                scenario_id=scenario_id,
                masked_reward=config.masked_reward,
            )
            yield PrefDiscoTask(data, config.task)


class PrefDiscoEnvConfig(vf.EnvConfig):
    policy: vf.AgentConfig = vf.AgentConfig(harness={"id": "null"}, runtime={"type": "subprocess"})
    """The trained model: a tool-less chat (the null harness, which runs no code) in a local process (verifiers'
    subprocess runtime: no container, no tunnel; its chat program runs with ``uv``)."""


def opening(first: Step) -> tuple[str, str]:
    """The opening's system prompt and problem (the server's two messages after reset)."""
    roles = [m.get("role") for m in first.messages]
    if roles != ["system", "user"]:
        raise ValueError(f"the server's opening: expected a system prompt and a problem, got roles {roles}")
    if first.tools:
        raise ValueError("the server plays the tool protocol (--ask tools): this environment plays only text")
    return str(first.messages[0]["content"]), str(first.messages[1]["content"])


class PrefDiscoEnv(vf.Env[PrefDiscoEnvConfig]):
    async def run(self, task: Any, agents: Any) -> None:
        data = task.data
        async with PrefDiscoClient(data.base_url) as server:
            first = await server.reset(scenario_id=data.scenario_id)
            system, problem = opening(first)
            seat = type(task)(data.model_copy(update={"system_prompt": system, "prompt": None}), task.config)
            last: Step | None = None
            async with agents.policy.interaction(seat) as chat:
                segment = await chat.turn(problem)
                while not segment.terminated:
                    last = await server.step(segment.last_reply)
                    if last.done:
                        break
                    segment = await chat.turn(last.text)
            finished = last is not None and last.done
            masked = not finished or last is None or last.masked or last.reward is None
            reward = data.masked_reward if masked or last is None else float(last.reward or 0.0)
            chat.trace.record_reward(REWARD, reward)
            chat.trace.record_metric("prefdisco_masked", 1.0 if masked else 0.0)
            questions = (last.info.get("n_questions") if last is not None else None) or 0
            chat.trace.record_metric("n_questions", float(questions))
