"""The Validity instruments as parts of the report (``section/registry.py``), in their Validity table's order: the
negative control (``control.py``), the simulated user's errors and what the dialogues elicited (``simulator.py``), its
flagged turns (``simulator_flags.py``), the refused and empty responses (``non_answers.py``), judge agreement, noise
and length bias (``judges.py``), the judge's position effect and the effective number of judges (``position.py``,
``effective_judges.py``), the human calibration, the variance by source, a reference run's table (``reference.py``)
and the elicitation figure; and the further judges' PrefAlign, under Table 1 (``further_judges.py``)."""

from __future__ import annotations

import pandas as pd

from prefdisco.analysis.paper.questions import MIN_POINTS
from prefdisco.analysis.section.figures import Chart
from prefdisco.analysis.section.registry import Context, Part, section
from prefdisco.analysis.section.shown import nested, num, records
from prefdisco.analysis.stats.panel import judged_rows
from prefdisco.analysis.validity import non_answers as na
from prefdisco.analysis.validity import readings as rd
from prefdisco.analysis.validity import simulator as sim
from prefdisco.analysis.validity.control import control_table
from prefdisco.analysis.validity.effective_judges import PAIR_COLUMNS, effective_judges
from prefdisco.analysis.validity.further_judges import further_judge_table, summary_part
from prefdisco.analysis.validity.judges import EMPTY_SUMMARY, judge_reliability
from prefdisco.analysis.validity.position import position_effect, position_void
from prefdisco.analysis.validity.reference import SHOWN, reference_reading
from prefdisco.analysis.validity.simulator_flags import flag_table, flags_reading, flags_summary
from prefdisco.analysis.validity.variance import detectable_difference, variance_parts
from prefdisco.results.contract import condition_label
from prefdisco.wording import counted

ELICITATION_CAPTION = (
    "One point per dialogue with the simulated user (any condition that asks it) with a measured elicited weight, "
    "coloured by model."
)


@section("control", order=10)
def control_section(ctx: Context) -> Part:
    """``control_gap``, ``control_gap_ci`` and ``control_gap_flagged`` per model and task (empty without
    wrong_persona rows), ``table_control_gap.csv``."""
    control = control_table(ctx.results, seed=ctx.seed, n_boot=ctx.n_boot)
    gaps = pd.DataFrame(columns=["model", "task", "gap", "ci_low", "ci_high"]) if control is None else control
    summary = {
        "control_gap": nested(gaps, ["model", "task"], lambda r: r["gap"]),
        "control_gap_ci": nested(gaps, ["model", "task"], lambda r: [r["ci_low"], r["ci_high"]]),
        "control_gap_flagged": nested(gaps, ["model", "task"], lambda r: bool(r["flagged"])),
    }
    return Part(summary, {"table_control_gap.csv": control}, readings=[rd.control_reading(control)], value=control)


@section("simulator", order=20)
def simulator_section(ctx: Context) -> Part:
    """``elicitation`` and ``simulator_errors`` over the dialogues as run (a critical error is 0/1 per dialogue) and
    ``table_simulator.csv``."""
    table = sim.simulator_table(ctx.data.results)
    readings = [rd.simulator_reading(table)]
    return Part(sim.summary_parts(table), {"table_simulator.csv": table}, readings=readings, value=table)


@section("simulator_flags", order=30)
def flags_section(ctx: Context) -> Part:
    """``simulator_flags`` and ``table_simulator_flags.csv``, from the trial rows: each trial one dialogue."""
    flags = flag_table(ctx.data.results)
    summary = {"simulator_flags": flags_summary(flags)}
    return Part(summary, {"table_simulator_flags.csv": flags}, readings=[flags_reading(flags)], value=flags)


@section("non_answers", order=40)
def non_answers_section(ctx: Context) -> Part:
    """``non_answers``, ``table_non_answers.csv`` and the caveat, from the trial rows: each trial one response."""
    table = na.non_answer_table(ctx.data.results)
    part = Part({"non_answers": na.non_answers_summary(table)}, {"table_non_answers.csv": table}, value=table)
    part.readings, part.caveats = [na.non_answers_reading(table)], [na.non_answers_caveat(table)]
    return part


@section("judges", order=50)
def judges_section(ctx: Context) -> Part:
    """``judge_agreement``, ``judge_noise`` and ``length_bias`` (empty without an attribute table) and their tables,
    over the rows a judge judged: every judge, repeat and trial."""
    judges = judge_reliability(ctx.data)
    if judges is None:
        return Part(dict(EMPTY_SUMMARY), readings=rd.judge_readings(None))
    names = ("table_judge_agreement.csv", "table_judge_noise.csv", "table_length_bias.csv")
    tables = dict(zip(names, (judges.agreement, judges.noise, judges.length), strict=True))
    return Part(judges.summary(), tables, readings=rd.judge_readings(judges), value=judges)


@section("judge_panel", order=60)
def judge_panel_section(ctx: Context) -> Part:
    """Over the rows a judge judged (no rule's scores): the structured judge's position effect
    (``judge_position_effect``, ``table_judge_position*.csv``, the caveat of a void PrefAlign) and the panel's
    effective number of judges (``effective_judges``, ``table_judge_correlation.csv`` with two judges or more)."""
    judged = None if ctx.data.attributes is None else judged_rows(ctx.data.attributes, ctx.data.results)
    position = None if judged is None else position_effect(judged, seed=ctx.seed, n_boot=ctx.n_boot)
    panel = None if judged is None else effective_judges(judged)
    summary = {
        "judge_position_effect": {} if position is None else position.summary(),
        "effective_judges": None if panel is None else panel.summary(),
    }
    pairs = panel.pairs[PAIR_COLUMNS] if panel is not None and len(panel.judges) > 1 else None
    tables = {
        "table_judge_position.csv": None if position is None else position.positions,
        "table_judge_position_slope.csv": None if position is None else position.slopes,
        "table_judge_correlation.csv": pairs,
    }
    part = Part(summary, tables, readings=[rd.position_reading(position), rd.effective_judges_reading(panel)])
    part.caveats, part.value = [position_void(position)], (position, panel)
    return part


@section("calibration", order=80)
def calibration_section(ctx: Context) -> Part:
    """``calibration``: the judge against people (``prefdisco report --human``, ``calibrate.py``), or null."""
    calibration = ctx.calibration
    summary = {"calibration": None if calibration is None else calibration.to_json()}
    return Part(summary, readings=[rd.calibration_reading(calibration)], value=calibration)


@section("variance", order=90)
def variance_section(ctx: Context) -> Part:
    """``variance`` by source (from the trial rows, before averaging), ``normalign_mde`` (the smallest detectable
    difference of Table 1's cells) and ``table_variance.csv``."""
    variance = variance_parts(ctx.data.results, ctx.data.attributes)
    detectable = detectable_difference(ctx.cells)
    tables = {"table_variance.csv": None if variance.empty else variance}
    readings = rd.variance_reading(variance, detectable)
    return Part(rd.variance_summary(variance, detectable), tables, readings=readings, value=variance)


@section("reference", order=100)
def reference_section(ctx: Context) -> Part | None:
    """A reference run's table (``--reference-table``, ``reference.py``): ``reference``, the Validity line of this
    run's simulator against people (the table's last) and the table under the Validity table; None without one."""
    table = ctx.reference
    if table is None:
        return None
    reading = reference_reading(table, list(ctx.protocols))  # first: it sets ``table.matched``
    about = {"folder": str(table.folder), "reference": table.reference, "matched": table.matched, "table": table.rows}
    rows = [
        {"who": r["simulator"], "ours": r["simulator"] in table.matched} | {k: r.get(k) for k in SHOWN}
        for r in table.rows
    ]
    view = {"about": table.reference, "file": str(table.folder / "reference.csv"), "columns": SHOWN, "rows": rows}
    return Part({"reference": about}, readings=[reading], view=view, value=table)


@section("elicitation", order=110)
def elicitation_section(ctx: Context) -> Part | None:
    """The figure of PrefAlign against elicited weight, one point per dialogue, under the Validity table (after a
    reference run's); None where the simulated user has no table (``simulator.measured``)."""
    rows = ctx.data.results
    frame = sim.dialogues(rows)  # the dialogues once, not the whole simulator table again
    if not sim.measured(frame):
        return None
    n = len(frame.dropna(subset=["pref_align", "elicited_weight"]))
    if n < MIN_POINTS:
        why = f"{counted(n, 'dialogue')} with a measured elicited weight; a scatter needs 3"
        return Part(omitted={"fig_elicitation": why}, view={})
    title, caption = "PrefAlign against elicited weight", ELICITATION_CAPTION
    return Part(
        charts=lambda: [Chart("fig_elicitation.png", title, caption, sim.elicitation_figure(rows, ctx.seed))], view={}
    )


@section("further_judges", order=120, place="normalign")
def further_judges_section(ctx: Context) -> Part:
    """``pref_align_by_judge`` and ``table_pref_align_by_judge.csv``: each judge added afterwards (``prefdisco judge
    --judge-model``) its own PrefAlign beside the run's (``further_judges.py``), shown under Table 1's cells."""
    d = ctx.data
    table = None if d.attributes is None else further_judge_table(ctx.results, d.attributes, d.results)
    view = None
    if table is not None and not table.empty:  # formatted cells: the run's, then each judge's
        judges = [c[len("pref_align[") : -1] for c in table.columns if c.startswith("pref_align[")]
        rows = []
        for r in records(table):
            cells = [f"{num(r['pref_align'], 3)} (n={r['n']})"]
            cells += [f"{num(r[f'pref_align[{j}]'], 3)} (n={r[f'n[{j}]']})" for j in judges]
            condition = condition_label(r["mode"], r["fixed_k"])
            rows.append({"model": r["model"], "task": r["task"], "condition": condition, "cells": cells})
        view = {"judges": judges, "rows": rows}
    summary = {"pref_align_by_judge": summary_part(table)}
    return Part(summary, {"table_pref_align_by_judge.csv": table}, view=view, value=table)
