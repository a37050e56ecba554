"""Strategic elicitation: a fitted policy (``policies/``) chooses what to ask, the model under test asks it.

Two registered inspect solvers, ``prefdisco/checklist`` and ``prefdisco/infogain``, each play the assistant in
discovery and fill the same ``DialogueRecord`` as the built-in discovery solver, so the scorer and every results
column work unchanged. The steps of a sample (the policy picks the attribute, the model under test words the
question, the simulated user replies, the presence rule, the final response from the inferred profile), the
pooled prior of a family the policy has no prior for, and what is recorded are described once, in docs/agents.md,
"Strategy solvers". What the code adds to that description:

* a question's attribute description comes from ``catalogue``, else the policy's folder's ``attributes.json``,
  else the packaged catalogue — never from the scenario's own profile (which would tell the model which attributes
  the person has);
* the presence rule (``learn``): with a user that records what it revealed (``UserReply.revealed`` not None) every
  other attribute the reply revealed is added once, after the asked one, unless already known; with any other user
  (passive, cooperative, paper_passive) a reply confirms the asked attribute;
* the condition (cache scope of every call, and ``DialogueRecord.condition``) is ``<strategy>_k<K>``; a scenario
  of the policy's training split is refused (``policies.guard.check_not_trained_on``) by ``check_strategy_scenarios``
  when the task is built, and by each solver for its own sample again as a guard.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from inspect_ai.model import CachePolicy, ChatMessage, ChatMessageSystem, ChatMessageUser, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from prefdisco.benchio import ATTRIBUTES_FILE, parse_attributes
from prefdisco.builder.catalogue import load_catalogue
from prefdisco.cache import cache_policy
from prefdisco.dialogue.engine import Dialogue
from prefdisco.dialogue.hygiene import Screen
from prefdisco.dialogue.openings import problem_message
from prefdisco.dialogue.plan import MAX_DISCOVERY_QUESTIONS, PlanSettings, rules_for
from prefdisco.dialogue.presets import preset_named
from prefdisco.dialogue.protocol import strip_markers
from prefdisco.dialogue.scenario import scenario_of
from prefdisco.dialogue.solver import record_dialogue, sample_user
from prefdisco.dialogue.strategy_record import InferredItem, StrategyRecord
from prefdisco.dialogue.user import check_user_type
from prefdisco.dialogue.visible import visible_text
from prefdisco.errors import UserError
from prefdisco.policies import choice
from prefdisco.policies.guard import check_not_trained_on
from prefdisco.policies.model import POOLED, Policy, read_policy
from prefdisco.prompts import render
from prefdisco.schema import Attribute, Scenario

STRATEGIES: tuple[str, ...] = ("checklist", "infogain")
STRATEGY_TEMPLATES: tuple[str, ...] = ("strategy_question", "strategy_answer")
"""The templates a strategy run renders (a run's ``run.json`` should hash them)."""
MAX_STRATEGY_QUESTIONS = MAX_DISCOVERY_QUESTIONS
NO_DESCRIPTION = "(no description)"


class Picker(Protocol):
    """The next attribute to ask about, given the attributes asked so far and the answers known; None: stop."""

    def __call__(
        self, policy: Policy, family: str, k: int, asked: list[str], answers: Mapping[str, bool]
    ) -> str | None: ...


def pick_checklist(policy: Policy, family: str, k: int, asked: list[str], answers: Mapping[str, bool]) -> str | None:
    """The next of the K most likely attributes, in order (the answers change nothing)."""
    ranked = choice.checklist(policy, family, k)
    return ranked[len(asked)] if len(asked) < len(ranked) else None


def pick_infogain(policy: Policy, family: str, k: int, asked: list[str], answers: Mapping[str, bool]) -> str | None:
    """The attribute of greatest expected information gain given the answers known."""
    return choice.infogain_next(policy, family, answers)


PICKERS: dict[str, Picker] = {"checklist": pick_checklist, "infogain": pick_infogain}


def resolve_k(k: int | None, max_questions: int = MAX_STRATEGY_QUESTIONS) -> int:
    """K: ``k``, else the run's ``max_questions``; a one-line error outside 0..5."""
    value = max_questions if k is None else k
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_STRATEGY_QUESTIONS:
        raise UserError(f"-S k: expected a question budget 0..{MAX_STRATEGY_QUESTIONS}, got {value!r}")
    return value


def check_strategy_scenarios(policy_path: str | Path, scenarios: Iterable[Scenario], strict: bool = False) -> Policy:
    """Read the policy and refuse (one-line ``UserError``) a scenario of its training split, and with ``strict`` one
    of a task family it has no prior for; without ``strict`` such families are named in one line on the error
    output (their questions use the pooled prior). Returns the policy. Call it once when a strategy task is
    built."""
    policy = read_policy(Path(policy_path))
    scenarios = list(scenarios)
    check_not_trained_on(policy, scenarios)
    for scenario in scenarios:
        prior_family(policy, policy_path, scenario, strict)  # refuses an unknown family when strict
    pooled = sorted({s.problem.benchmark for s in scenarios} - set(policy.families))
    if pooled:
        print(
            f"warning: {policy_path} has no prior for task famil{'ies' if len(pooled) > 1 else 'y'} "
            f"{', '.join(pooled)} (it has {', '.join(sorted(policy.families))}): their questions use the prior "
            "pooled over all its families (recorded as strategy_prior 'pooled'); --strict-policy refuses instead",
            file=sys.stderr,
        )
    return policy


def prior_family(policy: Policy, policy_path: str | Path, scenario: Scenario, strict: bool) -> str:
    """The prior a scenario's questions use: its task family's, else (unless ``strict``) the pooled one."""
    family = scenario.problem.benchmark
    if family in policy.families:
        return family
    if strict:
        raise UserError(
            f"{policy_path}: scenario {scenario.id} is of task family {family!r}, which the policy has no prior "
            f"for (it has {', '.join(sorted(policy.families))}); without --strict-policy it uses the pooled prior"
        )
    return POOLED


def _catalogue(catalogue: str | None, policy: Policy) -> list[Attribute]:
    """The attributes whose descriptions word the questions (module docstring)."""
    if catalogue is not None:
        path = Path(catalogue)
        path = path / ATTRIBUTES_FILE if path.is_dir() else path
        try:
            return parse_attributes(path.read_text(encoding="utf-8"), str(path))
        except (OSError, UnicodeDecodeError) as e:
            raise UserError(f"-S catalogue={catalogue}: cannot read an attribute catalogue ({e})") from None
    fitted = Path(policy.split.source)
    if fitted.is_dir() and (fitted / ATTRIBUTES_FILE).is_file():
        path = fitted / ATTRIBUTES_FILE
        return parse_attributes(path.read_text(encoding="utf-8"), str(path))
    return load_catalogue()


@dataclass(frozen=True)
class StrategyPlan:
    """One strategy solver's settings, fixed when the task is built."""

    strategy: str
    policy: Policy
    policy_path: str
    k: int
    descriptions: Mapping[str, str]

    @property
    def condition(self) -> str:
        return f"{self.strategy}_k{self.k}"

    def describe(self, attribute: str) -> str:
        return self.descriptions.get(" ".join(attribute.split()).casefold(), NO_DESCRIPTION)


def make_plan(strategy: str, policy: str, k: int | None, max_questions: int, catalogue: str | None) -> StrategyPlan:
    if strategy not in PICKERS:
        raise UserError(f"unknown strategy {strategy!r}: expected one of {', '.join(STRATEGIES)}")
    fitted = read_policy(Path(policy))
    descriptions = {" ".join(a.name.split()).casefold(): a.description for a in _catalogue(catalogue, fitted)}
    return StrategyPlan(strategy, fitted, str(policy), resolve_k(k, max_questions), descriptions)


def learn(answers: dict[str, bool], attribute: str, revealed: tuple[str, ...] | None) -> None:
    """Update ``answers`` with one reply to a question about ``attribute`` (the presence rule: module docstring)."""
    if revealed is None:
        answers[attribute] = True
        return
    answers[attribute] = attribute in revealed
    for other in revealed:
        answers.setdefault(other, True)


def inferred_lines(inferred: list[InferredItem], plan: StrategyPlan) -> str:
    """The inferred profile as the final system message lists it."""
    if not inferred:
        return "- (nothing specific: no preference was confirmed or is likely)"
    lines = []
    for item in inferred:
        value = item.value if item.value is not None else "value not known"
        known = "confirmed" if item.confirmed else "likely"
        lines.append(f"- {item.attribute} ({plan.describe(item.attribute)}): {value} [{known}]")
    return "\n".join(lines)


async def elicit(
    plan: StrategyPlan, scenario: Scenario, family: str, dialogue: Dialogue, cache: CachePolicy | bool
) -> tuple[list[str], dict[str, bool]]:
    """Ask up to K questions through ``dialogue``: the policy picks, the model under test words, the user replies
    (the engine keeps the budget and the turns). Returns the attributes asked about, in order, and what the answers
    showed (the presence rule)."""
    model = get_model()
    problem = scenario.problem.prompt_text()
    pick = PICKERS[plan.strategy]
    asked: list[str] = []
    answers: dict[str, bool] = {}
    while not dialogue.spent:
        attribute = pick(plan.policy, family, plan.k, asked, answers)
        if attribute is None:
            break
        prompt = render("strategy_question", problem=problem, attribute=attribute, description=plan.describe(attribute))
        output = await model.generate([ChatMessageUser(content=prompt)], cache=cache)
        await dialogue.ask(strip_markers(visible_text(output)))
        revealed = dialogue.state.turns[-1].revealed
        asked.append(attribute)
        learn(answers, attribute, None if revealed is None else tuple(revealed))
    return asked, answers


def strategy_solver(strategy: str) -> Callable[..., Solver]:
    """The solver of ``strategy``, registered as ``prefdisco/<strategy>`` with the parameters it always had."""

    @solver(name=strategy)
    def strategy_discovery(
        policy: str,
        k: int | None = None,
        max_questions: int = MAX_STRATEGY_QUESTIONS,
        user_type: str = "passive",
        cache_scope: str | None = None,
        preset: str = "default",
        catalogue: str | None = None,
        strict_policy: bool = False,
        user_retry: int = 0,
    ) -> Solver:
        """Args:
        policy: the policy file (``prefdisco policy fit``); its training problems are refused.
        k: the question budget K (0..5); None: ``max_questions``.
        max_questions: the run's question budget (the default of K).
        user_type: the simulated user (``dialogue/user.py``).
        cache_scope: the run's cache scope (``prefdisco.cache``); None: no caching.
        preset: the evaluator preset whose task framing poses the problem.
        catalogue: a benchmark folder or attributes JSON file describing the attributes (module docstring).
        strict_policy: refuse a scenario of a task family the policy has no prior for (default: use the prior
            pooled over all its families, recorded as ``StrategyRecord.prior``).
        user_retry: a simulated reply the hygiene checks flag is drawn again up to this many times (the run's
            ``--user-retry``; ``dialogue/hygiene.py``).
        """
        plan = make_plan(strategy, policy, k, max_questions, catalogue)
        check_user_type(user_type)
        style = replace(preset_named(preset).style, notes=False, ask_again=False)
        # a strategy asks its own questions (up to its plan's K, no budget notes): the ask channel is overridden; the
        # rest are discovery's, under the strategy's label
        settings = PlanSettings(max_questions=plan.k, user_retry=user_retry)
        rules = rules_for("discovery", settings, style=style, label=plan.condition)

        async def solve(state: TaskState, generate: Generate) -> TaskState:
            scenario = scenario_of(state)
            check_not_trained_on(plan.policy, [scenario])
            family = scenario.problem.benchmark
            prior = prior_family(plan.policy, plan.policy_path, scenario, strict_policy)
            record = state.store_as(StrategyRecord)
            record.strategy, record.k, record.policy, record.family = plan.strategy, plan.k, plan.policy_path, family
            record.prior = "family" if prior == family else "pooled"
            user = sample_user(scenario, user_type, plan.condition, cache_scope)
            cache = cache_policy(cache_scope, scenario.id, plan.condition, "assistant")
            opening: list[ChatMessage] = [problem_message(scenario.problem, style)]
            dialogue = Dialogue.start(scenario.id, rules, opening, user, screen=Screen(scenario))
            asked, answers = await elicit(plan, scenario, prior, dialogue, cache)

            inferred = [
                InferredItem(
                    attribute=i.attribute,
                    value=i.value,
                    probability=i.probability,
                    confirmed=answers.get(i.attribute, False),
                )
                for i in choice.inferred_profile(plan.policy, prior, answers)
            ]
            system = render("strategy_answer", preferences=inferred_lines(inferred, plan))
            output = await get_model().generate([ChatMessageSystem(content=system), *dialogue.messages], cache=cache)
            dialogue.finish(output)

            truth = [item.attribute for item in scenario.profile.items]
            scores = choice.precision_recall_at_k([i.attribute for i in inferred], truth)
            record.asked, record.answers, record.inferred = asked, answers, inferred
            record.precision, record.recall = scores.precision, scores.recall
            record_dialogue(state, dialogue)
            state.messages = [ChatMessageSystem(content=system), *dialogue.messages]
            return state

        return solve

    return strategy_discovery


checklist = strategy_solver("checklist")
"""Discovery whose K questions are about the K most likely attributes of the problem's family (in order), worded
by the model under test; the final response is written from the inferred profile and the dialogue."""
infogain = strategy_solver("infogain")
"""Discovery whose each question is about the attribute of greatest expected information gain given the answers
so far (PEP's policy), worded by the model under test."""
