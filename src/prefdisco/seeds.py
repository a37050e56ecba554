"""Call seeds: derived by sha256 from the run, the scenario, the condition, the trial and the role — never drawn
from global random state.

Each trial (inspect epoch) of a sample sends its own seed with every assistant call, another with every
simulated-user call and a third with every grader call (``GenerateConfig.seed``, for the providers that take one),
so trials are independent draws and a rerun of a run sends the same seeds (and so hits its cache). The run part is
the run's ``--seed`` (recorded in ``run.json``), never its folder: the same command in another folder, or split over
workers, sends the same seeds. ``TrialSeeds`` is what a sample records of them in its store (shown by
``inspect view``, read back into the results and transcripts tables).
"""

from __future__ import annotations

import hashlib
from copy import copy

from inspect_ai.model import GenerateConfig, Model
from inspect_ai.util import StoreModel

SEED_ROLES: tuple[str, ...] = ("assistant", "user", "grader")
"""The roles whose calls carry a per-trial seed."""
SEED_MODULUS = 2**31
"""Seeds are in [0, 2**31): every provider that takes a seed accepts a 31-bit integer."""


def call_seed(run_scope: str, scenario_id: str, condition: str, epoch: int, role: str = "assistant") -> int:
    """The seed of ``role``'s calls in trial ``epoch`` (1-based) of ``scenario_id`` under ``condition`` (its label:
    baseline, discovery, oracle, fixed_k<K>) in the run ``run_scope``: the first 8 bytes of the sha256 of the five,
    big-endian, modulo 2**31."""
    text = "\x1f".join((run_scope, scenario_id, condition, str(int(epoch)), role))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") % SEED_MODULUS


def step_seed(build_seed: int, step: str, item: str) -> int:
    """The seed of a build's call for ``item`` at ``step`` (``builder/pool.py``): the first 8 bytes of the sha256 of
    the build's ``--seed``, the step and the item, big-endian, modulo 2**31. What a seeded model writes for an item
    no longer depends on the calls made before it (the embedded model's sampler kept its state from call to call)."""
    text = "\x1f".join(("build", str(int(build_seed)), step, item))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") % SEED_MODULUS


def redraw_seed(seed: int | None, attempt: int) -> int:
    """The seed of a simulated reply drawn again (``--user-retry``; ``attempt`` from 1) by a user model whose calls
    send ``seed`` (None: none): the first 8 bytes of the sha256 of the two, big-endian, modulo 2**31."""
    text = "\x1f".join(("redraw", "none" if seed is None else str(int(seed)), str(int(attempt))))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") % SEED_MODULUS


def draw_seed(seed: int | None, scenario_id: str, turn: int, what: str) -> int:
    """The seed of a draw a simulated user makes itself on ``turn`` of ``scenario_id`` (``what``: the human-like
    user's ``manner``) from the seed its calls send, ``seed`` (``call_seed`` of the run's ``--seed``, the scenario,
    condition, trial and the ``user`` role; None: none is sent, and the draw is the scenario's and the turn's): the
    first 8 bytes of the sha256 of the four, big-endian, modulo 2**31. Another ``--seed`` or trial draws anew; a
    rerun draws the same."""
    text = "\x1f".join(("draw", what, "none" if seed is None else str(int(seed)), scenario_id, str(int(turn))))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") % SEED_MODULUS


def seed_scope(seed: int) -> str:
    """The run part of the seeds: the run's ``--seed`` (so a scenario's seeds depend neither on the run folder nor
    on how the scenarios were split over workers)."""
    return f"prefdisco-seed-{int(seed)}"


def seeded_model(model: Model, seed: int | None) -> Model:
    """A copy of ``model`` that sends ``seed`` with every call (``model`` itself when ``seed`` is None)."""
    if seed is None:
        return model
    seeded = copy(model)
    seeded.config = model.config.merge(GenerateConfig(seed=seed))
    return seeded


class TrialSeeds(StoreModel):
    """One sample's trial and the seeds its calls were sent (``TrialSeeds:<field>`` in the store)."""

    epoch: int = 1
    assistant: int | None = None
    user: int | None = None
    grader: int | None = None
