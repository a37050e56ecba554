"""Everything ``prefdisco eval`` checks before its first model call, writing nothing: the run checks it first, and
``--dry-run`` checks exactly the same, so a dry run that passes is a run that starts.

* the settings (``RunConfig.validate``);
* the run folder: writable, no damaged log in it (``guard.check_log_dir``);
* ``--ray``: the address's form and Ray installed; the shard plan against the folder's recorded split;
* ``--workers N``: the split against the folder's; each worker folder against the run it holds;
* one process: the folder against the run it holds (``run.json``: another scenario set or another setting);
* ``--sessions``: the session file against the benchmark, and each of the run's folders against the run it holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prefdisco.dialogue.decoys import choose_decoys
from prefdisco.errors import UserError
from prefdisco.evaluation.running.evalset import guard_folder
from prefdisco.evaluation.running.guard import check_log_dir, check_split
from prefdisco.evaluation.scaleout.blocks import block_names, blocks_of
from prefdisco.evaluation.scaleout.ray_shards import NO_RAY, check_ray_address, ray_installed
from prefdisco.evaluation.scaleout.workers import ray_plan, worker_plan
from prefdisco.evaluation.sessions_run import check_session_folder, load_session_run, session_parts
from prefdisco.evaluation.settings.config import RunConfig, scenario_set_hash, selected_scenarios
from prefdisco.schema import Mode, Scenario
from prefdisco.seeds import seed_scope


def run_decoys(scenarios: Sequence[Scenario], config: RunConfig) -> Mapping[str, Scenario] | None:
    """The wrong_persona decoys, chosen from the whole scenario set (before ``--limit`` and the split)."""
    if Mode.WRONG_PERSONA.value not in config.modes:
        return None
    return choose_decoys(scenarios, seed_scope(config.seed))


def preflight(scenarios: Sequence[Scenario], config: RunConfig) -> None:
    """Refuse in one line what the run would refuse before its first call (module docstring); writes nothing."""
    config.validate()
    decoys = run_decoys(scenarios, config)
    check_log_dir(config.log_dir)
    if config.sessions is not None:  # its parts' folders (evaluation/sessions_run.py)
        session_set, selected = load_session_run(scenarios, config)
        check_session_folder(config, session_parts(session_set, selected, config), record=False)
        return
    selected = selected_scenarios(scenarios, config)
    scenario_set = scenario_set_hash(selected)
    if config.ray:
        check_ray_address(config.ray)
        if not ray_installed():
            raise UserError(NO_RAY)
        plan = ray_plan(selected, config, decoys)
        check_split(config.log_dir, config.workers, scenario_set, shards=[s.name for s in plan], record=False)
    else:
        blocks = blocks_of(selected, config, decoys) if config.workers == 1 else None
        check_split(config.log_dir, config.workers, scenario_set, blocks=block_names(blocks), record=False)
        plan = worker_plan(selected, config, decoys) if config.workers > 1 else blocks or []
    for shard in plan:
        guard_folder(shard.scenarios, shard.config, shard.decoys, record=False)
    if not plan:
        guard_folder(selected, config, decoys, record=False)
