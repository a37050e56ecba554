"""verifiers 0.4 through the thin client (``client/``: ``prefdisco_client`` and the taskset ``prefdisco-verifiers``),
in an environment with verifiers 0.4's own pins (``.venv-verifiers``: openai below 3, no PrefDisco, no inspect), which
``make test`` creates (``make verifiers-env``). PrefDisco's server (``prefdisco env serve``'s app, ``make_app``)
runs here on the scripted simulated user and judge of every hub test; verifiers runs the episode in the second
environment, as a process (``tests/verifiers04_driver.py``: a real verifiers agent on the null harness, its model a
scripted endpoint), and reaches the reward computed by hand for the scripted world. The first run needs the network:
verifiers' local runtime has uv install its chat program's dependencies (cached after)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hub_scripts import REWARD, TURNS, WEIGHTS, roles
from prefdisco.env import Episode
from scripted import make_scenario
from test_env_masks import REPLIES
from test_env_openenv import hub, running

ROOT = Path(__file__).resolve().parents[1]
DRIVER = Path(__file__).with_name("verifiers04_driver.py")
PROVIDER_SDKS = ("anthropic", "google", "openai", "inspect_ai", "prefdisco")

pytestmark = pytest.mark.slow


def python() -> Path:
    """The second environment's interpreter (``PREFDISCO_VERIFIERS_VENV``, default ``.venv-verifiers``)."""
    venv = Path(os.environ.get("PREFDISCO_VERIFIERS_VENV", ROOT / ".venv-verifiers"))
    path = venv / "bin" / "python"
    if not path.exists():
        pytest.fail(f"{path} is missing: create the verifiers 0.4 environment with `make .venv-verifiers`")
    return path


def run_driver(*args: str) -> Any:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        [str(python()), str(DRIVER), *args], capture_output=True, text=True, timeout=300, env=env, cwd=DRIVER.parent
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_thin_client_imports_no_provider_sdk_inspect_or_prefdisco():
    loaded = set(run_driver("--imports"))
    assert "prefdisco_client" in loaded and "websockets" in loaded
    assert not loaded & set(PROVIDER_SDKS)


def test_verifiers_04_plays_an_episode_through_the_thin_client_to_the_reward_by_hand():
    scenario = make_scenario()
    user, grader = roles()
    app = hub().make_app([scenario], user.model, grader.model, reward=WEIGHTS)
    with running(app) as url:
        out = run_driver(url, scenario.id, json.dumps(list(TURNS)))
    assert out["verifiers"].startswith("0.4.")
    assert (out["env"], out["taskset"], out["ok"], out["errors"]) == ("PrefDiscoEnv", "PrefDiscoTaskset", True, [])
    assert out["prefdisco_loaded"] == []  # the trainer's process holds neither PrefDisco nor inspect
    [trace] = out["traces"]
    assert (trace["agent"], trace["errors"]) == ("policy", [])
    assert trace["reward"] == pytest.approx(REWARD) and trace["rewards"]["prefdisco_reward"] == pytest.approx(REWARD)
    assert trace["metrics"] == {"prefdisco_masked": 0.0, "n_questions": 2.0}
    # the simulated user and the judge ran in this process (the server's), on the policy's questions
    assert [c.messages[-1].text for c in user.calls] == ["How detailed should I be?", "Do you like analogies?"]
    assert grader.calls

    # the mask: the policy's trace is trainable and what its model sampled is exactly its own turns; the opening
    # and the simulated user's replies are messages it was given, never sampled
    messages = trace["messages"]
    opening = Episode(scenario, user.model, grader.model).opening()
    assert [(m["role"], m["content"]) for m in messages[:2]] == [(m["role"], m["content"]) for m in opening]
    assert trace["trainable"] is True
    assert [m["content"] for m in messages if m["sampled"]] == list(TURNS)
    assert all(m["role"] == "assistant" for m in messages if m["sampled"])
    given = [m["content"] for m in messages if not m["sampled"]]
    assert [any(r in text for r in REPLIES) for text in given[2:]] == [True, True]


def test_vf_eval_resolves_the_taskset_from_its_flags(tmp_path):
    """verifiers' own command line finds the taskset by its id and takes its options as flags (a dry run: the
    resolved config, nothing played)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    flags = ["--env.taskset.base-url", "http://127.0.0.1:9", "--env.taskset.scenario-ids", '["s1", "s2"]']
    done = subprocess.run(
        [str(python().parent / "vf-eval"), "prefdisco-verifiers", *flags, "--dry-run"],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    [resolved] = tmp_path.glob("outputs/*/configs/resolved/eval.json")
    config = json.loads(resolved.read_text())["env"]
    assert config["taskset"]["base_url"] == "http://127.0.0.1:9" and config["taskset"]["scenario_ids"] == ["s1", "s2"]
    assert config["policy"]["harness"]["id"] == "null" and config["policy"]["runtime"]["type"] == "subprocess"
