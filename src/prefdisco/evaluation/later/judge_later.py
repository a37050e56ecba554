"""``prefdisco judge RUN_DIR``: judge a ``--judge later`` run's dialogues, or add a further judge to any run.

Every prefdisco log below ``RUN_DIR`` (split runs included: the results reader's own log selection) is scored by
the judging asked for — its judge models in panel order (``--judge-model``, default the run's own from
``run.json``), judge kind, repeats — with the settings its run recorded in the ``run.json`` beside it: the cache
scope (its ``run_id``, which moves with the folder) and the seeds (``seed_scope`` of its ``--seed``), so a
deferred judging sends exactly the calls, seeds and cache keys an inline one would, and on a deterministic judge
gives the same scores. The judges' generation settings are the run's grader settings (``--judge-temperature``
overrides the temperature; ``--batch`` sends them through the providers' batch APIs where inspect has one).

Per log (``plan_log``), against the judgings it already holds (``results/judgings.py``; an inline-judged log holds
its run's judging):

* the same judging again → skipped: a rerun makes no model call and changes no score;
* a log still pending → its first judging (``prefdisco_scorer``, replacing the pending score);
* a judged log and judges it has not seen → a further judging (``prefdisco_judge``): their criterion scores are
  added, the assistant and the user are not rerun, the first judging is left as it is;
* a judge model that already judged the log with other settings → refused (its attribute rows would repeat).

Each log is written back as soon as it is judged (``judge_log.py``); a crash leaves the judged logs judged and the
others pending, and the rerun replays the finished calls from the cache. After a first judging the run's
``protocol.json`` is the judging's (its judges, kind, repeats, temperature), settled by what its judge calls were
really sent (``effective_protocol``: a judge on a provider that takes no temperature is recorded so, and the id
follows); a further judging leaves it as it is. Then the run's tables are rewritten and ``judgings.json`` in each
run folder lists the judgings its logs hold.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from prefdisco.atomic import atomic_write
from prefdisco.errors import UserError
from prefdisco.evaluation.later.judge_log import JudgedLog, judge_log
from prefdisco.evaluation.protocol.effective import rejudged, settle_protocol
from prefdisco.evaluation.running.guard import RUN_FILE, SPLIT_FILE, run_identity
from prefdisco.evaluation.settings.limits import limit_roles
from prefdisco.prices import sent_by_batch
from prefdisco.progress import Tally, Ticker
from prefdisco.results.judgings import recorded_judgings
from prefdisco.results.logs import Tables, read_header, results_from_logs, select_logs, write_tables
from prefdisco.results.protocol_record import read_record
from prefdisco.results.sent_settings import SentSettings, recording_sent
from prefdisco.scoring.criterion_order import DEFAULT_MAX_CRITERIA
from prefdisco.scoring.deferred import JUDGE_LATER, JUDGED_SCORE, prefdisco_judge
from prefdisco.scoring.judging import JUDGES
from prefdisco.scoring.panel import panel_roles
from prefdisco.scoring.scorer import prefdisco_scorer
from prefdisco.seeds import seed_scope

JUDGINGS_FILE = "judgings.json"


@dataclass(frozen=True)
class Judging:
    """One judging of a run: who judges (panel order: roles ``grader``, ``grader_2``, …), how, how often."""

    models: tuple[str, ...]
    judge: str = "per_criterion"
    repeats: int = 1
    logprobs: bool = False

    def roles(self) -> dict[str, str]:
        return dict(zip(panel_roles(len(self.models)), self.models, strict=True))

    def record(self) -> dict[str, Any]:
        return {**asdict(self), "models": list(self.models)}

    @classmethod
    def of_record(cls, record: dict[str, Any]) -> Judging:
        models = tuple(record.get("models") or ())
        return cls(
            models, record.get("judge", "per_criterion"), record.get("repeats", 1), record.get("logprobs", False)
        )

    def describe(self) -> str:
        return f"{', '.join(self.models)} ({self.judge}, {self.repeats} repeat(s))"


@dataclass(frozen=True)
class RunSettings:
    """What judging needs of a run folder's ``run.json``."""

    folder: Path
    settings: dict[str, Any]

    @property
    def later(self) -> bool:
        return self.settings.get("judge") == JUDGE_LATER

    def own_judging(self) -> Judging:
        """The judging the run asked for: its judge models, its judge kind (per_criterion for ``--judge later``)."""
        s = self.settings
        judge = "per_criterion" if self.later else str(s.get("judge", "per_criterion"))
        models = (str(s["grader_model"]), *map(str, s.get("judge_panel") or []))
        return Judging(models, judge, int(s.get("judge_repeats", 1)), bool(s.get("logprobs", False)))

    def cache_scope(self) -> str | None:
        """The run's ``run_id`` (one written before run folders recorded it: what its logs were built with)."""
        if not self.settings.get("cache", True):
            return None
        return run_identity(self.folder, str(self.settings["scenario_set"]), self.settings)

    def seed_scope(self) -> str:
        return seed_scope(int(self.settings.get("seed", 0)))

    def max_criteria(self) -> int:
        """The structured judge's criteria a call the run recorded (``--judge-max-criteria``; missing: the default)."""
        return int(self.settings.get("judge_max_criteria", DEFAULT_MAX_CRITERIA))

    def grader_config(self, temperature: float | None, batch: bool) -> dict[str, Any]:
        s = self.settings
        return {
            "temperature": s.get("grader_temperature", 0.0) if temperature is None else temperature,
            "max_tokens": s.get("grader_max_tokens"),
            "reasoning_effort": s.get("grader_reasoning_effort"),
            "reasoning_tokens": s.get("grader_reasoning_tokens"),
            "batch": True if batch else None,
        }


def read_run(folder: Path) -> RunSettings:
    file = folder / RUN_FILE
    try:
        settings = json.loads(file.read_text())
    except FileNotFoundError as e:
        raise UserError(f"{folder}: no {RUN_FILE} beside its logs; judge a folder prefdisco eval wrote") from e
    except json.JSONDecodeError as e:
        raise UserError(f"{file}: not valid JSON ({e.msg})") from e
    if not isinstance(settings, dict) or not {"scenario_set", "grader_model"} <= settings.keys():
        raise UserError(f"{file}: expected a prefdisco run.json object with scenario_set and grader_model")
    return RunSettings(folder, settings)


@dataclass(frozen=True)
class JudgeOptions:
    """``prefdisco judge``'s options; None: the run's own setting."""

    judge_models: Sequence[str] | None = None
    judge: str | None = None
    judge_repeats: int | None = None
    temperature: float | None = None
    batch: bool = False
    judge_max_connections: int | None = None
    prices: dict[str, dict[str, float]] = field(default_factory=dict)

    def validate(self) -> None:
        models = list(self.judge_models or [])
        repeated = sorted({m for m in models if models.count(m) > 1})
        if repeated:
            raise UserError(f"--judge-model: {', '.join(repeated)} given more than once; give each judge once")
        if self.judge is not None and self.judge not in JUDGES:
            raise UserError(f"--judge: unknown {self.judge!r}; expected one of {', '.join(JUDGES)}")
        caps = {"--judge-repeats": self.judge_repeats, "--judge-max-connections": self.judge_max_connections}
        for flag, value in caps.items():
            if value is not None and value < 1:
                raise UserError(f"{flag}: expected at least 1, got {value}")

    def judging(self, run: RunSettings) -> Judging:
        own = run.own_judging()
        return Judging(
            tuple(self.judge_models) if self.judge_models else own.models,
            self.judge or own.judge,
            self.judge_repeats or own.repeats,
            own.logprobs,
        )


@dataclass(frozen=True)
class LogPlan:
    path: Path
    run: RunSettings
    judging: Judging
    first: bool


def applied_judgings(header: Any, run: RunSettings) -> list[Judging]:
    """The judgings a log holds: its run's inline one, then those ``prefdisco judge`` recorded."""
    inline = [] if run.later else [run.own_judging()]
    return inline + [Judging.of_record(r) for r in recorded_judgings(header.eval)]


def plan_log(path: Path, header: Any, run: RunSettings, wanted: Judging) -> LogPlan | None:
    """What judging the log at ``path`` needs (None: it holds ``wanted`` already); see the module docstring."""
    applied = applied_judgings(header, run)
    if wanted in applied:
        return None
    for done in applied:
        shared = sorted(set(done.models) & set(wanted.models))
        if shared:
            raise UserError(
                f"{path}: {', '.join(shared)} already judged this log as {done.describe()}; a judge model judges a "
                "run once: give the same settings (nothing to do) or other --judge-model names"
            )
    return LogPlan(path, run, wanted, first=not applied)


def _local(name: str) -> Path:
    parsed = urlparse(str(name))
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else Path(str(name))


def plan_run(run_dir: Path, options: JudgeOptions) -> tuple[list[LogPlan], list[Path], dict[Path, RunSettings]]:
    """The logs to judge, the logs already judged, and the run folders holding them."""
    if not run_dir.is_dir():
        raise UserError(f"{run_dir}: no such run folder")
    if not (run_dir / RUN_FILE).exists() and not (run_dir / SPLIT_FILE).exists():
        raise UserError(f"{run_dir}: no {RUN_FILE} (or {SPLIT_FILE}): not a folder prefdisco eval wrote")
    chosen = select_logs(run_dir)
    if not chosen:
        raise UserError(f"{run_dir}: no prefdisco eval logs to judge")
    runs: dict[Path, RunSettings] = {}
    plans, skipped = [], []
    for info, header in sorted(chosen, key=lambda log: str(log[0].name)):
        path = _local(info.name)
        if header.status != "success":
            raise UserError(f"{path}: the eval did not finish (status {header.status}); rerun prefdisco eval first")
        run = runs.get(path.parent) or runs.setdefault(path.parent, read_run(path.parent))
        plan = plan_log(path, header, run, options.judging(run))
        if plan is None:
            skipped.append(path)
        else:
            plans.append(plan)
    return plans, skipped, runs


def batch_notes(models: Sequence[str]) -> list[str]:
    """One line per judge model whose provider inspect sends no batch: its calls go one by one."""
    providers = sorted({m.split("/", 1)[0] for m in models if not sent_by_batch(m)})
    return [f"--batch: inspect has no batch API for {p}; its judge calls are sent one by one" for p in providers]


async def _recorded(job: Coroutine[Any, Any, JudgedLog], sent: SentSettings) -> JudgedLog:
    """``job`` with its calls' requests read into ``sent`` as they complete (``sent_settings.recording_sent``)."""
    with recording_sent(into=sent):
        return await job


async def _judge_all(
    plans: list[LogPlan], options: JudgeOptions, tally: Tally | None = None, sent: SentSettings | None = None
) -> list[JudgedLog]:
    """Judge every planned log at once; ``sent``: what the first judgings' judge calls sent (a further judging's are
    not the protocol's judges)."""
    from inspect_ai.model import GenerateConfig, Model, get_model

    models: dict[tuple[Any, ...], dict[str, Model]] = {}
    jobs = []
    for plan in plans:
        config = plan.run.grader_config(options.temperature, options.batch)
        key = (plan.judging, json.dumps(config, sort_keys=True))
        if key not in models:
            built = {
                r: get_model(m, config=GenerateConfig.model_validate(config)) for r, m in plan.judging.roles().items()
            }
            models[key] = limit_roles(built, {"judge": options.judge_max_connections})
        j, run = plan.judging, plan.run
        args: dict[str, Any] = {
            "judge": j.judge,
            "logprobs": j.logprobs,
            "cache_scope": run.cache_scope(),
            "judges": len(j.models),
            "judge_repeats": j.repeats,
            "seed_scope": run.seed_scope(),
            "judge_max_criteria": run.max_criteria(),
        }
        audit, quality = bool(run.settings.get("audit", True)), bool(run.settings.get("quality", True))
        refusals = str(run.settings.get("refusals", "score"))
        scorer = prefdisco_scorer(audit=audit, quality=quality, refusals=refusals, **args) if plan.first else None
        job = judge_log(
            plan.path,
            scorer or prefdisco_judge(refusals=refusals, **args),  # a further judge follows the run's rule
            models[key],
            first=plan.first,
            record=j.record(),
            tally=tally,
            batched=options.batch,  # its judge calls by batch (where inspect has a batch API): the rows priced so
        )
        jobs.append(_recorded(job, sent) if plan.first and sent is not None else job)
    return list(await asyncio.gather(*jobs))


@dataclass
class JudgeOutcome:
    judged: list[JudgedLog]
    skipped: list[Path]
    tables: Tables
    notes: list[str]


def judge_run(run_dir: Path, options: JudgeOptions) -> JudgeOutcome:
    """Judge every log of ``run_dir`` that needs it, then rewrite the run's tables and ``judgings.json``."""
    from inspect_ai._util.platform import platform_init
    from inspect_ai.util._display import init_display_type

    from prefdisco.models.args import check_models

    options.validate()
    plans, skipped, runs = plan_run(run_dir, options)
    judges = sorted({m for p in plans for m in p.judging.models})
    notes = batch_notes(judges) if options.batch else []
    judged: list[JudgedLog] = []
    sent = SentSettings()
    if plans:
        platform_init()
        init_display_type("none")
        check_models(judges)
        headers = [read_header(str(plan.path)) for plan in plans]
        tally = Tally("samples", sum(h.results.total_samples if h.results else 0 for h in headers))
        with Ticker("judge", tally.text):
            judged = asyncio.run(_judge_all(plans, options, tally, sent))
    first = next((plan for plan in plans if plan.first), None)
    if first is not None:  # the run's own judging: its protocol is now this judging's, as its calls were sent
        _settle_judged(run_dir, first, options, sent)
    tables = results_from_logs(run_dir, prices=options.prices)
    write_tables(tables, run_dir)
    _write_judgings(runs, run_dir)
    return JudgeOutcome(judged, skipped, tables, notes)


def _settle_judged(run_dir: Path, plan: LogPlan, options: JudgeOptions, sent: SentSettings) -> None:
    """The run's ``protocol.json`` after its first judging: the judging's judges, kind, repeats and temperature
    (``effective_protocol.rejudged``), settled by what its judge calls sent (``settle_protocol``: the one settling
    every command does after its calls). A run without a record (an older one) is left as it is."""
    record = read_record(run_dir)
    if record is None:
        return
    j = plan.judging
    new = rejudged(record, j.models, j.judge, j.repeats, options.temperature, plan.run.settings)
    settle_protocol(run_dir, new, sent)


def _write_judgings(runs: dict[Path, RunSettings], run_dir: Path) -> None:
    """``judgings.json`` in each run folder: every judging its logs hold, with the number of logs holding it."""
    counts: dict[Path, dict[str, dict[str, Any]]] = {folder: {} for folder in runs}
    for info, header in select_logs(run_dir):
        folder = _local(info.name).parent
        if folder not in runs:
            continue
        run = runs[folder]
        inline = [] if run.later else [{**run.own_judging().record(), "score": JUDGED_SCORE, "inline": True}]
        for record in inline + recorded_judgings(header.eval):
            entry = {k: record.get(k) for k in ("score", "models", "judge", "repeats", "logprobs")}
            entry["inline"] = bool(record.get("inline", False))
            key = json.dumps(entry, sort_keys=True)
            counts[folder].setdefault(key, {**entry, "logs": 0})["logs"] += 1
    for folder, found in counts.items():
        atomic_write(folder / JUDGINGS_FILE, json.dumps({"judgings": list(found.values())}, indent=2))
