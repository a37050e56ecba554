"""What a condition's dialogue is, in one place: its rules (``DialogueRules``) from the condition and the run's
settings. Every driver takes them from here — the inspect solvers (``conditions.py``, ``carry.py``), the dry run
(``evaluation/estimate/plan.py``), the play study (``annotate/play_session.py``), the RL episode (``env/episode.py``),
an
own agent (``byo.py``) and the strategy solvers (``strategies.py``) — so a setting reaches every driver or none.

* **single-turn** (baseline, oracle, wrong_persona, oracle_distractor): one reply in the preset's own prompts, then
  ``pushback`` turns;
* **asking** (discovery, stated_belief, the carry arms): at most ``max_questions`` questions in the run's ask
  channel (``ask``: text markers, or the ``ask_user`` tool; ``constrain_ask``: the text grammar), then
  the answer, then ``pushback``; a flagged simulated reply redrawn up to ``user_retry`` times;
* **fixed-K**: exactly K questions, then the same.

An own agent asks through its own ``ask_user`` tool and a strategy solver through its own questions: they override
the ask channel only (``style``, ``ask``, ``limit``), and say so where they call ``rules_for``.

``asks_user`` / ``dialogue_conditions`` say which conditions ask the simulated user (the rules' own
``single_turn``): the instruments that tell a dialogue from one reply (``analysis/validity/variance.py``,
``analysis/validity/simulator.py``, ``simfidelity/replay.py``) read them here, never a list of their own.
``condition_key`` is a condition's key in seeds, caches and task names (``fixed_k<K>``); its name is
``modes.condition_label`` (``fixed_k=K``).

``opening_for`` is the condition's messages before the first assistant turn, from the scenario and the sample's
metadata (the wrong_persona decoy, the oracle_distractor items, the stated wrong answer): the solvers read the
metadata inspect gives the sample, the dry run the same keys made as the run makes them. A carry arm's opening
carries the session so far (``carry.carried_opening``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageUser

from prefdisco.dialogue.decoys import DECOY_KEY, Decoy
from prefdisco.dialogue.dialogue_state import DialogueRules
from prefdisco.dialogue.distractors import DISTRACTOR_KEY, with_distractors
from prefdisco.dialogue.openings import discovery_opening, fixed_k_opening, oracle_opening, problem_message
from prefdisco.dialogue.presets import DialogueStyle, preset_named
from prefdisco.dialogue.tool_protocol import ASK_CHANNELS, tools_style
from prefdisco.dialogue.wrong_answers import WRONG_ANSWER_KEY
from prefdisco.prompts import render
from prefdisco.schema import SESSION_ARMS, Mode, PreferenceItem, Scenario

MAX_DISCOVERY_QUESTIONS = 5
SINGLE_TURN: tuple[str, ...] = (
    Mode.BASELINE.value,
    Mode.ORACLE.value,
    Mode.WRONG_PERSONA.value,
    Mode.ORACLE_DISTRACTOR.value,
)
"""The conditions of one reply (no simulated user is asked anything before the answer)."""
ASKING: tuple[str, ...] = (Mode.DISCOVERY.value, Mode.STATED_BELIEF.value, *SESSION_ARMS)
"""The conditions that may ask up to the question budget."""


@dataclass(frozen=True)
class PlanSettings:
    """The run settings a condition's rules are made of (``RunConfig``'s, or a driver's own)."""

    preset: str = "default"
    ask: str = "text"
    constrain_ask: bool = False
    max_questions: int = MAX_DISCOVERY_QUESTIONS
    pushback: int = 0
    user_retry: int = 0


def ask_style(preset: str, ask: str, constrain_ask: bool = False) -> DialogueStyle:
    """The prompts and end rule of ``preset`` under the ask channel ``ask`` (``text`` or ``tools``)."""
    style = preset_named(preset).style
    if ask not in ASK_CHANNELS:
        raise ValueError(f"unknown ask channel {ask!r}: expected one of {', '.join(ASK_CHANNELS)}")
    if ask == "text":
        return style
    if constrain_ask:
        raise ValueError("the grammar is of the text ask channel: constrain_ask needs ask 'text'")
    return tools_style(style)


def condition_key(mode: Mode, k: int | None) -> str:
    """The condition's key in its calls' seeds and cache scopes, its inspect task's name (``prefdisco_<key>``) and
    so the eval-set's task identity: the mode, or ``fixed_k<K>``. Not a name shown to anyone (that is
    ``modes.condition_label``, ``fixed_k=K``): it keeps its spelling so that every existing run folder resumes
    onto its own logs, seeds and cache."""
    return f"fixed_k{k}" if mode is Mode.FIXED_K else mode.value


def asks_user(condition: Mode | str) -> bool:
    """Whether ``condition``'s dialogue may ask the simulated user before its answer (its rules are not single
    turn): the conditions whose PrefAlign varies with the user's replies, whose replies the audit reads, and whose
    questions the fidelity replay asks again. Read from ``rules_for``, so a condition's rules decide it."""
    return not rules_for(condition, PlanSettings(), 1).single_turn


def dialogue_conditions() -> tuple[str, ...]:
    """The conditions that ask the simulated user (``asks_user``), in ``Mode`` order: what the variance, simulator
    and fidelity tables read as dialogues."""
    return tuple(m.value for m in Mode if asks_user(m))


def rules_for(
    condition: Mode | str,
    settings: PlanSettings,
    k: int | None = None,
    *,
    style: DialogueStyle | None = None,
    ask: str | None = None,
    limit: int | None = None,
    label: str | None = None,
) -> DialogueRules:
    """The rules of ``condition``'s dialogue under ``settings`` (module docstring); ``k``: fixed-K's budget.
    ``style``, ``ask``, ``limit``: an own agent's or a strategy solver's ask channel in place of the run's;
    ``label``: the condition's name in the dialogue's cache scope when it is not the condition's own."""
    mode = Mode(condition)
    if mode.value in SINGLE_TURN:
        return DialogueRules(
            condition=label or mode.value,
            single_turn=True,
            style=style or preset_named(settings.preset).style,
            pushback=settings.pushback,
        )
    channel = ask or settings.ask
    shown = style or ask_style(settings.preset, channel, settings.constrain_ask)
    if mode is Mode.FIXED_K:
        if k is None or k < 1:
            raise ValueError("fixed_k mode needs k >= 1")
        budget, forced = k, True
    elif mode.value in ASKING:
        budget, forced = settings.max_questions, False
    else:  # pragma: no cover - every Mode is one of the above
        raise AssertionError(f"no rules for condition {mode.value!r}")
    return DialogueRules(
        condition=label or condition_key(mode, k),
        ask=channel,
        limit=budget if limit is None else limit,
        forced=forced,
        style=shown,
        pushback=settings.pushback,
        user_retry=settings.user_retry,
    )


def stated_belief_opening(
    scenario: Scenario, style: DialogueStyle, max_questions: int, belief: str | None
) -> list[ChatMessage]:
    """Discovery's opening whose problem message carries the person's stated (wrong) belief."""
    system, problem = discovery_opening(scenario.problem, style, max_questions)
    if belief is None:
        stated = render("user_stated_belief_free", problem=problem.text)
    else:
        stated = render("user_stated_belief", problem=problem.text, belief=belief)
    return [system, ChatMessageUser(content=stated.strip())]


def opening_for(
    condition: Mode | str, rules: DialogueRules, scenario: Scenario, metadata: Mapping[str, Any]
) -> list[ChatMessage]:
    """The messages of ``condition``'s dialogue before the first assistant turn (module docstring); ``rules``: its
    ``rules_for``; ``metadata``: the sample's (``DECOY_KEY``, ``DISTRACTOR_KEY``, ``WRONG_ANSWER_KEY``)."""
    mode, style, problem = Mode(condition), rules.style, scenario.problem
    if mode is Mode.BASELINE:
        return [problem_message(problem, style)]
    if mode is Mode.ORACLE:
        return oracle_opening(problem, style, scenario.profile, scenario.persona)
    if mode is Mode.WRONG_PERSONA:
        if DECOY_KEY not in metadata:
            raise ValueError(f"scenario {scenario.id}: wrong_persona needs a decoy in the sample metadata")
        decoy = Decoy.model_validate(metadata[DECOY_KEY])
        return oracle_opening(problem, style, decoy.profile, decoy.persona)
    if mode is Mode.ORACLE_DISTRACTOR:
        items = [PreferenceItem.model_validate(d) for d in metadata.get(DISTRACTOR_KEY, [])]
        return oracle_opening(problem, style, with_distractors(scenario.profile, items, scenario.id), scenario.persona)
    if mode is Mode.STATED_BELIEF:
        return stated_belief_opening(scenario, style, rules.limit, metadata.get(WRONG_ANSWER_KEY))
    if mode is Mode.DISCOVERY:
        return discovery_opening(problem, style, rules.limit)
    if mode is Mode.FIXED_K:
        return fixed_k_opening(problem, style, rules.limit)
    raise ValueError(f"{mode.value}: a carry arm's opening carries its session (carry.carried_opening)")
