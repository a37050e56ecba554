"""What an environment reads: the scenarios of a benchmark and the sessions planned on them.

``scenarios_from`` takes a benchmark folder, scenarios file or release file (through the one loader,
``release/convert.load_scenarios``) or Scenario objects as given; ``load_sessions`` a session file (``prefdisco
sessions``) checked against those scenarios; ``chain_of`` a session's scenarios in its order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from prefdisco.errors import UserError
from prefdisco.release.convert import load_scenarios
from prefdisco.schema import Scenario
from prefdisco.sessions.model import Session, SessionSet, read_session_set

ScenarioSource = str | Path | Sequence[Scenario]
"""A benchmark folder, scenarios file or release file, or the scenarios themselves."""
SessionSource = str | Path | SessionSet
"""A session file, or a session set read already."""


def scenarios_from(source: ScenarioSource) -> list[Scenario]:
    """Scenarios from a benchmark folder, scenarios file or release file, or as given."""
    if isinstance(source, str | Path):
        return load_scenarios(Path(source))
    scenarios = list(source)
    if not all(isinstance(s, Scenario) for s in scenarios):
        raise UserError("scenarios: expected a path or a list of Scenario objects")
    return scenarios


def load_sessions(sessions: SessionSource, scenarios: Sequence[Scenario]) -> SessionSet:
    """A session set (a file ``prefdisco sessions`` wrote, or one read already) whose every session is played on
    ``scenarios``; a missing scenario or no session is a one-line ``UserError``."""
    session_set = sessions if isinstance(sessions, SessionSet) else read_session_set(Path(sessions))
    if not session_set.sessions:
        raise UserError(f"sessions: no session in {session_set.header.source if sessions is session_set else sessions}")
    session_set.scenarios_with(scenarios)
    return session_set


def chain_of(session: Session, scenarios: Iterable[Scenario] | Mapping[str, Scenario]) -> list[Scenario]:
    """The scenarios of ``session`` in order: from ``scenarios`` (the benchmark) or the session's derived ones."""
    known = dict(scenarios) if isinstance(scenarios, Mapping) else {s.id: s for s in scenarios}
    known.update({s.id: s for s in session.derived})
    missing = [sid for sid in session.scenario_ids if sid not in known]
    if missing:
        raise UserError(
            f"session {session.session_id}: scenario {missing[0]} is neither in the scenarios given nor derived in "
            f"the session (were the sessions planned on another benchmark?)"
        )
    return [known[sid] for sid in session.scenario_ids]
