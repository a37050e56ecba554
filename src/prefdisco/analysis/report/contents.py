"""What a report holds: every number, table, figure and example, computed before anything is written or
rendered (``analysis/report/build.py`` fills it, ``analysis/report/render.py`` renders it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from prefdisco.analysis.harms.section import Harms
from prefdisco.analysis.paper.examples import Example, Lead
from prefdisco.analysis.paper.questions import QuestionStats
from prefdisco.analysis.report.figures import FigureFile
from prefdisco.analysis.transfer.section import Transfer
from prefdisco.analysis.validity.judges import JudgeReliability
from prefdisco.analysis.validity.readings import Validity


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
    cost: pd.DataFrame | None = None
    """What the run cost per model, task and condition, by role (``analysis/cost/measures.py``); None: no
    ``cost_usd``."""
    cost_estimate: pd.DataFrame | None = None
    """The run's own estimate beside the measured tokens and USD, per role (``analysis/cost/measures.py``)."""
    figures: list[FigureFile] = field(default_factory=list)
    figures_left_out: bool = False
    """``--no-figures``: the report has no figure (each one's place says so)."""
    figures_omitted: dict[str, str] = field(default_factory=dict)
    """The figures that cannot show anything with this data (their names without ``.png``), each with why
    (``charts.left_out``); their places say it."""
    lead: Lead | None = None
    """A run of few scenarios: the dialogue shown near the report's top (``examples.lead_dialogue``)."""
    judges: JudgeReliability | None = None
    """Judge agreement, judge noise and the length-bias probe (``analysis/validity/judges.py``); None without an
    attribute
    table."""
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    control: pd.DataFrame | None = None
    """The control gap per (model, task) (``analysis/validity/control.py``); None when the run has no wrong_persona
    rows."""
    validity: Validity = field(default_factory=Validity)
    """The Validity section: one reading per instrument, the variance parts, the detectable difference and the
    human calibration (``analysis/validity/readings.py``)."""
    further_judges: pd.DataFrame | None = None
    """PrefAlign per further judge beside the run's (``analysis/validity/further_judges.py``); None without one."""
    caveats: list[str] = field(default_factory=list)
    """What a reader must know before any number (``analysis/report/caveats.py``), shown at the report's top."""
    simulator: pd.DataFrame | None = None
    """Elicitation and simulator errors per (model, task, condition) (``analysis/validity/simulator.py``); None when the
    results carry no simulator column or no dialogue measured one."""
    transfer: Transfer | None = None
    """The Transfer section of a sessions run (``analysis/transfer/section.py``); None for a run without sessions,
    which has no such section."""
    harms: Harms | None = None
    """The Harms section (``analysis/harms/section.py``): what personalization cost; every report built by
    ``report.build_report`` has it."""
    reference: Any = None
    """The table of a ``simfidelity --reference`` run (``reference_reading.ReferenceTable``, ``--reference-table``),
    shown in the Validity section; None without one."""
