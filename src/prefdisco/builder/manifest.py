"""What a build reports: ``BuildReport`` (returned, printed by the CLI) and the manifest written with the folder.

The manifest records the config, seeds, model ids, counts, failures, skipped scenarios, duplicate profiles, the
persona library's diversity, the new attributes and how proposals were deduplicated (``attribute_dedup``: the
lexical merges, and every semantic decision with its reason and model), the checkpoint, and model calls and
tokens per step and per scenario (from inspect's ``ModelOutput.usage``, summed over every attempt); a
``--session-length`` build adds ``sessions`` (problems per persona, recurring and stable shares).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefdisco.builder.config import BuildConfig
from prefdisco.builder.pool import StepRunner
from prefdisco.builder.setup import CHECKPOINT_DIR, CHECKPOINT_FILE
from prefdisco.schema import Attribute, Persona, Problem, Scenario


@dataclass
class BuildReport:
    out: Path
    scenarios: int
    counts: dict[str, Any]
    failures: list[dict[str, Any]]
    skipped: dict[str, int]
    duplicates: dict[str, int]
    usage: dict[str, Any]
    personas: dict[str, Any]
    seconds: float
    manifest: dict[str, Any] = field(default_factory=dict)
    dedup: dict[str, Any] = field(default_factory=dict)
    """The ``attribute_dedup`` section of the manifest: lexical merges and the semantic decisions."""
    sessions: dict[str, Any] | None = None
    """The ``sessions`` section of a ``--session-length`` build (``builder/sessions.manifest_section``)."""


def build_report(
    config: BuildConfig,
    runner: StepRunner,
    problems: list[Problem],
    library: list[Persona],
    used_personas: list[Persona],
    attributes: list[Attribute],
    new_attributes: list[Attribute],
    scenarios: list[Scenario],
    per_scenario: dict[str, dict[str, int]],
    skipped: Counter[str],
    duplicates: dict[str, int],
    library_info: dict[str, Any],
    n_relevant: int,
    seconds: float,
    *,
    dedup: dict[str, Any] | None = None,
    sessions: dict[str, Any] | None = None,
) -> BuildReport:
    """The build's report and the manifest written with its folder (see the module docstring)."""
    steps = runner.usage_table()
    total = {
        key: sum(u[key] for u in steps.values())
        for key in ("calls", "input_tokens", "output_tokens", "calls_run", "input_tokens_run", "output_tokens_run")
    }
    n = len(scenarios)
    mean = {k: (total[k] / n if n else None) for k in ("calls", "input_tokens", "output_tokens")}
    failures = [f.as_dict() for f in runner.failures]
    counts = {
        "problems": len(problems),
        "problems_with_relevance": n_relevant,
        "problems_with_scenarios": len({s.problem.id for s in scenarios}),
        "library_personas": len(library),
        "personas": len(used_personas),
        "scenarios": n,
        "planned_scenarios": len(problems) * config.personas_per_problem,
        "attributes": len(attributes),
        "new_attributes": len(new_attributes),
    }
    usage = {
        "token_source": "inspect ModelOutput.usage, summed over every attempt (retries included)",
        "per_step": steps,
        "total": total,
        "per_scenario_mean": mean,
        "per_scenario_mean_note": "all calls of the build (personas and relevance included) / scenarios",
        "per_scenario": per_scenario,
        "per_scenario_note": "own calls of each scenario: profile (+ regeneration) and rubric",
    }
    manifest = {
        "config": config.model_dump(mode="json"),
        "seeds": {
            "seed": config.seed,
            "problem_sample": config.seed,
            "persona_selection": config.seed,
            "blueprints": config.seed,
            "model_choice": config.seed,
        },
        "models": runner.pool.names,
        "build_counts": counts,
        "failures": {
            "count": len(failures),
            "by_step": dict(Counter(f["step"] for f in failures)),
            "items": failures,
        },
        "skipped": dict(skipped),
        "duplicates": duplicates,
        "personas": library_info,
        "new_attributes": [a.name for a in new_attributes],
        "attribute_dedup": dedup or {},
        **({"sessions": sessions} if sessions is not None else {}),
        "checkpoint": {"path": f"{CHECKPOINT_DIR}/{CHECKPOINT_FILE}", "records": len(runner.checkpoint)},
        "usage": usage,
        "seconds": round(seconds, 2),
    }
    return BuildReport(
        out=config.out,
        scenarios=n,
        counts=counts,
        failures=failures,
        skipped=dict(skipped),
        duplicates=duplicates,
        usage=usage,
        personas=library_info,
        seconds=seconds,
        manifest=manifest,
        dedup=dedup or {},
        sessions=sessions,
    )
