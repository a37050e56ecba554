"""Model pool determinism, the checkpoint file, and the step runner's booking of calls and failures."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

from pydantic import BaseModel

from prefdisco.builder.pool import Checkpoint, ModelPool, StepRunner, step_key
from test_build_support import FakeBuilder, fake_model


class Reply(BaseModel):
    relevant: list[str]


def _pool(seed: int) -> tuple[ModelPool, FakeBuilder]:
    fake = FakeBuilder()
    return ModelPool([fake_model(fake, n) for n in ("m1", "m2", "m3")], seed=seed), fake


def test_same_seed_same_model_per_item_whatever_the_order() -> None:
    items = [f"problem-{i}" for i in range(40)]
    pool_a, _ = _pool(seed=7)
    pool_b, _ = _pool(seed=7)
    forward = {i: str(pool_a.choose(i, "profile")) for i in items}
    shuffled = items[:]
    random.Random(1).shuffle(shuffled)
    backward = {i: str(pool_b.choose(i, "profile")) for i in shuffled}
    assert forward == backward
    assert set(forward.values()) == {"mockllm/m1", "mockllm/m2", "mockllm/m3"}  # the pool is really used


def test_choice_depends_on_seed_and_step() -> None:
    pool7, _ = _pool(seed=7)
    pool8, _ = _pool(seed=8)
    items = [f"p{i}" for i in range(30)]
    assert [str(pool7.choose(i, "rubric")) for i in items] != [str(pool8.choose(i, "rubric")) for i in items]
    assert [str(pool7.choose(i, "rubric")) for i in items] != [str(pool7.choose(i, "profile")) for i in items]


def test_concurrent_runs_record_the_deterministic_model(tmp_path: Path) -> None:
    pool, fake = _pool(seed=3)
    runner = StepRunner(pool=pool, max_concurrency=5)
    items = [f"item-{i}" for i in range(12)]

    def prompt(i: str) -> str:
        return f"Select the 1 to 2 for {i}"

    async def go() -> list:
        return await asyncio.gather(*(runner.run("relevance", i, prompt(i), Reply) for i in items))

    fake.handlers["relevance"] = lambda f, p, s, n: {"relevant": ["x"]}
    outcomes = asyncio.run(go())
    assert [o.model for o in outcomes] == [str(pool.choose(i, "relevance")) for i in items]


def test_checkpoint_appends_and_ignores_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / ".checkpoint" / "steps.jsonl"
    cp = Checkpoint(path)
    cp.put({"key": "a", "value": 1})
    cp.put({"key": "b", "value": 2})
    with path.open("a") as f:
        f.write('{"key": "c", "val')  # a crash mid-write
    again = Checkpoint(path)
    assert again.get("a") == {"key": "a", "value": 1}
    assert again.get("b") is not None and again.get("c") is None
    assert again.torn_lines == 1 and len(again) == 2


def test_step_key_changes_with_inputs_and_config_only() -> None:
    base = step_key("profile", {"prompt": "p"}, {"models": ["a"], "seed": 0})
    assert base == step_key("profile", {"prompt": "p"}, {"seed": 0, "models": ["a"]})
    assert base != step_key("profile", {"prompt": "q"}, {"models": ["a"], "seed": 0})
    assert base != step_key("profile", {"prompt": "p"}, {"models": ["a", "b"], "seed": 0})
    assert base != step_key("rubric", {"prompt": "p"}, {"models": ["a"], "seed": 0})


def test_runner_uses_the_checkpoint_and_books_failures(tmp_path: Path) -> None:
    path = tmp_path / "steps.jsonl"
    pool, fake = _pool(seed=0)
    fake.handlers["relevance"] = lambda f, p, s, n: {"relevant": ["x"]} if "good" in p else {"wrong": 1}
    runner = StepRunner(pool=pool, checkpoint=Checkpoint(path), retries=1)

    async def go(r: StepRunner) -> list:
        return [await r.run("relevance", "i1", "good one", Reply), await r.run("relevance", "i2", "bad", Reply)]

    good, bad = asyncio.run(go(runner))
    assert good is not None and good.value.relevant == ["x"] and not good.cached
    assert bad is None
    assert fake.total == 3  # 1 good + 2 attempts for the bad one
    usage = runner.usage["relevance"]
    assert (usage.items, usage.failed, usage.calls_run) == (1, 1, 3)
    [failure] = runner.failures
    assert failure.item == "i2" and failure.attempts == 2 and "relevant: Field required" in failure.reason
    assert len(path.read_text().splitlines()) == 1  # only the finished item is checkpointed
    record = json.loads(path.read_text())
    assert record["step"] == "relevance" and record["value"] == {"relevant": ["x"]}

    fake.calls.clear()
    rerun = StepRunner(pool=pool, checkpoint=Checkpoint(path), retries=1)
    good2, _ = asyncio.run(go(rerun))
    assert good2 is not None and good2.cached and good2.model == good.model
    assert fake.calls["relevance"] == 2  # only the failed item is tried again
    assert rerun.usage["relevance"].calls == 1 + 2 and rerun.usage["relevance"].calls_run == 2
