"""Read what the annotation tool needs from a benchmark folder: ``scenarios.jsonl`` and ``attributes.json``.

Every problem is a ``UserError`` naming the file (and line) and what was expected. The folder's content hash
(over both files) lets the annotation store refuse to mix items from two different builds.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from prefdisco.errors import UserError, describe_validation_error
from prefdisco.schema import Attribute, Scenario

SCENARIOS_FILE = "scenarios.jsonl"
ATTRIBUTES_FILE = "attributes.json"


@dataclass(frozen=True)
class Benchmark:
    scenarios: list[Scenario]
    attributes: list[Attribute]
    content_sha256: str
    _index: dict[str, Attribute] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", attribute_index(self.attributes))

    def resolve(self, name: str) -> Attribute:
        """The catalogue attribute called ``name`` (or having it as an alias)."""
        return self._index[name]


def attribute_index(attributes: list[Attribute]) -> dict[str, Attribute]:
    """Name and alias -> attribute; a real name always wins over another attribute's alias."""
    index = {alias: a for a in attributes for alias in a.aliases}
    index.update({a.name: a for a in attributes})
    return index


def load_benchmark(bench_dir: Path) -> Benchmark:
    bench_dir = Path(bench_dir)
    if not bench_dir.is_dir():
        raise UserError(f"{bench_dir}: not a folder (expected a benchmark folder with {SCENARIOS_FILE})")
    attributes_path = bench_dir / ATTRIBUTES_FILE
    scenarios_path = bench_dir / SCENARIOS_FILE
    attributes = _load_attributes(attributes_path)
    scenarios = _load_scenarios(scenarios_path, attribute_index(attributes))
    digest = hashlib.sha256()
    for path in (scenarios_path, attributes_path):
        digest.update(path.read_bytes())
    return Benchmark(scenarios=scenarios, attributes=attributes, content_sha256=digest.hexdigest())


def _load_attributes(path: Path) -> list[Attribute]:
    if not path.is_file():
        raise UserError(f"{path}: file not found (expected a JSON list of attributes)")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UserError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(raw, list) or not raw:
        raise UserError(f"{path}: expected a non-empty JSON list of attributes")
    try:
        attributes = TypeAdapter(list[Attribute]).validate_python(raw)
    except ValidationError as e:
        raise UserError(describe_validation_error(e, str(path))) from None
    names = [a.name for a in attributes]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UserError(f"{path}: attribute name(s) listed more than once: {', '.join(dupes)}")
    return attributes


def _load_scenarios(path: Path, index: dict[str, Attribute]) -> list[Scenario]:
    if not path.is_file():
        raise UserError(f"{path}: file not found (expected one Scenario JSON object per line)")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as e:
        raise UserError(f"{path}: not UTF-8 text ({e})") from None
    scenarios: list[Scenario] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            scenario = Scenario.model_validate_json(line)
        except ValidationError as e:
            raise UserError(describe_validation_error(e, f"{path} line {number}")) from None
        if scenario.id in seen:
            raise UserError(
                f"{path} line {number}: scenario id {scenario.id!r} already used on line {seen[scenario.id]}"
            )
        seen[scenario.id] = number
        unknown = [n for n in scenario.relevant_attributes if n not in index]
        if unknown:
            raise UserError(f"{path} line {number}: relevant_attributes {unknown} are not in {ATTRIBUTES_FILE}")
        scenarios.append(scenario)
    if not scenarios:
        raise UserError(f"{path}: no scenarios (expected one Scenario JSON object per line)")
    return scenarios
