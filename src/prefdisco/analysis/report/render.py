"""Render the report's HTML (self-contained: figures inline as base64 PNG) and Markdown (jinja2)."""

from __future__ import annotations

import base64
import functools
from pathlib import Path
from typing import Any

import pandas as pd

from prefdisco.analysis.paper.accuracy import ALL, POOLED
from prefdisco.analysis.report.contents import Report
from prefdisco.analysis.section.registry import PLACES
from prefdisco.analysis.section.shown import interval, num, records, template_env
from prefdisco.schema import CONDITIONS


def _table1(report: Report) -> dict[str, Any]:
    cells = report.cells
    tasks = sorted(cells["task"].unique())
    rows = []
    for model, sub in cells.groupby("model", sort=True):
        by_task = {r["task"]: r for r in records(sub)}
        entries = []
        for t in tasks:
            r = by_task.get(t)
            if r is None:
                entries.append({"text": "", "title": "no rows"})
            elif r["normalign"] is None:
                entries.append({"text": "null", "title": r["reason"]})
            else:
                why = f"(no interval: {r['ci_reason']})" if r["ci_low"] is None and r.get("ci_reason") else ""
                text = f"{num(r['normalign'], 1)} {why or interval(r['ci_low'], r['ci_high'])}"
                entries.append({"text": text, "title": f"n={r['n_scenarios']}"})
        rows.append({"model": model, "cells": entries})
    return {"tasks": tasks, "rows": rows}


def _accuracy_rows(acc: pd.DataFrame) -> list[dict[str, Any]]:
    rows = []
    order = acc.assign(_p=acc["model"] == POOLED, _a=acc["task"] == ALL).sort_values(["_p", "model", "_a", "task"])
    for (model, task), sub in order.groupby(["model", "task"], sort=False):
        by_mode = {r["mode"]: r for r in records(sub)}
        row = {"model": model, "task": task}
        for m in CONDITIONS:
            r = by_mode.get(m)
            row[m] = (
                "—" if r is None else f"{num(r['accuracy'], 3)} {interval(r['ci_low'], r['ci_high'], 3)} n={r['n']}"
            )
        rows.append(row)
    return rows


def _slope_cards(report: Report) -> list[dict[str, Any]]:
    """The headline's slope of PrefAlign on questions asked, one card per model family whose slope is defined (one
    that is not says why in section 3's table, not as a card of "—")."""
    families = report.questions.points.groupby("family")["model"].agg(lambda m: sorted(set(m)))
    return [
        {"family": r["family"], "slope": r["slope"], "models": ", ".join(families.get(r["family"], [])), "n": r["n"]}
        for r in records(report.questions.slopes)
        if r["slope"] is not None
    ]


def context(report: Report, *, inline: bool) -> dict[str, Any]:
    figures = []
    for f in report.figures:
        src = f"data:image/png;base64,{base64.b64encode(f.png).decode('ascii')}" if inline else f.name
        caption = " ".join([f.caption, *(f"Empty panel: {why}." for why in f.empty)])
        figures.append({"key": f.name.removesuffix(".png"), "src": src, "title": f.title, "caption": caption})
    return {
        "caveats": report.caveats,
        "s": report.summary,
        "settings": report.settings,
        "figures": {f["key"]: f for f in figures},
        "figures_left_out": report.figures_left_out,
        "omitted": report.figures_omitted,
        "lead": report.lead,
        "slope_cards": _slope_cards(report),
        "table1": _table1(report),
        "cells": records(report.cells),
        "accuracy": _accuracy_rows(report.accuracy),
        "slopes": records(report.questions.slopes),
        "mean_questions": report.summary["mean_questions"],
        "fixed_k": records(report.fixed_k),
        "worst": records(report.worst_attributes) if report.worst_attributes is not None else None,
        "heatmap_mode": report.heatmap_mode,
        "examples": report.examples,
        "quality": records(report.quality),
        "tables": sorted(report.tables),
        "modes": CONDITIONS,
        "has_attributes": report.attribute_scores is not None,
        "validity": [r.__dict__ for r in report.readings],
        "sections": [entry.name for entry, _ in report.parts],
    }


@functools.cache
def _fragment(path: Path, html: bool) -> Any:
    """A section's template fragment (``section/registry.py``), compiled once; None when the section has none in this
    format."""
    return template_env(html).from_string(path.read_text(encoding="utf-8")) if path.is_file() else None


def _render(name: str, report: Report, *, html: bool) -> str:
    from markupsafe import Markup  # jinja2's own

    ctx = context(report, inline=html)
    notes = template_env(False).get_template("method.txt").render(**ctx)
    ctx["method"] = [line[2:] for line in notes.splitlines() if line.startswith("- ")]
    ctx["places"] = {place: [] for place in PLACES}
    for entry, part in report.parts:
        fragment = _fragment(entry.templates / f"{entry.name}.{'html' if html else 'md'}", html)
        if part.view is not None and fragment is not None:
            text = fragment.render(**ctx, **{entry.name: part.view})
            ctx["places"][entry.place].append({"name": entry.name, "title": entry.title, "text": Markup(text)})
    return template_env(html).get_template(name).render(**ctx)


def render_html(report: Report) -> str:
    return _render("report.html", report, html=True)


def render_markdown(report: Report) -> str:
    return _render("report.md", report, html=False)
