"""``prefdisco export-training``: a run's trials as SFT, DPO or verl training data, with a sidecar of counts.

``sft`` and ``dpo`` read the trials of ``runs.py`` in the chosen modes (``--modes``; default every condition and
fixed-K, never the wrong_persona control, whose responses were written for another person); a failed trial, one
without a transcript or one without a final response never counts.

* ``sft`` — JSONL, one line per trial whose final response is correct and whose PrefAlign is at least
  ``--min-pref-align`` (default 4.0): ``{"messages": [...], "metadata": {...}}``, the messages the assistant
  saw (system prompt, problem, its questions and the user's replies) ending with its final turn (the final
  response is appended when the transcript does not end with an assistant turn).
* ``dpo`` — JSONL, one line per ordered pair of trials of ONE scenario (across models, modes and epochs) whose
  PrefAligns differ by at least ``--margin`` (default 1.0), the higher one correct (and, with
  ``--min-pref-align``, at least that) and the two responses different: ``{"prompt": [the problem turn],
  "chosen": [assistant: its final response], "rejected": [...], "metadata": {...}}`` (TRL's conversational
  preference layout). The prompt is the problem as the user posed it, the one turn every mode shares.
* ``verl`` — Parquet in verl's RL dataset layout, one row per scenario of the run: ``data_source``
  (``prefdisco/<benchmark>``), ``prompt`` (the messages before the assistant's first turn in
  ``--prompt-mode``, default discovery), ``ability`` (the problem's domain), ``reward_model`` (``{"style":
  "rule", "ground_truth": <gold answer>}``) and ``extra_info`` (scenario_id, benchmark, problem_id,
  answer_type, split, index, and ``interaction_kwargs`` ``{"name": "prefdisco", "scenario_id": ...}``, which verl
  hands PrefDisco's interaction, ``prefdisco.env.verl``). The gold answers come from ``--bench`` (the run
  folder does not hold them); ``split`` is ``train``, or with ``--policy`` ``train``/``test`` by the policy's
  split by problem.

``FILE.meta.json`` records the options, the source and the counts: trials read, kept and excluded by reason.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefdisco import __version__
from prefdisco.atomic import atomic_path, atomic_write
from prefdisco.errors import UserError
from prefdisco.schema import MODES, Mode, Scenario
from prefdisco.training.runs import Trial, read_trials

FORMATS = ("sft", "dpo", "verl")
META_FORMAT = "prefdisco-training-export/1"
DEFAULT_SFT_MIN_PREF_ALIGN = 4.0
DEFAULT_MARGIN = 1.0
DEFAULT_MODES: tuple[str, ...] = tuple(m for m in MODES if m != Mode.WRONG_PERSONA.value)
DEFAULT_PROMPT_MODE = Mode.DISCOVERY.value
VERL_INTERACTION = "prefdisco"
"""The name of PrefDisco's verl interaction (``prefdisco.env.verl.INTERACTION_NAME``): verl's multi-turn rollout
starts it with each row's ``extra_info.interaction_kwargs``."""


@dataclass
class ExportOptions:
    format: str
    min_pref_align: float | None = None
    margin: float = DEFAULT_MARGIN
    modes: tuple[str, ...] = DEFAULT_MODES
    bench: Path | None = None
    policy: Path | None = None
    prompt_mode: str = DEFAULT_PROMPT_MODE

    def check(self) -> None:
        if self.format not in FORMATS:
            raise UserError(f"--format: expected one of {', '.join(FORMATS)}, got {self.format!r}")
        unknown = [m for m in (*self.modes, self.prompt_mode) if m not in MODES]
        if unknown:
            raise UserError(f"--modes/--prompt-mode: unknown mode {unknown[0]!r}; expected {', '.join(MODES)}")
        if not self.modes:
            raise UserError("--modes: give at least one mode")
        if self.min_pref_align is not None and not 1 <= self.min_pref_align <= 5:
            raise UserError(f"--min-pref-align: expected a PrefAlign in [1, 5], got {self.min_pref_align}")
        if not self.margin > 0:
            raise UserError(f"--margin: expected a PrefAlign difference > 0, got {self.margin}")
        if self.format == "verl" and self.bench is None:
            raise UserError("--bench: verl rows need the gold answers; give the benchmark the run evaluated")

    def recorded(self) -> dict[str, Any]:
        """The options that shaped this format's rows (thresholds as applied)."""
        if self.format == "sft":
            return {"modes": list(self.modes), "min_pref_align": self.sft_min}
        if self.format == "dpo":
            return {"modes": list(self.modes), "min_pref_align": self.min_pref_align, "margin": self.margin}
        policy = None if self.policy is None else str(self.policy)
        return {"bench": str(self.bench), "policy": policy, "prompt_mode": self.prompt_mode}

    @property
    def sft_min(self) -> float:
        return DEFAULT_SFT_MIN_PREF_ALIGN if self.min_pref_align is None else self.min_pref_align


@dataclass
class Export:
    rows: list[dict[str, Any]]
    counts: Counter[str] = field(default_factory=Counter)


def _usable(trials: Sequence[Trial], modes: Sequence[str], counts: Counter[str]) -> list[Trial]:
    """The trials in ``modes`` with a dialogue and a final response; the rest counted by reason."""
    kept = []
    for trial in trials:
        if trial.mode not in modes:
            counts["excluded_mode"] += 1
        elif trial.failed:
            counts["excluded_failed"] += 1
        elif not trial.has_dialogue:
            counts["excluded_no_transcript"] += 1
        else:
            kept.append(trial)
    return kept


def dialogue(trial: Trial) -> list[dict[str, str]]:
    """The messages the assistant saw, ending with its final turn."""
    messages = [dict(m) for m in trial.messages]
    if not messages or messages[-1]["role"] != "assistant":
        messages.append({"role": "assistant", "content": trial.final_response or ""})
    return messages


def sft_rows(trials: Sequence[Trial], options: ExportOptions) -> Export:
    export = Export(rows=[])
    for trial in _usable(trials, options.modes, export.counts):
        if trial.correct is not True:
            export.counts["excluded_not_correct"] += 1
        elif trial.pref_align is None or trial.pref_align < options.sft_min:
            export.counts["excluded_pref_align"] += 1
        else:
            meta = {"task": trial.task, "scenario_id": trial.scenario_id, **trial.identity()}
            export.rows.append({"messages": dialogue(trial), "metadata": meta})
    return export


def problem_turn(trial: Trial) -> list[dict[str, str]]:
    """The first user message: the problem as posed, the turn every mode shares."""
    first = next((m for m in trial.messages if m["role"] == "user"), None)
    return [{"role": "user", "content": first["content"]}] if first else []


def dpo_rows(trials: Sequence[Trial], options: ExportOptions) -> Export:
    export = Export(rows=[])
    by_scenario: dict[tuple[str, str], list[Trial]] = defaultdict(list)
    for trial in _usable(trials, options.modes, export.counts):
        if trial.pref_align is None:
            export.counts["excluded_unscored"] += 1
        else:
            by_scenario[(trial.task, trial.scenario_id)].append(trial)
    floor = options.min_pref_align
    for (task, sid), group in sorted(by_scenario.items()):
        export.counts["scenarios"] += 1
        ordered = sorted(group, key=lambda t: (-_score(t), _sortable(t)))
        for chosen in ordered:
            if chosen.correct is not True or (floor is not None and _score(chosen) < floor):
                continue
            for rejected in ordered:
                gap = _score(chosen) - _score(rejected)
                if gap < options.margin - 1e-12:
                    continue
                if (rejected.final_response or "").strip() == (chosen.final_response or "").strip():
                    export.counts["skipped_identical_pair"] += 1
                    continue
                export.rows.append(
                    {
                        "prompt": problem_turn(chosen),
                        "chosen": [{"role": "assistant", "content": chosen.final_response}],
                        "rejected": [{"role": "assistant", "content": rejected.final_response}],
                        "metadata": {
                            "task": task,
                            "scenario_id": sid,
                            "margin": gap,
                            "chosen": chosen.identity(),
                            "rejected": rejected.identity(),
                        },
                    }
                )
    export.counts["pairs"] = len(export.rows)
    return export


def _score(trial: Trial) -> float:
    assert trial.pref_align is not None  # dpo groups hold scored trials only
    return trial.pref_align


def _sortable(trial: Trial) -> tuple[str, str, str, int, int]:
    return (trial.model, trial.mode, trial.task, -1 if trial.fixed_k is None else trial.fixed_k, trial.epoch)


def opening(trial: Trial) -> list[dict[str, str]]:
    """The messages before the assistant's first turn (system prompt and problem)."""
    out = []
    for m in trial.messages:
        if m["role"] == "assistant":
            break
        out.append(dict(m))
    return out


def verl_rows(
    trials: Sequence[Trial], scenarios: dict[str, Scenario], train: set[tuple[str, str]] | None, prompt_mode: str
) -> Export:
    """One row per scenario of the run, its prompt the opening of its first ``prompt_mode`` trial (by model,
    K, epoch); ``train`` holds the policy's training problems (None without a policy)."""
    export = Export(rows=[])
    ids = sorted({t.scenario_id for t in trials})
    unknown = [sid for sid in ids if sid not in scenarios]
    if unknown:
        raise UserError(f"--bench: scenario {unknown[0]} of the run is not in the benchmark (the wrong --bench?)")
    openings: dict[str, Trial] = {}
    for trial in sorted(trials, key=_sortable):
        if trial.mode == prompt_mode and opening(trial):
            openings.setdefault(trial.scenario_id, trial)
    for sid in ids:
        first = openings.get(sid)
        if first is None:
            export.counts["excluded_no_transcript"] += 1
            continue
        problem = scenarios[sid].problem
        split = "train" if train is None or (problem.benchmark, problem.id) in train else "test"
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
                    "split": split,
                    "index": len(export.rows),
                    "interaction_kwargs": {"name": VERL_INTERACTION, "scenario_id": sid},
                },
            }
        )
        export.counts[f"split_{split}"] += 1
    export.counts["scenarios"] = len(ids)
    return export


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    atomic_write(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def _write_parquet(path: Path, rows: list[dict[str, Any]]) -> None:
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


def meta_path(out: Path) -> Path:
    return out.with_name(out.name + ".meta.json")


def export_training(run_dir: Path, out: Path, options: ExportOptions) -> dict[str, Any]:
    """Write ``out`` and ``out.meta.json``; returns the sidecar's content."""
    options.check()
    run_dir, out = Path(run_dir), Path(out)
    trials, source = read_trials(run_dir)
    if options.format == "sft":
        export = sft_rows(trials, options)
    elif options.format == "dpo":
        export = dpo_rows(trials, options)
    else:
        from prefdisco.policies.model import read_policy
        from prefdisco.release.convert import load_scenarios

        assert options.bench is not None
        scenarios = {s.id: s for s in load_scenarios(options.bench)}
        train = read_policy(options.policy).train_keys() if options.policy is not None else None
        export = verl_rows(trials, scenarios, train, options.prompt_mode)
    if options.format == "verl":
        _write_parquet(out, export.rows)
    else:
        _write_jsonl(out, export.rows)
    meta = {
        "format": META_FORMAT,
        "export": options.format,
        "package_version": __version__,
        "run": str(run_dir),
        "results": source,
        "file": str(out),
        "rows": len(export.rows),
        "options": options.recorded(),
        "counts": {"trials": len(trials), **dict(sorted(export.counts.items()))},
    }
    atomic_write(meta_path(out), json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    return meta
