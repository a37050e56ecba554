"""Entry points of ``prefdisco annotate serve-play`` (prepare + serve).

The first start reads the benchmark folder, draws the scenarios (``sampling.sample_scenarios``: per task
``--per-task`` problems, seeded; every scenario with ``--per-task`` omitted) and stores them with the study's
settings (model under test, judge, mode, K, seed); later starts serve the stored study and refuse settings that
differ from the stored ones (a dialogue already played stays the model's it was played with).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from inspect_ai.model import GenerateConfig, Model, get_model

from prefdisco.annotate.auth import Tokens
from prefdisco.annotate.bench import load_benchmark
from prefdisco.annotate.play_app import create_play_app
from prefdisco.annotate.play_session import PlaySettings
from prefdisco.annotate.play_store import PlayItem, PlayStore
from prefdisco.annotate.sampling import sample_scenarios
from prefdisco.annotate.serve_options import serve_app
from prefdisco.errors import UserError
from prefdisco.evaluation.protocols import DEFAULT_SETTINGS


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
    meta = store.play_meta()
    if meta.get("bench_content_hash") != bench_hash:
        raise UserError(
            f"{db}: this database holds a play study of a different benchmark ({meta.get('bench_dir')}); "
            f"use a new --db for {bench_dir}"
        )
    for key, value in wanted.items():
        if meta.get(key) != value:
            flag = "--" + key.replace("_", "-")
            raise UserError(f"{db}: the study was started with {flag} {meta.get(key)}, not {value}; use a new --db")
    if per_task is not None and meta.get("per_task") != str(per_task):
        raise UserError(f"{db}: the scenarios were drawn with --per-task {meta.get('per_task')}; use a new --db")
    return PreparedPlay(created, store.play_items(), settings, model, judge_model)


def load_models(model: str, judge_model: str) -> tuple[Model, Model]:
    """The model under test (its provider's defaults, as ``prefdisco eval`` calls it) and the judge (at ``prefdisco
    eval``'s grader temperature, 0), resolved server-side: their keys stay in this process's environment."""
    config = GenerateConfig(temperature=DEFAULT_SETTINGS["grader_temperature"])
    return _load("--model", model, None), _load("--judge-model", judge_model, config)


def _load(flag: str, name: str, config: GenerateConfig | None) -> Model:
    if "/" not in name:
        raise UserError(f"{flag}: expected an inspect model 'provider/name', got {name!r}")
    try:
        return get_model(name, config=config or GenerateConfig())
    except Exception as err:  # inspect raises plain exceptions for unknown providers and missing keys
        cause = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise UserError(f"{flag}: cannot load {name!r}: {cause}") from None


def serve_play(db: Path, model: str, judge_model: str, host: str, port: int, tokens: Tokens) -> None:
    under_test, judge = load_models(model, judge_model)
    serve_app(create_play_app(db, under_test, judge, tokens), host, port)
