"""The progress line of a run into a file while its first calls are slow (issue 49, finding 2): before, it read
``samples 0/24 done, 0 failed`` for 42 s and sat on one call count for up to 56 s, with no word of what remained.
Now it counts the calls running and, once one is answered, estimates the time left from the run's planned calls
(the dry run's estimate) or, where this process does not see the calls, from the samples."""

from __future__ import annotations

import json
import time
from pathlib import Path

from prefdisco.evaluation.running.progress import CALLS, RunProgress
from prefdisco.results.stream import ROWS_FOLDER


def test_the_calls_running_are_counted_and_the_time_left_estimated_from_the_planned_calls(tmp_path: Path) -> None:
    """10 calls planned. One begun and not answered: "1 model call running", no estimate yet. Then at 10 s, 2
    answered and 1 more begun: 8 calls left at 10 s / 2 calls = 5 s a call, so 40 s left (by hand)."""
    with RunProgress(tmp_path, total=4, planned_calls=10) as progress:
        CALLS.begin()
        assert progress.text() == "samples 0/4 done, 0 failed; 1 model call running"
        CALLS.add()
        CALLS.begin()
        CALLS.add()
        CALLS.begin()
        assert progress.running == 1 and progress.calls == (2, 0)
        assert progress.remaining(now=progress._started + 10) == 40
        progress._started = time.monotonic() - 10
        assert progress.text() == (
            "samples 0/4 done, 0 failed; 2 model calls made (of about 10), 1 model call running; about 40 s left"
        )
    CALLS.begin()  # outside any run: not counted
    with RunProgress(tmp_path, total=4, planned_calls=10) as again:
        assert again.running == 0 and again.calls == (0, 0) and again.remaining() is None


def test_without_the_calls_the_time_left_comes_from_the_samples(tmp_path: Path) -> None:
    """Under --workers or Ray the calls are the workers': 1 of 4 samples done at 12 s leaves 3 at 12 s each, 36 s."""
    rows = tmp_path / ROWS_FOLDER
    rows.mkdir()
    row = {"model": "m", "mode": "baseline", "fixed_k": None, "scenario_id": "s1", "epoch": 1, "failed": False}
    (rows / "a.jsonl").write_text(json.dumps({"result": row}) + "\n")
    with RunProgress(tmp_path, total=4, planned_calls=10) as progress:
        assert progress.remaining(now=progress._started + 12) == 36
        progress._started = time.monotonic() - 12
        assert progress.text() == "samples 1/4 done, 0 failed; about 36 s left; latest: baseline"
