"""What the end of a build says: each skip reason with the flag that helps, and whether the build kept enough.

A build that keeps fewer scenarios than it planned (problems x ``--personas-per-problem``) says so in its last
line; below ``--min-yield`` of them (default 0.5) the command exits 1. The scenarios kept are written all the
same, and a rerun of the same command resumes: finished calls come from the checkpoint, failed items are asked
again.

The hints follow what failed: a reply cut off at the length limit (a prompt or reply too long for the model) is
helped by fewer criteria per profile and rubric (``--max-attributes``), shorter strings for a grammar-constrained
model (``-M max_string_chars=…``) or less of the problem in the prompt (``--max-problem-chars``); a reply that
stayed invalid by more re-asks (``--retries``); a provider error by ``--max-retries`` / ``--timeout``; profiles
still identical after their regeneration by a higher ``--temperature``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prefdisco.wording import counted

CUT_OFF = "cut off at the length limit"
"""How ``structured.generate_structured`` words a reply that hit the token or context limit."""

REASON_STEPS = {
    "relevance_failed": ("relevance",),
    "profile_failed": ("profile", "profile_regenerate"),
    "rubric_failed": ("rubric",),
    "identical_profile": ("profile_regenerate",),
    "invalid_scenario": ("scenario",),
}
"""The build steps whose failures a skip reason counts."""

LENGTH_HINTS = {
    "relevance_failed": "--max-problem-chars 1000 (less of the problem in the prompt), -M max_string_chars=100",
    "profile_failed": "--max-attributes 4 (fewer attributes per profile), -M max_string_chars=100",
    "rubric_failed": "--max-attributes 4 (fewer criteria per rubric), -M max_string_chars=100 (shorter strings)",
}


def _kind(reason: str) -> str:
    if CUT_OFF in reason:
        return "length"
    if reason.startswith("provider error"):
        return "provider"
    return "invalid"


def hint(skip: str, failures: Sequence[Mapping[str, Any]]) -> str:
    """The flags that help with the scenarios skipped for ``skip``, judged by what its steps' failures say."""
    if skip == "identical_profile":
        return "a higher --temperature (more varied profiles), or fewer --personas-per-problem"
    steps = REASON_STEPS.get(skip, ())
    kinds = Counter(_kind(str(f.get("reason", ""))) for f in failures if f.get("step") in steps)
    helps = []
    if kinds["length"]:
        helps.append(f"replies cut off at the length limit: {LENGTH_HINTS.get(skip, '-M max_string_chars=100')}")
    if kinds["invalid"]:
        helps.append("invalid replies: more re-asks with --retries 4")
    if kinds["provider"]:
        helps.append("provider errors: --max-retries, --timeout")
    return "; ".join(helps) or "--retries 4"


def skip_lines(skipped: Mapping[str, int], failures: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per skip reason: how many scenarios, and the flags that help."""
    return [f"  {reason} {n}: {hint(reason, failures)}" for reason, n in skipped.items() if n]


@dataclass(frozen=True)
class Yield:
    """The scenarios a build kept against those it planned, and the least share it had to keep."""

    kept: int
    planned: int
    min_yield: float

    @property
    def share(self) -> float:
        return self.kept / self.planned if self.planned else 1.0

    @property
    def enough(self) -> bool:
        return self.share >= self.min_yield

    def last_line(self, out: object, seconds: float) -> str:
        """The build's last line: what it wrote, and when it kept fewer than planned, how many and what now."""
        if self.kept >= self.planned:
            return f"wrote {counted(self.kept, 'scenario')} to {out} in {seconds:.1f} s"
        planned = counted(self.planned, "scenario")
        head = f"wrote {self.kept} of {planned} planned ({self.share:.0%}) to {out} in {seconds:.1f} s"
        if self.enough:
            return f"{head}; rerun the same command to retry the skipped ones"
        return (
            f"{head}: below --min-yield {self.min_yield:g}; the flags above help, and the same command resumes "
            "(finished calls are not made again)"
        )
