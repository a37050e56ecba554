"""``prefdisco annotate export-play``: a play study's scored dialogues as a run folder ``prefdisco report`` reads.

Every scored dialogue is made into the sample a ``prefdisco eval`` log would hold (an inspect ``EvalSample``: the
assistant's messages, the scorer's ``Score`` under ``prefdisco_scorer``, the trial's seeds in the store) and into
rows by the results reader's own code (``results/sample_rows.sample_rows``), so the tables have exactly the columns
and meanings of a simulated run's (``results/contract.py``). The files (the tables, ``protocol.json`` with
``user_type`` ``human``, ``play.json``), the participants' pseudonyms and epochs, and the token and cost columns
are described once, in docs/evaluation.md, "Play the user" (Export).

The protocol id is settled as a run's is (``effective_protocol.settled``) with what the study's calls were really
sent (a judge whose provider takes no temperature has none); a simulated run's protocol differs in its user, so
``prefdisco report HUMAN_RUN SIM_RUN --allow-mixed`` shows them side by side (``results/merge.py``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
from inspect_ai.log import EvalSample
from inspect_ai.model import ModelUsage
from inspect_ai.scorer import Score

from prefdisco.annotate.export import check_out
from prefdisco.annotate.play_session import PlaySettings
from prefdisco.annotate.play_store import PlayItem, PlayStore, PlayUsage
from prefdisco.atomic import atomic_write
from prefdisco.builder.pipeline import written_by
from prefdisco.dialogue.dialogue_state import DialogueState
from prefdisco.dialogue.presets import preset_named
from prefdisco.dialogue.user import USERS
from prefdisco.errors import UserError
from prefdisco.evaluation.protocol.effective import settled
from prefdisco.evaluation.protocol.protocols import DEFAULT_SETTINGS, protocol_templates, record_of, rubrics_hash
from prefdisco.prices import missing
from prefdisco.prices import prices as price_book
from prefdisco.prompts import templates_hash
from prefdisco.results.contract import ATTRIBUTE_COLUMNS, RESULT_COLUMNS
from prefdisco.results.logs import Tables, with_cost, write_tables
from prefdisco.results.protocol_record import ProtocolRecord, write_record
from prefdisco.results.sample_rows import SampleRows, sample_rows
from prefdisco.results.sent_settings import RoleSent, SentSettings
from prefdisco.schema import Mode
from prefdisco.scoring.deferred import JUDGED_SCORE

HUMAN = "human"
PLAY_FILE = "play.json"
TASK_NAME = "prefdisco_play"
_SEED_TYPES = {"assistant_seed": "Int64", "user_seed": "Int64", "grader_seed": "Int64"}


@dataclass(frozen=True)
class PlayExport:
    dialogues: int
    references: int
    participants: int
    protocol_id: str
    unpriced: list[str]
    """The study's models without a price (their ``cost_usd`` is empty)."""
    cost: dict[str, Any]
    """``play.json``'s ``cost``: the mean tokens and USD of a played dialogue and of a baseline or oracle."""


def play_protocol(
    settings: PlaySettings, judge_model: str, items: list[PlayItem], benchmark: str | None = None
) -> ProtocolRecord:
    """The protocol a play study's numbers were made under: a simulated run's settings with the user a person;
    ``benchmark``: the content hash of the study's benchmark folder."""
    fixed = {k: v for k, v in preset_named(settings.preset).settings.items() if k in DEFAULT_SETTINGS}
    values = (
        DEFAULT_SETTINGS
        | fixed
        | {
            "preset": settings.preset,
            "max_questions": settings.k,
            "ask": settings.ask,
            "user_type": HUMAN,
            "user_temperature": None,
            "judge": settings.judge,
        }
    )
    simulated = SimpleNamespace(**(values | {"user_type": "passive"}))
    passive = USERS["passive"]
    user_templates = {getattr(passive, "template", None), *getattr(passive, "extra_templates", ())}
    prompts = templates_hash([t for t in protocol_templates(simulated) if t not in user_templates])
    return record_of(
        SimpleNamespace(**values),
        HUMAN,
        [judge_model],
        rubrics_hash([item.scenario for item in items]),
        prompts=prompts,
        record_id=human_id(values, prompts),
        builders=written_by([item.scenario for item in items]),
        benchmark=benchmark,
    )


def human_id(settings: dict[str, Any], prompts: str) -> str:
    """A play study's protocol id: ``human-<8 hex>`` of its settings and prompts."""
    digest = hashlib.sha256(json.dumps([settings, prompts], sort_keys=True, default=str).encode()).hexdigest()
    return f"human-{digest[:8]}"


def study_sent(store: PlayStore) -> SentSettings:
    """What each role's first request carried over the study's stored dialogues and references (``PlayUsage.sent``;
    the dialogues first, a role's first kept)."""
    found: dict[str, RoleSent] = {}
    usages = [d.usage for d in store.dialogues()] + [r.usage for r in store.references().values()]
    for usage in usages:
        found = {**usage.sent, **found}
    return SentSettings(roles=found)


def _spec(model: str, judge_model: str, user: str, mode: str, fixed_k: int | None, protocol_id: str) -> Any:
    """What ``sample_rows`` reads of an eval's spec, for one sample of the study."""
    roles = {"user": SimpleNamespace(model=user), "grader": SimpleNamespace(model=judge_model)}
    metadata = {"prefdisco_mode": mode, "prefdisco_fixed_k": fixed_k, "prefdisco_protocol_id": protocol_id}
    return SimpleNamespace(model=model, task=TASK_NAME, metadata=metadata, model_roles=roles)


def _usage(model: str, judge_model: str, usage: PlayUsage) -> dict[str, dict[str, ModelUsage]]:
    """An eval sample's ``model_usage`` (by model) and ``role_usage`` (the judge's ``grader`` role) for the
    dialogue's tokens, which ``sample_rows`` splits into the results' token columns."""
    tested = ModelUsage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)
    judged = ModelUsage(input_tokens=usage.grader_input_tokens, output_tokens=usage.grader_output_tokens)
    by_model = {model: tested}
    by_model[judge_model] = by_model[judge_model] + judged if judge_model in by_model else judged
    return {"model_usage": by_model, "role_usage": {"grader": judged}}


def _sample(
    item: PlayItem,
    state: DialogueState,
    score: Score,
    epoch: int,
    seeds: dict[str, int],
    uuid: str,
    usage: dict[str, dict[str, ModelUsage]],
) -> Any:
    scenario = item.scenario
    return EvalSample(
        id=scenario.id,
        epoch=epoch,
        input=scenario.problem.prompt_text(),
        target=str(scenario.problem.answer),
        messages=list(state.messages),
        metadata={"benchmark": scenario.problem.benchmark},
        scores={JUDGED_SCORE: score},
        store={"TrialSeeds:epoch": epoch, **{f"TrialSeeds:{role}": seed for role, seed in seeds.items()}},
        uuid=uuid,
        **usage,
    )


def _seeds(settings: PlaySettings, scenario_id: str, condition: str, epoch: int) -> dict[str, int]:
    return {role: settings.seed_of(scenario_id, condition, epoch, role) for role in ("assistant", "grader")}


def export_play(db: Path, out: Path, overwrite: bool = False, prices: Path | None = None) -> PlayExport:
    """Write the run folder ``out`` from the play study in ``db`` (module docstring); ``prices``: a ``--prices``
    file over the packaged table."""
    book = price_book(prices)  # a bad --prices file is refused before anything is read or written
    store = PlayStore(db)
    store.require_play_items()
    out = check_out(out)
    if (out / "results.csv").exists() and not overwrite:
        raise UserError(f"--out {out}: holds a results table; give --overwrite to replace it, or another --out")
    meta = store.play_meta()
    settings = PlaySettings.from_meta(meta)
    model, judge_model = meta["model"], meta["judge_model"]
    items = store.play_items()
    by_position = {item.position: item for item in items}
    by_id = {item.scenario_id: item for item in items}
    # the protocol as its calls were sent (effective_protocol.settled: a judge on a provider that takes no
    # temperature is recorded so), as prefdisco eval settles a run's
    protocol = play_protocol(settings, judge_model, items, meta.get("bench_content_hash"))
    record = settled(protocol, sent=study_sent(store), identify=human_id)
    participants = store.participants()
    parts: list[SampleRows] = []
    finished: dict[str, int] = {}
    for stored in store.dialogues():
        if stored.status != "scored" or stored.score is None:
            continue
        who = participants[stored.participant]
        item = by_position[stored.position]
        seeds = _seeds(settings, item.scenario_id, settings.condition, who.number)
        spec = _spec(model, judge_model, f"{HUMAN}:{who.pseudonym}", settings.mode, settings.fixed_k, record.id)
        uuid = f"{who.pseudonym}:{item.scenario_id}"
        usage = _usage(model, judge_model, stored.usage)
        parts.append(sample_rows(spec, _sample(item, stored.state, stored.score, who.number, seeds, uuid, usage)))
        finished[who.pseudonym] = finished.get(who.pseudonym, 0) + 1
    n_dialogues = len(parts)
    if not n_dialogues:
        raise UserError(f"{db}: no dialogue of the play study is finished and scored yet; nothing to export")
    played = {by_position[d.position].scenario_id for d in store.dialogues() if d.status == "scored"}
    n_references = 0
    for (scenario_id, condition), reference in sorted(store.references().items()):
        if scenario_id not in played:
            continue
        seeds = _seeds(settings, scenario_id, condition, 1)
        spec = _spec(model, judge_model, HUMAN, Mode(condition).value, None, record.id)
        usage = _usage(model, judge_model, reference.usage)
        uuid = f"{condition}:{scenario_id}"
        sample = _sample(by_id[scenario_id], reference.state, reference.score, 1, seeds, uuid, usage)
        parts.append(sample_rows(spec, sample))
        n_references += 1
    out.mkdir(exist_ok=True)
    rows = [with_cost(p, book) for p in parts]
    results = pd.DataFrame(rows, columns=list(RESULT_COLUMNS)).astype(_SEED_TYPES)
    order = ["model", "task", "mode", "fixed_k", "scenario_id", "epoch"]
    tables = Tables(
        results=results.sort_values(order, kind="stable").reset_index(drop=True),
        attributes=pd.DataFrame([a for p in parts for a in p.attributes], columns=list(ATTRIBUTE_COLUMNS)),
        transcripts=pd.DataFrame([p.transcript for p in parts]).astype(_SEED_TYPES),
    )
    write_tables(tables, out)
    write_record(out, record)
    cost = {"per_dialogue": _mean_cost(rows[:n_dialogues]), "per_reference": _mean_cost(rows[n_dialogues:])}
    study = {
        "study": "play the user",
        "bench_dir": meta.get("bench_dir"),
        "bench_content_hash": meta.get("bench_content_hash"),
        "model": model,
        "judge_model": judge_model,
        **settings.meta(),
        "user_type": HUMAN,
        "participants": {p.pseudonym: finished.get(p.pseudonym, 0) for p in participants.values()},
        "dialogues": n_dialogues,
        "references": n_references,
        "cost": cost,
    }
    atomic_write(out / PLAY_FILE, json.dumps(study, indent=2) + "\n")
    unpriced = missing(book, [model, judge_model])
    return PlayExport(n_dialogues, n_references, len(participants), record.id, unpriced, cost)


COST_COLUMNS = ("input_tokens", "output_tokens", "grader_input_tokens", "grader_output_tokens", "cost_usd")


def _mean_cost(rows: list[dict[str, Any]]) -> dict[str, float | None] | None:
    """The mean tokens of ``rows`` by column and their mean ``cost_usd`` (None when a row has no price); None
    without rows."""
    if not rows:
        return None
    mean = {c: sum(r[c] for r in rows) / len(rows) for c in COST_COLUMNS[:-1]}
    costs = [r["cost_usd"] for r in rows]
    return mean | {"cost_usd": None if None in costs else sum(costs) / len(costs)}
