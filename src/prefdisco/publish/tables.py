"""The Parquet files of a published folder: ``data/<config>/<split>-00000-of-00001.parquet``.

Every config's rows in build order, a shard per ``ROWS_PER_SHARD`` rows and a row group per ``ROWS_PER_GROUP`` (a
group of a few hundred kB of text, far below the 300 MB the Hub's viewer scans), written with fixed settings (no
time, no host, the same bytes for the same build and pyarrow). Before anything is written every row is read back
and must give the scenario's line of ``scenarios.jsonl`` byte for byte; that is what lets a reader check the
build's content hash from the Parquet alone.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.parquet as pq

from prefdisco.errors import UserError
from prefdisco.publish.bags import JSON_TEXT, choose_type
from prefdisco.publish.columns import bag_values, from_row, row_schema, to_row
from prefdisco.publish.fields import readable
from prefdisco.publish.layout import DATA
from prefdisco.publish.sources import Config
from prefdisco.schema import Scenario

ROWS_PER_GROUP = 100
ROWS_PER_SHARD = 5000
PARQUET_SETTINGS = {
    "compression": "snappy",
    "use_dictionary": True,
    "write_statistics": True,
    "version": "2.6",
    "data_page_version": "1.0",
    "row_group_size": ROWS_PER_GROUP,
}
"""Every Parquet file's writer settings (the row group size included), fixed so a file depends on its rows only."""


@dataclass
class Table:
    """One config's Parquet files and what the card says of them."""

    config: Config
    bag_types: dict[str, pa.DataType]
    schema: pa.Schema
    files: dict[str, list[str]] = field(default_factory=dict)  # split -> relative paths

    @property
    def json_fields(self) -> list[str]:
        """The free-form fields this config publishes as JSON text."""
        return [name for name, kind in self.bag_types.items() if kind == JSON_TEXT]


def shard_paths(config: str, split: str, rows: int) -> list[str]:
    n = max(1, -(-rows // ROWS_PER_SHARD))
    return [f"{DATA}/{config}/{split}-{i:05d}-of-{n:05d}.parquet" for i in range(n)]


def parquet_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, **PARQUET_SETTINGS)
    return sink.getvalue()


def _first_difference(a: object, b: object, at: str) -> str:
    """The path of the first value ``a`` and ``b`` differ in (as JSON: key order and 1 vs 1.0 count)."""
    if isinstance(a, dict) and isinstance(b, dict) and list(a) == list(b):
        for key in a:
            if json.dumps(a[key]) != json.dumps(b[key]):
                return _first_difference(a[key], b[key], f"{at}.{key}" if at else str(key))
    return at


def _check_exact(scenario: Scenario, row: dict[str, object], where: str) -> None:
    """The row must give back the scenario's own JSON (its line of ``scenarios.jsonl``)."""
    back = from_row(row)
    if back.model_dump_json() != scenario.model_dump_json():
        field = _first_difference(scenario.model_dump(mode="json"), back.model_dump(mode="json"), "")
        raise UserError(
            f"{where}: scenario {scenario.id!r}: its {field or 'JSON'} does not come back from a Parquet row as "
            "written (key order or number types); nothing written"
        )


def _described(kind: pa.DataType) -> pa.DataType:
    """A free-form field's type, as JSON text where Croissant's reader could not read it nested (:mod:`.fields`)."""
    return kind if readable(kind) else JSON_TEXT


def build_tables(scenarios: list[Scenario], configs: list[Config], where: str) -> tuple[list[Table], dict[str, bytes]]:
    """Every config's table and the files that hold it (relative path → bytes); ``where`` names the benchmark in
    errors."""
    bags = [bag_values(s) for s in scenarios]
    tables: list[Table] = []
    files: dict[str, bytes] = {}
    for config in configs:
        indices = [i for rows in config.splits.values() for i in rows]
        bag_types = {name: _described(choose_type([bags[i][name] for i in indices])) for name in bags[0]}
        schema = row_schema(bag_types)
        table = Table(config, bag_types, schema)
        for split, rows in config.splits.items():
            data = [to_row(scenarios[i], i + 1, bag_types) for i in rows]
            for i, row in zip(rows, data, strict=True):
                _check_exact(scenarios[i], row, where)
            paths = shard_paths(config.name, split, len(data))
            table.files[split] = paths
            for n, path in enumerate(paths):
                part = data[n * ROWS_PER_SHARD : (n + 1) * ROWS_PER_SHARD]
                files[path] = parquet_bytes(pa.Table.from_pylist(part, schema=schema))
        tables.append(table)
    return tables, files
