"""The attribute-relevance study (``--study relevance``, the default of ``prefdisco annotate serve``): its item set
(``prepare``), its export and its plug-in, ``RelevanceStudy``.

``annotate stats`` is :func:`prefdisco.annotate.stats.stats`: it lives beside the statistics so that serving
and exporting never load scikit-learn and statsmodels (about 3.5 s of imports).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prefdisco.annotate.app import PAGES, AnnotationApp
from prefdisco.annotate.auth import CookieSigner, Tokens
from prefdisco.annotate.bench import load_benchmark
from prefdisco.annotate.database import check_unchanged
from prefdisco.annotate.labels import write_csv
from prefdisco.annotate.sampling import (
    DEFAULT_PER_SIDE,
    DEFAULT_PER_TASK,
    DEFAULT_SEED,
    Item,
    sample_items,
    shortfalls,
)
from prefdisco.annotate.store import Store, stored_labels
from prefdisco.annotate.study import Started, Study
from prefdisco.annotate.task_app import TaskApp
from prefdisco.errors import UserError


@dataclass
class Prepared:
    created: bool
    items: list[Item]
    per_task: int
    per_side: int
    seed: int
    notes: list[str]  # tasks with too few problems, items with too few candidates

    @property
    def tasks(self) -> dict[str, int]:
        return dict(Counter(item.task for item in self.items))


def prepare(
    bench_dir: Path,
    db: Path,
    per_task: int | None = None,
    seed: int | None = None,
    per_side: int = DEFAULT_PER_SIDE,
) -> Prepared:
    """Fix the item set in ``db`` on first start; on later starts check it belongs to this benchmark.

    The database is keyed by the benchmark folder's manifest ``content_hash``: the same data in another folder
    (or rewritten with a new manifest) is the same benchmark.

    ``per_task`` and ``seed`` default to the stored values (or 2 and 0 for a new database); passing a
    value that differs from the stored one is an error, since the stored sample cannot change.
    """
    db = Path(db)
    if not db.parent.is_dir():  # before the benchmark is read, as before
        raise UserError(f"{db}: folder {db.parent} does not exist")
    bench = load_benchmark(bench_dir)
    bench_hash = str(bench.manifest["content_hash"])
    store = Store.open(db)
    created = False
    if not store.items():
        sample_per_task = DEFAULT_PER_TASK if per_task is None else per_task
        sample_seed = DEFAULT_SEED if seed is None else seed
        items = sample_items(bench, per_task=sample_per_task, per_side=per_side, seed=sample_seed)
        created = store.initialize(
            items,
            {
                "bench_dir": str(Path(bench_dir).resolve()),
                "bench_content_hash": bench_hash,
                "per_task": str(sample_per_task),
                "per_side": str(per_side),
                "seed": str(sample_seed),
            },
        )
    meta = store.meta()
    if meta.get("bench_content_hash") != bench_hash:
        raise UserError(
            f"{db}: this database holds items sampled from a different benchmark "
            f"({meta.get('bench_dir', 'unknown folder')}); use a new --db for {bench_dir}"
        )
    check_unchanged(db, meta, {"per_task": per_task, "seed": seed}, "sampled")
    items = store.items()
    stored_per_task, stored_per_side = int(meta["per_task"]), int(meta["per_side"])
    problems: dict[str, set[str]] = {}
    for scenario in bench.scenarios:
        problems.setdefault(scenario.problem.benchmark, set()).add(scenario.problem.id)
    notes = [
        f"task {task}: only {len(ids)} distinct problem(s), fewer than {stored_per_task}"
        for task, ids in sorted(problems.items())
        if len(ids) < stored_per_task
    ] + shortfalls(items, stored_per_side)
    return Prepared(created, items, stored_per_task, stored_per_side, int(meta["seed"]), notes)


def export(db: Path, out: Path) -> int:
    rows = stored_labels(db)
    write_csv(rows, out)
    return len(rows)


class RelevanceStudy(Study):
    """Annotators mark which candidate attributes matter for a task (Fleiss' κ: ``annotate stats``)."""

    name = "relevance"
    summary = "attribute relevance: which candidate attributes matter for a task"
    pages = PAGES
    options = ("bench", "per_task", "seed")
    required = ("bench",)
    store = Store

    def prepare(self) -> Started:
        assert self.opts.bench is not None  # required
        prepared = prepare(self.opts.bench, self.db, per_task=self.opts.per_task, seed=self.opts.seed)
        state = "sampled and stored" if prepared.created else "loaded from the database"
        tasks = ", ".join(f"{task} ({n})" for task, n in prepared.tasks.items())
        return Started(
            [
                f"{len(prepared.items)} items {state}: {tasks}",
                f"per task {prepared.per_task}, seed {prepared.seed}, {2 * prepared.per_side} candidates each",
            ],
            prepared.notes,
        )

    def handlers(self, tokens: Tokens, signer: CookieSigner) -> TaskApp[Any, Any]:
        store = Store(self.db)
        store.require_items()
        return AnnotationApp(store, tokens, signer)

    def export(self, out: Path, overwrite: bool = False) -> str:
        return f"wrote {export(self.db, out)} labels to {out}"
