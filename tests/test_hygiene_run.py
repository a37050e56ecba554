"""Clean simulated turns through the real run (issue 24, part 4): a scripted simulator with faults planted on known
turns, the engine's screen, the results' ``user_flags`` / ``user_redraws`` / ``user_flag_reasons``, ``--user-retry``
and the report's Validity line and ``summary.json``'s ``simulator_flags`` — every figure worked out by hand.

The world: four scenarios f0..f3 (the problem tagged ``[fi]``), run in baseline and discovery (no audit, no quality
judge). The assistant asks two questions in discovery, then answers. The ``faulty`` simulator's replies to
question 1 and 2 of each scenario (✓ = a clean reply):

| scenario | question 1 | question 2 | user_flags | user_flag_reasons |
|---|---|---|---|---|
| f0 | "Hello! How can I help you today?" (restart) | ✓ | 1 | restart 1 |
| f1 | ✓ | ✓ | 0 | {} |
| f2 | "As an AI, I do not have preferences." (leak) | "Explanation depth: step by step." (echo) | 2 | leak 1, echo 1 |
| f3 | ✓ | a reply cut off at the token limit (empty_or_cut) | 1 | empty_or_cut 1 |

(leak: reasoning_leak; echo: profile_echo.)

So discovery's share of flagged dialogues is 3/4; baseline has no simulated reply (empty, and no share). Drawn
again with the seed of ``--user-retry 1``, every faulty reply is clean: no dialogue flagged, ``user_redraws`` 1, 0,
2, 1 (4 in all), each flagged draw kept in its turn's ``redrawn``. The ``clean`` simulator is never flagged.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput

from prefdisco.analysis.report.build import make_report
from prefdisco.evaluation.run import run_conditions
from prefdisco.evaluation.settings.config import RunConfig
from prefdisco.schema import Problem
from prefdisco.seeds import call_seed, redraw_seed, seed_scope
from scripted import make_scenario
from transfer_world import SCRIPTS

# under xdist the module's tests stay on one worker, which builds its module fixture (the planted faults' evals) once
pytestmark = pytest.mark.xdist_group("test_hygiene_run")

N = 4
CASE = re.compile(r"\[(f\d)\]")
CLEAN = "I like it plain and concrete, please."
FAULTS = {
    ("f0", 1): "Hello! How can I help you today?",
    ("f2", 1): "As an AI, I do not have preferences.",
    ("f2", 2): "Explanation depth: step by step.",
    ("f3", 2): "I would like it explained with",  # stopped at the token limit (below)
}
CUT = ("f3", 2)


def scenarios():
    out = []
    for i in range(N):
        problem = Problem(
            id=f"prob-f{i}",
            benchmark="demo",
            domain="math",
            question=f"[f{i}] A ferry carries 12 cars per trip. How many trips for 30 cars?",
            choices=["2", "3", "4", "5"],
            answer="B",
            answer_type="letter",
        )
        values = ("step by step", "machine analogies")
        out.append(make_scenario(f"f{i}", weights=(0.6, 0.4), values=values, problem=problem))
    return out


def asker(messages: list[ChatMessage]) -> str:
    """Two questions in discovery, then the answer; baseline answers at once."""
    if not any(m.role == "system" for m in messages):
        return "The answer is B."
    asked = sum(m.role == "assistant" for m in messages)
    return f"QUESTION: What matters to you, point {asked + 1}?" if asked < 2 else "ANSWER: The answer is B."


def simulator(faulty: bool):
    def reply(messages: list[ChatMessage], config: GenerateConfig) -> str | ModelOutput:
        sid = CASE.search("\n".join(m.text for m in messages)).group(1)
        turn = sum(m.role == "user" for m in messages)  # this question's number (the earlier ones, then it)
        first_draw = config.seed == call_seed(seed_scope(0), sid, "discovery", 1, "user")
        if not faulty or (sid, turn) not in FAULTS or not first_draw:
            return CLEAN
        if (sid, turn) == CUT:
            output = ModelOutput.from_content(model="faulty", content=FAULTS[CUT])
            output.choices[0].stop_reason = "max_tokens"
            return output
        return FAULTS[(sid, turn)]

    return reply


def judge(messages: list[ChatMessage]) -> str:
    return json.dumps({"score": 3})


SCRIPTS |= {"asker": asker, "faulty": simulator(True), "clean": simulator(False), "flags-judge": judge}


def planted_run(folder: Path, user: str, retry: int) -> Path:
    config = RunConfig(
        models=["scripted/asker"],
        user_model=f"scripted/{user}",
        grader_model="scripted/flags-judge",
        log_dir=folder,
        modes=["baseline", "discovery"],
        max_questions=2,
        user_retry=retry,
        audit=False,
        quality=False,
        display="none",
    )
    config.validate()
    run_conditions(scenarios(), config)
    return config.log_dir


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory):
    """Each simulator's run and report: the results table, the transcripts and the report's summary."""
    import prefdisco.cli as cli

    cli._register()
    base = tmp_path_factory.mktemp("flags")
    old = os.environ.get("INSPECT_CACHE_DIR")
    os.environ["INSPECT_CACHE_DIR"] = str(base / "cache")
    out = {}
    try:
        for name, user, retry in (("faulty", "faulty", 0), ("retried", "faulty", 1), ("clean", "clean", 0)):
            run = planted_run(base / name, user, retry)
            make_report(run, base / f"report-{name}", n_boot=200, figures=False)
            out[name] = {
                "results": pd.read_csv(run / "results.csv").set_index(["scenario_id", "mode"]),
                "transcripts": [json.loads(line) for line in (run / "transcripts.jsonl").read_text().splitlines()],
                "summary": json.loads((base / f"report-{name}" / "summary.json").read_text()),
                "report": base / f"report-{name}",
                "log_dir": run,
            }
    finally:
        if old is None:
            os.environ.pop("INSPECT_CACHE_DIR")
        else:
            os.environ["INSPECT_CACHE_DIR"] = old
    return out


def discovery(results: pd.DataFrame, column: str) -> dict[str, object]:
    return {f"f{i}": results.loc[(f"f{i}", "discovery"), column] for i in range(N)}


@pytest.mark.slow
def test_each_planted_fault_reaches_the_results_with_its_reason(runs):
    results = runs["faulty"]["results"]
    assert discovery(results, "user_flags") == {"f0": 1, "f1": 0, "f2": 2, "f3": 1}
    reasons = {k: json.loads(v) for k, v in discovery(results, "user_flag_reasons").items()}
    assert reasons == {
        "f0": {"restart": 1},
        "f1": {},
        "f2": {"reasoning_leak": 1, "profile_echo": 1},
        "f3": {"empty_or_cut": 1},
    }
    assert discovery(results, "user_redraws") == dict.fromkeys(["f0", "f1", "f2", "f3"], 0)
    baseline = results.xs("baseline", level="mode")
    assert baseline["user_flags"].isna().all() and baseline["user_flag_reasons"].isna().all()


@pytest.mark.slow
def test_the_validity_section_gives_the_share_of_flagged_dialogues_per_cell(runs):
    summary = runs["faulty"]["summary"]
    assert summary["simulator_flags"] == {"scripted/asker": {"demo": {"discovery": 3 / 4}}}
    reading = next(r for r in summary["validity"] if r["instrument"] == "Clean simulated turns")
    assert "scripted/asker/demo/discovery: 75.0 % of 4" in reading["finding"]
    assert "(restart 1, reasoning_leak 1, empty_or_cut 1, profile_echo 1)" in reading["finding"]  # in FAULTS order
    assert "--user-retry 1" in reading["reading"]
    table = pd.read_csv(runs["faulty"]["report"] / "table_simulator_flags.csv")
    assert table[["condition", "n_dialogues", "n_flagged", "redrawn"]].values.tolist() == [["discovery", 4, 3, 0]]


@pytest.mark.slow
def test_user_retry_draws_a_flagged_reply_again_and_keeps_the_flagged_draw(runs):
    results = runs["retried"]["results"]
    assert discovery(results, "user_flags") == dict.fromkeys(["f0", "f1", "f2", "f3"], 0)
    assert discovery(results, "user_redraws") == {"f0": 1, "f1": 0, "f2": 2, "f3": 1}
    f2 = next(t for t in runs["retried"]["transcripts"] if t["scenario_id"] == "f2" and t["mode"] == "discovery")
    replies = [t for t in f2["turns"] if t["kind"] == "reply"]
    assert [r["content"] for r in replies] == [CLEAN, CLEAN]
    assert [r["redrawn"] for r in replies] == [
        [{"content": FAULTS[("f2", 1)], "flags": ["reasoning_leak"]}],
        [{"content": FAULTS[("f2", 2)], "flags": ["profile_echo"]}],
    ]
    summary = runs["retried"]["summary"]
    assert summary["simulator_flags"] == {"scripted/asker": {"demo": {"discovery": 0.0}}}
    reading = next(r for r in summary["validity"] if r["instrument"] == "Clean simulated turns")
    assert "4 flagged replies drawn again" in reading["finding"]


def test_the_redraw_seed_is_the_trials_user_seed_drawn_again():
    """The redraw is a new draw (another seed, cached apart) and the same on a rerun (derived, not random)."""
    seed = call_seed(seed_scope(0), "f0", "discovery", 1, "user")
    assert redraw_seed(seed, 1) == redraw_seed(seed, 1) != seed
    assert redraw_seed(seed, 1) != redraw_seed(seed, 2) and 0 <= redraw_seed(None, 1) < 2**31


@pytest.mark.slow
def test_a_clean_simulator_is_never_flagged(runs):
    results = runs["clean"]["results"]
    assert discovery(results, "user_flags") == dict.fromkeys(["f0", "f1", "f2", "f3"], 0)
    assert set(discovery(results, "user_flag_reasons").values()) == {"{}"}
    summary = runs["clean"]["summary"]
    assert summary["simulator_flags"] == {"scripted/asker": {"demo": {"discovery": 0.0}}}
    reading = next(r for r in summary["validity"] if r["instrument"] == "Clean simulated turns")
    assert reading["reading"] == "every simulated reply passed the hygiene checks"


@pytest.mark.slow
def test_the_scout_scanner_finds_each_planted_fault_in_the_logs(runs, tmp_path):
    """``prefdisco/simulated_turns`` (the ``scout`` extra) over the faulty run's logs, read back from disk: one
    result per flagged reply, with its fault, its scenario and the reply — the four planted faults, nothing in
    baseline; over the clean run, no fault and one ``clean`` result per discovery dialogue."""
    from inspect_scout import scan, scan_results_df, transcripts_from

    from prefdisco.results.scanners import simulated_turns

    found = {}
    for name in ("faulty", "clean"):
        status = scan(
            [simulated_turns()],
            transcripts=transcripts_from(str(runs[name]["log_dir"])),
            scans=str(tmp_path / name),
            max_processes=1,
            display="none",
        )
        assert status.complete
        frame = scan_results_df(status.location).scanners["simulated_turns"]
        rows = frame.to_dict("records")
        found[name] = sorted((r["metadata.scenario_id"], r["label"], r["explanation"]) for r in rows if r["value"])
        found[f"{name}-clean"] = sorted(r["metadata.scenario_id"] for r in rows if r["label"] == "clean")
    assert found["faulty"] == sorted(
        [
            ("f0", "restart", FAULTS[("f0", 1)]),
            ("f2", "reasoning_leak", FAULTS[("f2", 1)]),
            ("f2", "profile_echo", FAULTS[("f2", 2)]),
            ("f3", "empty_or_cut", FAULTS[CUT]),
        ]
    )
    assert found["faulty-clean"] == ["f1"]
    assert found["clean"] == [] and found["clean-clean"] == ["f0", "f1", "f2", "f3"]


def test_the_inspect_task_refuses_a_retry_out_of_bounds(tmp_path):
    from prefdisco.errors import UserError
    from prefdisco.evaluation.running.task import prefdisco

    path = tmp_path / "scenarios.jsonl"
    path.write_text(scenarios()[0].model_dump_json() + "\n")
    with pytest.raises(UserError, match=r"--user-retry: expected 0\.\.3"):
        prefdisco(scenarios=str(path), mode="discovery", user_retry=4)
    assert prefdisco(scenarios=str(path), mode="discovery", user_retry=1, pushback=1).dataset[0].id


def test_the_scanner_is_found_by_its_name_where_scout_runs():
    """``scout scan prefdisco/simulated_turns`` (docs/evaluation.md) finds the scanner by name: in a process that
    imported inspect_scout first, as the ``scout`` command does, inspect's entry points register it (a process that
    only evaluates reads them without importing inspect_scout: 0.7 s a process)."""
    import subprocess
    import sys

    probe = (
        "import inspect_scout\nfrom inspect_ai._util.registry import registry_lookup\n"
        "print(registry_lookup('scanner', 'prefdisco/simulated_turns').__name__)"
    )
    scout = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False)
    assert scout.stdout.split() == ["simulated_turns"], scout.stderr[-2000:]
