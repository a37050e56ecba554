"""The pieces every condition is built from, each an inspect solver.

* ``pose_problem`` — the problem as the assistant's first (and, in baseline, only) user message, as is or framed
  by a template;
* ``instructions`` / ``oracle_profile`` — the system message: the protocol's rules, or the preference profile;
* ``single_reply`` — one assistant turn, which is the final response (baseline, oracle);
* ``question_loop`` — the question/answer loop with its budget (discovery, fixed-K; see ``loop.py``), under the
  text protocol or the tool-call one (``tool_protocol.py``).

The two reply steps end by writing the ``DialogueRecord`` the scorer reads. ``state.messages`` holds the
assistant's view of the dialogue for ``inspect view``, each assistant turn as the provider returned it (reasoning
included); the record holds visible text only (``visible.py``). Calls are cached per scenario, condition and role
(``prefdisco.cache``).
"""

from __future__ import annotations

from inspect_ai.model import ChatMessageSystem, ChatMessageUser, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from prefdisco.cache import cache_policy
from prefdisco.dialogue.loop import Outcome, QuestionBudget, converse
from prefdisco.dialogue.presets import DialogueStyle
from prefdisco.dialogue.protocol import strip_markers
from prefdisco.dialogue.scenario import scenario_of
from prefdisco.dialogue.state import DialogueRecord
from prefdisco.dialogue.tool_protocol import converse_tools
from prefdisco.dialogue.user import USERS, check_user_type
from prefdisco.dialogue.visible import visible_text
from prefdisco.prompts import render
from prefdisco.schema import PreferenceProfile


def oracle_preferences(profile: PreferenceProfile) -> str:
    lines = []
    for item in profile.items:
        meaning = f" ({item.description})" if item.description else ""
        why = f" — {item.justification}" if item.justification else ""
        lines.append(f"- {item.attribute}{meaning}: {item.value} [importance {item.weight:.2f}]{why}")
    return "\n".join(lines)


def _record(state: TaskState, condition: str, outcome: Outcome) -> TaskState:
    record = state.store_as(DialogueRecord)
    record.condition = condition
    record.final_response = outcome.final
    record.turns = outcome.turns
    record.unmarked_turns = outcome.unmarked
    record.stop_reason = outcome.stop_reason
    state.output.completion = outcome.final
    return state


@solver
def pose_problem(template: str | None = None) -> Solver:
    """Start the assistant's dialogue with the problem alone (``template``: framed by ``prompts/<template>.txt``,
    which places it at ``$problem``)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        problem = scenario_of(state).problem.prompt_text()
        text = render(template, problem=problem).strip() if template else problem
        state.messages = [ChatMessageUser(content=text)]
        return state

    return solve


def _with_system(state: TaskState, text: str) -> TaskState:
    state.messages.insert(0, ChatMessageSystem(content=text))
    return state


@solver
def instructions(template: str, **values: object) -> Solver:
    """A system message from ``prompts/<template>.txt`` filled with ``values``."""
    text = render(template, **values)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return _with_system(state, text)

    return solve


@solver
def oracle_profile(template: str = "assistant_oracle") -> Solver:
    """A system message with the scenario's profile: preferences, values and weights (never the rubric); a
    template may also place the persona (``$persona``)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        scenario = scenario_of(state)
        text = render(
            template,
            preferences=oracle_preferences(scenario.profile),
            persona=scenario.persona.profile_text(),
        )
        return _with_system(state, text)

    return solve


@solver
def single_reply(condition: str, cache_scope: str | None = None) -> Solver:
    """One assistant turn; its visible text, markers stripped, is the final response."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        cache = cache_policy(cache_scope, scenario_of(state).id, condition, "assistant")
        output = await get_model().generate(state.messages, cache=cache)
        state.messages.append(output.message)
        final = strip_markers(visible_text(output))
        return _record(state, condition, Outcome(final=final, stop_reason="single_turn"))

    return solve


@solver
def question_loop(
    condition: str,
    limit: int,
    forced: bool = False,
    user_type: str = "passive",
    constrain_protocol: bool = False,
    cache_scope: str | None = None,
    style: DialogueStyle = DialogueStyle(),
    protocol: str = "text",
) -> Solver:
    """The question/answer loop with the simulated user ``user_type``: at most (``forced``: exactly) ``limit``
    questions, its notes and end rule from ``style``. ``constrain_protocol`` sends a GBNF grammar of the protocol
    in ``extra_body["grammar"]`` (llama.cpp-based models only). ``protocol``: ``text`` (markers) or ``tools``
    (the ``ask_user`` tool; no grammar)."""
    budget = QuestionBudget(limit, forced, style)
    make_user = USERS[check_user_type(user_type)]

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        scenario = scenario_of(state)
        user_cache = cache_policy(cache_scope, scenario.id, condition, "user")
        user = make_user(get_model(role="user"), scenario, user_cache)
        if protocol == "tools":
            assistant_cache = cache_policy(cache_scope, scenario.id, condition, "assistant")
            outcome = await converse_tools(get_model(), user, state.messages, budget, cache=assistant_cache)
            return _record(state, condition, outcome)
        outcome = await converse(
            get_model(),
            user,
            state.messages,
            budget,
            constrain_protocol=constrain_protocol,
            cache=cache_policy(cache_scope, scenario.id, condition, "assistant"),
        )
        return _record(state, condition, outcome)

    return solve
