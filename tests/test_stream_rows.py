"""Rows streamed as samples finish (results/stream.py) against rows read back from the same logs."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from mock_openai import MockConfig, MockOpenAI, tagged_scenarios, write_scenarios
from prefdisco.results import logs
from prefdisco.results.logs import results_from_logs, write_results, write_tables
from prefdisco.results.stream import ROWS_FOLDER
from test_reliability import app, mock_env, run_eval  # noqa: F401 (app: a fixture)

# under xdist the module's tests stay on one worker, which builds its module fixture (an eval) once
pytestmark = pytest.mark.xdist_group("test_stream_rows")

N_SCENARIOS = 6
MODES = 3


@pytest.fixture(scope="module")
def finished_run(app, tmp_path_factory):  # noqa: F811
    tmp = tmp_path_factory.mktemp("stream")
    bench = write_scenarios(tmp / "scenarios.jsonl", tagged_scenarios(N_SCENARIOS))
    with pytest.MonkeyPatch.context() as monkeypatch, MockOpenAI(MockConfig(seed=3)) as mock:
        mock_env(monkeypatch, mock, tmp)
        result = run_eval(app, mock, bench, tmp / "run", "--max-connections", "8")
    assert result.exit_code == 0, result.output
    return tmp / "run"


def _lines(run) -> list[dict]:
    return [json.loads(line) for path in (run / ROWS_FOLDER).glob("*.jsonl") for line in path.read_text().splitlines()]


def _read_back(run, tmp_path):
    """The same logs read with no streamed row at all: every sample from its log."""
    copy = tmp_path / "copy"
    shutil.copytree(run, copy, ignore=shutil.ignore_patterns(ROWS_FOLDER))
    return results_from_logs(copy)


@pytest.mark.slow
def test_every_finished_sample_was_streamed_once(finished_run):
    lines = _lines(finished_run)
    assert len(lines) == N_SCENARIOS * MODES
    assert len({line["uuid"] for line in lines}) == N_SCENARIOS * MODES
    keys = {(line["result"]["mode"], line["result"]["scenario_id"]) for line in lines}
    assert len(keys) == N_SCENARIOS * MODES


@pytest.mark.slow
def test_streamed_tables_equal_read_back_tables(finished_run, tmp_path):
    streamed = results_from_logs(finished_run)
    read_back = _read_back(finished_run, tmp_path)
    assert len(streamed.results) == N_SCENARIOS * MODES
    assert_frame_equal(streamed.results, read_back.results)
    assert_frame_equal(streamed.attributes.reset_index(drop=True), read_back.attributes.reset_index(drop=True))
    order = ["mode", "scenario_id"]
    assert_frame_equal(
        streamed.transcripts.sort_values(order).reset_index(drop=True),
        read_back.transcripts.sort_values(order).reset_index(drop=True),
    )
    # and the command wrote exactly these tables
    written = pd.read_csv(finished_run / "results.csv")
    assert sorted(written["scenario_id"]) == sorted(read_back.results["scenario_id"].astype(str))


@pytest.mark.slow
def test_a_finished_run_reads_no_sample_back(finished_run, monkeypatch):
    def no_read_back(info):
        raise AssertionError(f"read {info.name} back")

    monkeypatch.setattr(logs, "_samples", no_read_back)
    assert len(results_from_logs(finished_run).results) == N_SCENARIOS * MODES


@pytest.mark.slow
def test_missing_torn_or_stale_lines_are_read_from_the_logs(finished_run, tmp_path):
    expected = _read_back(finished_run, tmp_path / "expected")
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    files = sorted((run / ROWS_FOLDER).glob("*.jsonl"))
    # one file loses its last line and gets a torn one (a kill mid-write); another's first line is stale (its
    # sample rescored since: other score values); a third disappears
    first = files[0].read_text().splitlines()
    files[0].write_text("\n".join(first[:-1]) + "\n" + first[-1][: len(first[-1]) // 2])
    second = files[1].read_text().splitlines()
    stale = json.loads(second[0])
    stale["result"]["pref_align"] = -1.0
    stale["scores"]["prefdisco_scorer"]["pref_align"] = -1.0
    files[1].write_text("\n".join([json.dumps(stale), *second[1:]]) + "\n")
    files[2].unlink()
    reconciled = results_from_logs(run)
    assert_frame_equal(reconciled.results, expected.results)
    assert (reconciled.results["pref_align"] != -1.0).all()


@pytest.mark.slow
def test_a_planted_streamed_value_is_what_the_table_shows(finished_run, tmp_path):
    """The table really comes from the streamed lines when they match the logs (not a read-back that ignores
    them): a line whose score values match but whose row was altered shows the altered row."""
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    path = sorted((run / ROWS_FOLDER).glob("*.jsonl"))[0]
    lines = path.read_text().splitlines()
    planted = json.loads(lines[0])
    planted["result"]["n_questions"] = 99
    path.write_text("\n".join([json.dumps(planted), *lines[1:]]) + "\n")
    results = results_from_logs(run).results
    planted_row = (results["scenario_id"] == planted["result"]["scenario_id"]) & (
        results["mode"] == planted["result"]["mode"]
    )
    hit = results[planted_row]
    assert hit["n_questions"].tolist() == [99]


@pytest.mark.slow
def test_tables_written_log_by_log_equal_the_tables_built_in_memory(finished_run, tmp_path):
    """``write_results`` (each log's transcripts written as it is read, rows kept as tuples) writes the files
    ``write_tables`` writes from the frames built whole."""
    streamed, whole = tmp_path / "streamed", tmp_path / "whole"
    whole.mkdir()
    returned = write_results(finished_run, out=streamed)
    write_tables(results_from_logs(finished_run), whole)
    for name in ("results.csv", "attributes.csv"):
        assert (streamed / name).read_bytes() == (whole / name).read_bytes(), name
    for name in ("results.parquet", "attributes.parquet"):
        assert_frame_equal(pd.read_parquet(streamed / name), pd.read_parquet(whole / name))
    read = [pd.read_json(folder / "transcripts.jsonl", lines=True) for folder in (streamed, whole)]
    assert len(read[0]) == N_SCENARIOS * MODES
    assert_frame_equal(*read)
    assert returned.transcripts.empty and len(returned.results) == N_SCENARIOS * MODES
