"""kill -9 of a running `prefdisco eval` at a random moment, then the same command again.

The rerun must end with exactly the uninterrupted run's results (same (scenario, mode) rows, same scores and
tokens: the mock answers deterministically), no duplicates, and the model calls of both attempts together may exceed the
uninterrupted run's only by what was in flight when the process died.

"In flight" is counted from the client's side: a call is complete once inspect has stored its reply in the
response cache (one file per call, written as soon as the reply is processed). Replies the server had sent but the
busy client had not yet read are in flight too — under load there are many more of them than requests the server
is still holding.
"""

from __future__ import annotations

import os
import pickle
import random
import re
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
from typer.testing import CliRunner

import prefdisco.cli as cli
from mock_openai import MockConfig, MockOpenAI, tagged_scenarios, write_scenarios

COLUMNS = ["scenario_id", "mode", "pref_align", "correct", "n_questions", "judge_invalid", "failed"]
# a call the killed attempt made and cached keeps its tokens in the resumed sample (evaluation/running/cached_usage.py)
COLUMNS += ["input_tokens", "output_tokens", "user_input_tokens", "user_output_tokens", "grader_input_tokens"]
COLUMNS += ["grader_output_tokens"]


def table(run) -> pd.DataFrame:
    results = pd.read_csv(run / "results.csv")
    return results[COLUMNS].sort_values(["scenario_id", "mode"]).reset_index(drop=True)


def cache_entries(folder) -> int:
    """Readable entries of inspect's response cache (a file the kill cut off mid-write does not count)."""
    count = 0
    for path in folder.rglob("*") if folder.exists() else []:
        if path.is_file():
            try:
                with path.open("rb") as f:
                    pickle.load(f)
            except Exception:
                continue
            count += 1
    return count


@pytest.mark.slow
def test_kill_9_then_rerun_gives_the_uninterrupted_results(tmp_path, monkeypatch):
    cli._register()
    bench = write_scenarios(tmp_path / "scenarios.jsonl", tagged_scenarios(6))
    # a little latency so that calls are in flight when the process dies
    cache = tmp_path / "inspect-cache"
    with MockOpenAI(MockConfig(latency_s=0.02)) as mock:
        for key, value in mock.env("mock").items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(cache))
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # inspect's sample buffers
        monkeypatch.setenv("INSPECT_DISPLAY", "none")
        model = f"openai-api/mock/m{mock.port}"

        def command(run):
            return ["eval", str(bench), "--model", model, "--log-dir", str(run), "--display", "none"]

        # 1. uninterrupted
        done = CliRunner().invoke(cli.app, command(tmp_path / "straight"))
        assert done.exit_code == 0, done.output
        uninterrupted = mock.stats()["completions"]
        expected = table(tmp_path / "straight")

        # 2. killed at a random point between 20 % and 80 % of the calls
        mock.reset()
        cached_before = cache_entries(cache)
        seed = random.randrange(1_000_000)
        kill_at = random.Random(seed).randint(uninterrupted // 5, uninterrupted * 4 // 5)
        process = subprocess.Popen(
            [sys.executable, "-m", "prefdisco", *command(tmp_path / "killed")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=os.environ.copy(),
        )
        deadline = time.monotonic() + 120
        while mock.stats()["completions"] < kill_at and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        assert process.returncode == -signal.SIGKILL, f"seed {seed}: the run ended before the kill"
        time.sleep(0.3)  # let the server finish writing what it had started
        first = mock.stats()["completions"]
        completed = cache_entries(cache) - cached_before  # calls whose reply the killed client had processed
        in_flight = first - completed

        # 3. the same command again
        mock.reset()
        again = CliRunner().invoke(cli.app, command(tmp_path / "killed"))
        assert again.exit_code == 0, f"seed {seed}: {again.output}"
        second = mock.stats()["completions"]

    resumed = table(tmp_path / "killed")
    assert not resumed.duplicated(["scenario_id", "mode"]).any()
    pd.testing.assert_frame_equal(resumed, expected)  # same rows, same scores
    report = f"seed {seed}: killed at {kill_at}; calls {first} + {second} vs {uninterrupted}, {in_flight} in flight"
    print(report)
    assert 0 <= in_flight < first, report
    assert first + second <= uninterrupted + in_flight, report  # i.e. no completed call was made again


@pytest.mark.slow
def test_ctrl_c_says_the_run_was_interrupted_and_how_to_finish_it(tmp_path):
    """Ctrl-C in a terminal (SIGINT to the whole process group, the run's output a pseudo-terminal, as a terminal
    sends it): inspect ends the tasks as cancelled and prints "Completed all tasks … successfully"; the command's
    last line says it was interrupted, how many of all the run's samples finished and to rerun, and exits 2; a
    sample the interrupt cancelled is no failed row (before: a ``CancelledError`` row each, and a run whose task log
    said failed rather than cancelled ended "the eval-set did not finish: N failed sample(s)"); the rerun finishes
    the run (issue 35, class 6; issue 49, finding 6)."""
    import pty
    import select
    import signal

    from mock_openai import MockConfig, MockOpenAI, tagged_scenarios, write_scenarios

    bench = write_scenarios(tmp_path / "scenarios.jsonl", tagged_scenarios(4))
    with MockOpenAI(MockConfig(latency_s=0.1)) as mock:  # 10 calls a dialogue: about a second each run
        env = {**os.environ, **mock.env("mock"), "INSPECT_CACHE_DIR": str(tmp_path / "cache")}
        env["XDG_DATA_HOME"] = str(tmp_path / "data")
        model = f"openai-api/mock/m{mock.port}"
        command = [sys.executable, "-m", "prefdisco", "eval", str(bench), "--model", model]
        command += ["--modes", "baseline,discovery", "--log-dir", str(tmp_path / "run")]
        terminal, its_end = pty.openpty()
        # a session and process group of its own, as a terminal's foreground job; SIGINT at its default, whatever
        # this worker's earlier tests left in its disposition
        process = subprocess.Popen(
            command,
            env=env,
            stdin=its_end,
            stdout=its_end,
            stderr=its_end,
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        os.close(its_end)
        said = bytearray()

        ready = select.poll()  # not select(): a worker late in the suite holds descriptors above 1024
        ready.register(terminal, select.POLLIN)

        def read(wait: float) -> bool:
            if ready.poll(wait * 1000):
                try:
                    chunk = os.read(terminal, 65536)
                except OSError:  # the terminal's other end is closed: the process has ended
                    return False
                said.extend(chunk)
                return bool(chunk)
            return process.poll() is None

        deadline = time.monotonic() + 60
        while mock.stats()["completions"] < 12 and time.monotonic() < deadline and process.poll() is None:
            read(0.05)
        assert process.poll() is None, "the run ended before it could be interrupted"
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C: the whole foreground process group
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and read(0.5):
            pass
        process.wait(timeout=30)
        os.close(terminal)
        output = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", said.decode(errors="replace"))
        interrupted = pd.read_csv(tmp_path / "run" / "results.csv")
        again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    text = " ".join(output.split())  # the terminal wraps long lines
    assert process.returncode == 2, output
    ended = re.search(r"error: interrupted \(Ctrl-C\) with (\d) of 8 samples finished: rerun the same command", text)
    assert ended and text.index("Completed all tasks") < ended.start(), text[-2000:]
    assert "did not finish" not in text and "failed sample" not in text
    assert "CancelledError" not in interrupted.to_csv() and not interrupted["failed"].any()
    assert len(interrupted) == int(ended.group(1))  # the finished rows, nothing else
    assert again.returncode == 0, again.stdout + again.stderr
    assert len(pd.read_csv(tmp_path / "run" / "results.csv")) == 8
