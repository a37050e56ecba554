"""The report's figures, each drawn only where its data can show something.

A small run's first report led with a 1×1 heatmap and a boxplot of one box (issue 49). A figure that cannot show
anything beyond the table beside it is left out, and its place says why (``left_out``: the figure's name → the
reason, rendered "No figure: …" in both reports); every other figure is drawn (``charts``). The rules:

* **NormAlign heatmap** (``fig_normalign``): left out with one (model, task) cell — Table 1 is its one number.
* **Per-scenario distribution** (``fig_normalign_scenarios``): left out when no model has ``MIN_BOX`` scenarios with
  a per-scenario NormAlign: the quartiles of fewer values are the values themselves (the cells table gives their
  median and share negative).
* **Questions vs alignment** (``fig_questions``): left out when neither panel can show a relation: fewer than
  ``questions.MIN_POINTS`` scored discovery scenarios, or all of them asking the same number of questions, and
  fewer than two (model, task) cells with both a NormAlign and a mean number of questions.
* **Fixed K** (``fig_fixed_k``): left out when the run has one K — alignment against K needs two values of it.
* **Per-attribute heatmap** (``fig_attributes``): left out with one model and one attribute.
* **PrefAlign against elicited weight** (``fig_elicitation``, ``validity/section.py``): left out with fewer than
  ``questions.MIN_POINTS`` dialogues with a measured elicited weight.

A figure some of whose panels have nothing to draw is still drawn; each empty panel says why (``figures.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from prefdisco.analysis.paper.attributes import heatmap_matrix
from prefdisco.analysis.paper.questions import MIN_POINTS
from prefdisco.analysis.report.contents import Report
from prefdisco.analysis.section import figures as figs

MIN_BOX = 5
"""The fewest per-scenario NormAligns of one model that make a box of quartiles worth drawing."""


def _attribute_matrix(report: Report) -> pd.DataFrame | None:
    mode = report.heatmap_mode
    if report.attribute_scores is None or mode is None:
        return None
    return heatmap_matrix(report.attribute_scores, mode)


def left_out(report: Report) -> dict[str, str]:
    """The figures (their names without ``.png``) that cannot show anything here, each with why (module
    docstring), the sections' own (``Part.omitted``) among them."""
    out: dict[str, str] = {}
    if len(report.cells) <= 1:
        out["fig_normalign"] = "one (model, task) cell, whose NormAlign Table 1 gives"
    per = report.scenarios.dropna(subset=["normalign"])
    most = int(per.groupby("model").size().max()) if len(per) else 0
    if most < MIN_BOX:
        if report.scenarios.empty:
            why = "no scenario is scored in all three of baseline, discovery and oracle"
        else:
            why = (
                f"a box of quartiles needs {MIN_BOX} scenarios with a per-scenario NormAlign and no model has more "
                f"than {most} (the table above gives their median)"
            )
        out["fig_normalign_scenarios"] = why
    q = report.questions
    x = q.points["n_questions"].to_numpy(dtype=float)
    relation = len(x) >= MIN_POINTS and np.ptp(x) > 0
    cells = q.per_cell.dropna(subset=["normalign", "mean_questions"]) if len(q.per_cell) else q.per_cell
    if not relation and len(cells) < 2:
        asked = f"fewer than {MIN_POINTS} scored discovery scenarios ({len(x)})"
        if len(x) >= MIN_POINTS:
            asked = f"every scored discovery scenario asked {x[0]:g} questions"
        out["fig_questions"] = f"{asked} and fewer than two (model, task) cells: no relation to draw"
    if not report.fixed_k.empty:
        ks = sorted({int(k) for k in report.fixed_k["fixed_k"]})
        if len(ks) < 2:
            out["fig_fixed_k"] = f"the run has one K ({ks[0]}): alignment against K needs two values of it"
    matrix = _attribute_matrix(report)
    if matrix is not None and matrix.size == 1:
        out["fig_attributes"] = "one model and one attribute: the table below is its one number"
    for _, part in report.parts:
        out |= part.omitted
    return out


def charts(report: Report, seed: int) -> list[figs.Chart]:
    """Every figure of ``report`` that is not ``left_out``, drawn, then its sections' (``Part.charts``); a figure
    left out is never drawn."""
    q = report.questions
    specs: list[tuple[str, str, str, Callable[[], Any]]] = [
        (
            "fig_normalign",
            "Table 1 as a heatmap: NormAlign per (model, task)",
            "Grey cells are null (see Table 1 for the reason).",
            lambda: figs.normalign_heatmap(report.cells),
        ),
        (
            "fig_normalign_scenarios",
            "Per-scenario NormAlign distribution",
            "Scenarios whose oracle and baseline scores are equal are excluded; boxes: quartiles and median, "
            "whiskers: 1.5 IQR.",
            lambda: figs.normalign_distribution(report.scenarios),
        ),
        (
            "fig_accuracy",
            "Figure 4: accuracy by condition",
            "Bars: accuracy; whiskers: 95% Wilson interval.",
            lambda: figs.accuracy_figure(report.accuracy),
        ),
        (
            "fig_questions",
            "Figure 3: questions asked vs alignment",
            f"Left: discovery scenarios (at most {figs.MAX_SCATTER:,} drawn), OLS line per family. "
            "Right: mean questions vs NormAlign per (model, task).",
            lambda: figs.questions_figure(q.points, q.slopes, q.per_cell, seed),
        ),
    ]
    if not report.fixed_k.empty:
        specs.append(
            (
                "fig_fixed_k",
                "Figure 5: alignment against a fixed number of questions K",
                "Mean PrefAlign of the fixed-K rows per task and model.",
                lambda: figs.fixed_k_figure(report.fixed_k),
            )
        )
    matrix, mode = _attribute_matrix(report), report.heatmap_mode
    if matrix is not None and mode is not None and matrix.size:
        specs.append(
            (
                "fig_attributes",
                "Per-attribute alignment",
                f"Mean judge score per model and attribute in {mode} mode "
                f"({matrix.shape[1]} most often judged attributes).",
                lambda: figs.attributes_heatmap(matrix, mode),
            )
        )
    skip = left_out(report)
    out = [figs.Chart(f"{key}.png", title, caption, draw()) for key, title, caption, draw in specs if key not in skip]
    return out + [chart for _, part in report.parts for chart in part.charts()]
