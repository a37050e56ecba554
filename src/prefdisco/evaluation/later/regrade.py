"""``prefdisco regrade RUN --bench FIXED --out RUN2``: re-judge a run's dialogues against corrected rubrics (or with
another judge) without rerunning them, and record the protocol change.

A published number outlives its rubrics: a criterion is found ambiguous, a gold answer wrong, a judge biased.
Rerunning the dialogues would change everything else too (the model under test, the simulated user); a regrade
keeps every dialogue and judges it again.

* **What may change.** FIXED (a benchmark folder, scenarios file or release file) must hold every scenario RUN
  holds, and each may differ only in what is judged, never in what the dialogue was made of: its rubric (criteria,
  levels, preferred values), its profile's weights and its problem's gold answer. Anything else (the persona, the
  problem's text or choices, a profile attribute's value, meaning or reason, which the simulated user or the oracle
  saw) is refused in one line naming the scenario and the field: that dialogue would need rerunning. Weights and
  gold are judged-only where no dialogue of the run was made of them (``shown_changes``): the oracle and
  oracle_distractor prompts print each attribute's importance (``dialogue/openings.py``), wrong_persona prints its
  decoy's, and the wrong answer that stated_belief states and that ``--pushback`` insists on is derived from the
  gold (``dialogue/wrong_answers.py``). A weight or gold change one of those dialogues was made of is refused in
  one line naming the scenario, the field and the conditions it reached (NormAlign's denominator would be an
  oracle response written for the old weights, scored against the new).
* **How.** Every prefdisco log of RUN (a split run's shard logs too) is copied into RUN2 with each sample's
  scenario replaced by FIXED's, then judged as a first judging (``judge_log``: inspect's scoring of existing logs,
  the judges bound for scoring only — no assistant or user model is built, so no dialogue call can be made). The
  judge calls use RUN's own cache scope and seeds, so a criterion whose prompt did not change (its rubric, the
  response, the judge and its settings the same) replays RUN's judgement from the cache: same score, no call; only
  the changed criteria (and correctness against a changed gold) are asked again. With ``--judge-model`` /
  ``--judge`` / ``--judge-repeats`` / ``--judge-temperature`` the whole judging is new.
* **Recorded.** RUN2 holds a ``run.json`` per run folder (RUN's, with the regrade's judging and
  ``regraded_from``), ``protocol.json`` (the new record: RUN's own ``protocol.json`` as its calls settled it, never
  rebuilt from ``run.json``'s flags, with FIXED's rubrics hash and the regrade's judging, then settled by what the
  regrade's judge calls were really sent: ``effective_protocol.rejudged`` and ``settled``; ``regraded_from``: RUN,
  its protocol id and what changed, so a run settled to ``custom-…`` on a provider that takes no temperature stays
  that protocol and reports only the rubrics), ``regrade.json`` (what this regrade is), and the tables; every results
  row's ``protocol_id`` is the new id. RUN is named by its path relative to RUN2 (``../run``), never an absolute one.
  The judge calls' tokens are added to each row's judge tokens and cost.
* **Resumable.** A log already regraded with the same FIXED and judging is skipped; a crash leaves each log copied
  or judged whole (atomic writes), and the rerun replays finished calls from the cache. An ``--out`` holding
  anything else is refused.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from prefdisco.atomic import atomic_path, atomic_write
from prefdisco.benchio import source_hash
from prefdisco.builder.pipeline import written_by
from prefdisco.dialogue.scenario import SCENARIO_KEY
from prefdisco.errors import UserError
from prefdisco.evaluation.later.judge_later import JudgeOptions, Judging, RunSettings, _local, read_run
from prefdisco.evaluation.later.judge_log import judge_log
from prefdisco.evaluation.protocol.effective import rejudged, settled
from prefdisco.evaluation.protocol.protocols import DEFAULT_SETTINGS, record_of, rubrics_hash
from prefdisco.evaluation.running.guard import RUN_FILE, SESSIONS_FILE, SPLIT_FILE
from prefdisco.evaluation.running.task import load_scenarios
from prefdisco.evaluation.settings.config import scenario_set_hash
from prefdisco.evaluation.settings.limits import limit_roles
from prefdisco.progress import Tally, Ticker
from prefdisco.results.judgings import recorded_judgings
from prefdisco.results.logs import read_header, results_from_logs, select_logs, write_tables
from prefdisco.results.protocol_record import PROTOCOL_SETTINGS, ProtocolRecord, differences, read_record, write_record
from prefdisco.results.sent_settings import SentSettings, recording_sent
from prefdisco.schema import Scenario
from prefdisco.scoring.scorer import prefdisco_scorer

REGRADE_FILE = "regrade.json"
REGRADE_KEY = "prefdisco_regrade"
"""The regrade a copied log belongs to (in its task metadata): a rerun skips a log regraded the same way."""


def dialogue_part(scenario: Scenario) -> dict[str, Any]:
    """What a scenario's dialogue was made of: everything but its rubric, its weights and its gold answer."""
    data = scenario.model_dump(mode="json")
    data.pop("rubric", None)
    for item in data["profile"]["items"]:
        item.pop("weight", None)
    for name in ("answer", "answer_type"):
        data["problem"].pop(name, None)
    return data


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """The first path at which ``a`` and ``b`` differ (dotted, list items by index); None when equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in [*a, *(k for k in b if k not in a)]:
            found = first_difference(a.get(key), b.get(key), f"{path}.{key}" if path else str(key))
            if found is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path} ({len(a)} vs {len(b)} items)"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    return None if a == b else path


def check_fixed(held: Scenario, fixed: Scenario | None, bench: Path) -> bool:
    """Whether FIXED changes what ``held`` is judged on; refuses a change to what its dialogue was made of."""
    if fixed is None:
        raise UserError(f"--bench {bench}: has no scenario {held.id!r}, which the run holds; give the whole benchmark")
    where = first_difference(dialogue_part(held), dialogue_part(fixed))
    if where is not None:
        raise UserError(
            f"--bench {bench}: scenario {held.id!r} changes {where}, which its dialogue was made of; a regrade changes "
            "only rubrics, weights and gold answers (rerun prefdisco eval for the rest)"
        )
    return held.model_dump(mode="json") != fixed.model_dump(mode="json")


WEIGHTS, GOLD = "profile weights", "gold answer"
SHOWS_WEIGHTS = ("oracle", "oracle_distractor")
"""The conditions whose opening prints the scenario's own weights (wrong_persona prints its decoy's)."""


def weights_of(scenario: Scenario) -> dict[str, float]:
    return {i.attribute: i.weight for i in scenario.profile.items}


def gold_of(scenario: Scenario) -> tuple[Any, Any]:
    return scenario.problem.answer, scenario.problem.answer_type


def shown_changes(
    samples: Sequence[tuple[str, Scenario, str | None]], fixed: dict[str, Scenario], pushback: dict[str, int]
) -> dict[tuple[str, str], set[str]]:
    """(scenario, field) → the conditions of the run whose dialogues were made of a weight or gold FIXED changes.
    ``samples``: each held sample's condition, scenario and decoy (wrong_persona); ``pushback``: the turns of
    pushback of each condition's run (0 or absent: none)."""
    held = {s.id: s for _, s, _ in samples}
    moved = {sid for sid, s in held.items() if sid in fixed and weights_of(s) != weights_of(fixed[sid])}
    regold = {sid for sid, s in held.items() if sid in fixed and gold_of(s) != gold_of(fixed[sid])}
    found: dict[tuple[str, str], set[str]] = {}
    for mode, scenario, decoy in samples:
        if mode in SHOWS_WEIGHTS and scenario.id in moved:
            found.setdefault((scenario.id, WEIGHTS), set()).add(mode)
        if mode == "wrong_persona" and decoy in moved:
            found.setdefault((str(decoy), WEIGHTS), set()).add(f"{mode} (as {scenario.id!r}'s decoy)")
        if scenario.id in regold and mode == "stated_belief":
            found.setdefault((scenario.id, GOLD), set()).add(mode)
        if scenario.id in regold and pushback.get(mode, 0) > 0:
            found.setdefault((scenario.id, GOLD), set()).add(f"{mode} (--pushback)")
    return found


def refuse_shown(found: dict[tuple[str, str], set[str]], bench: Path) -> None:
    """One line for the first (scenario, field) of ``shown_changes``, and how many more there are."""
    if not found:
        return
    (sid, what), modes = sorted(found.items())[0]
    why = "was shown" if what == WEIGHTS else "derived the wrong answer it states or insists on from"
    more = f" (and {len(found) - 1} more scenario field(s))" if len(found) > 1 else ""
    raise UserError(
        f"--bench {bench}: scenario {sid!r} changes its {what}, which {', '.join(sorted(modes))} {why}{more}; "
        "those dialogues were made of it: rerun prefdisco eval for those conditions (a regrade changes only what "
        "is judged)"
    )


@dataclass(frozen=True)
class RegradeOptions:
    """``prefdisco regrade``'s options; a judge setting None keeps the run's."""

    bench: Path
    judging: JudgeOptions = field(default_factory=JudgeOptions)


@dataclass
class RegradeOutcome:
    judged: int
    skipped: int
    changed: list[str]
    """The scenarios whose judging inputs FIXED changes."""
    record: ProtocolRecord
    results_rows: int


def _origin(run: Path, out: Path) -> str:
    """RUN as RUN2 records it: its path relative to RUN2 (``../run``), so that neither names the machine's folders
    and the two can move together (absolute only where no relative path leads there: another drive)."""
    try:
        return Path(os.path.relpath(run.resolve(), out.resolve())).as_posix()
    except ValueError:
        return str(run.resolve())


def _marker(origin: str, bench_hash: str, judging: Judging, temperature: float | None) -> dict[str, Any]:
    return {"from": origin, "bench": bench_hash, "judging": judging.record(), "temperature": temperature}


def _check_out(run: Path, out: Path, marker: dict[str, Any]) -> None:
    if out.resolve() == run.resolve() or run.resolve() in out.resolve().parents:
        raise UserError(f"--out {out}: must be a folder of its own, not {run} or inside it")
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()):
        file = out / REGRADE_FILE
        try:
            previous = json.loads(file.read_text())
        except (OSError, json.JSONDecodeError):
            previous = None
        if previous != marker:
            raise UserError(
                f"--out {out}: holds something other than this regrade (of {run} with this --bench and judging); "
                "choose a new --out"
            )


def _copy_log(source: Path, dest: Path, fixed: dict[str, Scenario], marker: dict[str, Any], new_id: str) -> None:
    """``source`` as ``dest``: each sample judged on FIXED's scenario, the task metadata naming this regrade."""
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(source))
    for sample in log.samples or []:
        metadata = dict(sample.metadata or {})
        scenario = fixed[str(sample.id)]
        metadata[SCENARIO_KEY] = scenario.model_dump(mode="json")
        sample.metadata = metadata
        sample.target = scenario.problem.answer
    log.eval.metadata = {**(log.eval.metadata or {}), REGRADE_KEY: marker, "prefdisco_protocol_id": new_id}
    dest.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(dest) as tmp:
        write_eval_log(log, str(tmp), format="eval")


def _done(dest: Path, marker: dict[str, Any]) -> bool:
    if not dest.is_file():
        return False
    header = read_header(str(dest))
    return (header.eval.metadata or {}).get(REGRADE_KEY) == marker and bool(recorded_judgings(header.eval))


def regrade_run(run: Path, out: Path, options: RegradeOptions) -> RegradeOutcome:
    """Regrade ``run`` into ``out`` (module docstring)."""
    from inspect_ai._util.platform import platform_init
    from inspect_ai.model import GenerateConfig, get_model
    from inspect_ai.util._display import init_display_type

    from prefdisco.models.args import check_models

    judge = options.judging
    judge.validate()
    run, out = Path(run).absolute(), Path(out).absolute()  # the logs inspect lists are absolute (a relative RUN_DIR)
    if not run.is_dir() or not ((run / RUN_FILE).exists() or (run / SPLIT_FILE).exists()):
        raise UserError(f"{run}: not a run folder prefdisco eval wrote (no {RUN_FILE} or {SPLIT_FILE})")
    scenarios = load_scenarios(options.bench)
    fixed = {s.id: s for s in scenarios}
    chosen = sorted(select_logs(run), key=lambda log: str(log[0].name))
    if not chosen:
        raise UserError(f"{run}: no prefdisco eval logs to regrade")
    folders: dict[Path, RunSettings] = {}
    changed: set[str] = set()
    for info, header in chosen:
        path = _local(info.name)
        if header.status != "success":
            raise UserError(f"{path}: the eval did not finish (status {header.status}); rerun prefdisco eval first")
        folders.setdefault(path.parent, read_run(path.parent))
    samples: list[tuple[str, Scenario, str | None]] = []
    pushback: dict[str, int] = {}
    for info, header in chosen:  # every scenario held, checked before anything is written
        from inspect_ai.log import read_eval_log_samples

        path = _local(info.name)
        mode = str((header.eval.metadata or {}).get("prefdisco_mode", ""))
        turns = int(folders[path.parent].settings.get("pushback") or 0)
        pushback[mode] = max(pushback.get(mode, 0), turns)
        for sample in read_eval_log_samples(str(path), all_samples_required=False):
            held = Scenario.model_validate((sample.metadata or {})[SCENARIO_KEY])
            if check_fixed(held, fixed.get(held.id), options.bench):
                changed.add(held.id)
            samples.append((mode, held, (sample.metadata or {}).get("decoy_scenario_id")))
    refuse_shown(shown_changes(samples, fixed, pushback), options.bench)

    first = next(iter(folders.values()))
    judging = judge.judging(first)
    origin = _origin(run, out)
    marker = _marker(origin, scenario_set_hash(scenarios), judging, judge.temperature)
    _check_out(run, out, marker)
    old = _old_record(run, first)  # RUN's settled record: what its calls were really sent
    new = rejudged(
        old,
        judging.models,
        judging.judge,
        judging.repeats,
        judge.temperature,
        first.settings,
        rubrics_hash(scenarios),
        written_by(scenarios),
        source_hash(options.bench),
    )
    earlier = read_record(out)  # a regrade resumed: what its judges' calls sent before (the marker is the same)

    out.mkdir(parents=True, exist_ok=True)
    jobs = []
    skipped = 0
    for info, _ in chosen:
        source = _local(info.name)
        dest = out / source.relative_to(run)
        if _done(dest, marker):
            skipped += 1
            continue
        _copy_log(source, dest, fixed, marker, new.id)
        jobs.append((dest, folders[source.parent]))
    for folder, settings in folders.items():  # each run folder's run.json, with the regrade's judging
        target = out / folder.relative_to(run)
        target.mkdir(parents=True, exist_ok=True)
        recorded = {
            **settings.settings,
            "grader_model": judging.models[0],
            "judge_panel": list(judging.models[1:]),
            "judge": judging.judge,
            "judge_repeats": judging.repeats,
            "grader_temperature": new.settings["grader_temperature"],
            "protocol_id": new.id,
            "regraded_from": origin,
        }
        atomic_write(target / RUN_FILE, json.dumps(recorded, indent=2))
    for name in (SPLIT_FILE, SESSIONS_FILE):
        if (run / name).is_file():
            shutil.copyfile(run / name, out / name)

    sent = SentSettings()  # what the judges' calls sent, read as they complete (sent_settings.recording_sent)
    if jobs:
        platform_init()
        init_display_type("none")
        check_models(list(judging.models))
        tally = Tally(
            "samples",
            sum(h.results.total_samples if h.results else 0 for h in map(read_header, (str(d) for d, _ in jobs))),
        )

        async def judge_all() -> None:
            config = first.grader_config(judge.temperature, False)
            built = {r: get_model(m, config=GenerateConfig.model_validate(config)) for r, m in judging.roles().items()}
            roles = limit_roles(built, {"judge": judge.judge_max_connections})
            tasks = []
            for dest, settings in jobs:  # the run's own cache scope and seeds: unchanged prompts replay
                scorer = prefdisco_scorer(
                    judge=judging.judge,
                    logprobs=judging.logprobs,
                    audit=bool(settings.settings.get("audit", True)),
                    quality=bool(settings.settings.get("quality", True)),
                    cache_scope=settings.cache_scope(),
                    judges=len(judging.models),
                    judge_repeats=judging.repeats,
                    seed_scope=settings.seed_scope(),
                    judge_max_criteria=settings.max_criteria(),
                    refusals=str(settings.settings.get("refusals", "score")),
                )
                tasks.append(judge_log(dest, scorer, roles, first=True, record=judging.record(), tally=tally))
            await asyncio.gather(*tasks)

        with Ticker("regrade", tally.text), recording_sent(into=sent):  # the judges' requests, as sent
            asyncio.run(judge_all())
    before = (earlier.sent or {}) if earlier is not None else {}  # a resumed regrade's judges, as they were sent
    before = {role: seen for role, seen in before.items() if role.startswith("grader")}
    new = settled(new, out, SentSettings(roles=before | sent.roles))  # the protocol as sent (effective_protocol.py)
    new = new.model_copy(
        update={"regraded_from": {"run": origin, "protocol": old.id, "changes": differences(old, new)}}
    )
    write_record(out, new)
    atomic_write(out / REGRADE_FILE, json.dumps(marker, indent=2))
    tables = results_from_logs(out, prices=judge.prices)
    write_tables(tables, out)
    return RegradeOutcome(len(jobs), skipped, sorted(changed), new, len(tables.results))


def _old_record(run: Path, first: RunSettings) -> ProtocolRecord:
    """RUN's protocol record as its calls settled it (its protocol.json), or (an older run without one) the record of
    its run.json's flags (a setting it leaves out at its default)."""
    found = read_record(run)
    if found is not None:
        return found
    s = first.settings
    flags = SimpleNamespace(
        **{k: s.get(k, DEFAULT_SETTINGS[k]) for k in PROTOCOL_SETTINGS}, quality=s.get("quality", True)
    )
    judges = [str(s["grader_model"]), *s.get("judge_panel", [])]
    return record_of(flags, str(s.get("user_model", "")), judges, None)
