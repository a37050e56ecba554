"""The assistant side of each condition, as one inspect solver.

* ``baseline``: the problem alone, one reply.
* ``oracle``: a system message with the profile (preferences, values and weights; never the rubric), one reply.
* ``discovery``: the protocol in ``protocol.py``; at most ``max_questions`` questions, the model decides when to
  answer. After the last allowed question has been answered the user message says the questions are used up,
  and whatever the next turn says is the final answer.
* ``fixed_k``: exactly ``k`` questions, then the final answer.

The response that is scored is the assistant's own final turn with protocol markers stripped — never a
regenerated one. What happened is stored in ``state.store`` under ``prefdisco:*`` keys for the scorer and
``state.messages`` holds the assistant's view of the dialogue for ``inspect view``.
"""

from __future__ import annotations

from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from prefdisco.cache import cache_policy
from prefdisco.dialogue.protocol import (
    ANSWER_ONLY_GBNF,
    PROTOCOL_GBNF,
    QUESTION_ONLY_GBNF,
    as_question,
    parse_turn,
    strip_markers,
)
from prefdisco.dialogue.user import SimulatedUser, UserType
from prefdisco.prompts import render
from prefdisco.schema import DialogueTurn, Mode, PreferenceProfile, Scenario

MAX_DISCOVERY_QUESTIONS = 5
SCENARIO_KEY = "scenario"


def scenario_of(state: TaskState) -> Scenario:
    return Scenario.model_validate(state.metadata[SCENARIO_KEY])


def oracle_preferences(profile: PreferenceProfile) -> str:
    lines = []
    for item in profile.items:
        meaning = f" ({item.description})" if item.description else ""
        why = f" — {item.justification}" if item.justification else ""
        lines.append(f"- {item.attribute}{meaning}: {item.value} [importance {item.weight:.2f}]{why}")
    return "\n".join(lines)


def condition_label(mode: Mode, k: int | None) -> str:
    """baseline, discovery, oracle, or fixed_k<K>."""
    return f"fixed_k{k}" if mode is Mode.FIXED_K else mode.value


def system_prompt(mode: Mode, scenario: Scenario, max_questions: int, k: int | None) -> str | None:
    if mode is Mode.BASELINE:
        return None
    if mode is Mode.ORACLE:
        return render("assistant_oracle", preferences=oracle_preferences(scenario.profile))
    if mode is Mode.DISCOVERY:
        return render("assistant_discovery", max_questions=max_questions)
    return render("assistant_fixed_k", k=k)


@solver
def personalized_dialogue(
    mode: str = "baseline",
    max_questions: int = MAX_DISCOVERY_QUESTIONS,
    k: int | None = None,
    user_type: UserType = "passive",
    constrain_protocol: bool = False,
    cache_scope: str | None = None,
) -> Solver:
    """Run one condition for one scenario.

    Args:
        mode: baseline, discovery, oracle or fixed_k.
        max_questions: discovery's question budget (at most 5 in the paper's setting).
        k: the number of questions fixed_k must ask.
        user_type: the simulated user (``passive`` or ``cooperative``).
        constrain_protocol: send a GBNF grammar of the protocol in ``extra_body["grammar"]`` (llama.cpp-based
            models only: the embedded provider and llama.cpp servers accept it).
        cache_scope: cache model calls under this run scope (see ``dialogue/cache.py``); None: no cache.
    """
    condition = Mode(mode)
    if condition is Mode.FIXED_K and (k is None or k < 1):
        raise ValueError("fixed_k mode needs k >= 1")
    if condition is Mode.DISCOVERY and not 0 <= max_questions <= MAX_DISCOVERY_QUESTIONS:
        raise ValueError(f"discovery allows 0..{MAX_DISCOVERY_QUESTIONS} questions, got {max_questions}")

    def grammar(gbnf: str) -> GenerateConfig:
        return GenerateConfig(extra_body={"grammar": gbnf}) if constrain_protocol else GenerateConfig()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        scenario = scenario_of(state)
        system = system_prompt(condition, scenario, max_questions, k)
        state.messages = [ChatMessageUser(content=scenario.problem.prompt_text())]
        if system:
            state.messages.insert(0, ChatMessageSystem(content=system))
        model = get_model()
        name = condition_label(condition, k)
        cache = cache_policy(cache_scope, scenario.id, name, "assistant")
        turns: list[DialogueTurn] = []
        unmarked = 0

        if condition in (Mode.BASELINE, Mode.ORACLE):
            output = await model.generate(state.messages, cache=cache)
            state.messages.append(output.message)
            final = strip_markers(output.completion)
        else:
            user = SimulatedUser(
                get_model(role="user"), scenario, user_type, cache=cache_policy(cache_scope, scenario.id, name, "user")
            )
            budget = k if condition is Mode.FIXED_K else max_questions
            asked = 0
            final = ""
            while True:
                must_ask = condition is Mode.FIXED_K and asked < budget
                must_answer = asked >= budget
                config = grammar(QUESTION_ONLY_GBNF if must_ask else ANSWER_ONLY_GBNF if must_answer else PROTOCOL_GBNF)
                output = await model.generate(state.messages, config=config, cache=cache)
                state.messages.append(ChatMessageAssistant(content=output.completion, model=output.model))
                if must_ask:
                    turn_kind, content = "question", as_question(output.completion)
                else:
                    turn = parse_turn(output.completion)
                    unmarked += turn.unmarked
                    turn_kind = "answer" if must_answer else turn.kind
                    content = turn.content
                if turn_kind == "answer":
                    turns.append(DialogueTurn(role="assistant", kind="answer", content=content))
                    final = content
                    break
                asked += 1
                turns.append(DialogueTurn(role="assistant", kind="question", content=content))
                reply, _ = await user.reply(content)
                turns.append(DialogueTurn(role="user", kind="reply", content=reply))
                if asked >= budget:
                    note = render("protocol_last_question", reply=reply, max_questions=budget)
                elif condition is Mode.FIXED_K:
                    note = render("protocol_next_question", reply=reply, asked=asked, k=budget)
                else:
                    note = reply
                state.messages.append(ChatMessageUser(content=note))

        state.output.completion = final
        state.store.set("prefdisco:final_response", final)
        state.store.set("prefdisco:n_questions", sum(t.kind == "question" for t in turns))
        state.store.set("prefdisco:turns", [t.model_dump() for t in turns])
        state.store.set("prefdisco:unmarked_turns", unmarked)
        state.store.set("prefdisco:condition", name)
        return state

    return solve
