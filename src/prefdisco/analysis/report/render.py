"""Render the report's HTML (self-contained: figures inline as base64 PNG) and Markdown (jinja2)."""

from __future__ import annotations

import base64
import functools
import math
from typing import Any

import pandas as pd

from prefdisco.analysis.harms.measures import MEASURES
from prefdisco.analysis.paper.accuracy import ALL, POOLED
from prefdisco.analysis.report.contents import Report
from prefdisco.results.contract import condition_label
from prefdisco.schema import CONDITIONS


def num(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)) or value is pd.NA:
        return "—"
    if isinstance(value, int | bool):
        return str(value)
    return f"{float(value):.{digits}f}"


def interval(lo: Any, hi: Any, digits: int = 1) -> str:
    if lo is None or hi is None or (isinstance(lo, float) and math.isnan(lo)):
        return "—"
    return f"[{num(lo, digits)}, {num(hi, digits)}]"


def span(cell: dict[str, Any]) -> str:
    """A NormAlign cell's interval, or why it has none ("too few scenarios (n = 2)")."""
    if cell.get("ci_low") is None and cell.get("ci_reason"):
        return str(cell["ci_reason"])
    return interval(cell.get("ci_low"), cell.get("ci_high"))


def md(value: Any) -> str:
    """Text safe inside a Markdown table cell."""
    return str(value).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: (None if pd.isna(v) else v) for k, v in r.items()} for r in frame.to_dict("records")]


def _table1(report: Report) -> dict[str, Any]:
    cells = report.cells
    tasks = sorted(cells["task"].unique())
    rows = []
    for model, sub in cells.groupby("model", sort=True):
        by_task = {r["task"]: r for r in _records(sub)}
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
        by_mode = {r["mode"]: r for r in _records(sub)}
        row = {"model": model, "task": task}
        for m in CONDITIONS:
            r = by_mode.get(m)
            row[m] = (
                "—" if r is None else f"{num(r['accuracy'], 3)} {interval(r['ci_low'], r['ci_high'], 3)} n={r['n']}"
            )
        rows.append(row)
    return rows


def _further_judges(table: pd.DataFrame | None) -> dict[str, Any] | None:
    """The PrefAlign-by-judge table (``further_judges.py``) as rows of formatted cells: the run's, then each judge's."""
    if table is None or table.empty:
        return None
    judges = [c[len("pref_align[") : -1] for c in table.columns if c.startswith("pref_align[")]
    rows = []
    for r in _records(table):
        cells = [f"{num(r['pref_align'], 3)} (n={r['n']})"]
        cells += [f"{num(r[f'pref_align[{j}]'], 3)} (n={r[f'n[{j}]']})" for j in judges]
        condition = condition_label(r["mode"], r["fixed_k"])
        rows.append({"model": r["model"], "task": r["task"], "condition": condition, "cells": cells})
    return {"judges": judges, "rows": rows}


def _transfer(report: Report) -> dict[str, Any] | None:
    """The Transfer section as rows of formatted cells (``transfer/section.py``); None for a run without sessions."""
    t = report.transfer
    if t is None:
        return None

    def value(r: dict[str, Any], key: str, digits: int, reason: str | None = None) -> str:
        low, high = r.get(f"{key}_ci_low"), r.get(f"{key}_ci_high")
        text = num(r[key], digits)
        if r[key] is not None and low is not None:
            text += f" {interval(low, high, digits)}"
        elif r[key] is None and reason and r.get(reason):
            text += f" ({r[reason]})"
        return text

    positions = [
        {
            "model": r["model"],
            "task": r["task"],
            "arm": r["arm"],
            "position": r["position"],
            "n": r["n"],
            "pref_align": value(r, "pref_align", 2),
            "normalign": value(r, "normalign", 1, "normalign_reason") + f" n={r['normalign_n']}",
            "n_questions": num(r["n_questions"], 2),
            "questions_saved": value(r, "questions_saved", 2) if r["arm"] != "discovery" else "",
            "reask_rate": num(r["reask_rate"], 2),
            "elicited_weight": num(r["elicited_weight"], 2),
        }
        for r in _records(t.positions)
    ]
    gains = [
        {
            "model": r["model"],
            "task": r["task"],
            "arm": r["arm"],
            "position": r["position"],
            "n": r["gain_n"],
            "gain": (num(r["gain"], 1) + f" {interval(r['ci_low'], r['ci_high'])}") if r["gain"] is not None else "—",
            "reason": r["reason"] or "",
        }
        for r in _records(t.gains)
    ]
    slopes = [
        {
            "model": r["model"],
            "task": r["task"],
            "arm": r["arm"],
            "mean_gain": num(r["mean_gain"], 1),
            "slope": (num(r["slope"], 2) + f" {interval(r['ci_low'], r['ci_high'], 2)}")
            if r["slope"] is not None
            else "—",
            "sessions": r["n_sessions"],
            "reason": r["reason"] or "",
        }
        for r in _records(t.slopes)
    ]
    labels = [] if t.labels is None else _records(t.labels)
    stale = [] if t.stale is None else _records(t.stale)
    return {
        "readings": [r.__dict__ for r in t.readings],
        "positions": positions,
        "gains": gains,
        "slopes": slopes,
        "labels": labels,
        "stale": stale,
    }


_UNSIGNED = ("breakage", "repair", "flip_rate", "flip_held", "belief_agreement", "belief_accuracy")
"""The harms measures that are shares (shown without a sign); the others are differences."""


def _harms(report: Report) -> dict[str, Any] | None:
    """The Harms section as readings and rows of formatted cells (``harms/section.py``)."""
    h = report.harms
    if h is None:
        return None
    rows = []
    for r in _records(h.table):
        signed = r["measure"] not in _UNSIGNED
        value = "—" if r["value"] is None else f"{r['value']:+.3f}" if signed else num(r["value"], 3)
        if r["value"] is not None and r["ci_low"] is not None:
            value += f" {interval(r['ci_low'], r['ci_high'], 3)}"
        rows.append(
            {
                "model": r["model"],
                "task": r["task"],
                "measure": MEASURES[r["measure"]],
                "condition": r["condition"],
                "value": value,
                "n": r["n"],
                "reason": r["reason"] or "",
            }
        )
    return {"readings": [r.__dict__ for r in h.readings], "rows": rows}


def _reference(report: Report) -> dict[str, Any] | None:
    """The Validity section's table of a reference run (``--reference-table``), its shown columns only."""
    from prefdisco.analysis.validity.reference import SHOWN

    table = report.reference
    if table is None:
        return None
    rows = [
        {"who": r["simulator"], "ours": r["simulator"] in table.matched, **{k: r.get(k) for k in SHOWN}}
        for r in table.rows
    ]
    return {"about": table.reference, "file": str(table.folder / "reference.csv"), "columns": SHOWN, "rows": rows}


def _slope_cards(report: Report) -> list[dict[str, Any]]:
    """The headline's slope of PrefAlign on questions asked, one card per model family whose slope is defined (one
    that is not says why in section 3's table, not as a card of "—")."""
    families = report.questions.points.groupby("family")["model"].agg(lambda m: sorted(set(m)))
    return [
        {"family": r["family"], "slope": r["slope"], "models": ", ".join(families.get(r["family"], [])), "n": r["n"]}
        for r in _records(report.questions.slopes)
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
        "reference": _reference(report),
        "table1": _table1(report),
        "cells": _records(report.cells),
        "accuracy": _accuracy_rows(report.accuracy),
        "slopes": _records(report.questions.slopes),
        "mean_questions": report.summary["mean_questions"],
        "fixed_k": _records(report.fixed_k),
        "further_judges": _further_judges(report.further_judges),
        "worst": _records(report.worst_attributes) if report.worst_attributes is not None else None,
        "heatmap_mode": report.heatmap_mode,
        "examples": report.examples,
        "quality": _records(report.quality),
        "cost": _records(report.cost) if report.cost is not None else [],
        "cost_estimate": _records(report.cost_estimate) if report.cost_estimate is not None else [],
        "tables": sorted(report.tables),
        "modes": CONDITIONS,
        "has_attributes": report.attribute_scores is not None,
        "validity": [r.__dict__ for r in report.validity.readings],
        "transfer": _transfer(report),
        "harms": _harms(report),
    }


@functools.cache
def template_env(autoescape: bool):
    """The report templates' environment (the report's and the leaderboard's pages), one per process for each
    escaping: jinja compiles a template once per environment (about 0.3 s of a report's render when a new one was
    made for every report)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("prefdisco.analysis.report", "templates"),
        autoescape=autoescape,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters |= {"num": num, "interval": interval, "md": md, "span": span}
    return env


def _render(name: str, report: Report, *, html: bool) -> str:
    ctx = context(report, inline=html)
    notes = template_env(False).get_template("method.txt").render(**ctx)
    ctx["method"] = [line[2:] for line in notes.splitlines() if line.startswith("- ")]
    return template_env(html).get_template(name).render(**ctx)


def render_html(report: Report) -> str:
    return _render("report.html", report, html=True)


def render_markdown(report: Report) -> str:
    return _render("report.md", report, html=False)
