"""What a run folder holds, and the refusals that keep one folder to one run.

* ``run.json``: the settings of a single-process run; a rerun with another scenario set is refused. It also holds
  the run's identity (``run_id``, drawn once when the folder's first run starts): the cache scope of its calls, and
  so of the solver arguments inspect's eval-set matches the folder's logs by. Never a path: a run folder copied or
  moved elsewhere resumes there as the same run.
* ``workers.json``: the split of a ``--workers N`` run (or the shard names of a ``--ray`` run); a rerun with
  another worker count, shard plan or scenario set, or a single-process run in the same folder, is refused
  rather than mixed.
* a damaged log (e.g. truncated by a full disk) would stop the eval-set: it is named instead.
* a benchmark's or a report's folder, or a published folder or a folder inside one, is refused as a run folder: a
  run's logs would be mixed with their files (and uploaded with a published folder by ``huggingface-cli upload``).
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

from prefdisco.atomic import atomic_write
from prefdisco.benchio import MANIFEST_FILE
from prefdisco.errors import UserError
from prefdisco.evaluation.settings.config import run_scope
from prefdisco.overwrite import PUBLISHED_MANIFEST, holds, report_of
from prefdisco.results.logs import read_header
from prefdisco.results.protocol_record import renamed

RUN_FILE = "run.json"
RUN_ID = "run_id"
"""``run.json``'s key of the run's identity (``run_identity``)."""
SPLIT_FILE = "workers.json"
SESSIONS_FILE = "sessions.json"
"""A sessions run's folder (``sessions_run.py``): the session file's hash and the run's parts."""


def check_log_dir(log_dir: Path) -> None:
    """Fail in one line when ``log_dir`` cannot be the run folder (a file, or nothing writable there) or holds a
    damaged log; writes nothing (``--dry-run`` checks it too)."""
    from inspect_ai.log import list_eval_logs

    if log_dir.exists() and not log_dir.is_dir():
        raise UserError(f"--log-dir {log_dir}: exists and is not a folder")
    existing = log_dir if log_dir.exists() else next((p for p in log_dir.absolute().parents if p.exists()), None)
    if existing is None or not os.access(existing, os.W_OK | os.X_OK):
        raise UserError(f"--log-dir {log_dir}: cannot write there (no write permission on {existing})")
    run_folder = any((log_dir / name).exists() for name in (RUN_FILE, SPLIT_FILE))
    if log_dir.is_dir() and not run_folder and (report_of(log_dir) or (log_dir / MANIFEST_FILE).is_file()):
        # a report's or a benchmark's folder, not a run's: the run's files would be mixed with theirs
        raise UserError(f"--log-dir {log_dir}: holds {holds(log_dir)}, not a run; use a new --log-dir")
    published = next((p for p in (log_dir, *log_dir.parents) if (p / PUBLISHED_MANIFEST).is_file()), None)
    if published is not None:
        # a dataset repository: its upload would publish the run's logs with it
        where = "holds" if published == log_dir else f"is inside {published}, which holds"
        raise UserError(f"--log-dir {log_dir}: {where} {holds(published)}, not a run; use a --log-dir outside it")
    if log_dir.is_dir():
        for info in list_eval_logs(str(log_dir), recursive=True):
            read_header(info)


def prepare_log_dir(log_dir: Path) -> None:
    """``check_log_dir``, then create ``log_dir`` (or fail in one line when it cannot be written)."""
    check_log_dir(log_dir)
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
        probe = log_dir / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise UserError(f"--log-dir {log_dir}: cannot write there ({e.strerror})") from e


def guard_run(
    log_dir: Path,
    fingerprint: dict[str, Any],
    uncompared: tuple[str, ...] = (),
    defaults: dict[str, Any] | None = None,
    record: bool = True,
) -> str:
    """Refuse to resume a run in ``log_dir`` with another scenario set or any other setting that changes results
    (every key of ``fingerprint`` but ``uncompared``; a key an older ``run.json`` lacks is not compared, unless it
    has a value in ``defaults``: a setting recorded only when it differs from its default, compared as that
    default when either side lacks it), in one line naming the setting; then record ``fingerprint`` with the run's
    identity (unless not ``record``: the dry run) and return that identity (``run_identity``)."""
    run_file = log_dir / RUN_FILE
    wanted = json.loads(json.dumps(fingerprint))  # as it reads back
    implied = json.loads(json.dumps(defaults or {}))
    previous: dict[str, Any] | None = None
    if run_file.exists():
        try:
            previous = json.loads(run_file.read_text())
        except json.JSONDecodeError as e:
            raise UserError(f"{run_file}: not valid JSON ({e.msg}); delete it or use a new --log-dir") from e
        if not isinstance(previous, dict):
            raise UserError(f"{run_file}: expected a JSON object; delete it or use a new --log-dir")
        previous = renamed(previous)  # a run recorded before the ask channel had its own name
        if previous.get("scenario_set") != wanted["scenario_set"]:
            raise UserError(
                f"{log_dir} holds a run of a different scenario set; use a new --log-dir to start another run"
            )
        for key, default in implied.items():
            before, now = previous.get(key, default), wanted.get(key, default)
            if before != now:
                raise UserError(
                    f"{log_dir} holds a run with {key} = {json.dumps(before)}, not {json.dumps(now)}; "
                    "rerun with the same settings to resume, or use a new --log-dir for another setting"
                )
        for key, value in wanted.items():
            if key in previous and key not in uncompared and previous[key] != value:
                raise UserError(
                    f"{log_dir} holds a run with {key} = {json.dumps(previous[key])}, not {json.dumps(value)}; "
                    "rerun with the same settings to resume, or use a new --log-dir for another setting"
                )
    wanted[RUN_ID] = run_identity(log_dir, str(wanted["scenario_set"]), previous)
    if record:
        atomic_write(run_file, json.dumps(wanted, indent=2))
    return str(wanted[RUN_ID])


def run_identity(log_dir: Path, scenario_set: str, previous: dict[str, Any] | None) -> str:
    """The identity of the run in ``log_dir`` (``previous``: its ``run.json``, None when it has none): the one it
    recorded; else, for a folder written before runs had one, the cache scope its logs' solvers were built with
    (what inspect's eval-set matches them by), or, with no such log, the scope older runs took from their folder's
    path; else a new one, 16 random hex digits. A new ``--log-dir`` is a new run (its calls never replay another
    folder's); a copied or moved folder is the same run."""
    recorded = (previous or {}).get(RUN_ID)
    if isinstance(recorded, str) and recorded:
        return recorded
    logged = logged_scope(log_dir)
    if logged is not None:
        return logged
    if previous is not None:
        return run_scope(log_dir, scenario_set)
    return secrets.token_hex(8)


def logged_scope(log_dir: Path) -> str | None:
    """The cache scope the solvers of ``log_dir``'s own logs were built with (their plan's ``cache_scope``
    argument), or None (no log, or a run without a cache)."""
    from inspect_ai.log import list_eval_logs

    if not log_dir.is_dir():
        return None
    for info in list_eval_logs(str(log_dir), recursive=False):
        for step in read_header(info).plan.steps:
            scope = (step.params_passed or step.params or {}).get("cache_scope")
            if isinstance(scope, str) and scope:
                return scope
    return None


def check_split(
    log_dir: Path,
    workers: int,
    scenario_set: str,
    shards: list[str] | None = None,
    record: bool = True,
    blocks: list[str] | None = None,
) -> None:
    """Refuse a folder holding a single-process run, or a split with another worker count, Ray shard plan
    (``shards``: the names of a ``--ray`` run's shards; ``--workers`` is then only how many run at once), block plan
    (``blocks``: the names of a large single-process run's blocks, ``evaluation/scaleout/blocks.py``) or scenario
    set; then record the split (unless not ``record``: the dry run)."""
    if (log_dir / SESSIONS_FILE).exists():
        raise UserError(f"{log_dir} holds a sessions run; rerun it with its --sessions FILE, or use a new --log-dir")
    split_file = log_dir / SPLIT_FILE
    wanted: dict[str, object] = {"workers": workers, "scenario_set": scenario_set}
    if shards is not None:
        wanted = {"ray_shards": shards, "scenario_set": scenario_set}
    elif blocks is not None:
        wanted = {"blocks": blocks, "scenario_set": scenario_set}
    split = workers > 1 or shards is not None or blocks is not None
    if split and (log_dir / RUN_FILE).exists():
        flag = "--ray" if shards is not None else f"--workers {workers}" if workers > 1 else "blocks"
        raise UserError(f"{log_dir} holds a single-process run; use a new --log-dir for {flag}")
    if split_file.exists():
        try:
            previous = json.loads(split_file.read_text())
        except json.JSONDecodeError as e:
            raise UserError(f"{split_file}: not valid JSON ({e.msg}); delete it or use a new --log-dir") from e
        if previous != wanted:
            same_set = previous.get("scenario_set") == scenario_set
            if "ray_shards" in previous:
                done = f"split into {len(previous['ray_shards'])} Ray shard(s)"
                how = "--ray and the same --model, --modes, --fixed-k"
            elif "blocks" in previous:
                done = f"cut into {len(previous['blocks'])} block(s) of at most 1,000 scenario trials"
                how = "no --workers or --ray and the same --epochs"
            else:
                done, how = f"split over {previous.get('workers')} worker(s)", "the same --workers (no --ray)"
            raise UserError(
                f"{log_dir} holds a run {done}"
                + ("" if same_set else " of another scenario set")
                + f"; rerun with {how} and scenarios, or use a new --log-dir"
            )
    if record and split:
        atomic_write(split_file, json.dumps(wanted, indent=2))
