"""``prefdisco export-training``: a run's trials as SFT, DPO or verl training data, with a sidecar of counts.

``sft`` and ``dpo`` read the trials of ``runs.py`` in the chosen modes (``--modes``); a failed trial, one without
a transcript or one without a final response never counts (``rows.py``).

* ``sft`` — JSONL, one line per trial whose final response is correct and whose PrefAlign is at least
  ``--min-pref-align`` (default 4.0): ``{"messages": [...], "metadata": {...}}``, the messages the assistant
  saw (system prompt, problem, its questions and the user's replies) ending with its final turn (the final
  response is appended when the transcript does not end with an assistant turn). Default modes: every condition
  and fixed-K, never the wrong_persona control, whose responses were written for another person.
* ``dpo`` — JSONL pairs of responses made in the same context, the prompt that context (``dpo.py``: the rule,
  the thresholds and what is skipped). Default modes: discovery, oracle, fixed-K. With ``--pushback-pairs`` (a run
  with ``--pushback``) also a reply that held a correct answer under pushback over one that gave in, in the same
  context (``pushback_pairs.py``).
* ``verl`` — Parquet in verl's RL dataset layout, one row per scenario of the run (``verl_data.py``); with
  ``--train-fraction`` (and ``--split-seed``, or both read from ``--policy``) split by problem as PrefDisco's
  verl interaction splits it: train rows to ``--out``, evaluation rows to ``--eval-out`` (default
  ``<out stem>.eval<suffix>``). The gold answers come from ``--bench`` (the run folder does not hold them).

``FILE.meta.json`` (beside each file written) records the options, the source and the counts: trials read, kept
and excluded by reason.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prefdisco.atomic import atomic_write
from prefdisco.env.split import ScenarioSplit, split_scenarios
from prefdisco.errors import UserError
from prefdisco.schema import MODES, PROBES, SESSION_ARMS, Mode
from prefdisco.training.dpo import DEFAULT_DPO_MODES, dpo_rows
from prefdisco.training.rows import Export, dialogue, usable
from prefdisco.training.runs import Trial, read_trials
from prefdisco.training.verl_data import VERL_INTERACTION, side_rows, verl_rows, write_parquet
from prefdisco.version import __version__

__all__ = ["VERL_INTERACTION", "ExportOptions", "export_training", "meta_path", "verl_rows"]

FORMATS = ("sft", "dpo", "verl")
META_FORMAT = "prefdisco-training-export/1"
DEFAULT_SFT_MIN_PREF_ALIGN = 4.0
DEFAULT_MARGIN = 1.0
DEFAULT_MODES: tuple[str, ...] = tuple(
    m for m in MODES if m != Mode.WRONG_PERSONA.value and m not in SESSION_ARMS and m not in PROBES
)
"""sft's default modes (dpo's: ``dpo.DEFAULT_DPO_MODES``): the paper's conditions and fixed-K; a sessions run's carry
arms only when ``--modes`` names them (their prompts carry the earlier problems of a session), and so the harm
probes (``oracle_distractor``: a profile padded with what does not matter; ``stated_belief``)."""
DEFAULT_PROMPT_MODE = Mode.DISCOVERY.value


@dataclass
class ExportOptions:
    format: str
    min_pref_align: float | None = None
    margin: float = DEFAULT_MARGIN
    modes: tuple[str, ...] | None = None
    """None: the format's default modes."""
    bench: Path | None = None
    policy: Path | None = None
    prompt_mode: str = DEFAULT_PROMPT_MODE
    train_fraction: float | None = None
    split_seed: int | None = None
    eval_out: Path | None = None
    pushback_pairs: bool = False

    def check(self) -> None:
        if self.format not in FORMATS:
            raise UserError(f"--format: expected one of {', '.join(FORMATS)}, got {self.format!r}")
        unknown = [m for m in (*(self.modes or ()), self.prompt_mode) if m not in MODES]
        if unknown:
            raise UserError(f"--modes/--prompt-mode: unknown mode {unknown[0]!r}; expected {', '.join(MODES)}")
        if self.modes is not None and not self.modes:
            raise UserError("--modes: give at least one mode")
        if self.min_pref_align is not None and not 1 <= self.min_pref_align <= 5:
            raise UserError(f"--min-pref-align: expected a PrefAlign in [1, 5], got {self.min_pref_align}")
        if not self.margin > 0:
            raise UserError(f"--margin: expected a PrefAlign difference > 0, got {self.margin}")
        if self.pushback_pairs and self.format != "dpo":
            raise UserError("--pushback-pairs: pairs of replies to pushback are DPO rows; give --format dpo")
        if self.format == "verl" and self.bench is None:
            raise UserError("--bench: verl rows need the gold answers; give the benchmark the run evaluated")
        if self.train_fraction is not None and not 0 < self.train_fraction <= 1:
            raise UserError(f"--train-fraction: expected a fraction in (0, 1], got {self.train_fraction}")
        if self.policy is not None and (self.train_fraction is not None or self.split_seed is not None):
            raise UserError("--policy: the split is the policy's own; leave out --train-fraction and --split-seed")
        if self.train_fraction is None and self.policy is None and (self.split_seed, self.eval_out) != (None, None):
            raise UserError("--split-seed/--eval-out: give --train-fraction (the split by problem) as well")

    @property
    def chosen_modes(self) -> tuple[str, ...]:
        if self.modes is not None:
            return self.modes
        return DEFAULT_DPO_MODES if self.format == "dpo" else DEFAULT_MODES

    def recorded(self) -> dict[str, Any]:
        """The options that shaped this format's rows (thresholds as applied)."""
        if self.format == "sft":
            return {"modes": list(self.chosen_modes), "min_pref_align": self.sft_min}
        if self.format == "dpo":
            return {
                "modes": list(self.chosen_modes),
                "min_pref_align": self.min_pref_align,
                "margin": self.margin,
                "pushback_pairs": self.pushback_pairs,
            }
        return {
            "bench": str(self.bench),
            "policy": None if self.policy is None else str(self.policy),
            "prompt_mode": self.prompt_mode,
            "train_fraction": self.train_fraction,
            "split_seed": self.split_seed,
        }

    @property
    def sft_min(self) -> float:
        return DEFAULT_SFT_MIN_PREF_ALIGN if self.min_pref_align is None else self.min_pref_align


def sft_rows(trials: Sequence[Trial], options: ExportOptions) -> Export:
    export = Export(rows=[])
    for trial in usable(trials, options.chosen_modes, export.counts):
        if trial.correct is not True:
            export.counts["excluded_not_correct"] += 1
        elif trial.pref_align is None or trial.pref_align < options.sft_min:
            export.counts["excluded_pref_align"] += 1
        else:
            meta = {"task": trial.task, "scenario_id": trial.scenario_id, **trial.identity()}
            export.rows.append({"messages": dialogue(trial), "metadata": meta})
    return export


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    atomic_write(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def meta_path(out: Path) -> Path:
    return out.with_name(out.name + ".meta.json")


def eval_path(out: Path) -> Path:
    """The default evaluation file beside ``out``: ``rl.parquet`` → ``rl.eval.parquet``."""
    return out.with_name(f"{out.stem}.eval{out.suffix}")


def _split(options: ExportOptions, scenarios: list[Any]) -> ScenarioSplit | None:
    """The split by problem of the benchmark's scenarios: ``--train-fraction``/``--split-seed``, or the policy's."""
    if options.policy is not None:
        from prefdisco.policies.model import read_policy

        policy = read_policy(options.policy)
        split = split_scenarios(scenarios, policy.split.train_fraction, policy.split.seed)
        problems = {(s.problem.benchmark, s.problem.id) for s in scenarios}
        if policy.train_keys() & problems != split.train_keys:
            raise UserError(
                f"--policy: its training problems are not the split of --bench by its train_fraction "
                f"{policy.split.train_fraction} and seed {policy.split.seed} (a policy fitted on another source?)"
            )
        return split
    if options.train_fraction is None:
        return None
    return split_scenarios(scenarios, options.train_fraction, 0 if options.split_seed is None else options.split_seed)


def _meta(options: ExportOptions, run_dir: Path, source: str, trials: int, export: Export) -> dict[str, Any]:
    return {
        "format": META_FORMAT,
        "export": options.format,
        "package_version": __version__,
        "run": str(run_dir),
        "results": source,
        "options": options.recorded(),
        "counts": {"trials": trials, **dict(sorted(export.counts.items()))},
    }


def refuse_empty(export: Export, format_: str, trials: int) -> None:
    """An export of no row is refused before anything is written, in one line saying what was left out and why
    (the export's counts), so an empty file is never taken for training data."""
    if export.rows:
        return
    why = ", ".join(f"{k} {v}" for k, v in sorted(export.counts.items()) if v) or "nothing to export"
    raise UserError(
        f"--format {format_}: no row to write from {trials} trial row(s) ({why}); see the thresholds "
        "(--min-pref-align, --margin, --modes) or the run"
    )


def export_training(run_dir: Path, out: Path, options: ExportOptions) -> dict[str, Any]:
    """Write ``out`` (and, for a split verl export, the evaluation file) with a ``.meta.json`` sidecar beside
    each; returns ``out``'s sidecar."""
    options.check()
    run_dir, out = Path(run_dir), Path(out)
    trials, source = read_trials(run_dir)
    if options.format != "verl":
        if options.format == "sft":
            export = sft_rows(trials, options)
        else:
            export = dpo_rows(
                trials, options.chosen_modes, options.margin, options.min_pref_align, options.pushback_pairs
            )
        refuse_empty(export, options.format, len(trials))
        _write_jsonl(out, export.rows)
        meta = {**_meta(options, run_dir, source, len(trials), export), "file": str(out), "rows": len(export.rows)}
        atomic_write(meta_path(out), json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
        return meta

    from prefdisco.release.convert import load_scenarios

    assert options.bench is not None
    scenarios = load_scenarios(options.bench)
    split = _split(options, scenarios)
    export = verl_rows(trials, {s.id: s for s in scenarios}, split, options.prompt_mode)
    refuse_empty(export, options.format, len(trials))
    files = {"train": out} if split is None else {"train": out, "eval": Path(options.eval_out or eval_path(out))}
    base = {
        **_meta(options, run_dir, source, len(trials), export),
        "split": None if split is None else split.record(),
        "files": {side: str(path) for side, path in files.items()},
    }
    metas = {}
    for side, path in files.items():
        rows = side_rows(export.rows, side)
        write_parquet(path, rows)
        metas[side] = {**base, "file": str(path), "side": side, "rows": len(rows)}
        atomic_write(meta_path(path), json.dumps(metas[side], indent=2, ensure_ascii=False) + "\n")
    return metas["train"]
