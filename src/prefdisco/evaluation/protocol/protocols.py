"""Versioned protocols: the part of a run's configuration that changes its results, named so numbers stay comparable.

Numbers from interactive benchmarks stop being comparable the moment the simulator, the judge or a prompt changes.
A run's **protocol** is exactly that part of its settings (``PROTOCOL_SETTINGS``): the preset, how turns ask
(``text`` / ``tools``) and the question budget, the simulated user (type, model, temperature, token and reasoning
limits, ``--user-retry``), the probes that change what is scored (``--pushback``, ``--distractors``), the judges
(kind, models, repeats, logprobs, temperature, token and reasoning limits), and the hash of every prompt template
that defines a condition, the user, the judge or the correctness grader (``protocol_templates``: all of a
preset's conditions, whichever a run has, so a run with more conditions is still comparable). What a run is *of*
(the models under test, their settings and agents, seeds, trials, which conditions it ran) and how it ran
(connections, workers, cache, the audit, the quality judge) are not part of it.

A protocol has an id ``NAME-vN.X``: the shipped ones (``SHIPPED``, documented in docs/evaluation.md: ``default``,
``targeted``, ``paper`` and ``demo``, the embedded demo's own short turns and one-call judge) fix every setting but
the user and judge models, which are named beside the id; N bumps when results stop being comparable
(a setting or a prompt changes: ``tests/test_protocols.py`` pins each shipped protocol's prompt hash, so editing a
prompt fails until the version is bumped), X when only the interface changes. A run whose settings match no
shipped protocol has the id ``custom-<8 hex>`` (a hash of its settings and prompts).

Two runs are **comparable** when their records agree on everything (the settings, the prompts, the user and judge
models, and the rubrics of the benchmark: ``rubrics_hash`` over every scenario's profile and rubric, before
``--limit``); ``differences`` names what does not. Every run writes its record to ``LOG_DIR/protocol.json``, its
id to ``run.json`` (``protocol_id``) and to every results row (``protocol_id``, from the task's metadata); the
report's ``summary.json`` carries the records (``protocols``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prefdisco.builder.pipeline import written_by
from prefdisco.dialogue.carry import TEMPLATES as CARRY_TEMPLATES
from prefdisco.dialogue.presets import preset_named
from prefdisco.dialogue.strategies import STRATEGIES, STRATEGY_TEMPLATES
from prefdisco.dialogue.tool_protocol import TOOL_TEMPLATES, tools_style
from prefdisco.dialogue.user import user_templates
from prefdisco.dialogue.user_reply import PUSHBACK_TEMPLATES
from prefdisco.prompts import templates_hash
from prefdisco.results.protocol_record import ADDED_SETTINGS, PROTOCOL_SETTINGS, RENAMED_SETTINGS, ProtocolRecord
from prefdisco.schema import SESSION_ARMS, Scenario
from prefdisco.scoring.criterion_order import DEFAULT_MAX_CRITERIA
from prefdisco.scoring.judging import JOINT_QUALITY, JUDGE_TEMPLATES
from prefdisco.scoring.quality import JOINT_TEMPLATES, QUALITY_TEMPLATE

CORRECTNESS_TEMPLATES: tuple[str, ...] = ("simpleqa_grader",)
UNHASHED_AT_DEFAULT: tuple[str, ...] = ("refusals", "user_reasoning_tokens", "grader_reasoning_tokens")
"""Protocol settings added after custom ids were first given (``ADDED_SETTINGS``): at their default they are left out
of a custom id's digest, so a run's id does not change with the version that added them."""


DEFAULT_SETTINGS: dict[str, Any] = {
    "preset": "default",
    "ask": "text",
    "max_questions": 5,
    "user_type": "passive",
    "user_temperature": 0.7,
    "user_max_tokens": None,
    "user_reasoning_effort": None,
    "user_retry": 0,
    "pushback": 0,
    "distractors": 3,
    "judge": "per_criterion",
    "judge_repeats": 1,
    "judge_max_criteria": DEFAULT_MAX_CRITERIA,
    "logprobs": False,
    "grader_temperature": 0.0,
    "grader_max_tokens": None,
    "grader_reasoning_effort": None,
    "constrain_ask": False,
    "refusals": "score",
    "user_reasoning_tokens": None,
    "grader_reasoning_tokens": None,
}
"""The protocol settings of a run with every default (``RunConfig``'s; ``tests/test_protocols.py`` checks they
agree)."""


@dataclass(frozen=True)
class Shipped:
    """A documented protocol: its id, every protocol setting it fixes and the pinned hash of its prompts."""

    id: str
    settings: dict[str, Any]
    prompts: str
    about: str


SHIPPED: tuple[Shipped, ...] = (
    Shipped(
        "default-v1.0",
        DEFAULT_SETTINGS,
        "1fd4aa96e3d00254",
        "this toolkit's defaults: the passive simulated user (sees the problem), one judge call per criterion at "
        "temperature 0, at most 5 questions, the text protocol",
    ),
    Shipped(
        "targeted-v1.0",
        DEFAULT_SETTINGS | {"user_type": "targeted"},
        "e489055d0f6b263b",
        "the defaults with the targeted simulated user (each question mapped to the attributes it asks about; only "
        "those are shown to the user model): the recommended protocol for new runs",
    ),
    Shipped(
        "paper-v1.0",
        DEFAULT_SETTINGS
        | {"preset": "paper"}
        | {k: v for k, v in preset_named("paper").settings.items() if k in DEFAULT_SETTINGS},
        "0b88a475c765ccd8",
        "the paper's evaluator protocol (--preset paper): its prompts, its passive simulator that does not see the "
        "problem, user temperature 0.4, judge temperature 0.1",
    ),
    Shipped(
        "demo-v1.0",
        DEFAULT_SETTINGS | {"user_max_tokens": 60, "judge": "structured", "constrain_ask": True},
        "adbc65daad0a4e94",
        "the embedded demo's (prefdisco demo, demo.demo_plan): the defaults with the simulated user's replies cut at "
        "60 tokens, every criterion judged in one structured call (no quality asked in it) and a grammar on the "
        "assistant's turns; it proves the plumbing, and its numbers compare with no other protocol's",
    ),
)


def _condition_user_judge(config: Any) -> list[str]:
    """Every condition prompt of ``config``'s preset, its simulated user's templates and its judge's."""
    style = preset_named(config.preset).style
    names = [value for value in vars(style).values() if isinstance(value, str)]
    names += user_templates(config.user_type)  # a user with several (targeted, humanlike): all of them
    return names + list(JUDGE_TEMPLATES.get(config.judge, ()))


def protocol_templates(config: Any) -> list[str]:
    """The templates whose text changes a run's numbers: every condition of its preset (the carry arms, the stated
    belief and pushback too, whichever the run has), its user's, its judge's, the correctness grader's, and the tool
    protocol's when it asks through tools; the quality criteria's when the judge's own call asks them (the structured
    judge in a run that judges quality: they are in its prompt)."""
    names = _condition_user_judge(config)
    if config.judge in JOINT_QUALITY and getattr(config, "quality", True):  # the quality asked in the judge's call
        names += JOINT_TEMPLATES
    names += [*CARRY_TEMPLATES, *PUSHBACK_TEMPLATES, "user_stated_belief", *CORRECTNESS_TEMPLATES]
    if getattr(config, "solver", None) in [f"prefdisco/{name}" for name in STRATEGIES]:  # its own prompts
        names += STRATEGY_TEMPLATES
    if config.ask == "tools":
        tools = tools_style(preset_named("default").style)
        names += [value for value in vars(tools).values() if isinstance(value, str)] + list(TOOL_TEMPLATES)
    return sorted(set(names))


def run_templates(config: Any) -> list[str]:
    """The templates a run of ``config`` (a ``RunConfig``) renders: its preset's condition prompts, its user's, its
    judge's, the audit's, the quality judge's and the SimpleQA grader's, whatever the protocol holds of them and
    more (``run.json`` hashes exactly these, so a changed template stops a resume)."""
    style = preset_named(config.preset).style
    names = _condition_user_judge(config)
    if config.audit:
        names.append("audit_user")
    if config.quality:
        names += [QUALITY_TEMPLATE, *JOINT_TEMPLATES]
    names.append("simpleqa_grader")
    if config.ask == "tools" or config.solver:  # the tool protocol's prompts (default preset only)
        tools = tools_style(preset_named("default").style)
        names += [value for value in vars(tools).values() if isinstance(value, str)] + list(TOOL_TEMPLATES)
    if config.solver in [f"prefdisco/{name}" for name in STRATEGIES]:  # a strategy solver's own prompts
        names += STRATEGY_TEMPLATES
    if any(m in SESSION_ARMS for m in config.modes):  # the carry arms' prompts
        names += CARRY_TEMPLATES
    if config.pushback or "stated_belief" in config.modes:  # the person's pushback and stated belief
        names += [*PUSHBACK_TEMPLATES, "user_stated_belief"]
    if "oracle_distractor" in config.modes:
        names.append(style.oracle)
    return sorted(set(names))


def protocol_settings(config: Any) -> dict[str, Any]:
    return {name: getattr(config, name) for name in PROTOCOL_SETTINGS}


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def protocol_id(config: Any) -> str:
    """The id of ``config``'s protocol: the shipped one it matches, else ``custom-<8 hex>``."""
    return id_of(protocol_settings(config), templates_hash(protocol_templates(config)))


def id_of(settings: dict[str, Any], prompts: str) -> str:
    """The id of the protocol settings ``settings`` (``PROTOCOL_SETTINGS``'s keys) with the prompt hash ``prompts``."""
    for shipped in SHIPPED:
        if shipped.settings == settings and shipped.prompts == prompts:
            return shipped.id
    # the digest names each renamed setting by its older name, and leaves out a setting added since ids were first
    # given while it is at its default: the same settings keep the id they had before
    older = {new: old for old, new in RENAMED_SETTINGS.items()}
    hashed = {
        older.get(k, k): v for k, v in settings.items() if not (k in UNHASHED_AT_DEFAULT and v == ADDED_SETTINGS[k])
    }
    return "custom-" + _digest([hashed, prompts])[:8]


def rubrics_hash(scenarios: Sequence[Scenario]) -> str:
    """A hash of every scenario's profile and rubric, in id order: the benchmark's preferences and criteria."""
    parts = sorted(
        (s.id, s.profile.model_dump(mode="json"), [c.model_dump(mode="json") for c in s.rubric]) for s in scenarios
    )
    return _digest(parts)[:16]


def protocol_record(config: Any, scenarios: Sequence[Scenario] | None = None) -> ProtocolRecord:
    """A run's protocol record, of its ``RunConfig`` (``record_of``), with the benchmark's builders and content
    hash (``RunConfig.benchmark``)."""
    return record_of(
        config,
        config.user_model,
        [config.grader_model, *config.judge_panel],
        rubrics_hash(scenarios) if scenarios is not None else None,
        builders=written_by(scenarios or []),
        benchmark=getattr(config, "benchmark", None),
    )


def record_of(
    config: Any,
    user_model: str,
    judges: Sequence[str],
    rubrics: str | None,
    *,
    prompts: str | None = None,
    record_id: str | None = None,
    builders: Sequence[str] = (),
    benchmark: str | None = None,
) -> ProtocolRecord:
    """The one maker of a protocol record: ``config``'s protocol settings (a ``RunConfig``, or any object with
    them: a regrade's settings, a play study's), its prompt hash (``prompts``: given when the templates are not all
    a run's, as a study with a person has no simulated user's) and id (``record_id``: given for such a study)."""
    return ProtocolRecord(
        id=record_id if record_id is not None else protocol_id(config),
        settings=protocol_settings(config),
        prompts=prompts if prompts is not None else templates_hash(protocol_templates(config)),
        user_model=user_model,
        judges=list(judges),
        rubrics=rubrics,
        builders=list(builders),
        benchmark=benchmark,
        user_prompts=user_prompts(config.user_type),
    )


def user_prompts(user_type: str) -> str | None:
    """The hash of ``user_type``'s own templates (``user_templates``): the prompt part of a simulated user's protocol
    (``protocol_record.user_protocol``); None for a type that is no simulated user (a person)."""
    names = user_templates(user_type)
    return templates_hash(names) if names else None
