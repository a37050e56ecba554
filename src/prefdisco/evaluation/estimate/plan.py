"""``prefdisco eval --dry-run``: the model calls, tokens and USD a run will spend, per role, before any call.

Every call a sample makes is planned through the real code with stand-in models (``probe.py``) that answer at
once with replies of a typical length and record what they were sent: the condition's messages as the solver
builds them (the run's preset and protocol templates, ``dialogue/openings.py``), the dialogue through the
dialogue engine driven as the solvers drive it (``dialogue/drive.play``) with the run's simulated user (the
targeted user's mapping calls included), the rubric judge's prompts per criterion (``per_criterion``) or per
response (``structured``), the audit, the SimpleQA grader and the quality judge. No provider, API key or file is
touched.

Counts: per model under test, epoch and scenario, one sample per condition (``--modes`` and each fixed-K);
discovery asks the whole question budget (``max_questions``, an upper bound: a model that answers earlier makes
fewer calls), fixed-K exactly K. The judge panel scores each response ``judges x repeats`` times; the audit runs
after a dialogue with questions; the correctness grader for model-graded (SimpleQA) answers only; the quality judge
once per response (part ``quality``, unless ``--no-quality``; with the structured judge no call of its own: the
first judge's first call asks it, counted under ``judge``). Re-asks of an invalid structured reply, provider
retries and cache hits of a resumed run are not counted.

Tokens are chars/4 of what is sent (messages, response schema, tool definitions), as the builder's estimate
counts them (``builder/estimate.py``). Output tokens: typical lengths (``TYPICAL_TOKENS``) capped by the role's
``max_tokens``; a grader reply counts at its max_tokens bound (its budget is sized to its JSON). The ``bound``
column is calls x max_tokens, ``none`` when some call has no max_tokens. USD: the run's prices
(``prefdisco.prices``: the packaged table, or ``--prices`` over it; USD per million input / output tokens) over
input and expected output tokens; ``—`` for a model without a price, with a note on how to give one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import count, cycle
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput
from pydantic import BaseModel

from prefdisco.builder.catalogue import load_catalogue
from prefdisco.builder.estimate import ESTIMATE_METHOD
from prefdisco.dialogue.carry import (
    NOTES_CONFIG,
    NOTES_MAX_TOKENS,
    Carried,
    CarriedPosition,
    carried_opening,
    notes_prompt,
)
from prefdisco.dialogue.decoys import DECOY_KEY, Decoy, choose_decoys
from prefdisco.dialogue.dialogue_state import DialogueRules
from prefdisco.dialogue.distractors import DISTRACTOR_KEY, choose_distractors
from prefdisco.dialogue.drive import play
from prefdisco.dialogue.engine import Dialogue
from prefdisco.dialogue.plan import PlanSettings, opening_for, rules_for
from prefdisco.dialogue.strategies import STRATEGIES
from prefdisco.dialogue.tool_protocol import TOOL_NAME
from prefdisco.dialogue.user import build_user
from prefdisco.dialogue.user_reply import USER_MAX_TOKENS
from prefdisco.dialogue.wrong_answers import WRONG_ANSWER_KEY, wrong_answer, wrong_answer_key
from prefdisco.evaluation.estimate.probe import Probe, Sent, drive
from prefdisco.evaluation.sessions_run import load_session_run
from prefdisco.evaluation.settings.batch import part_by_batch
from prefdisco.evaluation.settings.config import RunConfig, selected_scenarios
from prefdisco.modes import condition_label
from prefdisco.prices import batch_share, missing_line
from prefdisco.schema import SESSION_ARMS, DialogueTurn, Mode, Scenario
from prefdisco.scoring.audit import audit_user
from prefdisco.scoring.correctness import check_correct, needs_grader
from prefdisco.scoring.criterion_order import criterion_calls
from prefdisco.scoring.deferred import JUDGE_LATER
from prefdisco.scoring.judge import judge_criterion
from prefdisco.scoring.judge_structured import judge_call
from prefdisco.scoring.judging import JOINT_QUALITY
from prefdisco.scoring.quality import judge_quality
from prefdisco.seeds import seed_scope
from prefdisco.sessions.model import SessionSet

TYPICAL_TOKENS = {"question": 40, "answer": 600, "reply": 80}
"""Typical reply lengths: an assistant question, a final response, a simulated user's reply (each capped by the
role's max_tokens)."""
ROLES, GRADER_PARTS = ("assistant", "user", "grader"), ("judge", "mapper", "audit", "correctness", "quality")


class PlanLine(BaseModel):
    """Planned calls of one role part on one model (``part``: the condition for the assistant and the user;
    ``judge``, ``audit``, ``correctness``, ``quality`` or ``mapper`` for the grader roles)."""

    role: str
    part: str
    model: str
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    bound: int | None = 0
    """calls x max_tokens; None when some call has no max_tokens."""
    usd: float | None = None


class RunEstimate(BaseModel):
    method: str = ESTIMATE_METHOD
    lines: list[PlanLine]
    notes: list[str]
    priced: bool = False
    made_for: str | None = None
    """What the estimate was made of (``recorded.estimate_key``: the run's fingerprint and prices), so a rerun of the
    same run reads it back instead of planning every call again (``recorded.run_estimate``); None: not recorded."""

    @property
    def calls(self) -> int:
        return sum(line.calls for line in self.lines)

    def role_calls(self, role: str) -> int:
        return sum(line.calls for line in self.lines if line.role == role)


@dataclass
class _Tally:
    lines: dict[tuple[str, str, str], PlanLine] = field(default_factory=dict)

    def add(self, role: str, part: str, model: str, sent: Sequence[Sent], times: int) -> None:
        line = self.lines.setdefault((role, part, model), PlanLine(role=role, part=part, model=model))
        for call in sent:
            line.calls += times
            line.input_tokens += times * math.ceil(call.input_chars / 4)
            line.output_tokens += times * math.ceil(call.output_chars / 4)
            line.bound = None if line.bound is None or call.bound is None else line.bound + times * call.bound


def _expected(kind: str, bound: int | None) -> int:
    """Characters of a typical reply of ``kind``, capped by ``bound`` tokens."""
    return 4 * (TYPICAL_TOKENS[kind] if bound is None else min(TYPICAL_TOKENS[kind], bound))


@dataclass(frozen=True)
class _Plan:
    """What one sample's dialogue is: its rules, its messages before the first assistant turn, and the condition's
    name in the estimate's lines (``modes.condition_label``: ``fixed_k=K``)."""

    rules: DialogueRules
    messages: list[ChatMessage]
    label: str


def _discovery_budget(config: RunConfig) -> int:
    """The questions a discovery dialogue is planned with: the budget (a strategy solver's own ``k`` if given)."""
    k = config.solver_args.get("k") if config.solver in {f"prefdisco/{s}" for s in STRATEGIES} else None
    return k if isinstance(k, int) else config.max_questions


def plan_settings(config: RunConfig) -> PlanSettings:
    """The settings the run's conditions are planned with (``dialogue/plan.py``): an own ``--solver`` is planned
    as the text protocol, a strategy solver with its own budget ``k``."""
    return PlanSettings(
        preset=config.preset,
        ask="tools" if _tools(config) else "text",
        constrain_ask=config.constrain_ask,
        max_questions=_discovery_budget(config),
        pushback=config.pushback,
        user_retry=config.user_retry,
    )


def _plan(scenario: Scenario, mode: Mode, k: int | None, config: RunConfig, decoy: Scenario | None) -> _Plan:
    """The sample's rules and opening as the run's solvers take them (``dialogue/plan.py``), from the metadata the
    run gives the sample (its decoy, its distractors, its stated wrong answer), made here as the run makes it."""
    rules = rules_for(mode, plan_settings(config), k)
    metadata: dict[str, Any] = {}
    if mode is Mode.WRONG_PERSONA and decoy is not None:
        metadata[DECOY_KEY] = Decoy.of(decoy).model_dump(mode="json")
    if mode is Mode.ORACLE_DISTRACTOR:
        chosen = choose_distractors(scenario, load_catalogue(), seed_scope(config.seed), config.distractors)
        metadata[DISTRACTOR_KEY] = [item.model_dump(mode="json") for item in chosen]
    if mode is Mode.STATED_BELIEF:
        metadata[WRONG_ANSWER_KEY] = wrong_answer(
            scenario.problem, wrong_answer_key(seed_scope(config.seed), scenario.id)
        )
    return _Plan(rules, opening_for(mode, rules, scenario, metadata), condition_label(mode, k))


def _tools(config: RunConfig) -> bool:
    """Whether dialogues are planned under the tool protocol (an own ``--solver`` is planned as the text one)."""
    return config.ask == "tools" and not config.solver


def _assistant_replies(config: RunConfig, questions: int) -> Iterator[str | ModelOutput]:
    """The stand-in assistant: ``questions`` questions, then the answer, of typical length (markers included)."""
    question = "x" * (_expected("question", config.max_tokens) - len("QUESTION: "))
    for i in range(questions):
        if _tools(config):
            yield ModelOutput.for_tool_call("probe", TOOL_NAME, {"question": question}, tool_call_id=f"call_{i}")
        else:
            yield f"QUESTION: {question}"
    answer = "x" * (_expected("answer", config.max_tokens) - len("ANSWER: "))
    yield answer if _tools(config) else f"ANSWER: {answer}"
    for _ in range(config.pushback):  # the replies to the person's pushback
        yield answer


def estimate_run(scenarios: Sequence[Scenario], config: RunConfig) -> RunEstimate:
    """The planned calls of ``prefdisco eval`` with ``config`` on ``scenarios`` (the whole set: ``--limit`` is
    applied here, the wrong_persona decoys are chosen from the whole set as the run chooses them)."""
    config.validate()
    selected = selected_scenarios(scenarios, config)
    session_set = None
    if config.sessions is not None:  # the session set's scenarios, whole
        session_set, selected = load_session_run(scenarios, config)
    per_scenario = [m for m in config.modes if m not in SESSION_ARMS]
    modes = [(Mode(m), None) for m in per_scenario] + [(Mode.FIXED_K, k) for k in config.fixed_k]
    decoys = choose_decoys(scenarios, seed_scope(config.seed)) if Mode.WRONG_PERSONA.value in config.modes else {}
    times = config.epochs * len(config.models)  # every model under test runs every trial of every sample
    grader = config.role_config("grader")
    judged = "x" * _expected("answer", config.max_tokens)
    tally = _Tally()
    for scenario in selected:
        for mode, k in modes:
            plan = _plan(scenario, mode, k, config, decoys.get(scenario.id))
            turns = _dialogue(scenario, plan, config, tally, times)
            if config.judge != JUDGE_LATER:  # --judge later: no grader call until prefdisco judge
                _grade(scenario, judged, turns, config, grader, tally, times)
    if session_set is not None:
        _plan_carry_arms(session_set, {s.id: s for s in selected}, config, tally, grader, judged, times)
    return RunEstimate(lines=_priced(tally, config), notes=_notes(config), priced=bool(config.prices))


def _plan_carry_arms(
    session_set: SessionSet,
    known: dict[str, Scenario],
    config: RunConfig,
    tally: _Tally,
    grader: GenerateConfig,
    judged: str,
    times: int,
) -> None:
    """The carry arms' calls, session by session and position by position: each a discovery dialogue from the
    carried opening (the earlier positions' planned dialogues carried, so the prompt grows as in the run), then
    (carry_notes) the notes call, but after a session's last position."""
    notes_text = "x" * 4 * NOTES_MAX_TOKENS
    for arm in (m for m in config.modes if m in SESSION_ARMS):
        rules = rules_for(arm, plan_settings(config))  # pushback included, as the carry solvers play it
        dialogue, limit = rules.style, rules.limit
        for session in session_set.sessions:
            carried = Carried(session_id=session.session_id, position=1)
            for sid in session.scenario_ids:
                scenario = known[sid]
                opening = carried_opening(arm, scenario, dialogue, limit, carried)
                turns = [
                    DialogueTurn.model_validate(t)
                    for t in _dialogue(scenario, _Plan(rules, opening, arm), config, tally, times)
                ]
                if config.judge != JUDGE_LATER:
                    _grade(scenario, judged, [t.model_dump() for t in turns], config, grader, tally, times)
                notes = None
                if arm == Mode.CARRY_NOTES.value and sid != session.scenario_ids[-1]:  # none after the last
                    writer = Probe("assistant", config.role_config("assistant"), cycle([notes_text]))
                    drive(writer.generate(notes_prompt(carried, scenario, turns), config=NOTES_CONFIG))
                    _add_assistant(tally, "notes", writer.sent, config)
                    notes = notes_text
                done = CarriedPosition(
                    position=carried.position,
                    scenario_id=sid,
                    problem=scenario.problem.prompt_text(),
                    turns=turns,
                    response=turns[-1].content if turns else None,
                )
                carried = carried.then(done, notes)


def _dialogue(scenario: Scenario, plan: _Plan, config: RunConfig, tally: _Tally, times: int) -> list[dict[str, Any]]:
    """Plan the assistant's (and the user's) calls of one sample; the dialogue's turns for the audit."""
    questions = 0 if plan.rules.single_turn else plan.rules.limit
    assistant = Probe("assistant", config.role_config("assistant"), _assistant_replies(config, questions))
    user_config = config.role_config("user")
    reply = "x" * _expected("reply", user_config.max_tokens or USER_MAX_TOKENS)
    user_model = Probe(config.user_model, user_config, cycle([reply]))
    names = [item.attribute for item in scenario.profile.items]
    about = (json.dumps({"about": [names[i % len(names)]]}) for i in count())  # one attribute per question
    mapper = Probe(config.grader_model, config.role_config("grader"), about)
    talks = plan.rules.needs_user
    user = build_user(config.user_type, user_model, scenario, False, mapper) if talks else None
    dialogue = Dialogue.start(scenario.id, plan.rules, plan.messages, user)
    drive(play(dialogue, assistant))
    _add_assistant(tally, plan.label, assistant.sent, config)
    if not talks:
        return []
    tally.add("user", plan.label, config.user_model, user_model.sent, times)
    tally.add("grader", "mapper", config.grader_model, mapper.sent, times)
    return [t.model_dump() for t in dialogue.state.turns]


def _add_assistant(tally: _Tally, condition: str, sent: list[Sent], config: RunConfig) -> None:
    for model in config.models:  # each model under test: every trial of the sample
        tally.add("assistant", condition, model, sent, config.epochs)


def _grade(
    scenario: Scenario,
    response: str,
    turns: list[dict[str, Any]],
    config: RunConfig,
    grader: GenerateConfig,
    tally: _Tally,
    times: int,
) -> None:
    """Plan the scorer's calls of one sample: the panel's judgings, the correctness grader, the audit, the
    quality judge."""
    problem, items = scenario.problem, {i.attribute: i for i in scenario.profile.items}
    joint = config.quality and config.judge in JOINT_QUALITY  # the first judging asks the quality in its first call
    judge, first_judging = Probe("judge", grader), Probe("judge", grader)
    if config.judge == "structured":
        for call in criterion_calls(len(scenario.rubric), config.judge_max_criteria, None):  # ceil(k / N) calls
            plans = [(judge, False), *([(first_judging, call.number == 1)] if joint else [])]  # its own: if it asks
            for probe, asks in plans:
                args = (probe, problem, response, scenario.rubric, items, call)
                drive(judge_call(*args, logprobs=config.logprobs, quality=asks))
    else:
        for c in scenario.rubric:
            drive(judge_criterion(judge, problem, response, c, items[c.attribute], logprobs=config.logprobs))
    judgings = [(name, judge.sent, times * config.judge_repeats) for name in config.judge_models()]
    if joint:  # the first judge's first judging is the one with the quality
        judgings[0:1] = [
            (config.grader_model, first_judging.sent, times),
            (config.grader_model, judge.sent, times * (config.judge_repeats - 1)),
        ]
    for name, sent, n in judgings:
        tally.add("grader", "judge", name, sent, n)
    first = Probe(config.grader_model, grader)
    if needs_grader(problem):  # the final answer, then each reply to the person's pushback
        for _ in range(1 + config.pushback):
            drive(check_correct(problem, response, grader=first))
        tally.add("grader", "correctness", config.grader_model, first.sent, times)
    if config.audit and turns:
        audit = Probe(config.grader_model, grader)
        drive(audit_user(audit, scenario.profile, turns, problem=problem))
        tally.add("grader", "audit", config.grader_model, audit.sent, times)
    if config.quality and not joint:  # the first judge, once per response
        quality = Probe(config.grader_model, grader)
        drive(judge_quality(quality, problem, response))
        tally.add("grader", "quality", config.grader_model, quality.sent, times)


def _priced(tally: _Tally, config: RunConfig) -> list[PlanLine]:
    """The tally's lines with calls, in role order (the grader's in ``GRADER_PARTS`` order), with USD where the
    model has a price."""
    lines = [line for line in tally.lines.values() if line.calls]
    lines.sort(key=lambda ln: (ROLES.index(ln.role), GRADER_PARTS.index(ln.part) if ln.role == "grader" else 0))
    for line in lines:
        price = config.prices.get(line.model)
        if price is not None:
            line.usd = (line.input_tokens * price["input"] + line.output_tokens * price["output"]) / 1_000_000
            batched = config.batch and part_by_batch(line.role, line.part, config.pushback)
            line.usd *= (batch_share(line.model) or 1.0) if batched else 1.0
    return lines


def _notes(config: RunConfig) -> list[str]:
    notes = []
    if Mode.DISCOVERY.value in config.modes:
        solver = f" (--solver {config.solver}: planned as the text protocol's dialogue)" if config.solver else ""
        notes.append(
            f"discovery: {_discovery_budget(config)} questions per dialogue, the budget: an upper bound (a model "
            f"that answers earlier makes fewer calls){solver}"
        )
    for k in config.fixed_k:
        notes.append(f"{condition_label(Mode.FIXED_K, k)}: exactly {k} questions per dialogue")
    if any(m in SESSION_ARMS for m in config.modes):
        notes.append(
            "carry arms: session by session, each position a discovery dialogue whose prompt carries the earlier "
            "positions' planned dialogues (transcript) or notes; carry_notes adds a notes call a position but the "
            "last (notes)"
        )
    typical = ", ".join(f"{kind} {n}" for kind, n in TYPICAL_TOKENS.items())
    notes.append(f"tokens: {ESTIMATE_METHOD}")
    notes.append(
        f"output: typical lengths ({typical} tokens) capped by max_tokens; judge, audit, correctness and quality "
        "replies at their max_tokens; bound = calls x max_tokens (none: some call has no max_tokens)"
    )
    if config.user_type == "targeted":
        notes.append("targeted user: every question mapped to one attribute (a vague one would skip its user call)")
    notes.append("not counted: re-asks of invalid structured replies, provider retries; a resumed run makes fewer")
    if config.batch:  # never the mapping or an answer a pushback challenges: a turn waits for it
        notes.append(
            "--batch: judge calls and single-turn answers at the provider's batch share (openai/, anthropic/, google/)"
        )
    if config.prices:
        unpriced = missing_line(config.prices, sorted({*config.models, config.user_model, *config.judge_models()}))
        if unpriced:
            notes.append(unpriced)
    return notes
