"""The source benchmarks of a build, and the configs and splits a published folder has for them.

One config per source benchmark (the problems' ``benchmark``, as a config name the Hub takes) and one of them all
(``all``, the default config), each with the splits the build drew its problems from (the loader's ``split`` in a
problem's metadata: ``test`` for MATH-500, ``validation`` for CommonsenseQA; ``test`` where none is recorded). A
source benchmark's Hub id and license are the registry's (``benchmarks/registry.py``); a benchmark the registry does
not know (``--benchmark generic``, an imported release) has neither, said as such.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from prefdisco.benchmarks.registry import BENCHMARKS, UNKNOWN_LICENSE
from prefdisco.schema import Scenario

ALL = "all"
"""The config of every scenario (the folder's default)."""

DEFAULT_SPLIT = "test"
_SPLIT = re.compile(r"^\w+(\.\w+)*$")  # what the Hub takes as a split name
_NOT_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class Source:
    """One source benchmark of the build."""

    benchmark: str  # as the problems name it
    config: str  # its config's name
    hub_id: str | None
    license: str
    license_note: str
    scenarios: int
    problems: int


@dataclass(frozen=True)
class Config:
    """A config of the published folder: its name and, per split, the indices of its scenarios (build order)."""

    name: str
    splits: dict[str, list[int]]

    @property
    def size(self) -> int:
        return sum(len(rows) for rows in self.splits.values())


def split_of(scenario: Scenario) -> str:
    """The split the build drew a scenario's problem from (``test`` where none is recorded)."""
    split = scenario.problem.metadata.get("split")
    return split if isinstance(split, str) and _SPLIT.match(split) else DEFAULT_SPLIT


def config_name(benchmark: str) -> str:
    """A benchmark's name as a config name: letters, digits, ``_``, ``.`` and ``-``; never ``all``."""
    name = _NOT_NAME.sub("_", benchmark.strip()).strip("_.-") or "unnamed"
    return f"{name}_benchmark" if name == ALL else name


def sources(scenarios: list[Scenario]) -> list[Source]:
    """The build's source benchmarks, in the order their first scenario comes."""
    order = list(dict.fromkeys(s.problem.benchmark for s in scenarios))
    out = []
    for benchmark in order:
        mine = [s for s in scenarios if s.problem.benchmark == benchmark]
        spec = BENCHMARKS.get(benchmark.strip().lower())
        out.append(
            Source(
                benchmark=benchmark,
                config=config_name(benchmark),
                hub_id=spec.hub_id if spec else None,
                license=spec.license if spec else UNKNOWN_LICENSE,
                license_note=(spec.license_note if spec else "not a benchmark of PrefDisco's registry"),
                scenarios=len(mine),
                problems=len({s.problem.id for s in mine}),
            )
        )
    names = [s.config for s in out]
    if len(set(names)) != len(names):  # two benchmark names that differ only in characters a config cannot hold
        out = [
            Source(**{**s.__dict__, "config": f"{s.config}_{i + 1}"}) if names.count(s.config) > 1 else s
            for i, s in enumerate(out)
        ]
    return out


def configs(scenarios: list[Scenario], found: list[Source]) -> list[Config]:
    """``all`` first, then one config per source benchmark."""
    by_benchmark = {s.benchmark: s.config for s in found}
    tables: dict[str, dict[str, list[int]]] = {ALL: {}}
    for index, scenario in enumerate(scenarios):
        split = split_of(scenario)
        for name in (ALL, by_benchmark[scenario.problem.benchmark]):
            tables.setdefault(name, {}).setdefault(split, []).append(index)
    return [Config(name, dict(sorted(splits.items()))) for name, splits in tables.items()]
