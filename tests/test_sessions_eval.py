"""``prefdisco eval --sessions FILE``: the per-scenario conditions with session columns, and the carry arms played
position by position, each carrying what the assistant kept of the earlier positions; resume without calls; a kill
in the middle of a session and a rerun that repeats no finished call."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai.solver import Generate, Solver, TaskState
from inspect_ai.util import Store
from typer.testing import CliRunner

import prefdisco.cli as cli
from mock_openai import MockConfig, MockOpenAI, tagged_scenarios, write_scenarios
from prefdisco.dialogue.carry import SessionNotes, dialogue_text
from prefdisco.dialogue.state import DialogueRecord
from prefdisco.schema import Scenario
from prefdisco.sessions.model import Session, SessionSet, SessionSetHeader, label_positions, write_session_set
from scripted import make_persona
from test_reliability_kill import cache_entries

ARMS = "baseline,discovery,oracle,carry_transcript,carry_notes"


def session_bench(tmp_path: Path, length: int = 2, people: int = 2) -> tuple[Path, Path, list[Scenario]]:
    """``people`` persons with ``length`` scenarios each (different problems), one session per person."""
    scenarios = tagged_scenarios(length * people)
    personas = [make_persona(f"p{i}", f"Person {i}") for i in range(people)]
    scenarios = [s.model_copy(update={"persona": personas[i // length]}) for i, s in enumerate(scenarios)]
    bench = write_scenarios(tmp_path / "bench" / "scenarios.jsonl", scenarios)
    sessions = []
    for i, persona in enumerate(personas):
        chain = scenarios[i * length : (i + 1) * length]
        profiles = [{item.attribute: item.value for item in s.profile.items} for s in chain]
        sessions.append(
            Session(
                session_id=f"s{i}",
                persona_id=persona.id,
                scenario_ids=[s.id for s in chain],
                labels=label_positions(profiles),
            )
        )
    path = tmp_path / "sessions.jsonl"
    header = SessionSetHeader(source=str(bench), length=length, n_sessions=len(sessions))
    write_session_set(path, SessionSet(header=header, sessions=sessions))
    return bench, path, scenarios


def samples(folder: Path) -> dict[tuple[str, str], object]:
    """(mode, sample id) → the sample, over every log below ``folder``."""
    found = {}
    for info in list_eval_logs(str(folder), recursive=True):
        log = read_eval_log(info)
        for sample in log.samples or []:
            found[(log.eval.metadata["prefdisco_mode"], str(sample.id))] = sample
    return found


@pytest.mark.slow
def test_carry_arms_carry_the_earlier_positions_and_every_row_has_its_session(tmp_path, monkeypatch):
    cli._register()
    bench, sessions, scenarios = session_bench(tmp_path)
    run = tmp_path / "run"
    with MockOpenAI(MockConfig(questions=1)) as mock:
        for key, value in mock.env("mock").items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
        model = f"openai-api/mock/m{mock.port}"
        args = ["eval", str(bench), "--model", model, "--log-dir", str(run), "--display", "none"]
        args += ["--sessions", str(sessions), "--modes", ARMS]
        result = CliRunner().invoke(cli.app, args)
        assert result.exit_code == 0, result.output
        calls = mock.stats()["completions"]
        again = CliRunner().invoke(cli.app, args)
        assert again.exit_code == 0, again.output
        assert mock.stats()["completions"] == calls  # a finished sessions run makes no call

    results = pd.read_csv(run / "results.csv")
    assert len(results) == 4 * 3 + 4 * 2 and not results["failed"].any()
    where = {"c0000": ("s0", 1), "c0001": ("s0", 2), "c0002": ("s1", 1), "c0003": ("s1", 2)}
    for row in results.itertuples():
        assert (row.session_id, row.position) == where[row.scenario_id], row
    found = samples(run)
    assert {(m, sid) for m, sid in found} == {(m, s.id) for m in ARMS.split(",") for s in scenarios}

    for first, second in (("c0000", "c0001"), ("c0002", "c0003")):
        # position 1: nothing carried, the discovery prompt itself
        discovery_system = found[("discovery", first)].messages[0].text
        assert found[("carry_transcript", first)].messages[0].text == discovery_system
        assert found[("carry_notes", first)].messages[0].text == discovery_system
        # position 2, carry_transcript: the first problem and its whole dialogue, as the log recorded it
        record = DialogueRecord(store=Store(found[("carry_transcript", first)].store))
        system = found[("carry_transcript", second)].messages[0].text
        problem = next(s for s in scenarios if s.id == first).problem.prompt_text()
        assert system.startswith(found[("discovery", second)].messages[0].text)
        assert f"Earlier task 1:\n{problem}\n\n{dialogue_text(list(record.turns))}" in system
        assert [t.kind for t in record.turns] == ["question", "reply", "answer"]
        # position 2, carry_notes: the notes the model wrote after position 1 (and only those)
        notes = SessionNotes(store=Store(found[("carry_notes", first)].store)).notes
        assert notes and notes in found[("carry_notes", second)].messages[0].text
        assert "Earlier task 1" not in found[("carry_notes", second)].messages[0].text
        assert SessionNotes(store=Store(found[("carry_transcript", first)].store)).notes is None


def test_sessions_refuse_what_they_cannot_run(tmp_path):
    cli._register()
    bench, sessions, _ = session_bench(tmp_path)
    base = ["eval", str(bench), "--model", "openai/gpt-4.1", "--log-dir", str(tmp_path / "r"), "--dry-run"]
    cases = [
        (["--modes", "discovery,carry_notes"], "--modes carry_notes: a carry arm needs --sessions FILE"),
        (["--sessions", str(sessions), "--workers", "2"], "--sessions runs in one process"),
        (["--sessions", str(sessions), "--limit", "1"], "--limit: a sessions run evaluates its session file whole"),
        (["--sessions", str(tmp_path / "none.jsonl")], "none.jsonl: no session file"),
    ]
    for extra, message in cases:
        result = CliRunner().invoke(cli.app, [*base, *extra])
        assert result.exit_code == 2 and message in " ".join(result.output.split()), (extra, result.output)
    other = write_scenarios(tmp_path / "other" / "scenarios.jsonl", tagged_scenarios(1, prefix="z"))
    result = CliRunner().invoke(cli.app, ["eval", str(other), *base[2:], "--sessions", str(sessions)])
    assert result.exit_code == 2 and "scenario c0000 is neither in the benchmark nor derived" in result.output


@pytest.mark.slow
def test_a_kill_in_the_middle_of_a_session_resumes_without_repeating_a_finished_call(tmp_path, monkeypatch):
    """Killed while position 2 runs (position 1 finished): the rerun makes only the calls no cache entry holds."""
    cli._register()
    bench, sessions, _ = session_bench(tmp_path, length=3, people=2)
    cache = tmp_path / "inspect-cache"
    with MockOpenAI(MockConfig(questions=1, latency_s=0.05)) as mock:
        env = {**os.environ, **mock.env("mock"), "INSPECT_CACHE_DIR": str(cache), "INSPECT_DISPLAY": "none"}
        env["XDG_DATA_HOME"] = str(tmp_path / "data")
        model = f"openai-api/mock/m{mock.port}"
        command = ["eval", str(bench), "--model", model, "--log-dir", str(tmp_path / "run"), "--display", "none"]
        command += ["--sessions", str(sessions), "--modes", "carry_transcript,carry_notes"]
        process = subprocess.Popen([sys.executable, "-m", "prefdisco", *command], env=env, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        position_2 = tmp_path / "run" / "position-2"
        while time.monotonic() < deadline and process.poll() is None:  # kill once position 2 has begun calling
            if position_2.exists() and any(position_2.rglob("*.eval")) and mock.stats()["completions"] > 0:
                break
            time.sleep(0.05)
        assert process.poll() is None, "the run ended before position 2 began"
        time.sleep(0.3)
        process.send_signal(signal.SIGKILL)
        process.wait()
        made, cached = mock.stats()["completions"], cache_entries(cache)
        for key, value in mock.env("mock").items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(cache))
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
        rerun = CliRunner().invoke(cli.app, command)
        assert rerun.exit_code == 0, rerun.output
        total, cached_after = mock.stats()["completions"], cache_entries(cache)
        straight = [*command[:5], str(tmp_path / "straight"), *command[6:]]
        assert CliRunner().invoke(cli.app, straight).exit_code == 0
    columns = ["scenario_id", "mode", "session_id", "position", "pref_align", "correct", "n_questions"]
    tables = [
        pd.read_csv(tmp_path / name / "results.csv")[columns]
        .sort_values(["scenario_id", "mode"])
        .reset_index(drop=True)
        for name in ("run", "straight")
    ]
    pd.testing.assert_frame_equal(
        *tables
    )  # the resumed sessions are the uninterrupted ones (the mock is deterministic)
    results = pd.read_csv(tmp_path / "run" / "results.csv")
    assert len(results) == 2 * 3 * 2 and not results["failed"].any()
    assert sorted(set(results["position"])) == [1, 2, 3]
    # every call the killed run had completed and cached is replayed, never made again: the rerun's calls are the
    # ones the first attempt never cached (in flight at the kill, or never reached)
    assert total - made == cached_after - cached, json.dumps({"made": made, "total": total})


def memory_agent() -> Solver:
    """An own assistant that answers with what its state carries of the session (``state.metadata``): the earlier
    problems, and who answered them."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        by_model = (state.metadata or {}).get("prefdisco_carried", {})
        carried = by_model.get(str(state.model), {}).get(str(state.epoch), {})
        earlier = [e["scenario_id"] for e in carried.get("earlier", [])]
        answered_by = sorted({e["response"].split(":")[0] for e in carried.get("earlier", [])})
        said = f"I remember {len(earlier)} earlier problem(s): {', '.join(earlier)}."
        state.output.completion = f"{str(state.model).split('/')[-1][:1]}: {said} {' '.join(answered_by)}".strip()
        return state

    return solve


def test_an_own_solver_in_a_carry_arm_receives_its_own_session_so_far_beside_another_model(tmp_path, monkeypatch):
    cli._register()
    bench, sessions, _ = session_bench(tmp_path, length=3, people=1)
    run = tmp_path / "run"
    with MockOpenAI() as mock:
        for key, value in mock.env("mock").items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
        args = ["eval", str(bench), "--model", f"openai-api/mock/m{mock.port}", "--log-dir", str(run)]
        args += ["--model", f"openai-api/mock/n{mock.port}"]
        args += ["--display", "none", "--sessions", str(sessions), "--modes", "discovery,carry_transcript"]
        args += ["--solver", f"{Path(__file__)}:memory_agent"]
        result = CliRunner().invoke(cli.app, args)
    assert result.exit_code == 0, result.output
    answers = {
        (row["model"].split("/")[-1][:1], row["mode"], row["scenario_id"]): row["final_response"]
        for row in map(json.loads, (run / "transcripts.jsonl").read_text().splitlines())
    }
    # two models under test in one run: each carries its own answers, never the other's
    expected = {}
    for m in ("m", "n"):
        for sid in ("c0000", "c0001", "c0002"):
            expected[(m, "discovery", sid)] = f"{m}: I remember 0 earlier problem(s): ."
        expected[(m, "carry_transcript", "c0000")] = f"{m}: I remember 0 earlier problem(s): ."
        expected[(m, "carry_transcript", "c0001")] = f"{m}: I remember 1 earlier problem(s): c0000. {m}"
        expected[(m, "carry_transcript", "c0002")] = f"{m}: I remember 2 earlier problem(s): c0000, c0001. {m}"
    assert answers == expected


@pytest.mark.slow
def test_a_sessions_run_on_the_fault_mock_ends_whole(tmp_path, monkeypatch):
    """Rate limits and server errors on one call in ten: inspect retries them, every position ends scored."""
    cli._register()
    bench, sessions, _ = session_bench(tmp_path, length=2, people=2)
    faults = MockConfig(questions=1, rate_429=0.1, retry_after_s=0.05, rate_500=0.05, seed=11)
    with MockOpenAI(faults) as mock:
        for key, value in mock.env("mock").items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
        args = ["eval", str(bench), "--model", f"openai-api/mock/m{mock.port}", "--log-dir", str(tmp_path / "run")]
        args += ["--display", "none", "--sessions", str(sessions), "--modes", ARMS]
        result = CliRunner().invoke(cli.app, args)
        stats = mock.stats()
    assert result.exit_code == 0, result.output
    assert stats.get("fault_429", 0) + stats.get("fault_500", 0) > 0  # faults were served, and survived
    results = pd.read_csv(tmp_path / "run" / "results.csv")
    assert len(results) == 4 * 5 and not results["failed"].any() and results["pref_align"].notna().all()
