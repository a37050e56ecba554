"""An instrument's part of the report: a ``Section`` computes its ``Part`` from what the report computed (``Context``),
and ``build.py`` loops over the sections registered with ``@section`` (an instrument's own folder registers it on
import: ``analysis/harms/section.py``; ``build.py`` imports the package's). A part's ``summary`` goes into
``summary.json``, its ``tables`` (file name → frame; None: no file) beside the report, its ``charts`` (drawn only
with figures) and ``omitted`` (figure name → why not drawn) among the figures, its ``readings`` into the Validity
table (by order), its ``caveats`` (None: none) to the report's top, and its ``view`` (None: nothing shown) into its
template fragments ``<name>.html`` and ``<name>.md`` in ``templates`` (a format without its file shows nothing) at
its ``place``: ``normalign`` (under Table 1's cells), ``validity`` (under the Validity table), ``section`` (an
``h2`` of its own after Validity, linked from the top as ``title``) or ``data`` (under the Data table). A section
that gives None has no part in the report."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from prefdisco.analysis.section.figures import Chart
from prefdisco.results.merge import RunProtocol
from prefdisco.results.table import ResultsData


@dataclass(frozen=True)
class Reading:
    instrument: str
    finding: str
    reading: str


PLACES = ("normalign", "validity", "section", "data")
TEMPLATES = Path(__file__).parents[1] / "report" / "templates" / "sections"


@dataclass(frozen=True)
class Context:
    """What every section reads: the results as loaded (``data``: its trial rows, attributes and transcripts), their
    trials averaged (``results``, ``attributes``), Table 1's cells, and what ``prefdisco report`` was given."""

    data: ResultsData
    results: pd.DataFrame
    attributes: pd.DataFrame | None
    cells: pd.DataFrame
    seed: int
    n_boot: int
    run_dir: Path | Sequence[Path] | None = None
    protocols: Sequence[RunProtocol] = ()
    calibration: Any = None
    """The judge against people (``--human``: ``validity/calibrate.Calibration``), or None."""
    reference: Any = None
    """A reference run's table (``--reference-table``: ``validity/reference.ReferenceTable``), or None."""


@dataclass
class Part:
    summary: dict[str, Any] = field(default_factory=dict)
    tables: dict[str, pd.DataFrame | None] = field(default_factory=dict)
    charts: Callable[[], list[Chart]] = list
    omitted: dict[str, str] = field(default_factory=dict)
    readings: list[Reading] = field(default_factory=list)
    caveats: list[str | None] = field(default_factory=list)
    view: dict[str, Any] | None = None
    value: Any = None
    """The instrument's own result (``Harms``, ``Transfer``, a table, ...): ``Report.part(name)``."""


class Section(Protocol):
    def __call__(self, ctx: Context) -> Part | None: ...


@dataclass(frozen=True)
class Registered:
    name: str
    build: Section
    order: int
    place: str = "validity"
    title: str = ""
    templates: Path = TEMPLATES


REGISTRY: dict[str, Registered] = {}


def section(name: str, *, order: int, place: str = "validity", title: str = "", templates: Path = TEMPLATES):
    """Register the decorated ``Section`` as ``name``; the report shows the sections by ``order``."""
    if place not in PLACES:
        raise ValueError(f"place: one of {', '.join(PLACES)}, got {place!r}")

    def register(build: Section) -> Section:
        REGISTRY[name] = Registered(name, build, order, place, title or name, Path(templates))
        return build

    return register


def sections() -> list[Registered]:
    return sorted(REGISTRY.values(), key=lambda r: (r.order, r.name))
