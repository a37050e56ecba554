"""The settings of one evaluation run (``prefdisco eval``), checked before anything runs."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from inspect_ai.model import GenerateConfig
from inspect_ai.util import DisplayType

from prefdisco.dialogue.byo import resolve_solver
from prefdisco.dialogue.hygiene import MAX_USER_RETRY
from prefdisco.dialogue.presets import PRESET_NAMES, preset_named
from prefdisco.dialogue.strategies import STRATEGIES
from prefdisco.dialogue.user import USER_TYPES
from prefdisco.errors import UserError
from prefdisco.evaluation.protocol.protocols import protocol_id, run_templates
from prefdisco.evaluation.settings.batch import check_batch
from prefdisco.evaluation.settings.checks import check_fixed_temperatures, check_usable
from prefdisco.evaluation.settings.preset_rules import check_ask, contradiction, defers
from prefdisco.prompts import templates_hash
from prefdisco.schema import CONDITIONS, CONTROLS, PROBES, SESSION_ARMS, Scenario
from prefdisco.scoring.criterion_order import DEFAULT_MAX_CRITERIA
from prefdisco.scoring.deferred import JUDGE_LATER
from prefdisco.scoring.non_answer import check_refusals
from prefdisco.scoring.scorer import JUDGES

UNCOMPARED_SETTINGS = (
    "n_scenarios",
    "cache",
    "user_max_connections",
    "judge_max_connections",
    "ray",
    "protocol_id",
    "batch",
)
PANEL_DEFAULTS: dict[str, Any] = {"judge_panel": [], "judge_repeats": 1, "judge_max_criteria": DEFAULT_MAX_CRITERIA}
"""The judge-panel settings of a single-judge run (and the structured judge's criteria a call): ``run.json``
records them only when they differ (so a single-judge run's fingerprint is what it always was), and the guard
compares a missing one as this default."""
"""Recorded in ``run.json`` but free to change on a rerun: they do not change what a sample's result is."""
PROTOCOL_DEFAULTS: dict[str, Any] = {
    "ask": "text",
    "solver": None,
    "solver_args": {},
    "sessions": None,
    "pushback": 0,
    "user_retry": 0,
}
"""The assistant-protocol settings of a text-protocol run with the model as its own assistant: ``run.json`` records
them only when they differ (older run folders still resume), and the guard compares a missing one as this default."""
REASONING_EFFORTS = ("minimal", "low", "medium", "high", "xhigh", "none")
DISPLAYS: tuple[str, ...] = get_args(DisplayType)


@dataclass
class RunConfig:
    """Every setting of a run, passed whole wherever a setting is read: the CLI builds it from flags, the task
    (``evaluation/running/task.build_task``, also ``inspect eval prefdisco/prefdisco -T …``) reads its task settings
    from it, the eval-set, the workers, the dry run and ``run.json`` from it. The models and the folder only matter to a
    run, not to a task (a task gets its models from inspect)."""

    models: list[str] = field(default_factory=list)
    user_model: str = ""
    grader_model: str = ""
    log_dir: Path = field(default_factory=lambda: Path("."))
    modes: list[str] = field(default_factory=lambda: list(CONDITIONS))
    fixed_k: list[int] = field(default_factory=list)
    user_type: str = "passive"
    judge: str = "per_criterion"
    audit: bool = True
    quality: bool = True
    """Judge every response's general quality (``scoring/quality.py``: one first-judge call). ``run.json`` records
    it only when off, and its template is in the run's templates hash: an older folder resumes with it off."""
    refusals: str = "score"
    """A refused or empty response: ``score`` it by rule (PrefAlign 1, incorrect) or ``exclude`` it from PrefAlign
    and accuracy (``scoring/non_answer.py``); never judged. Part of the protocol."""
    cache: bool = True
    logprobs: bool = False
    constrain_ask: bool = False
    max_questions: int = 5
    limit: int | None = None
    temperature: float | None = 0.7
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    user_temperature: float | None = 0.7
    user_max_tokens: int | None = None
    user_reasoning_effort: str | None = None
    grader_max_tokens: int | None = None
    grader_reasoning_effort: str | None = None
    reasoning_tokens: int | None = None
    """A reasoning-token budget per role (Anthropic's and Gemini's thinking take a budget, not an effort)."""
    user_reasoning_tokens: int | None = None
    grader_reasoning_tokens: int | None = None
    prices: dict[str, dict[str, float]] = field(default_factory=dict)
    max_connections: int | None = None
    user_max_connections: int | None = None
    """At most this many simulated-user calls in flight across the run, even on the endpoint of the model under
    test (``evaluation/settings/limits.py``); None: only the provider's ``max_connections``."""
    judge_max_connections: int | None = None
    """The same for every ``grader*`` role call together: judges, audit, correctness grader, targeted mapper."""
    max_samples: int | None = None
    max_tasks: int | None = None
    """Tasks (condition × model) run at once; default all of them, so the conditions share the connections
    (inspect's eval-set default is one task per model at a time, which leaves connections idle while the
    slowest samples of one condition finish)."""
    workers: int = 1
    """Processes the scenarios are split over (``evaluation/scaleout/workers.py``); with ``ray``, shards run at once."""
    ray: str | None = None
    """Run the shards on Ray (``evaluation/scaleout/ray_shards.py``): ``local``, ``auto`` or a cluster address; None:
    not."""
    batch: str | None = None
    """``--batch``: judge calls and single-turn answers by the provider's batch API
    (``evaluation/settings/batch.py``)."""
    epochs: int = 1
    """Trials per scenario and condition (inspect epochs), each with its own seeds (``prefdisco.seeds``)."""
    seed: int = 0
    """The run part of every call seed (``prefdisco.seeds``): the same seed in any folder sends the same seeds."""
    write_tables: bool = True
    """Write results/attributes/transcripts into ``log_dir`` (a worker of a split run leaves that to the parent)."""
    max_retries: int | None = None
    timeout: int | None = None
    attempt_timeout: int | None = None
    retry_attempts: int = 1
    retry_wait: float = 5.0
    display: str | None = None
    model_args: dict[str, Any] = field(default_factory=dict)
    preset: str = "default"
    """The evaluator protocol (``dialogue/presets.py``): ``default`` or ``paper``; its settings are applied by
    ``evaluation/settings/preset_rules.preset_settings`` and checked by ``validate``."""
    grader_temperature: float | None = 0.0
    """The judge's temperature (also the audit's and the SimpleQA grader's: one grader role)."""
    judge_panel: list[str] = field(default_factory=list)
    """Judges after the first (``grader_model``), as roles ``grader_2``, ``grader_3``, …: each scores every
    criterion too (``scoring/panel.py``); correctness and the audit stay with the first judge. Same settings as
    the first judge (``role_config("grader")``)."""
    judge_repeats: int = 1
    """How many times each judge scores each criterion, each time with its own seed and cache entries."""
    judge_max_criteria: int = DEFAULT_MAX_CRITERIA
    """The structured judge lists at most this many criteria in one call; a longer rubric is split over
    ``ceil(k / N)`` calls (``scoring/criterion_order.py``). ``run.json`` records it only when not the default."""
    ask: str = "text"
    """How discovery and fixed-K turns are read: ``text`` (``QUESTION:`` / ``ANSWER:`` markers) or ``tools`` (an
    ``ask_user`` tool through native tool calling; ``dialogue/tool_protocol.py``)."""
    solver: str | None = None
    """A solver or agent that plays the assistant in discovery (``dialogue/byo.py``); None: the model itself."""
    solver_args: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments ``solver`` is created with (``-S key=value``)."""
    pushback: int = 0
    """After each final answer the simulated person pushes back this many turns, insisting on a wrong answer
    (``dialogue/wrong_answers.py``); the scored answer stays the one before (``correct_after_pushback``,
    ``flip_turn``)."""
    user_retry: int = 0
    """A simulated reply the hygiene checks flag is drawn again up to this many times (``dialogue/hygiene.py``);
    every reply is checked and its flags recorded either way."""
    distractors: int = 3
    """``oracle_distractor``: attributes that do not matter to the problem added to the oracle's profile."""
    sessions: Path | None = None
    """A session set (``prefdisco sessions``): the run evaluates its scenarios, records each one's session and
    position, and plays the carry arms in ``modes`` position by position (``evaluation/sessions_run.py``)."""
    run_id: str | None = None
    """The run's identity, recorded in its folder's ``run.json`` when its first run starts (``guard.run_identity``)
    and set by the eval-set from there: the cache scope of its calls, which moves with the folder. None: not yet
    read (``cache_scope`` then takes the folder's path)."""
    benchmark: str | None = None
    """The content hash of the benchmark given (``benchio.source_hash``: a folder's manifest ``content_hash``, a
    file's ``sha256:``; the demo's, ``benchio.scenarios_hash`` of its scenarios), recorded in ``protocol.json``
    (``benchmark``); None: not known (a task built outside ``prefdisco eval`` and the demo)."""
    resolved: dict[str, Any] | None = None
    """``prefdisco eval``'s settings as resolved (``evaluation/settings/config_file.py``), written to ``config.toml``
    once the folder is checked; None (a run made from Python): no file."""

    def validate_probes(self) -> None:
        """The dialogue's probe settings (also checked by the inspect task, which has no models to validate)."""
        if self.pushback < 0 or self.distractors < 0:
            raise UserError("--pushback / --distractors: expected 0 or more")
        if not 0 <= self.user_retry <= MAX_USER_RETRY:
            raise UserError(f"--user-retry: expected 0..{MAX_USER_RETRY} redraws of a flagged reply")

    def validate(self) -> None:
        if self.preset not in PRESET_NAMES:
            raise UserError(f"--preset: unknown {self.preset!r}; expected one of {', '.join(PRESET_NAMES)}")
        for name, value in preset_named(self.preset).settings.items():
            if getattr(self, name) != value and not defers(name, getattr(self, name)):
                raise UserError(contradiction(self.preset, name, getattr(self, name), value))
        unknown = [m for m in self.modes if m not in (*CONDITIONS, *CONTROLS, *PROBES, *SESSION_ARMS)]
        if unknown:
            expected = ", ".join((*CONDITIONS, *CONTROLS, *PROBES, *SESSION_ARMS))
            raise UserError(f"--modes: unknown mode(s) {', '.join(unknown)}; expected {expected}")
        arms = [m for m in self.modes if m in SESSION_ARMS]
        if arms and self.sessions is None:
            raise UserError(
                f"--modes {arms[0]}: a carry arm needs --sessions FILE (prefdisco sessions BENCH --length K --out FILE)"
            )
        self.validate_probes()
        if self.sessions is not None and self.limit is not None:
            raise UserError("--limit: a sessions run evaluates its session file whole; plan fewer (--count N)")
        if self.sessions is not None and (self.workers > 1 or self.ray):
            raise UserError("--sessions runs in one process (a session's positions run in order): drop --workers/--ray")
        if any(k < 1 for k in self.fixed_k):
            raise UserError("--fixed-k: every K must be >= 1")
        if not self.modes and not self.fixed_k:
            raise UserError("nothing to run: give --modes and/or --fixed-k")
        if self.user_type not in USER_TYPES:
            raise UserError(f"--user-type: unknown {self.user_type!r}; expected one of {', '.join(USER_TYPES)}")
        if not self.models:
            raise UserError("--model: give at least one model to evaluate")
        if self.epochs < 1:
            raise UserError(f"--epochs: expected at least 1 trial per scenario, got {self.epochs}")
        check_usable(self)
        check_fixed_temperatures(self, preset_named(self.preset).settings)
        check_refusals(self.refusals)
        check_batch(self.batch, self.models, self.judge_models(), self.modes, self.pushback)  # fixed-K: a dialogue
        for flag, cap in (
            ("--user-max-connections", self.user_max_connections),
            ("--judge-max-connections", self.judge_max_connections),
        ):
            if cap is not None and cap < 1:
                raise UserError(f"{flag}: expected at least 1, got {cap}")
        if self.workers < 1:
            raise UserError(f"--workers: expected at least 1, got {self.workers}")
        judges = self.judge_models()
        repeated = sorted({m for m in judges if judges.count(m) > 1})
        if repeated:
            raise UserError(
                f"--judge-model: {', '.join(repeated)} given more than once; "
                "give each judge once and use --judge-repeats N to re-judge"
            )
        if self.judge_repeats < 1:
            raise UserError(f"--judge-repeats: expected at least 1, got {self.judge_repeats}")
        check_max_criteria(self.judge_max_criteria)
        if self.judge not in (*JUDGES, JUDGE_LATER):
            raise UserError(f"--judge: unknown {self.judge!r}; expected one of {', '.join((*JUDGES, JUDGE_LATER))}")
        for flag, value in (
            ("--reasoning-effort", self.reasoning_effort),
            ("--user-reasoning-effort", self.user_reasoning_effort),
            ("--judge-reasoning-effort", self.grader_reasoning_effort),
        ):
            if value is not None and value not in REASONING_EFFORTS:
                raise UserError(f"{flag}: unknown {value!r}; expected one of {', '.join(REASONING_EFFORTS)}")
        if self.display is not None and self.display not in DISPLAYS:
            raise UserError(f"--display: unknown {self.display!r}; expected one of {', '.join(DISPLAYS)}")
        check_ask(self.ask, self.preset, self.constrain_ask, self.solver)
        if self.solver_args and not self.solver:
            raise UserError("-S: solver args without --solver; give --solver NAME or drop -S")
        if self.solver_args.get("strict_policy") and self.solver not in [f"prefdisco/{n}" for n in STRATEGIES]:
            raise UserError(
                "--strict-policy: only a strategy solver (--solver prefdisco/checklist or prefdisco/infogain) has "
                "a policy to be strict about"
            )
        if self.solver:
            if "discovery" not in self.modes:
                raise UserError(f"--solver {self.solver} plays discovery: add discovery to --modes")
            resolve_solver(self.solver, self.solver_args)  # fails here, before run.json records it

    def cache_scope(self, scenarios: Sequence[Scenario]) -> str | None:
        """The cache scope of the run's calls on ``scenarios``: its ``run_id`` (a task built outside a run folder,
        without one: its folder's path and scenario set); None: no cache."""
        if not self.cache:
            return None
        return self.run_id or run_scope(self.log_dir, scenario_set_hash(scenarios))

    def budgets(self) -> dict[str, int | None]:
        """The reasoning-token budgets per role (``--reasoning-tokens`` and its user and judge versions)."""
        return {f"{p}reasoning_tokens": getattr(self, f"{p}reasoning_tokens") for p in ("", "user_", "grader_")}

    def limits(self) -> dict[str, Any]:
        """inspect's per-call retry and timeout settings, the same for every role."""
        return {"max_retries": self.max_retries, "timeout": self.timeout, "attempt_timeout": self.attempt_timeout}

    def role_config(self, role: str) -> GenerateConfig:
        """The generation settings of ``assistant`` (the models under test), ``user`` or ``grader`` (the judge and the
        correctness grader, deterministic where the provider allows; a panel's further judges: the first judge's)."""
        prefix = {"assistant": "", "user": "user_"}.get(role, "grader_")
        names = ("temperature", "max_tokens", "reasoning_effort", "reasoning_tokens")
        settings = {name: getattr(self, prefix + name) for name in names}
        return GenerateConfig.model_validate({**settings, **self.limits()})

    def fingerprint(self, scenario_set: str, n_scenarios: int) -> dict[str, Any]:
        """What ``run.json`` records of this run."""
        return {
            "scenario_set": scenario_set,
            "n_scenarios": n_scenarios,
            "models": self.models,
            "user_model": self.user_model,
            "grader_model": self.grader_model,
            "modes": self.modes,
            "fixed_k": self.fixed_k,
            "user_type": self.user_type,
            "judge": self.judge,
            "audit": self.audit,
            "cache": self.cache,
            "logprobs": self.logprobs,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "reasoning_effort": self.reasoning_effort,
            "user_temperature": self.user_temperature,
            "user_max_tokens": self.user_max_tokens,
            "user_reasoning_effort": self.user_reasoning_effort,
            "grader_max_tokens": self.grader_max_tokens,
            "grader_reasoning_effort": self.grader_reasoning_effort,
            "max_questions": self.max_questions,
            "epochs": self.epochs,
            "seed": self.seed,
            "constrain_ask": self.constrain_ask,
            "model_args": self.model_args,
            "preset": self.preset,  # before the templates it chooses: a changed preset is named as such
            **({} if self.quality else {"quality": False}),  # its template is hashed only when on
            "prompt_templates": templates_hash(self.prompt_templates()),
            "grader_temperature": self.grader_temperature,
            "protocol_id": protocol_id(self),  # derived from the settings above (evaluation/protocol/protocols.py)
            "user_max_connections": self.user_max_connections,  # free settings (UNCOMPARED_SETTINGS)
            "judge_max_connections": self.judge_max_connections,
            **({"ray": self.ray} if self.ray else {}),  # where it ran: a free setting, recorded only when set
            **({"batch": self.batch} if self.batch else {}),  # the same: the same requests, another price
            **{k: v for k, v in self.panel_settings().items() if v != PANEL_DEFAULTS[k]},
            **{k: v for k, v in self.protocol_settings().items() if v != PROTOCOL_DEFAULTS[k]},
            **({"sessions": file_hash(self.sessions)} if self.sessions is not None else {}),
            **({"pushback": self.pushback} if self.pushback else {}),
            **({"user_retry": self.user_retry} if self.user_retry else {}),
            **({"refusals": self.refusals} if self.refusals != "score" else {}),  # older folders resume
            **{k: v for k, v in self.budgets().items() if v is not None},  # the same: recorded only when set
            **({"distractors": self.distractors} if "oracle_distractor" in self.modes else {}),
        }

    def protocol_settings(self) -> dict[str, Any]:
        """The assistant-protocol settings (``PROTOCOL_DEFAULTS``'s keys)."""
        return {"ask": self.ask, "solver": self.solver, "solver_args": dict(self.solver_args)}

    def judge_models(self) -> list[str]:
        """Every judge of the panel, the first (``grader_model``) first."""
        return [self.grader_model, *self.judge_panel]

    def panel_settings(self) -> dict[str, Any]:
        """The judge-panel settings (``PANEL_DEFAULTS``'s keys)."""
        return {
            "judge_panel": list(self.judge_panel),
            "judge_repeats": self.judge_repeats,
            "judge_max_criteria": self.judge_max_criteria,
        }

    def prompt_templates(self) -> list[str]:
        """The templates this run renders (``protocols.run_templates``; ``run.json`` hashes exactly these)."""
        return run_templates(self)


def check_max_criteria(value: int) -> None:
    """``--judge-max-criteria``: at least one criterion a structured call (also the inspect task's check)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(f"--judge-max-criteria: expected a whole number of criteria per judge call >= 1, got {value!r}")


def with_strict_policy(solver_args: dict[str, Any], strict: bool) -> dict[str, Any]:
    """``--strict-policy``: the strategy solver's ``strict_policy`` arg (a strategy policy without a prior for a
    task family refuses it instead of using its pooled prior); recorded with the solver args."""
    return {**solver_args, "strict_policy": True} if strict else solver_args


def file_hash(path: Path) -> str:
    """sha256 of a file's bytes (the first 16 hex digits); a missing file is a one-line error."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    except OSError as e:
        raise UserError(f"{path}: cannot read ({e.strerror or e})") from None


def scenario_set_hash(scenarios: Sequence[Scenario]) -> str:
    digest = hashlib.sha256()
    for s in scenarios:
        digest.update(s.model_dump_json().encode())
    return digest.hexdigest()[:16]


def run_scope(log_dir: Path, scenario_set: str) -> str:
    """The cache scope of a run without a ``run_id``: its folder's path and scenario set (the scope of the runs
    written before run folders recorded their identity, and of a task built outside a run folder)."""
    return hashlib.sha256(f"{log_dir.resolve()}|{scenario_set}".encode()).hexdigest()[:16]


def selected_scenarios(scenarios: Sequence[Scenario], config: RunConfig) -> list[Scenario]:
    """The scenarios a run evaluates: the first ``config.limit``, or all."""
    return list(scenarios[: config.limit] if config.limit else scenarios)


def limit_note(scenarios: Sequence[Scenario], limit: int | None) -> str | None:
    """What a ``--limit`` above the scenario set's size means, said once before the run (it runs the whole set), or
    None when the limit cuts the set or there is none."""
    if limit is None or limit <= len(scenarios):
        return None
    return f"note: --limit {limit} is more than the {len(scenarios)} scenarios given: all {len(scenarios)} run"
