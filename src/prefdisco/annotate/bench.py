"""The benchmark folder as the annotation tool needs it: read through :func:`prefdisco.benchio.read_bench`.

``read_bench`` checks the manifest, the content hash and every line's schema; on top of that the annotation
tool needs every scenario's ``relevant_attributes`` to name an attribute of the folder's ``attributes.json``
(by name or alias), since those attributes are what the annotators are shown. Every problem is a one-line
``UserError`` naming the file (and line). The manifest's ``content_hash`` is what the annotation store keys the
folder by.
"""

from __future__ import annotations

from pathlib import Path

from prefdisco.benchio import ATTRIBUTES_FILE, SCENARIOS_FILE, Bench, read_bench
from prefdisco.errors import UserError
from prefdisco.schema import Attribute


def attribute_index(attributes: list[Attribute]) -> dict[str, Attribute]:
    """Name and alias -> attribute; a real name always wins over another attribute's alias."""
    index = {alias: a for a in attributes for alias in a.aliases}
    index.update({a.name: a for a in attributes})
    return index


def load_benchmark(bench_dir: Path | str) -> Bench:
    """Read a benchmark folder and check it has scenarios whose relevant attributes are all in the catalogue."""
    bench_dir = Path(bench_dir)
    bench = read_bench(bench_dir)
    scenarios_path = bench_dir / SCENARIOS_FILE
    if not bench.scenarios:
        raise UserError(f"{scenarios_path}: no scenarios (expected one Scenario JSON object per line)")
    index = attribute_index(bench.attributes)
    for number, scenario in enumerate(bench.scenarios):
        unknown = [name for name in scenario.relevant_attributes if name not in index]
        if unknown:
            line = _line_of_record(scenarios_path, number)
            raise UserError(f"{scenarios_path}:{line}: relevant_attributes {unknown} are not in {ATTRIBUTES_FILE}")
    return bench


def _line_of_record(path: Path, number: int) -> int:
    """The 1-based line of the ``number``-th (0-based) record of a JSONL file; blank lines hold no record."""
    lines = path.read_text(encoding="utf-8").split("\n")
    records = [lineno for lineno, line in enumerate(lines, start=1) if line.strip()]
    return records[number]
