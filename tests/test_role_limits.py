"""``--user-max-connections`` / ``--judge-max-connections``: per-role caps that hold even when every role shares
one endpoint (and so one inspect ``max_connections`` pool) with the model under test."""

from __future__ import annotations

import asyncio
import json
from copy import copy
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput, get_model, modelapi
from tenacity import wait_fixed

from mock_openai import MockConfig, MockOpenAI, tagged_scenarios, write_scenarios
from prefdisco.errors import UserError
from prefdisco.evaluation.running.guard import RUN_FILE, guard_run
from prefdisco.evaluation.scaleout.workers import split_caps, worker_plan
from prefdisco.evaluation.settings.config import UNCOMPARED_SETTINGS, RunConfig
from prefdisco.evaluation.settings.limits import RoleLimitedModel, context_name, limit_roles, pool_of
from prefdisco.seeds import seeded_model
from test_reliability import app, mock_env, run_eval  # noqa: F401  (app is a fixture)

GRADER_ROLES = {"judge", "audit", "grader", "quality"}  # the mock's names for the calls on the grader* roles


def config(tmp_path: Path, **settings: Any) -> RunConfig:
    return RunConfig(models=["m/a"], user_model="m/u", grader_model="m/g", log_dir=tmp_path, **settings)


def test_every_grader_role_shares_the_judge_pool_and_the_user_has_its_own():
    assert pool_of("user") == "user"
    assert {pool_of(r) for r in ("grader", "grader_2", "grader_10")} == {"judge"}
    assert pool_of("assistant") is None and pool_of("graders") is None
    assert context_name("judge") == "prefdisco-role-judge"


def test_a_capped_role_keeps_its_model_and_survives_the_seeded_copies():
    model = get_model("mockllm/model", config=GenerateConfig(temperature=0.3, max_tokens=77))
    model._set_role("user")
    roles = limit_roles({"user": model, "grader": model, "grader_2": model}, {"user": 1, "judge": None})
    limited = roles["user"]
    assert isinstance(limited, RoleLimitedModel) and (limited.pool, limited.limit) == ("user", 1)
    assert limited.api is model.api and limited.role == "user" and str(limited) == str(model)
    assert limited.config.temperature == 0.3 and limited.config.max_tokens == 77
    assert roles["grader"] is model and roles["grader_2"] is model  # no judge cap: left alone
    seeded = seeded_model(limited, 11)  # what every sample's user and grader are (a copy with the trial's seed)
    assert isinstance(seeded, RoleLimitedModel) and seeded.limit == 1 and seeded.config.seed == 11
    assert isinstance(copy(limited), RoleLimitedModel)  # inspect copies each role model once per eval


@modelapi(name="prefdisco-test-flaky")
class FlakyAPI(ModelAPI):
    """Fails the first attempt of every prompt with a retryable error, then answers; records each attempt."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None, **_: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], GenerateConfig())
        self.events: list[tuple[str, str]] = []

    async def generate(self, input: Any, tools: Any, tool_choice: Any, config: GenerateConfig) -> ModelOutput:
        prompt = input[-1].text
        first = ("start", prompt) not in self.events
        self.events.append(("start", prompt))
        await asyncio.sleep(0.02)
        if first:
            self.events.append(("fail", prompt))
            raise ConnectionError("transient")
        self.events.append(("done", prompt))
        return ModelOutput.from_content(self.model_name, "ok")

    def should_retry(self, ex: Exception) -> bool:
        return isinstance(ex, ConnectionError)

    def retry_wait(self) -> Any:
        return wait_fixed(0.05)


def test_inspects_retries_run_inside_the_slot():
    """With a cap of 1 the second call starts only after the first one's retry succeeded; uncapped, it starts
    while the first one waits to retry."""

    async def two_calls(capped: bool) -> list[tuple[str, str]]:
        base = get_model("prefdisco-test-flaky/m", config=GenerateConfig(max_retries=2), memoize=False)
        model = RoleLimitedModel.of(base, "user", 1) if capped else base
        await asyncio.gather(model.generate("a"), model.generate("b"))
        return base.api.events  # a FlakyAPI (``modelapi`` registers a factory, not the class)

    serial = [("start", "a"), ("fail", "a"), ("start", "a"), ("done", "a")]
    serial += [("start", "b"), ("fail", "b"), ("start", "b"), ("done", "b")]
    assert asyncio.run(two_calls(capped=True)) == serial
    free = asyncio.run(two_calls(capped=False))
    assert free.index(("start", "b")) < free.index(("done", "a"))


def test_caps_are_checked_split_over_workers_and_recorded_as_free_settings(tmp_path):
    with pytest.raises(UserError, match="--user-max-connections: expected at least 1, got 0"):
        config(tmp_path, user_max_connections=0).validate()
    with pytest.raises(UserError, match="--judge-max-connections: expected at least 1, got 0"):
        config(tmp_path, judge_max_connections=0).validate()
    split = config(tmp_path, max_connections=8, user_max_connections=3, judge_max_connections=5)
    # the caps are the run's totals with --workers as with --ray: floor(cap / P) each, never more in all
    at_once, plan = split_caps(worker_plan(tagged_scenarios(6), replace(split, workers=2)), 2)
    assert at_once == 2
    assert {
        (s.config.max_connections, s.config.user_max_connections, s.config.judge_max_connections) for s in plan
    } == {(4, 1, 2)}
    # a cap of 1 over 3 workers: one shard at a time, with the whole cap; an unset cap stays unset
    at_once, plan = split_caps(
        worker_plan(tagged_scenarios(6), replace(config(tmp_path, user_max_connections=1), workers=3)), 3
    )
    assert at_once == 1 and len(plan) == 3
    assert {(s.config.user_max_connections, s.config.judge_max_connections) for s in plan} == {(1, None)}

    recorded = config(tmp_path, user_max_connections=1, judge_max_connections=2).fingerprint("set-1", 3)
    assert (recorded["user_max_connections"], recorded["judge_max_connections"]) == (1, 2)
    guard_run(tmp_path, recorded, UNCOMPARED_SETTINGS)
    changed = config(tmp_path, user_max_connections=4).fingerprint("set-1", 3)
    guard_run(tmp_path, changed, UNCOMPARED_SETTINGS)  # a cap does not change results: the run resumes
    saved = json.loads((tmp_path / RUN_FILE).read_text())
    assert (saved["user_max_connections"], saved["judge_max_connections"]) == (4, None)


@pytest.mark.slow
def test_caps_hold_on_a_shared_endpoint_while_the_assistant_runs_several(app, tmp_path, monkeypatch):  # noqa: F811
    """Every role on one mock endpoint, 8 connections: with the caps at most 1 user call and 2 grader-role calls
    are in flight at any moment (the mock holds each request 50 ms); without them both go above their caps; a
    rerun with the caps replays every call from the cache."""
    scenarios = tagged_scenarios(6)
    bench = write_scenarios(tmp_path / "scenarios.jsonl", scenarios)
    caps = ("--user-max-connections", "1", "--judge-max-connections", "2")
    with MockOpenAI(MockConfig(latency_s=0.05)) as mock:
        mock_env(monkeypatch, mock, tmp_path)
        capped = run_eval(app, mock, bench, tmp_path / "capped", "--max-connections", "8", *caps)
        assert capped.exit_code == 0, capped.output
        stats = mock.stats()
        limited = {
            "user": mock.max_in_flight_of({"user"}),
            "grader": mock.max_in_flight_of(GRADER_ROLES),
            "assistant": mock.max_in_flight_of({"assistant"}),
        }
        mock.reset()
        free = run_eval(app, mock, bench, tmp_path / "free", "--max-connections", "8")
        assert free.exit_code == 0, free.output
        unlimited = {"user": mock.max_in_flight_of({"user"}), "grader": mock.max_in_flight_of(GRADER_ROLES)}
        for log in (tmp_path / "capped").rglob("*.eval"):
            log.unlink()  # every sample runs again: each call must be a cache hit, none may wait forever
        mock.reset()
        rerun = run_eval(app, mock, bench, tmp_path / "capped", "--max-connections", "8", *caps)
        replayed = mock.stats()["completions"]

    assert stats["by_role"]["user"] == 6 * 2  # the mock's discovery asks 2 questions: the caps were exercised
    assert limited["user"] == 1 and limited["grader"] == 2, limited
    assert limited["assistant"] >= 3, limited  # the model under test still ran several calls at once
    assert stats["max_in_flight"] <= 8
    assert unlimited["user"] > 1 and unlimited["grader"] > 2, unlimited  # without caps both pools go higher
    assert rerun.exit_code == 0, rerun.output
    assert replayed == 0
    recorded = json.loads((tmp_path / "capped" / RUN_FILE).read_text())
    assert (recorded["user_max_connections"], recorded["judge_max_connections"]) == (1, 2)
