"""verl RL data: one Parquet row per scenario of a run, split by problem exactly as PrefDisco's verl interaction
splits it, train and evaluation rows in separate files.

A row is verl's RL dataset layout: ``data_source`` (``prefdisco/<benchmark>``), ``prompt`` (the messages before
the assistant's first turn in the prompt mode), ``ability`` (the problem's domain), ``reward_model``
(``{"style": "rule", "ground_truth": <gold answer>}``) and ``extra_info`` (scenario_id, benchmark, problem_id,
answer_type, split, index, and ``interaction_kwargs`` ``{"name": "prefdisco", "scenario_id": ...}``, which verl
hands the interaction, ``prefdisco.env.verl``).

The split is ``env/split.py``'s split by problem, taken over every scenario of the benchmark (``--bench``) with
``train_fraction`` and ``split_seed``: the interaction configured with the same benchmark as ``scenarios`` and
the same two settings computes the same sides, so one with ``split: train`` accepts every row of the train file
and refuses every row of the evaluation file (and ``split: eval`` the reverse); no rollout meets a row of the
other side. Without a split every row is ``train``, in one file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prefdisco.atomic import atomic_path
from prefdisco.env.split import ScenarioSplit
from prefdisco.errors import UserError
from prefdisco.schema import Scenario
from prefdisco.training.rows import Export, opening, sortable
from prefdisco.training.runs import Trial

VERL_INTERACTION = "prefdisco"
"""The name of PrefDisco's verl interaction (``prefdisco.env.verl.INTERACTION_NAME``): verl's multi-turn rollout
starts it with each row's ``extra_info.interaction_kwargs``."""


def verl_rows(
    trials: Sequence[Trial], scenarios: dict[str, Scenario], split: ScenarioSplit | None, prompt_mode: str
) -> Export:
    """One row per scenario of the run, its prompt the opening of its first ``prompt_mode`` trial (by model, K,
    epoch), its ``extra_info.split`` the scenario's side of ``split`` (``train`` without one). ``index`` numbers
    the rows of each side (of each file) from 0."""
    export = Export(rows=[])
    ids = sorted({t.scenario_id for t in trials})
    unknown = [sid for sid in ids if sid not in scenarios]
    if unknown:
        raise UserError(f"--bench: scenario {unknown[0]} of the run is not in the benchmark (the wrong --bench?)")
    openings: dict[str, Trial] = {}
    for trial in sorted(trials, key=sortable):
        if trial.mode == prompt_mode and opening(trial):
            openings.setdefault(trial.scenario_id, trial)
    for sid in ids:
        first = openings.get(sid)
        if first is None:
            export.counts["excluded_no_transcript"] += 1
            continue
        scenario = scenarios[sid]
        problem = scenario.problem
        side = "train" if split is None else split.side(scenario)
        export.rows.append(
            {
                "data_source": f"prefdisco/{problem.benchmark}",
                "prompt": opening(first),
                "ability": problem.domain,
                "reward_model": {"style": "rule", "ground_truth": problem.answer},
                "extra_info": {
                    "scenario_id": sid,
                    "benchmark": problem.benchmark,
                    "problem_id": problem.id,
                    "answer_type": problem.answer_type.value,
                    "split": side,
                    "index": export.counts[f"split_{side}"],
                    "interaction_kwargs": {"name": VERL_INTERACTION, "scenario_id": sid},
                },
            }
        )
        export.counts[f"split_{side}"] += 1
    export.counts["scenarios"] = len(ids)
    return export


def side_rows(rows: list[dict[str, Any]], side: str) -> list[dict[str, Any]]:
    return [r for r in rows if r["extra_info"]["split"] == side]


def write_parquet(path: Path, rows: list[dict[str, Any]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    message = pa.struct([("role", pa.string()), ("content", pa.string())])
    schema = pa.schema(
        [
            ("data_source", pa.string()),
            ("prompt", pa.list_(message)),
            ("ability", pa.string()),
            ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
            (
                "extra_info",
                pa.struct(
                    [
                        ("scenario_id", pa.string()),
                        ("benchmark", pa.string()),
                        ("problem_id", pa.string()),
                        ("answer_type", pa.string()),
                        ("split", pa.string()),
                        ("index", pa.int64()),
                        ("interaction_kwargs", pa.struct([("name", pa.string()), ("scenario_id", pa.string())])),
                    ]
                ),
            ),
        ]
    )
    table = pa.Table.from_pylist(rows, schema=schema)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)
