"""``run_conditions``: evaluate a scenario set in every asked condition, in one process or split over several.

The settings and the folder are checked as ``--dry-run`` checks them (``evaluation/preflight.py``), the log
folder prepared and guarded (``evaluation/running/guard.py``), then the scenarios run as one eval-set
(``evaluation/running/evalset.py``) or, past ``SCENARIOS_PER_BLOCK`` scenario trials, as blocks of that size one
after another (``evaluation/scaleout/blocks.py``), as ``--workers N`` eval-sets in N processes
(``evaluation/scaleout/workers.py``), or as shards on a Ray cluster (``--ray``,
``evaluation/scaleout/ray_shards.py``). The wrong_persona decoys are chosen here, from the whole scenario set before
``--limit`` and ``--workers`` cut it, so a scenario's decoy does not depend on how the run is cut
(``dialogue/decoys.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from prefdisco.evaluation.estimate.recorded import run_estimate
from prefdisco.evaluation.preflight import preflight, run_decoys
from prefdisco.evaluation.protocol.protocols import protocol_record
from prefdisco.evaluation.running.guard import check_split, prepare_log_dir
from prefdisco.evaluation.running.progress import RunProgress
from prefdisco.evaluation.scaleout.blocks import run_blocks
from prefdisco.evaluation.scaleout.ray_shards import run_ray
from prefdisco.evaluation.scaleout.workers import run_workers
from prefdisco.evaluation.sessions_run import load_session_run, run_sessions
from prefdisco.evaluation.settings.config import RunConfig, scenario_set_hash, selected_scenarios
from prefdisco.evaluation.settings.config_file import write_config
from prefdisco.progress import Ticker
from prefdisco.results.logs import Tables
from prefdisco.results.protocol_record import read_record, write_record
from prefdisco.schema import Scenario
from prefdisco.scoring.deferred import JUDGE_LATER

__all__ = ["RunConfig", "run_conditions"]


def judged_later(config: RunConfig) -> bool:
    """Whether ``config.log_dir`` holds a ``--judge later`` run that ``prefdisco judge`` has judged: its record is
    the judging's (``judge_later``), which a rerun of the eval (its samples finished: no call to make) keeps."""
    found = read_record(config.log_dir) if config.judge == JUDGE_LATER else None
    return found is not None and (found.given or found.settings).get("judge") != JUDGE_LATER


def run_conditions(scenarios: Sequence[Scenario], config: RunConfig, label: str = "eval") -> Tables:
    """Run ``scenarios`` as ``config`` says; output that is not a terminal gets a ``label: …`` progress line every
    few seconds (``prefdisco.progress``), unless ``--display none``."""
    preflight(scenarios, config)  # what --dry-run checks too, before anything is written
    decoys = run_decoys(scenarios, config)
    prepare_log_dir(config.log_dir)
    planned: int | None = None
    if config.write_tables:  # what the run's numbers are made under; the run's whole configuration, as one file
        if not judged_later(config):  # a --judge later run prefdisco judge judged keeps its judging's record
            write_record(config.log_dir, protocol_record(config, scenarios))
        estimate = run_estimate(config.log_dir, scenarios, config)  # the dry run's, beside what is measured
        planned = estimate.calls  # what the progress line's estimate of the time left counts down
        if config.resolved is not None:
            write_config(config.log_dir, config.resolved)
    selected = selected_scenarios(scenarios, config)
    if config.sessions is not None:
        selected = load_session_run(scenarios, config)[1]
    trials = len(selected) * (len(config.modes) + len(config.fixed_k)) * len(config.models) * config.epochs
    progress = RunProgress(config.log_dir, trials, planned)
    with progress, Ticker(label, progress.text, quiet=config.display == "none"):
        if config.sessions is not None:  # the per-scenario conditions, then the carry arms position by position
            return run_sessions(scenarios, config)
        if config.ray:  # the Ray shards (evaluation/scaleout/ray_shards.py), which record their own split
            return run_ray(selected, config, decoys)
        if config.workers > 1:
            check_split(config.log_dir, config.workers, scenario_set_hash(selected))
            return run_workers(selected, config, decoys)
        return run_blocks(selected, config, decoys)  # one eval-set, or blocks of a bounded size one by one
