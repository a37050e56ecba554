"""``prefdisco eval … --sessions FILE``: the session set's scenarios in every condition, and the carry arms position
by position.

A session set (``sessions/model.py``) names, per session, one person's scenarios in order. The run is made of
ordinary resumable eval-sets, each in its own folder below ``--log-dir`` (read back whole by the results reader,
like the shards of ``--workers``):

* ``per-scenario/`` — every scenario of the sessions in the per-scenario conditions of ``--modes`` (baseline,
  discovery — the cold arm —, oracle, wrong_persona) and each fixed-K, as any run; each sample also records its
  session and position (``dialogue/carry.SESSION_KEY``), so every results row has ``session_id`` and ``position``;
* ``position-<p>/`` for p = 1 … K — the carry arms of ``--modes`` (``carry_transcript``, ``carry_notes``) at
  position p of every session that long. A sample is the scenario at position p, carrying, per trial, what the
  assistant kept of positions 1 … p − 1 of the same session and arm (``Carried``): read from the finished samples
  of ``position-<p-1>/`` before position p starts.

The positions run in order, one eval-set after another. A crash in position 3 loses nothing: rerunning the command
finds positions 1 and 2 finished (no call), reads what they carry from their logs, and resumes position 3 (its
finished samples reused, its cached calls replayed). A failed sample at a position stops every session after
that position, not its own alone (the next position is one eval-set that needs every session of this one finished):
the command names it and exits non-zero after writing the tables of everything that finished; a rerun retries it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from prefdisco.atomic import atomic_write
from prefdisco.dialogue.carry import CARRIED_KEY, SESSION_KEY, Carried, CarriedPosition, SessionNotes
from prefdisco.dialogue.state import DialogueRecord
from prefdisco.errors import UserError
from prefdisco.evaluation.running.evalset import SampleMetadata, run_eval_set
from prefdisco.evaluation.running.guard import RUN_FILE, SESSIONS_FILE, SPLIT_FILE, prepare_log_dir
from prefdisco.evaluation.scaleout.workers import merge_shards
from prefdisco.evaluation.settings.config import RunConfig, file_hash
from prefdisco.results.logs import Tables
from prefdisco.schema import SESSION_ARMS, Scenario
from prefdisco.sessions.model import Session, SessionSet, read_session_set

PER_SCENARIO = "per-scenario"


def position_folder(position: int) -> str:
    return f"position-{position}"


def session_scenarios(session_set: SessionSet, scenarios: Sequence[Scenario]) -> list[Scenario]:
    """The scenarios the sessions name (the benchmark's and the derived ones), in session and position order."""
    known = session_set.scenarios_with(scenarios)
    session_set.positions()  # a scenario in two sessions is refused here
    return [known[sid] for session in session_set.sessions for sid in session.scenario_ids]


def attribute_labels(session_set: SessionSet) -> dict[str, dict[str, str]]:
    """scenario id → its profile's attributes → ``recurring``, ``changed`` or ``new`` in its session."""
    out: dict[str, dict[str, str]] = {}
    for session in session_set.sessions:
        for sid, position in zip(session.scenario_ids, session.labels, strict=True):
            out[sid] = {a: kind for kind in ("recurring", "changed", "new") for a in getattr(position, kind)}
    return out


def load_session_run(scenarios: Sequence[Scenario], config: RunConfig) -> tuple[SessionSet, list[Scenario]]:
    """The run's session set and the scenarios it evaluates (``config.sessions``)."""
    if config.sessions is None:
        raise ValueError("not a sessions run")
    session_set = read_session_set(config.sessions)
    if not session_set.sessions:
        raise UserError(f"{config.sessions}: no session to evaluate")
    return session_set, session_scenarios(session_set, scenarios)


Finished = dict[tuple[str, str, str, int], tuple[DialogueRecord, str | None]]
"""(model, arm, scenario id, epoch) → the dialogue of a finished carry sample and the notes it wrote."""
Chains = dict[tuple[str, str, str], dict[int, Carried]]
"""(model, arm, session id) → epoch → what is carried into the position about to run: every model under test and
arm keeps its own memory of a session."""


def finished_positions(folder: Path) -> Finished:
    """The finished (scored, not failed) carry samples of one position's folder."""
    from inspect_ai.log import list_eval_logs, read_eval_log
    from inspect_ai.util import Store

    done: Finished = {}
    for info in list_eval_logs(str(folder), recursive=True):
        log = read_eval_log(info, exclude_fields={"events"})
        arm = (log.eval.metadata or {}).get("prefdisco_mode")
        if arm not in SESSION_ARMS:
            continue
        for sample in log.samples or []:
            if sample.error is not None:
                continue
            store = Store(sample.store)
            record = DialogueRecord(store=store)
            if record.final_response is None:
                continue
            done[(str(log.eval.model), str(arm), str(sample.id), int(sample.epoch))] = (
                record,
                SessionNotes(store=store).notes,
            )
    return done


@dataclass(frozen=True)
class Part:
    """One eval-set of a sessions run: its folder's settings and scenarios (``position`` 0: the per-scenario
    conditions)."""

    position: int
    config: RunConfig
    scenarios: list[Scenario]


def session_parts(session_set: SessionSet, selected: list[Scenario], config: RunConfig) -> list[Part]:
    """The run's eval-sets in the order they run (module docstring)."""
    parts = []
    per_scenario = [m for m in config.modes if m not in SESSION_ARMS]
    if per_scenario or config.fixed_k:
        folder = config.log_dir / PER_SCENARIO
        parts.append(Part(0, replace(config, modes=per_scenario, log_dir=folder, write_tables=False), selected))
    arms = [m for m in config.modes if m in SESSION_ARMS]
    known = {s.id: s for s in selected}
    longest = max(s.length for s in session_set.sessions)
    for position in range(1, longest + 1) if arms else ():
        at = [known[s.scenario_ids[position - 1]] for s in session_set.sessions if s.length >= position]
        folder = config.log_dir / position_folder(position)
        parts.append(Part(position, replace(config, modes=arms, fixed_k=[], log_dir=folder, write_tables=False), at))
    return parts


def check_session_folder(config: RunConfig, parts: list[Part], record: bool = True) -> None:
    """Refuse a ``--log-dir`` holding a run that is not this session set's (a single-process run, a split one,
    another session file), then record it (``SESSIONS_FILE``; not in the dry run) and check every part's folder
    against the run it holds."""
    from prefdisco.evaluation.running.evalset import guard_folder

    folder = config.log_dir
    for other in (RUN_FILE, SPLIT_FILE):
        if (folder / other).exists():
            raise UserError(f"{folder} holds a run without --sessions ({other}); use a new --log-dir")
    assert config.sessions is not None
    wanted = {"sessions": file_hash(config.sessions), "parts": [p.config.log_dir.name for p in parts]}
    marker = folder / SESSIONS_FILE
    if marker.exists():
        try:
            previous = json.loads(marker.read_text())
        except json.JSONDecodeError as e:
            raise UserError(f"{marker}: not valid JSON ({e.msg}); delete it or use a new --log-dir") from e
        if previous.get("sessions") != wanted["sessions"]:
            raise UserError(f"{folder} holds a run of another session file; use a new --log-dir")
    for part in parts:
        guard_folder(part.scenarios, part.config, record=False)
    if record:
        atomic_write(marker, json.dumps(wanted, indent=2))


def run_sessions(scenarios: Sequence[Scenario], config: RunConfig) -> Tables:
    """Run the session set of ``config.sessions`` (module docstring) and return the tables of ``config.log_dir``."""
    session_set, selected = load_session_run(scenarios, config)
    parts = session_parts(session_set, selected, config)
    check_session_folder(config, parts)
    known = {s.id: s for s in selected}
    where = session_set.positions()
    by_id = {s.session_id: s for s in session_set.sessions}
    labels = attribute_labels(session_set)

    epochs = range(1, config.epochs + 1)
    carried: Chains = {}
    errors: list[str] = []
    for part in parts:
        if part.position > 1:  # what each session carries into this position, from the finished previous one
            done = finished_positions(config.log_dir / position_folder(part.position - 1))
            for (model, arm, session_id), previous in list(carried.items()):
                session = by_id[session_id]
                if session.length < part.position:
                    continue
                step = (model, arm, session, part.position)
                nxt = {e: carried_next(*step, known, previous[e], done, e) for e in epochs}
                if any(c is None for c in nxt.values()):  # cannot happen after a part without errors
                    raise UserError(f"session {session_id} ({model}, {arm}): position {part.position - 1} missing")
                carried[(model, arm, session_id)] = {e: c for e, c in nxt.items() if c is not None}
        elif part.position == 1:
            carried = {
                (model, arm, s.session_id): {e: Carried(session_id=s.session_id, position=1) for e in epochs}
                for model in config.models
                for arm in part.config.modes
                for s in session_set.sessions
            }

        lengths = {s.session_id: s.length for s in session_set.sessions}
        errors += _run_part(part, _metadata(part, carried, where, labels, lengths))
        if errors and part.position >= 1:
            break  # a later position needs every session of this one finished: rerun the command
    return merge_shards(config, len(parts), errors)


def carried_next(
    model: str,
    arm: str,
    session: Session,
    position: int,
    known: Mapping[str, Scenario],
    previous: Carried,
    done: Finished,
    epoch: int,
) -> Carried | None:
    """What ``model`` carries into ``position`` (2…K) of ``session`` in ``arm``, trial ``epoch``: ``previous`` (what
    was carried into ``position - 1``) and the finished sample of ``position - 1``; None when it did not finish."""
    scenario = known[session.scenario_ids[position - 2]]
    found = done.get((model, arm, scenario.id, epoch))
    if found is None:
        return None
    record, notes = found
    earlier = CarriedPosition(
        position=position - 1,
        scenario_id=scenario.id,
        problem=scenario.problem.prompt_text(),
        turns=list(record.turns),
        response=record.final_response,
    )
    return previous.then(earlier, notes)


def _metadata(
    part: Part,
    carried: Chains,
    where: Mapping[str, tuple[str, int]],
    part_labels: Mapping[str, dict[str, str]],
    lengths: Mapping[str, int],
) -> SampleMetadata:
    """The samples' session metadata in ``part``: the session, the position, whether it is the session's last
    (``last``: carry_notes writes no notes after it, as the RL session environment asks none) and its attributes'
    labels (attribute → recurring / changed / new), and in a carry arm what each model under test carries, by trial
    (a task's samples are the same for every model; the solver takes its own model's)."""

    def metadata(mode: str, scenario: Scenario) -> dict[str, Any]:
        session_id, position = where[scenario.id]
        labels = part_labels[scenario.id]
        last = position >= lengths[session_id]
        located = {SESSION_KEY: {"session_id": session_id, "position": position, "last": last, "labels": labels}}
        if part.position == 0:
            return located
        chains = {
            model: {str(e): c.model_dump(mode="json") for e, c in by_epoch.items()}
            for (model, arm, sid), by_epoch in carried.items()
            if arm == mode and sid == session_id
        }
        return {**located, CARRIED_KEY: chains}

    return metadata


def _run_part(part: Part, metadata: SampleMetadata) -> list[str]:
    """One eval-set of the run in its own folder; its one-line error, if any, in a list."""
    try:
        prepare_log_dir(part.config.log_dir)
        run_eval_set(part.scenarios, part.config, sample_metadata=metadata)
    except UserError as e:
        return [f"{part.config.log_dir.name}: {e}"]
    return []
