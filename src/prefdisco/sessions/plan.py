"""Planning a session set: which of a benchmark's scenarios make up which person's chain of problems.

The rule (``docs/sessions.md`` says the same in prose):

1. **Group** the scenarios by persona id. A *problem* is its benchmark and problem id; a session holds K scenarios of
   one persona and K different problems.
2. **Order** each persona's scenarios by ``sha256(seed \\x1f persona id \\x1f scenario id \\x1f "order")`` (its first
   8 bytes, big-endian; ties by scenario id): a seeded shuffle with no global random state.
3. **Split** that order into disjoint sessions: while the remaining scenarios hold K different problems, take the
   K problems with the most remaining scenarios (ties: the problem met first in the order) and the first remaining
   scenario of each, in the order's order. When every problem of the persona has one scenario, this cuts the order
   into consecutive runs of K and drops the last partial one; with repeated problems it makes as many sessions as
   can be made. The n-th session of persona P is ``P~s<seed>-<n>``: its id depends on the persona, the seed, K and
   the persona's scenarios, never on ``count``.
4. **Choose** ``count`` of them (default all): every persona's first session before any second one, and within
   one round by ``sha256(seed \\x1f session id \\x1f "pick")``; so a larger count keeps the sessions of a smaller one
   and spreads over as many people as it can. The file lists them by persona id, then n.
5. **Drift** (``drift > 0``, :mod:`prefdisco.sessions.drift`) replaces scenarios from the middle of each session on.
6. **Label** each position from its (possibly drifted) profile: ``label_positions``.

A benchmark where no persona has K problems, or a count above what can be made, is refused in one line.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from prefdisco.errors import UserError
from prefdisco.schema import Scenario
from prefdisco.sessions.drift import ValueIndex, drift_session, drift_start
from prefdisco.sessions.keys import Problem, problem_of, rank
from prefdisco.sessions.model import Session, SessionSet, SessionSetHeader, label_positions
from prefdisco.wording import counted


def session_id(persona: str, seed: int, n: int) -> str:
    return f"{persona}~s{seed}-{n}"


def split_persona(scenarios: Sequence[Scenario], length: int, seed: int) -> list[list[Scenario]]:
    """One persona's scenarios as its disjoint sessions, each ordered (rules 2 and 3 of the module docstring)."""
    if not scenarios:
        return []
    persona = scenarios[0].persona.id
    remaining = sorted(scenarios, key=lambda s: (rank(seed, persona, s.id, "order"), s.id))
    sessions: list[list[Scenario]] = []
    while True:
        first: dict[Problem, int] = {}
        for i, s in enumerate(remaining):
            first.setdefault(problem_of(s), i)
        if len(first) < length:
            return sessions
        counts = Counter(problem_of(s) for s in remaining)
        chosen = sorted(first, key=lambda p: (-counts[p], first[p]))[:length]
        taken = sorted(first[p] for p in chosen)
        sessions.append([remaining[i] for i in taken])
        gone = set(taken)
        remaining = [s for i, s in enumerate(remaining) if i not in gone]


def _recurrence(by_persona: dict[str, list[Scenario]]) -> str:
    """``12 personas have 2, 40 have 1``: how many personas have how many problems, the most first."""
    groups = sorted(Counter(len({problem_of(s) for s in group}) for group in by_persona.values()).items(), reverse=True)
    words = [
        f"{counted(n, 'persona') if i == 0 else n} {'has' if n == 1 else 'have'} {k}"
        for i, (k, n) in enumerate(groups[:4])
    ]
    if len(groups) > 4:
        rest = sum(n for _, n in groups[4:])
        words.append(f"{rest} {'has' if rest == 1 else 'have'} fewer")
    return ", ".join(words)


def _refuse_short(by_persona: dict[str, list[Scenario]], length: int) -> None:
    most = max(len({problem_of(s) for s in group}) for group in by_persona.values())
    if most >= length:
        return
    fixes = f"give --length {most} or build" if most >= 2 else "sessions need a persona with at least 2; build"
    raise UserError(
        f"no persona has {length} problems: the most is {most} ({_recurrence(by_persona)}); "
        f"{fixes} with --session-length {length}"
    )


@dataclass(frozen=True)
class Candidate:
    """A session that can be made: the persona's n-th, its id, its ordered scenarios."""

    n: int
    session_id: str
    chain: list[Scenario]

    @property
    def persona(self) -> str:
        return self.chain[0].persona.id


def _choose(candidates: list[Candidate], count: int | None, seed: int, length: int) -> list[Candidate]:
    """``count`` of the candidate sessions by rule 4, listed by persona id and n."""
    if count is not None and count > len(candidates):
        people = len({c.persona for c in candidates})
        raise UserError(
            f"--count {count}: only {counted(len(candidates), 'session')} of length {length} can be made from "
            f"{counted(people, 'persona')} (a persona's scenarios are split into disjoint sessions); "
            f"give --count {len(candidates)} or less"
        )
    ordered = sorted(candidates, key=lambda c: (c.n, rank(seed, c.session_id, "pick"), c.session_id))
    picked = ordered if count is None else ordered[:count]
    return sorted(picked, key=lambda c: (c.persona, c.n))


def plan_sessions(
    scenarios: Iterable[Scenario],
    length: int,
    count: int | None = None,
    seed: int = 0,
    drift: float = 0.0,
    source: str = "",
) -> SessionSet:
    """The session set of ``scenarios`` (the module docstring's rule); a one-line ``UserError`` when it cannot be
    made (no scenarios, K < 2, no persona with K problems, ``count`` above what can be made, drift outside 0..1)."""
    scenarios = list(scenarios)
    if length < 2:
        raise UserError(f"--length {length}: a session needs at least 2 problems")
    if count is not None and count < 1:
        raise UserError(f"--count {count}: give at least 1 (or leave it out for every session)")
    if not 0.0 <= drift <= 1.0:
        raise UserError(f"--drift {drift}: a share between 0 and 1 was expected")
    if not scenarios:
        raise UserError(f"{source or 'the benchmark'}: no scenarios to plan sessions on")
    by_persona: dict[str, list[Scenario]] = defaultdict(list)
    for s in scenarios:
        by_persona[s.persona.id].append(s)
    _refuse_short(by_persona, length)
    candidates = [
        Candidate(n, session_id(persona, seed, n), chain)
        for persona, group in sorted(by_persona.items())
        for n, chain in enumerate(split_persona(group, length, seed), start=1)
    ]
    values = ValueIndex(scenarios) if drift > 0 else None
    sessions, flipped, kept = [], 0, 0
    for candidate in _choose(candidates, count, seed, length):
        sid, chain = candidate.session_id, candidate.chain
        derived: list[Scenario] = []
        if values is not None:
            outcome = drift_session(sid, chain, values, drift, seed)
            chain, derived = outcome.scenarios, outcome.derived
            flipped, kept = flipped + len(outcome.flipped), kept + len(outcome.kept)
        profiles = [{i.attribute: i.value for i in s.profile.items} for s in chain]
        sessions.append(
            Session(
                session_id=sid,
                persona_id=chain[0].persona.id,
                scenario_ids=[s.id for s in chain],
                labels=label_positions(profiles),
                drift_from=drift_start(length) if drift > 0 else None,
                derived=derived,
            )
        )
    header = SessionSetHeader(
        source=source,
        length=length,
        seed=seed,
        drift=drift,
        n_sessions=len(sessions),
        n_drifted=flipped,
        n_cannot_drift=kept,
    )
    return SessionSet(header=header, sessions=sessions)


def recurring_shares(session_set: SessionSet) -> list[float]:
    """Per position (1..K), the share of its profile's attributes labelled recurring, averaged over the sessions."""
    shares: list[list[float]] = [[] for _ in range(session_set.header.length)]
    for session in session_set.sessions:
        for position, labels in enumerate(session.labels):
            total = len(labels.recurring) + len(labels.changed) + len(labels.new)
            if total:
                shares[position].append(len(labels.recurring) / total)
    return [sum(s) / len(s) if s else 0.0 for s in shares]


def summary_line(session_set: SessionSet, out: str) -> str:
    """What ``prefdisco sessions`` prints: sessions, length, people, recurring share by position, drift."""
    header = session_set.header
    people = len({s.persona_id for s in session_set.sessions})
    shares = " · ".join(f"{round(100 * share)}%" for share in recurring_shares(session_set))
    line = (
        f"wrote {out}: {counted(header.n_sessions, 'session')} of length {header.length}, "
        f"{counted(people, 'persona')}; recurring attributes by position {shares}"
    )
    if header.drift > 0:
        line += (
            f"; drift {header.drift:g} from position {drift_start(header.length)}: "
            f"{counted(header.n_drifted, 'attribute')} flipped"
        )
        if header.n_cannot_drift:
            line += f", {header.n_cannot_drift} chosen kept their value (no other value in the benchmark)"
    return line
