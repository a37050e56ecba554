"""The response-rating study (``--study rating``; ``annotate serve-ratings`` is its alias): its items
(``prepare_ratings``), its export (``export_ratings``) and its plug-in, ``RatingStudy``.

The first start reads the run and its benchmark, draws the items (``rating_items.sample_ratings``) and stores
them; later starts serve the stored items and only check that they were drawn from this run with these options.
The export writes the ratings table ``analysis.human_ratings`` reads: ``annotator, scenario_id, mode, attribute,
score`` plus ``model`` / ``task`` / ``fixed_k`` / ``epoch`` where the run has several (recorded on first start).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prefdisco.analysis.validity.human_ratings import EXPORT_ORDER, RATING_COLUMNS, mode_label
from prefdisco.annotate.auth import CookieSigner, Tokens
from prefdisco.annotate.database import check_unchanged
from prefdisco.annotate.export import write_rows
from prefdisco.annotate.rating_app import PAGES, RatingApp
from prefdisco.annotate.rating_items import DEFAULT_ITEMS, DEFAULT_SEED, RatingItem, sample_ratings
from prefdisco.annotate.rating_run import read_run
from prefdisco.annotate.rating_store import RatingStore
from prefdisco.annotate.study import Started, Study
from prefdisco.annotate.task_app import TaskApp
from prefdisco.errors import UserError


@dataclass
class PreparedRatings:
    created: bool
    items: list[RatingItem]
    n_items: int
    seed: int
    key_columns: list[str]
    notes: list[str]

    @property
    def modes(self) -> dict[str, int]:
        """Items per mode (``fixed_k=K`` for fixed-K), in name order."""
        return dict(sorted(Counter(mode_label(i.mode, i.fixed_k or 0) for i in self.items).items()))


def prepare_ratings(
    run_dir: Path, db: Path, bench: Path | None = None, n_items: int | None = None, seed: int | None = None
) -> PreparedRatings:
    """Fix the rating items in ``db`` on first start; on later starts check the database was drawn from
    ``run_dir`` (and ``bench``, ``n_items``, ``seed`` when given) — the stored sample cannot change."""
    db, run_dir = Path(db), Path(run_dir)
    store = RatingStore.open(db)
    created = False
    if not store.rating_items():
        if bench is None:
            raise UserError("--bench: give the benchmark the run evaluated (needed on the first start, to draw items)")
        run = read_run(run_dir, bench)
        wanted = DEFAULT_ITEMS if n_items is None else n_items
        chosen_seed = DEFAULT_SEED if seed is None else seed
        items = run.items(sample_ratings(run.population, wanted, chosen_seed))
        created = store.initialize_ratings(
            items,
            {
                "run_dir": str(run_dir.resolve()),
                "bench": str(Path(bench).resolve()),
                "items": str(wanted),
                "seed": str(chosen_seed),
                "key_columns": json.dumps(run.key_columns),
                "population": str(len(run.population)),
            },
        )
    meta = store.rating_meta()
    for key, given in (("run_dir", run_dir), ("bench", bench)):
        if given is not None and str(Path(given).resolve()) != meta.get(key):
            flag = "RUN_DIR" if key == "run_dir" else "--bench"
            raise UserError(
                f"{db}: its rating items were drawn from {meta.get(key)}, not {flag} {given}; use a new --db"
            )
    check_unchanged(db, meta, {"items": n_items, "seed": seed}, "drawn")
    items = store.rating_items()
    notes = []
    if len(items) < int(meta["items"]):
        notes.append(
            f"the run has only {meta.get('population')} ratable criteria: {len(items)} items, not {meta['items']}"
        )
    return PreparedRatings(
        created, items, int(meta["items"]), int(meta["seed"]), json.loads(meta["key_columns"]), notes
    )


def export_ratings(db: Path, out: Path) -> tuple[int, list[str]]:
    """Write every rating as CSV (atomically); (rows written, the columns)."""
    store = RatingStore(db)
    store.require_rating_items()
    optional = set(json.loads(store.rating_meta().get("key_columns", "[]")))
    columns = [c for c in EXPORT_ORDER if c in RATING_COLUMNS or c in optional]
    rows = store.ratings()
    write_rows(out, columns, (["" if row.value(c) is None else row.value(c) for c in columns] for row in rows))
    return len(rows), columns


class RatingStudy(Study):
    """Annotators score one response on one criterion, 1-5, blind to the judge (``prefdisco calibrate --human``)."""

    name = "rating"
    summary = "response rating: one response, one criterion, a score 1-5, blind to the judge"
    pages = PAGES
    options = ("run", "bench", "items", "seed")
    required = ("run",)
    store = RatingStore

    def prepare(self) -> Started:
        assert self.opts.run is not None  # required
        prepared = prepare_ratings(
            self.opts.run, self.db, bench=self.opts.bench, n_items=self.opts.items, seed=self.opts.seed
        )
        state = "drawn and stored" if prepared.created else "loaded from the database"
        modes = ", ".join(f"{mode} ({n})" for mode, n in prepared.modes.items())
        lines = [
            f"{len(prepared.items)} rating items {state}: {modes}",
            f"items {prepared.n_items}, seed {prepared.seed}",
        ]
        return Started(lines, prepared.notes)

    def handlers(self, tokens: Tokens, signer: CookieSigner) -> TaskApp[Any, Any]:
        store = RatingStore(self.db)
        store.require_rating_items()
        return RatingApp(store, tokens, signer)

    def export(self, out: Path, overwrite: bool = False) -> str:
        n, columns = export_ratings(self.db, out)
        return f"wrote {n} ratings to {out} (columns: {', '.join(columns)})"
