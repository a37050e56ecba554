"""Loading problems: :func:`load_problems` for the ten named benchmarks, :func:`load_generic` for any dataset.

Both read a table (Hub or local files, see :mod:`prefdisco.benchmarks.sources`), check that the mapped fields
exist, assign ids to every row, optionally draw a seeded sample, and normalize the chosen rows to
:class:`~prefdisco.schema.Problem`. Sampling is ``random.Random(seed).sample`` over the row indices (the rows
kept after filtering), and problems come back in sampled order; the same seed gives the same problems.
Every problem's metadata also records ``source_row`` (0-based row index in the source) and ``split``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from prefdisco.benchmarks.mapping import FieldMapping, parse_mapping
from prefdisco.benchmarks.normalize import RowBuilder, RowRef, build_fields
from prefdisco.benchmarks.registry import get_spec
from prefdisco.benchmarks.sources import BUILDERS, Rows, load_hub, load_local, resolve_local
from prefdisco.errors import UserError, describe_validation_error
from prefdisco.schema import Problem

if TYPE_CHECKING:
    import datasets

KNOWN_SPLITS = ("train", "test", "validation", "dev", "val", "valid")


def load_problems(
    name: str,
    source: str | Path | None = None,
    n: int | None = None,
    seed: int = 0,
    split: str | None = None,
) -> list[Problem]:
    """Problems of benchmark ``name`` (see ``BENCHMARKS``), from the Hub (``source`` None) or a local copy.

    ``source`` is a data file or a folder holding ``<split>.jsonl`` (or another data file); ``split`` defaults
    to the benchmark's canonical split. ``n`` draws a seeded sample of that many problems.
    """
    spec = get_spec(name)
    split_name = split or spec.split
    if source is None:
        if spec.hub_id is None:
            raise UserError(f"{spec.name}: no source given; {spec.source_hint}")
        rows = load_hub(spec.hub_id, spec.config, split_name, spec.source_fields)
    else:
        files = resolve_local(Path(source), split_name, explicit_split=split is not None)
        rows = load_local(files)
        split_name = split or _split_of(files[0], default=spec.split)
    return _problems(
        rows,
        spec.mapping,
        benchmark=spec.name,
        split=split_name,
        n=n,
        seed=seed,
        build=spec.build,
        skip_if_set=spec.skip_if_set,
        id_required=spec.id_required,
    )


def load_generic(
    source: str | Path | datasets.Dataset,
    mapping: FieldMapping | str | Mapping[str, Any],
    *,
    name: str | None = None,
    n: int | None = None,
    seed: int = 0,
    split: str | None = None,
    config: str | None = None,
) -> list[Problem]:
    """Problems from any dataset, mapped by ``mapping`` (a FieldMapping, its compact string form, or a dict).

    ``source`` is a local file or folder, a Hub id (``owner/name``; ``split`` defaults to ``train``), or an
    in-memory ``datasets.Dataset``. ``name`` (the ``Problem.benchmark``) defaults to the Hub dataset name, the
    file name, or, for ``<split>.jsonl`` files, the folder name.
    """
    import datasets

    if isinstance(mapping, str):
        mapping = parse_mapping(mapping)
    elif not isinstance(mapping, FieldMapping):
        try:
            mapping = FieldMapping.model_validate(dict(mapping))
        except ValidationError as err:
            raise UserError(describe_validation_error(err, "mapping")) from None
    if isinstance(source, datasets.Dataset):
        rows, default_name, split_name = Rows(source, "dataset"), "dataset", split or "train"
    elif Path(source).exists():
        files = resolve_local(Path(source), split or "train", explicit_split=split is not None)
        rows = load_local(files)
        split_name = split or _split_of(files[0], default="train")
        default_name = _local_name(Path(source), files[0])
    elif isinstance(source, str) and _is_hub_id(source):
        split_name = split or "train"
        rows = load_hub(source, config, split_name)
        default_name = source.rsplit("/", 1)[-1].lower()
    else:
        raise UserError(f"{source}: no such file or folder")
    return _problems(rows, mapping, benchmark=name or default_name, split=split_name, n=n, seed=seed)


def local_source_files(benchmark: str, source: str | Path, split: str | None = None) -> tuple[str, ...] | None:
    """What a local source reads, however it is written (a folder or the data file in it, a relative or an absolute
    path): its data files, resolved as ``load_problems`` / ``load_generic`` resolve them, and for ``generic`` the
    benchmark name they give the problems. None when ``source`` is not a local file or folder that resolves."""
    path = Path(source)
    if not path.exists():
        return None
    generic = benchmark == "generic"
    try:
        default = "train" if generic else get_spec(benchmark).split
        files = resolve_local(path, split or default, explicit_split=split is not None)
    except UserError:
        return None
    name = (_local_name(path, files[0]),) if generic else ()
    return (*(str(f.resolve()) for f in files), *name)


def _is_hub_id(text: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?", text)) and (
        Path(text).suffix.lower() not in BUILDERS
    )


def _split_of(file: Path, default: str) -> str:
    """The split a data file holds, judged by its name (``dev.jsonl``, ``test-00000-of-00001.parquet``)."""
    stem = file.stem.split("-", 1)[0]
    return stem if stem in KNOWN_SPLITS else default


def _local_name(source: Path, first_file: Path) -> str:
    if source.is_dir():
        return source.resolve().name
    return first_file.resolve().parent.name if _split_of(first_file, "") else first_file.stem


def sample_indices(candidates: list[int], n: int | None, seed: int, where: str) -> list[int]:
    """All candidates in order (n None) or ``random.Random(seed).sample(candidates, n)``, in sampled order."""
    if n is None:
        return list(candidates)
    if n < 1:
        raise UserError(f"{where}: n must be at least 1, got {n}")
    if n > len(candidates):
        raise UserError(f"{where}: asked for n={n} problems but only {len(candidates)} are available")
    return random.Random(seed).sample(candidates, n)


def _kept_rows(ds: datasets.Dataset, skip_if_set: str | None, where: str) -> tuple[datasets.Dataset, list[int]]:
    """Rows to use: all, or those whose ``skip_if_set`` field is null (images are not decoded)."""
    import datasets

    if not skip_if_set or skip_if_set not in ds.column_names:
        return ds, list(range(len(ds)))
    if isinstance(ds.features[skip_if_set], datasets.Image):
        ds = ds.cast_column(skip_if_set, datasets.Image(decode=False))
    kept = [i for i, value in enumerate(ds[skip_if_set]) if value is None]
    if not kept:
        raise UserError(f"{where}: every row has a {skip_if_set!r} value; no text-only rows to load")
    return ds, kept


def _ids(ds: datasets.Dataset, id_field: str | None, benchmark: str, split: str, where: str) -> list[str]:
    """One unique id per row: the id field (``-dup<k>`` on repeats) or ``<benchmark>-<split>-<row index>``."""
    if id_field is None:
        return [f"{benchmark}-{split}-{i}" for i in range(len(ds))]
    values: list[str] = []
    for i, v in enumerate(ds[id_field]):
        value = "" if v is None else str(v).strip()
        if not value:
            raise UserError(f"{where}: row {i + 1}: id field {id_field!r} is empty")
        values.append(value)
    taken = set(values)
    seen: set[str] = set()
    ids: list[str] = []
    for value in values:
        new, k = value, 1
        while new in seen or (new != value and new in taken):
            k += 1
            new = f"{value}-dup{k}"
        seen.add(new)
        ids.append(new)
    return ids


def _problems(
    rows: Rows,
    mapping: FieldMapping,
    *,
    benchmark: str,
    split: str,
    n: int | None,
    seed: int,
    build: RowBuilder = build_fields,
    skip_if_set: str | None = None,
    id_required: bool = True,
) -> list[Problem]:
    ds, where = rows.dataset, rows.where
    if len(ds) == 0:
        raise UserError(f"{where}: holds no rows")
    columns = list(ds.column_names)
    for field in mapping.required_fields(with_id=id_required):
        if field not in columns:
            raise UserError(f"{where}: row 1: missing field {field!r} (fields: {', '.join(columns)})")
    ds, candidates = _kept_rows(ds, skip_if_set, where)
    ids = _ids(ds, mapping.id if mapping.id in columns else None, benchmark, split, where)
    chosen = sample_indices(candidates, n, seed, where)
    records = ds.to_list() if chosen == list(range(len(ds))) else ds.select(chosen).to_list()
    problems: list[Problem] = []
    for index, row in zip(chosen, records, strict=True):
        ref = RowRef(where, index)
        fields = build(row, mapping, ref)
        fields["metadata"] = {**fields["metadata"], "source_row": index, "split": split}
        try:
            problems.append(Problem(id=ids[index], benchmark=benchmark, domain=mapping.domain, **fields))
        except ValidationError as err:
            raise UserError(describe_validation_error(err, f"{where}: row {index + 1}")) from None
    return problems
