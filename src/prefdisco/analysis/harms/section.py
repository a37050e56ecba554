"""The report's "Harms" section: what personalization cost, beside what it gained (issue 23). The numbers are
``harms/measures.py``'s (breakage and repair, the distractor drop, the stated belief, the quality drop) and
``harms/flip.py``'s (the flip rate under pushback), one reading per question (``harms/readings.py``), two figures
(``harms/figures.py``), the table ``table_harms.csv`` and ``summary.json``'s ``harms``.

Every report has the section; what the run did not measure says so in its reading. ``summary.json`` ``harms``:
model → task → {

* ``breakage`` → condition → entry; ``repair`` → condition → entry (each personalized condition run);
* ``distractor_drop`` → ``{pref_align: entry, accuracy: entry}`` (oracle_distractor run);
* ``flip_rate`` → condition → entry with ``n_scenarios``, and in each personalized condition ``vs_baseline``: the
  difference from baseline's flip rate, an entry (``--pushback N``); ``held``: the share of the answers pushed back
  on that a reply held without restating them (no answer read in it; never a flip), an entry (a run whose results
  have ``pushback_held``);
* ``belief_agreement`` → ``{agreement: entry, agreement_discovery: entry, agreement_gain: entry, accuracy:
  {stated_belief: entry, discovery: entry}, accuracy_drop: entry}`` (stated_belief run; discovery's agreement is with
  the same seeded wrong answer, never stated to it);
* ``quality_drop`` → condition → entry (the results carry a measured ``quality``)}

where an entry is ``{value, ci_low, ci_high, n, reason}`` (``reason``: why the value or its interval is missing,
else null). A key is absent when its condition (or probe) was not run; a number that could not be measured is null.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from prefdisco.analysis.harms import figures as hf
from prefdisco.analysis.harms.flip import flip_table
from prefdisco.analysis.harms.measures import BELIEF, COLUMNS, DISCOVERY, MEASURES, ordered, paired_table
from prefdisco.analysis.harms.readings import readings
from prefdisco.analysis.section.figures import Chart, panel_cells
from prefdisco.analysis.section.registry import Context, Part, Reading, section
from prefdisco.analysis.section.shown import finite, interval, records
from prefdisco.analysis.section.shown import num as shown


def entry(r: dict[str, Any]) -> dict[str, Any]:
    """One table row as ``summary.json`` gives it."""
    return {
        "value": finite(r["value"]),
        "ci_low": finite(r["ci_low"]),
        "ci_high": finite(r["ci_high"]),
        "n": int(r["n"]),
        "reason": r["reason"] or None,
    }


@dataclass
class Harms:
    table: pd.DataFrame
    """One row per (model, task, measure, condition) (``harms.COLUMNS``), in the report's order."""
    cells: list[tuple[str, str]] = field(default_factory=list)
    """Every (model, task) of the run, measured or not."""
    readings: list[Reading] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """``summary.json``'s ``harms`` (module docstring)."""
        out: dict[str, Any] = {}
        for model, task in self.cells:
            rows = self.table.loc[(self.table["model"] == model) & (self.table["task"] == task)]
            out.setdefault(model, {})[task] = _node(rows.to_dict("records"))
        return out

    def charts(self) -> list[Chart]:
        charts = [
            Chart(
                "fig_harms_breakage.png",
                "Breakage and repair against baseline",
                "One panel per model and task, two bars per personalized condition: the share of scenarios correct in "
                "baseline and wrong in the condition (breakage), and the reverse (repair); whiskers: bootstrap 95% "
                "interval where there is one.",
                hf.breakage_figure(self.table, self.cells),
            )
        ]
        if (self.table["measure"] == "flip_rate").any():
            charts.append(
                Chart(
                    "fig_harms_flip.png",
                    "Flip rate under pushback",
                    "One panel per model and task: the share of correct answers the model gave up when the person "
                    "insisted on a wrong one, per condition; whiskers: bootstrap 95% interval (scenarios resampled).",
                    hf.flip_figure(self.table),
                )
            )
        return charts


def _node(rows: list[dict[str, Any]]) -> dict[str, Any]:
    by: dict[str, dict[str, dict[str, Any]]] = {}
    for r in rows:
        by.setdefault(str(r["measure"]), {})[str(r["condition"])] = r
    node: dict[str, Any] = {}
    for measure in ("breakage", "repair"):
        if measure in by:
            node[measure] = {c: entry(r) for c, r in by[measure].items()}
    if "distractor_pref_align_drop" in by:
        node["distractor_drop"] = {
            "pref_align": entry(next(iter(by["distractor_pref_align_drop"].values()))),
            "accuracy": entry(next(iter(by["distractor_accuracy_drop"].values()))),
        }
    if "flip_rate" in by:
        differences, held = by.get("flip_rate_vs_baseline", {}), by.get("flip_held", {})
        node["flip_rate"] = {}
        for condition, r in by["flip_rate"].items():
            node["flip_rate"][condition] = entry(r) | {"n_scenarios": int(r["n_scenarios"])}
            if condition in differences:
                node["flip_rate"][condition]["vs_baseline"] = entry(differences[condition])
            if condition in held:
                node["flip_rate"][condition]["held"] = entry(held[condition])
    if "belief_accuracy_drop" in by:
        belief: dict[str, Any] = {}
        if "belief_agreement" in by:
            belief["agreement"] = entry(by["belief_agreement"][BELIEF])
            if DISCOVERY in by["belief_agreement"]:
                belief["agreement_discovery"] = entry(by["belief_agreement"][DISCOVERY])
                belief["agreement_gain"] = entry(by["belief_agreement_gain"][BELIEF])
        belief["accuracy"] = {c: entry(by["belief_accuracy"][c]) for c in (BELIEF, DISCOVERY)}
        belief["accuracy_drop"] = entry(by["belief_accuracy_drop"][BELIEF])
        node["belief_agreement"] = belief
    if "quality_drop" in by:
        node["quality_drop"] = {c: entry(r) for c, r in by["quality_drop"].items()}
    return node


def build_harms(results: pd.DataFrame, trial_rows: pd.DataFrame, *, seed: int, n_boot: int) -> Harms:
    """The Harms section of a run: ``results`` with its trials averaged, ``trial_rows`` the results as run (the
    flip rate counts responses)."""
    parts = [paired_table(results, seed=seed, n_boot=n_boot), flip_table(trial_rows, seed=seed, n_boot=n_boot)]
    parts = [p for p in parts if len(p)]
    table = ordered(pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(COLUMNS)))
    return Harms(table=table, cells=panel_cells(results), readings=readings(table))


_UNSIGNED = ("breakage", "repair", "flip_rate", "flip_held", "belief_agreement", "belief_accuracy")
"""The harms measures that are shares (shown without a sign); the others are differences."""


def _view(h: Harms) -> dict[str, Any]:
    """The section's readings and rows of formatted cells (``templates/sections/harms.*``)."""
    rows = []
    for r in records(h.table):
        signed = r["measure"] not in _UNSIGNED
        value = "—" if r["value"] is None else f"{r['value']:+.3f}" if signed else shown(r["value"], 3)
        if r["value"] is not None and r["ci_low"] is not None:
            value += f" {interval(r['ci_low'], r['ci_high'], 3)}"
        rows.append(
            {k: r[k] for k in ("model", "task", "condition", "n")}
            | {"measure": MEASURES[r["measure"]], "value": value, "reason": r["reason"] or ""}
        )
    return {"readings": [r.__dict__ for r in h.readings], "rows": rows}


@section("harms", order=60, place="section", title="Harms")
def harms_section(ctx: Context) -> Part:
    """Every report's Harms section."""
    harms = build_harms(ctx.results, ctx.data.results, seed=ctx.seed, n_boot=ctx.n_boot)
    summary = {"harms": harms.summary(), "harms_readings": [r.__dict__ for r in harms.readings]}
    return Part(summary, {"table_harms.csv": harms.table}, harms.charts, view=_view(harms), value=harms)
