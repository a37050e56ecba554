"""``prefdisco demo``: the packaged demo scenarios, the three conditions and fixed-K 2, the embedded model in every
role.

Fixed-K 2 is there so that a newcomer's first report shows a dialogue: the engine makes the first two turns
questions, the simulated user answers them, and the table, the report's examples and ``inspect view`` show the
questions and replies (the embedded model never asks on its own in discovery).

Writes inspect logs (``OUT/logs``; open them with ``inspect view --log-dir OUT/logs``), the results tables
beside them, and ``OUT/summary.json``::

    {"modes": {"baseline"|"discovery"|"oracle"|"fixed_k=2":
               {"pref_align_mean", "accuracy", "mean_questions", "n", ...}},
     "norm_align": number | null, "norm_align_reason": str, "norm_align_gap": number | null,
     "models": {"assistant", "user", "grader"}, "note": str | null, "caveats": [str], ...}

The per-mode means are over each mode's scored rows; NormAlign is the report's (``analysis/stats/normalign.py``):
over the scenarios scored in all three modes, pooled over the demo's benchmarks; ``norm_align_gap`` is its
denominator, the oracle − baseline mean PrefAlign. ``caveats`` are the report's (``analysis/report/caveats.py``: the
embedded model's note, a discovery that asked nothing, NormAlign over a tiny gap), so the console prints what the
report's top says, and prints them first, before the numbers they qualify; the NormAlign line itself says when its
gap is too small for it to mean anything (``norm_align_line``). ``note`` is the embedded model's line alone.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any

import pandas as pd

from prefdisco.analysis.report.build import make_report
from prefdisco.analysis.report.caveats import TINY_GAP, plumbing_note
from prefdisco.analysis.section.shown import summary_json
from prefdisco.analysis.stats.normalign import intersection_norm_align, scenario_table
from prefdisco.atomic import atomic_write
from prefdisco.benchio import packaged_demo_scenarios, scenarios_hash
from prefdisco.errors import UserError
from prefdisco.evaluation.run import RunConfig, run_conditions
from prefdisco.evaluation.running.guard import RUN_FILE
from prefdisco.evaluation.settings.config import scenario_set_hash
from prefdisco.results.contract import FIXED_K_MODE, condition_label
from prefdisco.results.table import load_results
from prefdisco.schema import CONDITIONS, Scenario
from prefdisco.wording import counted

DEMO_MODEL = "prefdisco/smollm2"
DEFAULT_OUT = Path("prefdisco-demo")


def default_out(limit: int | None, model: str) -> Path:
    """The demo's folder when ``--out`` is not given: one per demo size and model, so ``prefdisco demo --limit 2``
    after ``make demo`` runs beside it instead of being refused: ``prefdisco-demo`` (the whole demo, the embedded
    model), ``prefdisco-demo-2`` (``--limit 2``), ``prefdisco-demo-openai-gpt-4.1`` (another ``--model``)."""
    name = DEFAULT_OUT.name
    if model != DEMO_MODEL:
        name += "-" + re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-")
    return Path(name + (f"-{limit}" if limit else ""))


# The embedded model is tiny and slow on 2 cores (~50 tokens/s written, ~220 read): keep its turns short. Each
# assistant turn is written once and read again by the judge; at 96 tokens the demo's 78 calls take under 3 minutes.
DEMO_MAX_TOKENS = 96
DEMO_USER_MAX_TOKENS = 60
DEMO_SIZE = 6
"""Scenarios the embedded demo runs: the packaged ones whose rubrics are shortest (the judge reads every level
of every criterion, and reading the prompt is the embedded model's largest cost). A real model runs them all.
Six, since fixed-K 2 costs about as much as the three other conditions together (three assistant turns, two user
replies, a judge call)."""
DEMO_FIXED_K = 2
"""The fixed-K condition the demo adds: two questions forced, so the demo shows a dialogue."""
DEMO_JUDGE = "structured"
"""On the embedded model the demo judges each response in one call (all criteria at once), not one call per
criterion: three to four times fewer judge calls, the largest share of the demo's time."""


def demo_scenarios() -> list[Scenario]:
    return packaged_demo_scenarios()


def rubric_chars(scenario: Scenario) -> int:
    """The length of what the judge reads of ``scenario``'s rubric."""
    return sum(len(c.description) + sum(len(text) for text in c.levels.values()) for c in scenario.rubric)


def embedded_selection(scenarios: list[Scenario], size: int = DEMO_SIZE) -> list[Scenario]:
    """The ``size`` scenarios with the shortest rubrics, in their packaged order."""
    keep = {s.id for s in sorted(scenarios, key=rubric_chars)[:size]}
    return [s for s in scenarios if s.id in keep]


def _mean(series: pd.Series) -> float | None:
    values = pd.to_numeric(series, errors="coerce").dropna()
    return None if values.empty else float(values.mean())


def summarize(results: pd.DataFrame, models: dict[str, str]) -> dict[str, Any]:
    """The demo's summary of a validated results frame (``results.table.load_results``)."""
    modes: dict[str, dict[str, Any]] = {}
    ks = sorted(int(k) for k in results.loc[results["mode"] == FIXED_K_MODE, "fixed_k"].dropna().unique())
    for mode, k in [*((m, None) for m in CONDITIONS), *((FIXED_K_MODE, k) for k in ks)]:
        of_condition = (results["mode"] == mode) & (results["fixed_k"] == k if k is not None else True)
        rows = results[of_condition & (results["failed"] == 0)]
        modes[condition_label(mode, k)] = {
            "pref_align_mean": _mean(rows["pref_align"]),
            "accuracy": _mean(rows["correct"]),
            "mean_questions": _mean(rows["n_questions"]),
            "n": len(rows),
            "failed": int((of_condition & (results["failed"] == 1)).sum()),
            "judge_invalid": int(pd.to_numeric(rows["judge_invalid"], errors="coerce").fillna(0).sum()),
        }
    value, reason, means = intersection_norm_align(scenario_table(results))
    gap = means["oracle"] - means["baseline"] if means else None
    return {"modes": modes, "norm_align": value, "norm_align_reason": reason, "norm_align_gap": gap, "models": models}


def norm_align_line(summary: dict[str, Any]) -> str:
    """The console's NormAlign, with what qualifies it on the same line: undefined and why, or a number over an
    oracle − baseline gap under ``caveats.TINY_GAP`` said to mean nothing (the report's caveat, in short)."""
    value, gap = summary["norm_align"], summary.get("norm_align_gap")
    if value is None:
        return f"NormAlign: undefined — {summary['norm_align_reason']}"
    if gap is not None and abs(gap) < TINY_GAP:
        return f"NormAlign: {value:.1f} — means nothing here: it divides by oracle − baseline PrefAlign, {gap:+.2f}"
    return f"NormAlign: {value:.1f}"


def check_demo_folder(out: Path, selected: list[Scenario], model: str) -> None:
    """Refuse, in one line naming ``--out``, an ``out`` that holds the demo of other scenarios (another
    ``--limit``) or another ``--model``: its logs cannot be resumed by this one."""
    run_file = out / "logs" / RUN_FILE
    try:
        recorded = json.loads(run_file.read_text(encoding="utf-8")) if run_file.is_file() else {}
    except (OSError, ValueError):
        return  # the run's own guard names the damaged file
    if not isinstance(recorded, dict) or not recorded:
        return
    n = len(selected)
    if recorded.get("scenario_set") != scenario_set_hash(selected):
        held = f"the demo of {counted(int(recorded.get('n_scenarios') or 0), 'scenario')}, not these {n}"
    elif recorded.get("models", [model]) != [model]:
        held = f"the demo of model {', '.join(recorded['models'])}, not {model}"
    else:
        return
    raise UserError(f"--out {out}: holds {held}; give another --out (e.g. --out {out}-{n}) or remove {out}")


def demo_plan(
    out: Path = DEFAULT_OUT, limit: int | None = None, display: str | None = None, model: str = DEMO_MODEL
) -> tuple[list[Scenario], RunConfig]:
    """The demo's scenarios and run settings, ``model`` in every role (the embedded one by default:
    grammar-constrained, short turns), its logs in ``OUT/logs``."""
    embedded = model == DEMO_MODEL
    scenarios = embedded_selection(demo_scenarios()) if embedded else demo_scenarios()
    config = RunConfig(
        models=[model],
        user_model=model,
        grader_model=model,
        log_dir=out / "logs",
        limit=limit,
        constrain_ask=embedded,  # a llama.cpp grammar: the embedded model only
        max_tokens=DEMO_MAX_TOKENS if embedded else None,
        user_max_tokens=DEMO_USER_MAX_TOKENS if embedded else None,
        judge=DEMO_JUDGE if embedded else "per_criterion",
        audit=not embedded,  # a 135M auditor of the simulated user measures nothing; its call would cost 8 s a dialogue
        quality=not embedded,  # nor does a 135M quality judge, and its call a response would break the 3 minutes
        fixed_k=[DEMO_FIXED_K],
        display=display,
        benchmark=scenarios_hash(scenarios),  # protocol.json names it: `prefdisco submit` takes a demo run too
    )
    config.validate()
    return scenarios, config


def run_demo(
    out: Path = DEFAULT_OUT, limit: int | None = None, display: str | None = None, model: str = DEMO_MODEL
) -> dict[str, Any]:
    """Run the demo (``demo_plan``), then write the HTML report into ``OUT/report``."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    scenarios, config = demo_plan(out, limit, display, model)
    check_demo_folder(out, scenarios[:limit] if limit else scenarios, model)
    run_conditions(scenarios, config, label="demo")
    summary = summarize(load_results(config.log_dir).results, {"assistant": model, "user": model, "grader": model})
    summary["n_scenarios"] = len(scenarios[:limit] if limit else scenarios)
    summary["log_dir"] = str(out / "logs")
    summary["note"] = plumbing_note([model])
    report, _ = make_report(config.log_dir, out / "report", n_boot=200, n_examples=1)
    summary["caveats"] = report.caveats  # the report's own lines (analysis/report/caveats.py): the console prints these
    summary["report"] = str(out / "report" / "report.html")
    atomic_write(out / "summary.json", summary_json(summary))
    return summary


def format_number(value: float | None, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.{digits}f}"
