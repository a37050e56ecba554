"""What a report holds: every number, table, figure and example, computed before anything is written or
rendered (``analysis/report/build.py`` fills it, ``analysis/report/render.py`` renders it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from prefdisco.analysis.paper.examples import Example, Lead
from prefdisco.analysis.paper.questions import QuestionStats
from prefdisco.analysis.section.figures import FigureFile
from prefdisco.analysis.section.registry import Part, Reading, Registered


@dataclass
class Report:
    summary: dict[str, Any]
    settings: dict[str, Any]
    cells: pd.DataFrame
    scenarios: pd.DataFrame
    accuracy: pd.DataFrame
    questions: QuestionStats
    fixed_k: pd.DataFrame
    attribute_scores: pd.DataFrame | None
    worst_attributes: pd.DataFrame | None
    heatmap_mode: str | None
    examples: list[Example]
    quality: pd.DataFrame
    figures: list[FigureFile] = field(default_factory=list)
    figures_left_out: bool = False
    """``--no-figures``: the report has no figure (each one's place says so)."""
    figures_omitted: dict[str, str] = field(default_factory=dict)
    """The figures that cannot show anything with this data (their names without ``.png``), each with why
    (``charts.left_out``); their places say it."""
    lead: Lead | None = None
    """A run of few scenarios: the dialogue shown near the report's top (``examples.lead_dialogue``)."""
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    readings: list[Reading] = field(default_factory=list)
    """The Validity table: one line per instrument, in the sections' order."""
    caveats: list[str] = field(default_factory=list)
    """What a reader must know before any number (``analysis/report/caveats.py``), shown at the report's top."""
    parts: list[tuple[Registered, Part]] = field(default_factory=list)
    """Each registered section's part of this report, in their order (``section/registry.py``)."""

    def part(self, name: str) -> Any:
        """The instrument's own result of the section ``name`` (``Part.value``); None when it has no part here."""
        return next((p.value for r, p in self.parts if r.name == name), None)
