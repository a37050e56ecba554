"""Run by tests/test_env_verifiers04.py with the python of the verifiers 0.4 environment (``.venv-verifiers``, which
has verifiers 0.4, uv and the thin client, not PrefDisco): one episode of PrefDisco's verifiers 0.4 environment
against a PrefDisco server, printed as one JSON line.

``python verifiers04_driver.py BASE_URL SCENARIO_ID TURNS_JSON``: the environment is loaded by verifiers' own loader
from its taskset id (``prefdisco-verifiers``), the task is the taskset's own, and verifiers runs the episode itself
(``Env.serving`` and ``Env.run_episode``, what its eval runner calls): the policy is a real verifiers agent on the
null harness, a chat program verifiers runs with ``uv`` in its local runtime, whose model is a scripted
OpenAI-compatible endpoint served here (the k-th reply of a conversation is the script's k-th turn). The output
holds the policy trace's rewards and metrics and its message graph: each message with its role and whether the
model sampled it (verifiers' ``MessageNode.sampled``, what a train client's token mask marks).

``python verifiers04_driver.py --imports``: the top-level modules importing the thin client alone loads.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

KEY_VAR = "PREFDISCO_SCRIPTED_POLICY_KEY"


async def scripted_policy(turns: list[str]) -> tuple[Any, str]:
    """A chat-completions endpoint answering each request with the turn after the assistant turns it holds (as a
    stream of one chunk when asked to stream); the runner and the endpoint's base URL."""
    from aiohttp import web

    async def chat(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        done = sum(1 for m in body["messages"] if m.get("role") == "assistant")
        text = turns[min(done, len(turns) - 1)]
        head = {"id": f"scripted-{done}", "created": 0, "model": body["model"]}
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if not body.get("stream"):
            message = {"role": "assistant", "content": text}
            choice = {"index": 0, "finish_reason": "stop", "message": message}
            return web.json_response({**head, "object": "chat.completion", "choices": [choice], "usage": usage})
        reply = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await reply.prepare(request)
        chunks = [
            {"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {"choices": [], "usage": usage},
        ]
        for chunk in chunks:
            await reply.write(f"data: {json.dumps({**head, 'object': 'chat.completion.chunk', **chunk})}\n\n".encode())
        await reply.write(b"data: [DONE]\n\n")
        await reply.write_eof()
        return reply

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}/v1"


async def episode(base_url: str, scenario_id: str, turns: list[str]) -> dict[str, Any]:
    import verifiers
    from verifiers.v1.clients import EvalClientConfig, ModelContext
    from verifiers.v1.utils.loaders import load_environment, resolve_env_config

    runner, policy_url = await scripted_policy(turns)
    os.environ[KEY_VAR] = "scripted"
    config = resolve_env_config(
        {"taskset": {"id": "prefdisco-verifiers", "base_url": base_url, "scenario_ids": [scenario_id]}}
    )
    env = load_environment(config)
    [task] = list(env.taskset)
    context = ModelContext(model="scripted", client=EvalClientConfig(base_url=policy_url, api_key_var=KEY_VAR))
    try:
        async with env.serving():
            played = await env.run_episode(task, context)
    finally:
        await runner.cleanup()
    traces = []
    for trace in played.traces:
        [branch] = trace.branches
        traces.append(
            {
                "agent": trace.agent.name,
                "trainable": trace.agent.trainable and branch.trainable,
                "reward": trace.reward,
                "rewards": {name: r.score for name, r in trace.rewards.items() if r is not None},
                "metrics": trace.metrics,
                "errors": [e.message for e in trace.errors],
                "messages": [
                    {"role": n.message.role, "content": str(n.message.content), "sampled": n.sampled}
                    for n in branch.nodes
                ],
            }
        )
    return {
        "verifiers": verifiers.__version__,
        "env": type(env).__name__,
        "taskset": type(env.taskset).__name__,
        "ok": played.ok,
        "errors": [e.message for e in played.errors],
        "traces": traces,
        "prefdisco_loaded": sorted(m for m in sys.modules if m.split(".")[0] in ("prefdisco", "inspect_ai")),
    }


def main() -> None:
    if sys.argv[1:] == ["--imports"]:
        import prefdisco_client  # noqa: F401

        print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})))
        return
    # verifiers' local runtime runs the harness's chat program with uv: the one beside this python
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    base_url, scenario_id, turns = sys.argv[1:4]
    print(json.dumps(asyncio.run(episode(base_url, scenario_id, json.loads(turns)))))


if __name__ == "__main__":
    main()
