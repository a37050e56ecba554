"""The finished samples inspect's log recorder holds in memory before a write do not grow with the run (issue 50):
from 1,000 samples a task on, inspect buffers ``samples // 20`` of them, each whole with its events; the eval-set
is given a fixed ``log_buffer`` there instead (``evaluation/running/evalset.py``), and inspect's own choice below."""

from __future__ import annotations

from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log._recorders.eval import EvalRecorder

from prefdisco.evaluation.running.evalset import _eval_set
from prefdisco.evaluation.settings.config import RunConfig


def sent_log_buffer(scenarios: int, epochs: int = 1) -> Any:
    """The ``log_buffer`` the eval-set is called with for three conditions of ``scenarios`` samples each."""
    dataset = MemoryDataset([Sample(input="x", id=i) for i in range(scenarios)])
    tasks = [Task(dataset=dataset, name=name) for name in ("baseline", "discovery", "oracle")]
    sent: dict[str, Any] = {}

    def eval_set(tasks: list[Task], **kwargs: Any) -> tuple[bool, list[Any]]:
        sent.update(kwargs)
        return True, []

    _eval_set(eval_set, tasks, {}, RunConfig(models=["m/a"], epochs=epochs))
    return sent.get("log_buffer")  # not sent: inspect's own choice


def test_the_buffer_of_a_large_run_is_the_buffer_of_one_of_1000_samples() -> None:
    at_1000 = EvalRecorder("").default_log_buffer(1_000, high_throughput=True)  # a high-throughput task from 1,000
    assert EvalRecorder("").default_log_buffer(10_000, high_throughput=True) == 10 * at_1000  # inspect's, left alone
    assert sent_log_buffer(1_000) == at_1000
    assert sent_log_buffer(10_000) == at_1000
    assert sent_log_buffer(500, epochs=4) == at_1000  # epochs count: a task of 2,000 samples


@pytest.mark.parametrize("scenarios", [3, 999])
def test_a_smaller_run_keeps_inspects_own_buffer(scenarios: int) -> None:
    assert sent_log_buffer(scenarios) is None
