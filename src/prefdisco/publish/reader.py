"""A published folder read back as the benchmark it was published from (``eval``, ``inspect eval``, ``validate``).

The scenarios are the rows of the ``all`` config's Parquet files in the order of their ``line``; with the files in
``prefdisco/`` they give back the benchmark folder's files byte for byte, and the content hash is checked over
them as :func:`prefdisco.benchio.read_bench` checks a benchmark folder's.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from prefdisco.benchio import (
    ATTRIBUTES_FILE,
    MANIFEST_FILE,
    PERSONAS_FILE,
    SCENARIOS_FILE,
    Bench,
    content_hash,
    jsonl_bytes,
    parse_attributes,
    read_jsonl_models,
    read_manifest,
)
from prefdisco.errors import UserError
from prefdisco.publish.columns import LINE, from_row
from prefdisco.publish.layout import BENCH, DATA
from prefdisco.publish.sources import ALL
from prefdisco.schema import Persona, Scenario


def config_files(folder: Path, config: str) -> list[Path]:
    """A config's Parquet files (every split), in name order."""
    return sorted((folder / DATA / config).glob("*.parquet"))


def read_rows(paths: list[Path]) -> list[dict[str, object]]:
    """The rows of Parquet files, in file order; UserError naming a file that is no Parquet."""
    rows: list[dict[str, object]] = []
    for path in paths:
        try:
            rows += pq.read_table(path).to_pylist()
        except (OSError, pa.ArrowException) as e:
            raise UserError(f"{path}: not a readable Parquet file ({e})") from e
    return rows


def scenarios_of(rows: list[dict[str, object]], where: Path) -> list[Scenario]:
    """The scenarios of a config's rows, in ``line`` order; the lines must be 1..n."""
    ordered = sorted(rows, key=lambda r: int(r[LINE]))  # type: ignore[call-overload]
    lines = [int(r[LINE]) for r in ordered]  # type: ignore[call-overload]
    if lines != list(range(1, len(rows) + 1)):
        raise UserError(f"{where}: the rows' {LINE} values are not 1..{len(rows)}; a shard is missing or doubled")
    out = []
    for row in ordered:
        try:
            out.append(from_row(row))
        except (ValueError, TypeError, KeyError) as e:
            raise UserError(f"{where}: line {row[LINE]}: not a scenario ({str(e).splitlines()[0]})") from e
    return out


def data_hash(folder: Path, scenarios: list[Scenario]) -> str:
    """The content hash of the published data (the ``all`` rows and the files in ``prefdisco/``)."""
    files = {name: (folder / BENCH / name).read_bytes() for name in (PERSONAS_FILE, ATTRIBUTES_FILE)}
    return content_hash({SCENARIOS_FILE: jsonl_bytes(scenarios), **files})


def read_published(folder: Path | str, verify_hash: bool = True) -> Bench:
    """The benchmark a published folder holds (its hash checked against ``prefdisco/manifest.json``)."""
    folder = Path(folder)
    bench = folder / BENCH
    manifest = read_manifest(bench)
    for name in (PERSONAS_FILE, ATTRIBUTES_FILE):
        if not (bench / name).is_file():
            raise UserError(f"{bench / name}: missing (a published folder keeps the build's {name} there)")
    paths = config_files(folder, ALL)
    if not paths:
        raise UserError(f"{folder / DATA / ALL}: no Parquet files (the {ALL} config holds every scenario)")
    scenarios = scenarios_of(read_rows(paths), folder / DATA / ALL)
    if verify_hash:
        actual = data_hash(folder, scenarios)
        if manifest.get("content_hash") != actual:
            raise UserError(
                f"{folder}: the published data's content hash {actual} does not match {BENCH}/{MANIFEST_FILE}'s "
                f"{manifest.get('content_hash')!r}; a file changed after it was published (publish the benchmark "
                "again)"
            )
    personas = read_jsonl_models(bench / PERSONAS_FILE, Persona)
    attributes = parse_attributes((bench / ATTRIBUTES_FILE).read_text(encoding="utf-8"), str(bench / ATTRIBUTES_FILE))
    return Bench(scenarios=scenarios, personas=personas, attributes=attributes, manifest=manifest)
