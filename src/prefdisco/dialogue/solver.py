"""The condition solvers' one step: play the sample's dialogue with the model under test, record it.

Each condition (``conditions.py``) is its ``DialogueRules`` and its opening (``openings.py``); ``converse`` builds
the sample's ``Dialogue`` (``engine.py``) with the simulated user of the run's type (every reply screened,
``hygiene.py``), plays it with the task's model
(``drive.play``) and writes the ``DialogueRecord`` the scorer reads (``record_dialogue``). ``state.messages`` holds
the assistant's view of the dialogue for ``inspect view``, each assistant turn as the provider returned it
(reasoning included); the record holds visible text only (``visible.py``). Calls are cached per scenario,
condition and role (``prefdisco.cache``).
"""

from __future__ import annotations

from collections.abc import Callable

from inspect_ai.model import ChatMessage, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from prefdisco.cache import cache_policy
from prefdisco.dialogue.dialogue_state import DialogueRules
from prefdisco.dialogue.drive import play
from prefdisco.dialogue.engine import Dialogue
from prefdisco.dialogue.hygiene import Screen
from prefdisco.dialogue.scenario import scenario_of
from prefdisco.dialogue.state import DialogueRecord
from prefdisco.dialogue.user import build_user, check_user_type
from prefdisco.dialogue.user_reply import SimulatedUser
from prefdisco.dialogue.wrong_answers import WRONG_ANSWER_KEY
from prefdisco.schema import Mode, Scenario

Opening = Callable[[TaskState, Scenario], list[ChatMessage]]
"""The messages the assistant sees first, for one sample."""


def record_dialogue(state: TaskState, dialogue: Dialogue, messages: bool = True) -> TaskState:
    """Write the finished dialogue to the sample: the ``DialogueRecord``, the output's completion and (unless
    ``messages`` is False: an agent keeps its own history) the assistant's messages."""
    done = dialogue.state
    stored = state.store_as(DialogueRecord)
    stored.condition, stored.final_response, stored.stop_reason = done.rules.condition, done.final, done.stop_reason
    stored.final_end = done.final_end
    stored.turns, stored.violations = list(done.turns), list(done.violations)
    stored.unmarked_turns = len(done.violations)
    stored.pushback_target, stored.pushback = done.pushback_target, [t.model_dump() for t in done.pushback]
    if messages:
        state.messages = list(dialogue.messages)
    state.output.completion = dialogue.state.final or ""
    return state


def sample_user(scenario: Scenario, user_type: str, condition: str, cache_scope: str | None) -> SimulatedUser:
    """The sample's simulated user on the ``user`` role model (which carries the trial's seed)."""
    cache = cache_policy(cache_scope, scenario.id, condition, "user")
    return build_user(user_type, get_model(role="user"), scenario, cache)


@solver
def converse(
    rules: DialogueRules,
    opening: Opening,
    user_type: str = "passive",
    constrain_ask: bool = False,
    cache_scope: str | None = None,
) -> Solver:
    """Play the sample's dialogue under ``rules`` from ``opening`` with the task's model and the simulated user
    ``user_type``. ``constrain_ask`` sends a GBNF grammar of the text protocol in ``extra_body["grammar"]``
    (llama.cpp-based models only)."""
    check_user_type(user_type)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        scenario = scenario_of(state)
        talks = rules.needs_user
        user = sample_user(scenario, user_type, rules.condition, cache_scope) if talks else None
        named = rules.pushback > 0 or rules.condition == Mode.STATED_BELIEF.value  # the person insists or states it
        target = (state.metadata or {}).get(WRONG_ANSWER_KEY) if named else None
        dialogue = Dialogue.start(
            scenario.id, rules, opening(state, scenario), user, pushback_target=target, screen=Screen(scenario)
        )
        cache = cache_policy(cache_scope, scenario.id, rules.condition, "assistant")
        await play(dialogue, get_model(), cache=cache, constrain_ask=constrain_ask)
        return record_dialogue(state, dialogue)

    return solve
