"""Response caching that never crosses scenarios, conditions, roles or runs.

inspect's cache key covers the messages and generation settings but not the sample or the role, so with a
plain ``--cache`` two personas of one problem would share one baseline answer (the paper's defect). Every
PrefDisco call is cached under scopes naming the scenario, the condition, the role and the run, so the cache
only ever replays a call of the *same* sample in the *same* run — which is what makes a rerun after a crash
free of repeated paid calls.
"""

from __future__ import annotations

from inspect_ai.model import CachePolicy


def cache_policy(run_scope: str | None, scenario_id: str, condition: str, role: str) -> CachePolicy | bool:
    """A scoped policy, or False (no caching) when the run has no cache scope."""
    if not run_scope:
        return False
    return CachePolicy(
        expiry=None,
        per_epoch=True,
        scopes={"run": run_scope, "scenario": scenario_id, "condition": condition, "role": role},
    )
