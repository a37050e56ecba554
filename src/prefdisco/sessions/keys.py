"""What the session planner keys on: a scenario's problem, and the seeded rank every choice of the planner uses."""

from __future__ import annotations

import hashlib

from prefdisco.schema import Scenario

Problem = tuple[str, str]
"""A problem: (benchmark, problem id)."""


def problem_of(scenario: Scenario) -> Problem:
    return (scenario.problem.benchmark, scenario.problem.id)


def rank(*parts: object) -> int:
    """The seeded rank of ``parts``: the first 8 bytes, big-endian, of sha256 over them joined by \\x1f. Sorting
    by it is a seeded shuffle, and ``rank(...) % n`` a seeded choice among n, with no global random state."""
    text = "\x1f".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
