"""A run folder can move (issue 49, finding 4): copied or moved to another path (another disk, machine or
colleague), it resumes there with no finished call repeated and replays to the same rows, and nothing in it names
an absolute path of the machine it ran on.

Before the fix the cache scope of every call was made of the folder's absolute path; the scope is an argument of
the condition solvers, which inspect's eval-set matches the folder's logs by, so at the new path every log looked
like another eval-set's and inspect refused the folder (``--log-dir-allow-dirty``, exit 1). The copy here is
resumed with a fresh ``INSPECT_CACHE_DIR`` (the response cache is the user's, not the folder's: another machine has
none) and with the original folder deleted, so only what travels with the folder can make it work.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import prefdisco.cli as cli
from mock_openai import MockConfig, MockOpenAI, mock_env, tagged_scenarios, write_scenarios

pytestmark = pytest.mark.xdist_group("test_run_folder_moves")  # one worker builds the module's run once

COLUMNS = ["scenario_id", "mode", "pref_align", "correct", "n_questions", "judge_invalid", "failed", "quality"]
MODES = "baseline,discovery"
REJECTED = "c0001"


def table(run: Path) -> pd.DataFrame:
    results = pd.read_csv(run / "results.csv")
    return results[COLUMNS].sort_values(["scenario_id", "mode"]).reset_index(drop=True)


def invoke(*args: object):
    return CliRunner().invoke(cli.app, [str(a) for a in args])


def run_eval(mock: MockOpenAI, bench: Path, run: Path):
    model = f"openai-api/mock/m{mock.port}"  # a model name per server (inspect memoizes models by name)
    return invoke("eval", bench, "--model", model, "--modes", MODES, "--log-dir", run, "--display", "none")


def calls_by_case(mock: MockOpenAI) -> dict[str, int]:
    out: dict[str, int] = {}
    for key, n in mock.stats()["by_case"].items():
        case = key.split("|")[0]
        out[case] = out.get(case, 0) + n
    return out


def move(source: Path, dest: Path) -> Path:
    """``source`` copied to ``dest`` and deleted: only what the folder holds goes with it."""
    shutil.copytree(source, dest)
    shutil.rmtree(source)
    return dest


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory):
    """An uninterrupted run of three scenarios (baseline and discovery) on the mock, in ``ROOT/original/run``;
    the mock stays up for the module (the model's name is its port)."""
    cli._register()
    root = tmp_path_factory.mktemp("moves")
    monkeypatch = pytest.MonkeyPatch()
    bench = write_scenarios(root / "bench" / "scenarios.jsonl", tagged_scenarios(3))
    with MockOpenAI(MockConfig()) as mock:
        mock_env(monkeypatch, mock, root / "machine-a")
        monkeypatch.setenv("XDG_DATA_HOME", str(root / "machine-a" / "data"))  # inspect's sample buffers
        made = run_eval(mock, bench, root / "original" / "run")
        assert made.exit_code == 0, made.output
        yield {
            "root": root,
            "bench": bench,
            "run": root / "original" / "run",
            "mock": mock,
            "calls": calls_by_case(mock),
            "table": table(root / "original" / "run"),
            "monkeypatch": monkeypatch,
        }
    monkeypatch.undo()


def another_machine(finished: dict, name: str) -> None:
    """An inspect response cache (and sample buffer) of its own: what a copy on another machine would find."""
    finished["monkeypatch"].setenv("INSPECT_CACHE_DIR", str(finished["root"] / name / "inspect-cache"))
    finished["monkeypatch"].setenv("XDG_DATA_HOME", str(finished["root"] / name / "data"))


def test_a_finished_run_copied_elsewhere_replays_with_no_call(finished):
    """The same command with --log-dir at the copy (and the copy's own config.toml) makes no call and gives the same
    rows; judge and report read the copy. Before the fix: inspect's 'not associated with a task passed to eval_set
    … --log-dir-allow-dirty', exit 1."""
    root, mock = finished["root"], finished["mock"]
    copy = root / "copies" / "replayed"
    shutil.copytree(finished["run"], copy)  # the original stays: the next test reads it
    another_machine(finished, "machine-b")
    mock.reset()

    again = run_eval(mock, finished["bench"], copy)
    assert again.exit_code == 0, again.output
    assert mock.stats()["completions"] == 0
    pd.testing.assert_frame_equal(table(copy), finished["table"])
    assert json.loads((copy / "run.json").read_text()) == json.loads((finished["run"] / "run.json").read_text())

    from_file = invoke("eval", "--config", copy / "config.toml")  # its paths are the copy's: it resumes the copy
    assert from_file.exit_code == 0, from_file.output
    assert str(copy / "results.csv") in from_file.output.replace("\n", "")
    judged = invoke("judge", copy)  # judged inline: nothing to do
    assert judged.exit_code == 0, judged.output
    report = invoke("report", copy, "--out", root / "copies" / "report", "--no-figures")
    assert report.exit_code == 0, report.output
    assert mock.stats()["completions"] == 0
    pd.testing.assert_frame_equal(table(copy), finished["table"])


def test_an_interrupted_run_moved_elsewhere_finishes_without_repeating_a_call(finished):
    """Every request of one scenario fails (the provider rejects it), so its samples are missing; the folder is
    moved and the command rerun there on a machine without the first one's cache: only that scenario's calls are
    made, exactly as many as the uninterrupted run made for it, and the rows equal the uninterrupted run's."""
    root, mock = finished["root"], finished["mock"]
    another_machine(finished, "machine-c")
    mock.reset()
    mock.config.reject_case = REJECTED
    try:
        failed = run_eval(mock, finished["bench"], root / "interrupted" / "run")
    finally:
        mock.config.reject_case = None
    assert failed.exit_code == 2, failed.output  # its samples failed: "rerun the same command"
    assert table(root / "interrupted" / "run").query("failed == 1")["scenario_id"].unique().tolist() == [REJECTED]

    moved = move(root / "interrupted" / "run", root / "elsewhere" / "deeper" / "run")
    another_machine(finished, "machine-d")
    mock.reset()
    resumed = run_eval(mock, finished["bench"], moved)
    assert resumed.exit_code == 0, resumed.output
    assert calls_by_case(mock) == {REJECTED: finished["calls"][REJECTED]}  # no finished sample's call again
    assert mock.stats()["completions"] == finished["calls"][REJECTED]
    pd.testing.assert_frame_equal(table(moved), finished["table"])


def test_a_copied_run_keeps_its_cache_on_the_same_machine(finished):
    """On the machine that made it, a copy is the same run to the response cache too: a regrade of the copy against
    the unchanged benchmark replays every judge call from the original's cache (no call, the same scores). Before
    the fix the cache was keyed by the folder's absolute path, and the copy's regrade paid for every judge call."""
    root, mock = finished["root"], finished["mock"]
    copy = root / "same-machine" / "run"
    shutil.copytree(finished["run"], copy)
    another_machine(finished, "machine-a")  # back on the first machine: its cache
    mock.reset()
    regraded = invoke("regrade", copy, "--bench", finished["bench"], "--out", root / "same-machine" / "regraded")
    assert regraded.exit_code == 0, regraded.output
    assert mock.stats()["completions"] == 0
    pd.testing.assert_frame_equal(table(root / "same-machine" / "regraded"), finished["table"])


def test_a_run_folder_from_before_run_ids_moves_too(finished):
    """A folder written before ``run.json`` recorded a ``run_id`` (its solvers' scope then came from its path):
    moved, it resumes with no call, taking the scope its logs were built with and recording it."""
    root, mock = finished["root"], finished["mock"]
    older = root / "older" / "run"
    shutil.copytree(finished["run"], older)
    recorded = json.loads((older / "run.json").read_text())
    scope = recorded.pop("run_id")
    (older / "run.json").write_text(json.dumps(recorded, indent=2))
    moved = move(older, root / "older-moved" / "run")
    another_machine(finished, "machine-e")
    mock.reset()
    again = run_eval(mock, finished["bench"], moved)
    assert again.exit_code == 0, again.output
    assert mock.stats()["completions"] == 0
    assert json.loads((moved / "run.json").read_text())["run_id"] == scope


def machine_paths(finished: dict) -> list[str]:
    """The absolute paths a run folder must not name: the run's own folder, the temporary folders, the benchmark's,
    the home folder, the working directory (each as given and resolved)."""
    places = [finished["run"], finished["root"], finished["bench"], Path.home(), Path.cwd()]
    return sorted({str(p) for place in places for p in (Path(place).absolute(), Path(place).resolve())})


def test_nothing_in_a_run_folder_names_the_machines_paths(finished):
    """Every file the run wrote (tables, parquet, run.json, config.toml, protocol, estimate, rows, call times) and
    every inspect log, read whole (its header, samples and events): none holds an absolute path of this machine.
    Before the fix config.toml named the benchmark and the run folder by their absolute paths."""
    from inspect_ai.log import read_eval_log

    needles = machine_paths(finished)
    files = [f for f in sorted(finished["run"].rglob("*")) if f.is_file()]
    assert {"config.toml", "run.json", "results.parquet", "protocol.json"} <= {f.name for f in files}
    assert any(f.suffix == ".eval" for f in files)
    found = []
    for file in files:
        if file.suffix == ".eval":
            text = read_eval_log(str(file)).model_dump_json()
        else:
            text = file.read_bytes().decode("utf-8", errors="replace")
        found += [f"{file.relative_to(finished['run'])}: {n}" for n in needles if n in text]
    assert not found, found
    written = (finished["run"] / "config.toml").read_text()
    assert 'log-dir = "."' in written and 'bench = "../../bench/scenarios.jsonl"' in written
