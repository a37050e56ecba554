"""Bring your own assistant (``prefdisco eval --solver NAME_OR_module:function [-S key=value ...]``).

Any inspect solver or agent plays the assistant in discovery, from the state the built-in discovery leaves (the
tool protocol's discovery system prompt, ``tool_protocol.py``, and the problem) with the ``ask_user`` tool in
``state.tools``; what it gets, the budget, what is scored and the names ``--solver`` takes are described once, in
docs/agents.md, "Bring your own assistant". The budget is kept by the sample's dialogue
(``engine.Dialogue.ask``), so every metric reads an own assistant's questions and replies as it reads the built-in
discovery's. A solver that writes its own ``DialogueRecord`` (the strategy solvers, ``strategies.py``) keeps it.

``--solver`` is resolved once when the task is built (``resolve_solver``): a package's registered ``pkg/name`` is
found through its inspect entry point, and agents become solvers through inspect's ``as_solver``. Only the ``-S``
args are recorded in ``run.json``. A strategy solver's policy is checked against every scenario when the task is
built, and its strategy and K go to the task's metadata (``solver_task_metadata``).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, cast

from inspect_ai._util.registry import registry_create, registry_lookup
from inspect_ai.agent import as_solver, is_agent
from inspect_ai.solver import Generate, Solver, TaskState, solver

from prefdisco.dialogue.engine import Dialogue
from prefdisco.dialogue.hygiene import Screen
from prefdisco.dialogue.openings import discovery_opening
from prefdisco.dialogue.plan import PlanSettings, rules_for
from prefdisco.dialogue.presets import DialogueStyle, preset_named
from prefdisco.dialogue.scenario import scenario_of
from prefdisco.dialogue.solver import Opening, record_dialogue, sample_user
from prefdisco.dialogue.state import DialogueRecord
from prefdisco.dialogue.strategies import STRATEGIES, check_strategy_scenarios, resolve_k
from prefdisco.dialogue.strategy_record import strategy_task_metadata
from prefdisco.dialogue.tool_protocol import ask_user, asking, tools_style
from prefdisco.dialogue.user import check_user_type
from prefdisco.errors import UserError
from prefdisco.schema import Mode, Scenario


def parse_solver_args(pairs: list[str]) -> dict[str, Any]:
    """``-S key=value`` pairs as keyword arguments: a value that reads as JSON is that value (``k=3`` is 3,
    ``on=true`` True, ``xs=[1, 2]`` a list), any other is the string as given (``policy=policy.json``)."""
    args: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key.isidentifier():
            raise UserError(f"-S {pair!r}: expected key=value with a Python identifier as key")
        try:
            args[key] = json.loads(raw)
        except ValueError:
            args[key] = raw.strip()
    return args


def _load(target: str, spec: str) -> Any:
    """The module ``target`` names: a dotted module, or a ``.py`` file."""
    if target.endswith(".py") or "/" in target or "\\" in target:
        path = Path(target)
        if not path.is_file():
            raise UserError(f"--solver {spec}: no file {target}")
        digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:8]
        name = f"prefdisco_byo_{path.stem}_{digest}"
        if name in sys.modules:  # loaded once per process (validation and the task both resolve it)
            return sys.modules[name]
        module_spec = importlib.util.spec_from_file_location(name, path)
        if module_spec is None or module_spec.loader is None:
            raise UserError(f"--solver {spec}: {target} cannot be imported as a Python module")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        module_spec.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(target)
    except ImportError as e:
        raise UserError(f"--solver {spec}: cannot import module {target} ({e})") from e


def _create(factory: Callable[..., Any], args: Mapping[str, Any], spec: str) -> Any:
    try:
        return factory(**args)
    except TypeError as e:
        raise UserError(f"--solver {spec}: the -S args do not fit ({e})") from e


def _as_solver(made: Any, spec: str) -> Solver:
    if is_agent(made):
        return as_solver(made)
    if inspect.iscoroutinefunction(made) or inspect.iscoroutinefunction(type(made).__call__):
        return cast(Solver, made)
    raise UserError(f"--solver {spec}: expected it to make an inspect Solver or Agent, got {type(made).__name__}")


def _parameters(factory: object) -> set[str]:
    try:
        return set(inspect.signature(cast(Callable[..., Any], factory)).parameters)
    except (TypeError, ValueError):  # no signature to read: pass the -S args alone
        return set()


def resolve_solver(
    spec: str, args: Mapping[str, Any] | None = None, context: Mapping[str, Any] | None = None
) -> Solver:
    """The Solver ``spec`` names (docs/agents.md, "Bring your own assistant"), created with ``args``. ``context``:
    the run's own settings (``max_questions``, ``user_type``, ``cache_scope``, ``preset``), each passed to a factory
    that takes a parameter of that name and was not given it in ``args`` (the strategy solvers take all four)."""
    args = dict(args or {})
    target, colon, function = spec.rpartition(":")
    if colon and target and function:
        factory: Any = getattr(_load(target, spec), function, None)
        if not callable(factory):
            raise UserError(f"--solver {spec}: {target} has no function {function}")
        kind: Literal["solver", "agent"] | None = None
    else:
        kind = "solver" if registry_lookup("solver", spec) is not None else "agent"
        factory = registry_lookup(kind, spec)
        if factory is None:
            raise UserError(
                f"--solver {spec}: not a registered inspect solver or agent; give a registered name "
                "(e.g. prefdisco/checklist), module:function or path/to/file.py:function"
            )
    accepted = _parameters(factory)
    args |= {key: value for key, value in (context or {}).items() if key in accepted and key not in args}
    if kind == "agent" and "tools" in accepted and "tools" not in args:
        args["tools"] = [ask_user()]  # an agent sees no state.tools: give it the question tool
    if kind == "solver":
        return _as_solver(_create(lambda **kw: registry_create("solver", spec, **kw), args, spec), spec)
    if kind == "agent":
        return _as_solver(_create(lambda **kw: registry_create("agent", spec, **kw), args, spec), spec)
    return _as_solver(_create(factory, args, spec), spec)


def solver_task_metadata(
    spec: str, args: Mapping[str, Any], scenarios: Sequence[Scenario], max_questions: int
) -> dict[str, object]:
    """What a ``--solver`` run's task records beside the solver's name: for a strategy solver
    (``prefdisco/checklist``, ``prefdisco/infogain``) its strategy and K, once its policy has been checked against
    every scenario of the task (``strategies.check_strategy_scenarios``: none of its training split)."""
    name = spec.removeprefix("prefdisco/")
    if spec == name or name not in STRATEGIES or "policy" not in args:
        return {}
    check_strategy_scenarios(args["policy"], scenarios, strict=bool(args.get("strict_policy", False)))
    return strategy_task_metadata(name, resolve_k(args.get("k"), max_questions))


@solver
def own_assistant(
    assistant: Solver,
    max_questions: int,
    user_type: str = "passive",
    cache_scope: str | None = None,
    style: DialogueStyle = DialogueStyle(),
    opening: Opening | None = None,
    condition: str = Mode.DISCOVERY.value,
    user_retry: int = 0,
) -> Solver:
    """Run ``assistant`` from the discovery opening (``opening``: another, e.g. a carry arm's) with the ``ask_user``
    tool bound to this sample's dialogue (simulated user and budget: ``engine.Dialogue.ask``), then end the dialogue
    with its final output and write the ``DialogueRecord`` under ``condition`` (unless it wrote one itself)."""
    check_user_type(user_type)
    # an own agent asks through its own ask_user tool: the ask channel is overridden, the rest is the condition's
    settings = PlanSettings(max_questions=max_questions, user_retry=user_retry)
    rules = rules_for(condition, settings, style=style, ask="tools")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        scenario = scenario_of(state)
        user = sample_user(scenario, user_type, rules.condition, cache_scope)
        if opening is None:
            state.messages = discovery_opening(scenario.problem, style, max_questions)
        else:
            state.messages = opening(state, scenario)
        dialogue = Dialogue.start(scenario.id, rules, list(state.messages), user, screen=Screen(scenario))
        state.tools.append(ask_user())
        with asking(dialogue):
            state = await assistant(state, generate)
        if state.store_as(DialogueRecord).final_response is not None:
            return state  # the solver recorded its own dialogue
        # its output, so how the generation ended is kept (``response_end.py``); text when the solver generated nothing
        dialogue.finish(state.output if state.output.choices else state.output.completion)
        return record_dialogue(state, dialogue, messages=False)

    return solve


def own_discovery(
    assistant: Solver,
    max_questions: int = 5,
    user_type: str = "passive",
    cache_scope: str | None = None,
    preset: str = "default",
    user_retry: int = 0,
) -> Solver:
    """Discovery played by ``assistant``: the problem, the tool protocol's discovery prompt, then ``assistant``
    with ``ask_user`` (at most ``max_questions`` questions)."""
    style = tools_style(preset_named(preset).style)
    return own_assistant(assistant, max_questions, user_type, cache_scope, style, user_retry=user_retry)
