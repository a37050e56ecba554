"""The conditions a scenario runs in (``Mode``) and the groups the command line and the reports read them in.

A condition's set-up — its rules, opening, who answers and what follows the answer — is its plan
(``dialogue/plan.py``); this module only names them. ``prefdisco.schema`` re-exports every name here.

``condition_label`` is a condition's one name wherever it is shown or keyed as one (the report's text, its figures'
legends, ``summary.json``'s keys, the dry run's lines): the mode, or ``fixed_k=K``.
"""

from __future__ import annotations

from enum import StrEnum


class Mode(StrEnum):
    BASELINE = "baseline"
    DISCOVERY = "discovery"
    ORACLE = "oracle"
    FIXED_K = "fixed_k"
    WRONG_PERSONA = "wrong_persona"
    """The negative control: the oracle prompt filled with another scenario's profile and persona."""
    ORACLE_DISTRACTOR = "oracle_distractor"
    """Harms: the oracle prompt with the true profile plus attributes that do not matter to this problem."""
    STATED_BELIEF = "stated_belief"
    """Harms: discovery after the person states a wrong belief about the answer in their first message."""
    CARRY_TRANSCRIPT = "carry_transcript"
    """Sessions: discovery after seeing the earlier problems of the session with the same person."""
    CARRY_NOTES = "carry_notes"
    """Sessions: discovery after reading the notes the assistant wrote about the person after each problem."""


CONDITIONS: tuple[str, ...] = (Mode.BASELINE.value, Mode.DISCOVERY.value, Mode.ORACLE.value)
"""The paper's three conditions (fixed-K is an ablation), as plain strings: an enum member hashes by its name,
so sets and pandas lookups of the stored values need the values themselves."""
CONTROLS: tuple[str, ...] = (Mode.WRONG_PERSONA.value,)
"""Validity controls a run may add to the conditions (``--modes``); no paper statistic reads them."""
PROBES: tuple[str, ...] = (Mode.ORACLE_DISTRACTOR.value, Mode.STATED_BELIEF.value)
"""Harm probes a run may add (``--modes``): irrelevant preferences, a stated wrong belief (the report's Harms)."""
SESSION_ARMS: tuple[str, ...] = (Mode.CARRY_TRANSCRIPT.value, Mode.CARRY_NOTES.value)
"""The carry arms of a sessions run (``--sessions FILE``): discovery with what the assistant kept of the person."""
MODES: tuple[str, ...] = tuple(m.value for m in Mode)


FIXED_K_MODE = Mode.FIXED_K.value
"""The mode of the fixed-K conditions."""


def condition_label(mode: object, fixed_k: object) -> str:
    """A condition as one name: ``fixed_k=K`` for a fixed-K condition, its mode otherwise (``fixed_k`` may be
    None, NaN or a negative placeholder for the others)."""
    if str(mode) != FIXED_K_MODE:
        return str(mode)
    k = None if fixed_k is None else float(fixed_k)  # type: ignore[arg-type]
    if k is None or k != k or k < 1:
        raise ValueError(f"a {FIXED_K_MODE} condition needs its K, got {fixed_k!r}")
    return f"{FIXED_K_MODE}={int(k)}"
