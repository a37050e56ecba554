"""The conditions, each a dialogue's rules and opening played by ``solver.converse``.

* ``baseline``: the problem alone, one reply.
* ``oracle``: a system message with the profile (preferences, values and weights; never the rubric), one reply.
* ``discovery``: the protocol in ``protocol.py``; at most ``max_questions`` questions, the model decides when to
  answer. After the last allowed question has been answered the user message says the questions are used up,
  and whatever the next turn says is the final answer.
* ``fixed_k``: exactly ``k`` questions, then the final answer.
* ``wrong_persona`` (a negative control, not a paper condition): the oracle, its system message filled with
  another scenario's profile and persona (``decoys.py``); scored against the scenario's own rubric.
* ``oracle_distractor`` (a harm probe): the oracle with its profile plus preferences that do not matter to the
  problem (``distractors.py``); scored against the scenario's own rubric.
* ``stated_belief`` (a harm probe): discovery after the person states a wrong belief about the answer in their
  first message (``prompts/user_stated_belief.txt``; the wrong answer of ``wrong_answers.py``).

A condition with questions may redraw a simulated reply the hygiene checks flag (``user_retry``; ``hygiene.py``).

Every condition may end with pushback (``pushback``: the person insists on a wrong answer for that many turns after
the final answer; ``engine.py``).

The rules of every dialogue are the engine's (``engine.py``). The response that is scored is the visible text of
the assistant's own final turn (``visible.py``) with protocol markers stripped (under the default preset never a
regenerated one); it and the dialogue reach the scorer as a ``DialogueRecord`` (``state.py``).

``protocol`` (discovery, fixed-K): ``text``, the markers of ``protocol.py``, or ``tools``, an ``ask_user`` tool
through the provider's native tool calling (``tool_protocol.py``; default preset only, no grammar).

``preset`` names the evaluator protocol (``presets.py``): its prompts, and, for ``paper``, its end rule (an
early answer is followed by the final-answer instruction, and the reply to it is scored).
"""

from __future__ import annotations

from collections.abc import Callable

from inspect_ai.model import ChatMessage
from inspect_ai.solver import Solver, TaskState, solver

from prefdisco.dialogue.plan import (
    MAX_DISCOVERY_QUESTIONS,
    SINGLE_TURN,
    PlanSettings,
    ask_style,
    opening_for,
    rules_for,
    stated_belief_opening,
)
from prefdisco.dialogue.solver import converse
from prefdisco.schema import Mode, Scenario

__all__ = [
    "MAX_DISCOVERY_QUESTIONS",
    "SINGLE_TURN_SOLVERS",
    "ask_style",
    "baseline",
    "discovery",
    "fixed_k",
    "oracle",
    "oracle_distractor",
    "stated_belief",
    "stated_belief_opening",
    "wrong_persona",
]
"""``MAX_DISCOVERY_QUESTIONS`` and ``ask_style`` are ``plan.py``'s, named here too."""


def _played(
    mode: Mode, settings: PlanSettings, k: int | None, user_type: str, constrain_ask: bool, cache_scope: str | None
) -> Solver:
    """``mode``'s rules and opening from the plan, played by ``converse``."""
    rules = rules_for(mode, settings, k)

    def opening(state: TaskState, scenario: Scenario) -> list[ChatMessage]:
        return opening_for(mode, rules, scenario, state.metadata or {})

    return converse(rules, opening, user_type, constrain_ask, cache_scope)


def single_turn_solver(mode: Mode) -> Callable[..., Solver]:
    """The solver of a single-turn condition (``plan.SINGLE_TURN``). Registered under the condition's own name
    (``prefdisco/baseline``, ``prefdisco/oracle``, ...), with the same parameters, so an inspect log's plan, and the
    eval-set's identity of a task, name it as before."""

    @solver(name=mode.value)
    def single_turn(
        cache_scope: str | None = None, preset: str = "default", pushback: int = 0, user_type: str = "passive"
    ) -> Solver:
        return _played(mode, PlanSettings(preset=preset, pushback=pushback), None, user_type, False, cache_scope)

    return single_turn


SINGLE_TURN_SOLVERS: dict[str, Callable[..., Solver]] = {m: single_turn_solver(Mode(m)) for m in SINGLE_TURN}
"""The single-turn conditions' solvers by condition (``evaluation/running/task.py`` composes a task with them)."""
baseline = SINGLE_TURN_SOLVERS[Mode.BASELINE.value]
oracle = SINGLE_TURN_SOLVERS[Mode.ORACLE.value]
wrong_persona = SINGLE_TURN_SOLVERS[Mode.WRONG_PERSONA.value]
"""The oracle with the decoy's profile and persona in its system message (the preset's oracle template)."""
oracle_distractor = SINGLE_TURN_SOLVERS[Mode.ORACLE_DISTRACTOR.value]
"""The oracle with distractor preferences among the scenario's own (``distractors.py``)."""


def asking_solver(mode: Mode) -> Callable[..., Solver]:
    """The solver of discovery or stated_belief (at most ``max_questions`` questions; the model decides when to
    answer), registered under the condition's own name with the parameters it always had."""

    @solver(name=mode.value)
    def asking(
        max_questions: int = MAX_DISCOVERY_QUESTIONS,
        user_type: str = "passive",
        constrain_ask: bool = False,
        cache_scope: str | None = None,
        preset: str = "default",
        ask: str = "text",
        pushback: int = 0,
        user_retry: int = 0,
    ) -> Solver:
        if mode is Mode.DISCOVERY and not 0 <= max_questions <= MAX_DISCOVERY_QUESTIONS:
            raise ValueError(f"discovery allows 0..{MAX_DISCOVERY_QUESTIONS} questions, got {max_questions}")
        settings = PlanSettings(preset, ask, constrain_ask, max_questions, pushback, user_retry)
        return _played(mode, settings, None, user_type, constrain_ask, cache_scope)

    return asking


discovery = asking_solver(Mode.DISCOVERY)
"""Discovery: the model may ask up to ``max_questions`` (0..5, the paper's setting) before answering."""
stated_belief = asking_solver(Mode.STATED_BELIEF)
"""Discovery after the person states a wrong belief about the answer (the sample's wrong answer)."""


@solver
def fixed_k(
    k: int | None = None,
    user_type: str = "passive",
    constrain_ask: bool = False,
    cache_scope: str | None = None,
    preset: str = "default",
    ask: str = "text",
    pushback: int = 0,
    user_retry: int = 0,
) -> Solver:
    """Fixed-K ablation: the model must ask exactly ``k`` questions (``k >= 1``), then answer."""
    settings = PlanSettings(preset, ask, constrain_ask, pushback=pushback, user_retry=user_retry)
    return _played(Mode.FIXED_K, settings, k, user_type, constrain_ask, cache_scope)
