"""The play-the-user study (``--study play``; ``annotate serve-play`` is its alias): its scenarios
(``prepare_play``), its models (``load_models``) and its plug-in, ``PlayUserStudy`` (export: ``play_export``).

The first start reads the benchmark folder, draws the scenarios (``sampling.sample_scenarios``: per task
``--per-task`` problems, seeded; every scenario with ``--per-task`` omitted) and stores them with the study's
settings (model under test, judge, mode, K, seed); later starts serve the stored study and refuse settings that
differ from the stored ones (a dialogue already played stays the model's it was played with).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai.model import GenerateConfig, Model, get_model

from prefdisco.annotate.auth import CookieSigner, Tokens
from prefdisco.annotate.bench import load_benchmark
from prefdisco.annotate.play_app import PAGES, PlayApp
from prefdisco.annotate.play_session import PlaySettings, PlayStudy
from prefdisco.annotate.play_store import PlayItem, PlayStore
from prefdisco.annotate.sampling import sample_scenarios
from prefdisco.annotate.study import ServeOptions, Started, Study
from prefdisco.annotate.task_app import TaskApp
from prefdisco.errors import UserError
from prefdisco.modes import condition_label
from prefdisco.results.protocol_record import renamed


@dataclass
class PreparedPlay:
    created: bool
    items: list[PlayItem]
    settings: PlaySettings
    model: str
    judge_model: str


def prepare_play(
    bench_dir: Path,
    db: Path,
    model: str,
    judge_model: str,
    settings: PlaySettings,
    per_task: int | None = None,
) -> PreparedPlay:
    """Store the study in ``db`` on first start; on later starts check it is this benchmark's, with these
    settings."""
    db = Path(db)
    if not db.parent.is_dir():  # before the benchmark is read, as annotate serve checks
        raise UserError(f"{db}: folder {db.parent} does not exist")
    bench = load_benchmark(bench_dir)
    bench_hash = str(bench.manifest["content_hash"])
    store = PlayStore.open(db)
    wanted = {"model": model, "judge_model": judge_model, **settings.meta()}
    created = False
    if not store.play_items():
        scenarios = bench.scenarios if per_task is None else sample_scenarios(bench.scenarios, per_task, settings.seed)
        meta = {
            "bench_dir": str(Path(bench_dir).resolve()),
            "bench_content_hash": bench_hash,
            "per_task": "all" if per_task is None else str(per_task),
            **wanted,
        }
        created = store.initialize_play(list(scenarios), meta)
    meta = renamed(store.play_meta())  # a study stored before the ask channel had its own name
    if meta.get("bench_content_hash") != bench_hash:
        raise UserError(
            f"{db}: this database holds a play study of a different benchmark ({meta.get('bench_dir')}); "
            f"use a new --db for {bench_dir}"
        )
    stored = PlaySettings().meta() | meta  # a setting added since the study was stored: its default then
    for key, value in wanted.items():
        if stored.get(key) != value:
            flag = "--" + key.replace("_", "-")
            raise UserError(f"{db}: the study was started with {flag} {stored.get(key)}, not {value}; use a new --db")
    if per_task is not None and meta.get("per_task") != str(per_task):
        raise UserError(f"{db}: the scenarios were drawn with --per-task {meta.get('per_task')}; use a new --db")
    return PreparedPlay(created, store.play_items(), settings, model, judge_model)


def load_models(model: str, judge_model: str, settings: PlaySettings | None = None) -> tuple[Model, Model]:
    """The model under test (its provider's defaults, or the preset's temperature, as ``prefdisco eval`` calls it)
    and the judge (at ``prefdisco eval``'s grader temperature, 0, or the preset's), resolved server-side: their keys
    stay in this process's environment."""
    settings = settings or PlaySettings()
    tested = _load("--model", model, settings.tested_config())
    return tested, _load("--judge-model", judge_model, settings.judge_config())


def _load(flag: str, name: str, config: GenerateConfig | None) -> Model:
    if "/" not in name:
        raise UserError(f"{flag}: expected an inspect model 'provider/name', got {name!r}")
    try:
        return get_model(name, config=config or GenerateConfig())
    except Exception as err:  # inspect raises plain exceptions for unknown providers and missing keys
        cause = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise UserError(f"{flag}: cannot load {name!r}: {cause}") from None


class PlayUserStudy(Study):
    """A participant answers, live, the model under test's questions; exported as a run folder (user_type human)."""

    name = "play"
    summary = "play the user: a person answers the model under test's questions, live"
    pages = PAGES
    options = (
        "bench", "model", "judge_model", "mode", "k", "per_task", "seed", "judge", "references", "ask", "preset",
    )  # fmt: skip
    required = ("bench", "model", "judge_model")
    store = PlayStore

    def __init__(self, db: Path, options: ServeOptions) -> None:
        super().__init__(db, options)
        from prefdisco.scoring.judging import JUDGES

        judge = options.judge or "per_criterion"
        if judge not in JUDGES:
            raise UserError(f"--judge: expected one of {', '.join(JUDGES)}, got {judge!r}")
        given = {
            "mode": options.mode,
            "k": options.k,
            "seed": options.seed,
            "references": options.references,
            "ask": options.ask,
            "preset": options.preset,
        }
        self.settings = PlaySettings(judge=judge, **{k: v for k, v in given.items() if v is not None})
        self.models: tuple[Model, Model] | None = None

    def load(self) -> None:
        assert self.opts.model is not None and self.opts.judge_model is not None  # required
        self.models = load_models(self.opts.model, self.opts.judge_model, self.settings)

    def prepare(self) -> Started:
        assert self.opts.bench is not None and self.opts.model is not None and self.opts.judge_model is not None
        prepared = prepare_play(
            self.opts.bench, self.db, self.opts.model, self.opts.judge_model, self.settings, per_task=self.opts.per_task
        )
        state = "drawn and stored" if prepared.created else "loaded from the database"
        settings = self.settings
        condition = condition_label(settings.mode, settings.fixed_k)
        return Started(
            [
                f"{len(prepared.items)} scenarios {state}",
                f"model {prepared.model}, judge {prepared.judge_model}, {condition} (K {settings.k}), "
                f"preset {settings.preset}, ask {settings.ask}, seed {settings.seed}",
            ]
        )

    def handlers(self, tokens: Tokens, signer: CookieSigner) -> TaskApp[Any, Any]:
        if self.models is None:
            self.load()
        assert self.models is not None
        store = PlayStore(self.db)
        store.require_play_items()
        study = PlayStudy(store, *self.models, PlaySettings.from_meta(store.play_meta()))
        return PlayApp(study, tokens, signer)

    def export(self, out: Path, overwrite: bool = False, prices: Path | None = None) -> str:
        """Write the run folder ``out`` (``play_export``); ``prices``: a ``--prices`` file over the packaged
        table. What was written, the mean cost of a dialogue, and the models without a price."""
        from prefdisco.annotate.play_export import export_play  # pandas and the results stack: only to export
        from prefdisco.prices import HINT

        done = export_play(self.db, out, overwrite=overwrite, prices=prices)
        lines = [
            f"wrote {done.dialogues} dialogues of {done.participants} participants and {done.references} baseline/"
            f"oracle responses to {out} (protocol {done.protocol_id})"
        ]
        for what, cost in (("dialogue", done.cost["per_dialogue"]), ("baseline/oracle", done.cost["per_reference"])):
            if cost is not None:
                usd = "—" if cost["cost_usd"] is None else f"${cost['cost_usd']:.4f}"
                model = cost["input_tokens"] + cost["output_tokens"]
                judge = cost["grader_input_tokens"] + cost["grader_output_tokens"]
                lines.append(f"per {what}: {model:.0f} tokens of the model, {judge:.0f} of the judge, {usd}")
        if done.unpriced:
            lines.append(f"no price for {', '.join(done.unpriced)}: cost_usd is empty; give {HINT}")
        return "\n".join(lines)
