"""What a report holds: every number, table, figure and example, computed before anything is written or
rendered (``analysis/report.py`` fills it, ``analysis/render.py`` renders it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from prefdisco.analysis.examples import Example
from prefdisco.analysis.figures import FigureFile
from prefdisco.analysis.questions import QuestionStats


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
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
