"""Run by tests/test_env_verifiers04.py with the python of the verifiers 0.4 environment (``.venv-verifiers``, which
has verifiers 0.4 and the thin client, not PrefDisco): one rollout of PrefDisco's verifiers 0.4 environment against a
PrefDisco server, printed as one JSON line.

``python verifiers04_driver.py BASE_URL SCENARIO_ID TURNS_JSON``: the environment is loaded by verifiers' own loader
from its taskset id (``prefdisco-verifiers``), the task is the taskset's own, and ``PrefDiscoEnv.run`` plays it. The
policy seat is a scripted stand-in for verifiers' agent (its ``interaction(task)`` and ``turn(message)``, on a real
``vf.Trace``): verifiers' own agents run their model through a harness program that ``uv`` installs at run time,
which a test cannot count on. It records the policy's conversation as verifiers builds it: the task's system prompt,
each ``turn`` message as a user message, each reply as the policy's own (sampled) message.

``python verifiers04_driver.py --imports``: the top-level modules importing the thin client alone loads.
"""

from __future__ import annotations

import asyncio
import json
import sys
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any


@dataclass
class Segment:
    last_reply: str
    terminated: bool = False


class ScriptedSeat:
    """The policy agent: each ``interaction`` answers turn k with the script's k-th reply."""

    def __init__(self, replies: list[str], transcript: list[dict[str, str]]) -> None:
        self.replies = iter(replies)
        self.transcript = transcript
        self.trace: Any = None

    @asynccontextmanager
    async def interaction(self, task: Any) -> Any:
        from verifiers.v1.configs.agent import AgentConfig
        from verifiers.v1.trace import AgentInfo, Trace, TraceTask

        self.trace = Trace(
            task=TraceTask(type=type(task).__name__, data=task.data),
            agent=AgentInfo(config=AgentConfig(), name="policy"),
        )
        if task.data.system_prompt:
            self.transcript.append({"role": "system", "content": task.data.system_prompt})
        yield self

    async def turn(self, message: str) -> Segment:
        self.transcript.append({"role": "user", "content": message})
        reply = next(self.replies, None)
        if reply is None:
            return Segment("", terminated=True)
        self.transcript.append({"role": "assistant", "content": reply})
        return Segment(reply)


class Agents:
    def __init__(self, policy: ScriptedSeat) -> None:
        self.policy = policy


async def rollout(base_url: str, scenario_id: str, replies: list[str]) -> dict[str, Any]:
    import verifiers
    from verifiers.v1.utils.loaders import load_environment, resolve_env_config

    config = resolve_env_config(
        {"taskset": {"id": "prefdisco-verifiers", "base_url": base_url, "scenario_ids": [scenario_id]}}
    )
    env = load_environment(config)
    [task] = list(env.taskset)
    transcript: list[dict[str, str]] = []
    seat = ScriptedSeat(replies, transcript)
    await env.run(task, Agents(seat))
    trace = seat.trace
    return {
        "verifiers": verifiers.__version__,
        "env": type(env).__name__,
        "taskset": type(env.taskset).__name__,
        "reward": trace.reward,
        "rewards": {name: reward.score for name, reward in trace.rewards.items() if reward is not None},
        "metrics": trace.metrics,
        "transcript": transcript,
        "prefdisco_loaded": sorted(m for m in sys.modules if m.split(".")[0] in ("prefdisco", "inspect_ai")),
    }


def main() -> None:
    if sys.argv[1:] == ["--imports"]:
        import prefdisco_client  # noqa: F401

        print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})))
        return
    base_url, scenario_id, turns = sys.argv[1:4]
    print(json.dumps(asyncio.run(rollout(base_url, scenario_id, json.loads(turns)))))


if __name__ == "__main__":
    main()
