"""The report's "Transfer" section: a sessions run's metrics by position (``transfer/measures.py``,
``transfer/reask.py``, ``transfer/labels.py``), its figures (``transfer/figures.py``), one reading per question, the
tables written beside the report and ``summary.json``'s ``transfer`` and ``transfer_readings``.

A run without sessions (no ``session_id`` in its results) has no Transfer section, no transfer tables or figures
and no ``transfer`` key: ``build_transfer`` gives None. A sessions run always has the section; what it could not
measure (no carry arm, no drift, no targeted user) says so in its reading.

``summary.json`` ``transfer``: model → task → {

* each arm run (``discovery`` — the cold arm —, ``carry_transcript``, ``carry_notes``) → a list over positions of
  ``{position, n, pref_align, pref_align_ci, normalign, normalign_ci, normalign_n, normalign_reason, n_questions,
  questions_saved, questions_saved_ci, questions_saved_n, elicited_weight, reask_rate, reask_n}``;
* ``transfer_gain`` → carry arm → ``{by_position: [{position, n, gain, ci, reason}], mean_gain, slope, slope_ci,
  slope_reason, n_positions, n_sessions}``;
* ``by_label`` → arm → a list over positions of ``{position, recurring, new, changed, n_recurring, n_new,
  n_changed}``;
* ``stale_application`` → carry arm → ``{stale, ci, n, n_criteria, reason, by_position: [{position, stale, ci, n,
  n_criteria}]}``}

Every interval is ``[low, high]`` or ``[null, null]``; a key an arm or a run does not have is absent, a number it
did not measure is null.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from prefdisco.analysis.section.figures import Chart, panel_cells
from prefdisco.analysis.section.registry import Context, Part, Reading, section
from prefdisco.analysis.section.shown import finite, interval, records
from prefdisco.analysis.section.shown import num as shown
from prefdisco.analysis.transfer import figures as tf
from prefdisco.analysis.transfer.labels import label_table, labelled_criteria, stale_table
from prefdisco.analysis.transfer.measures import ARMS, gain_tables, has_sessions, position_table
from prefdisco.analysis.transfer.readings import readings
from prefdisco.analysis.transfer.reask import reask_rates, transcript_dialogues


@dataclass
class Transfer:
    positions: pd.DataFrame
    gains: pd.DataFrame
    slopes: pd.DataFrame
    labels: pd.DataFrame | None = None
    stale: pd.DataFrame | None = None
    readings: list[Reading] = field(default_factory=list)

    def cells(self) -> list[tuple[str, str]]:
        return panel_cells(self.positions)

    def summary(self) -> dict[str, Any]:
        """``summary.json``'s ``transfer`` (module docstring)."""
        out: dict[str, Any] = {}
        for model, task in self.cells():
            node: dict[str, Any] = {}
            sub = _of(self.positions, model, task)
            for arm in ARMS:
                rows = sub.loc[sub["arm"] == arm]
                if len(rows):
                    node[arm] = [_position_entry(r) for r in rows.to_dict("records")]
            node["transfer_gain"] = _gain_entries(_of(self.gains, model, task), _of(self.slopes, model, task))
            if self.labels is not None:
                node["by_label"] = _label_entries(_of(self.labels, model, task))
            if self.stale is not None:
                node["stale_application"] = _stale_entries(_of(self.stale, model, task))
            out.setdefault(model, {})[task] = node
        return out

    def tables(self) -> dict[str, pd.DataFrame]:
        tables = {"table_transfer_positions.csv": self.positions}
        if len(self.gains):
            tables |= {"table_transfer_gain.csv": self.gains, "table_transfer_gain_slope.csv": self.slopes}
        if self.labels is not None:
            tables["table_transfer_labels.csv"] = self.labels
        if self.stale is not None:
            tables["table_transfer_stale.csv"] = self.stale
        return tables

    def charts(self) -> list[Chart]:
        return [
            Chart(
                "fig_transfer_normalign.png",
                "NormAlign by position in the session",
                "One panel per model and task, one line per arm (drawn slightly beside each position so equal values "
                "stay visible); whiskers: bootstrap 95% interval where a position has one.",
                tf.normalign_figure(self.positions),
            ),
            Chart(
                "fig_transfer_questions.png",
                "Questions asked and re-ask rate by position",
                "Top: mean questions asked per problem; bottom: the share of questions about what the person "
                "revealed at an earlier position of the session and arm.",
                tf.questions_figure(self.positions),
            ),
            Chart(
                "fig_transfer_labels.png",
                "PrefAlign on recurring and new attributes by position",
                "Solid: attributes the person had, with the same value, at an earlier position; dashed: attributes "
                "new at this position.",
                tf.labels_figure(self.labels, self.cells()),
            ),
        ]


def _of(frame: pd.DataFrame, model: str, task: str) -> pd.DataFrame:
    return frame.loc[(frame["model"].astype(str) == model) & (frame["task"].astype(str) == task)]


def _position_entry(r: dict[str, Any]) -> dict[str, Any]:
    return {
        "position": int(r["position"]),
        "n": int(r["n"]),
        "pref_align": finite(r["pref_align"]),
        "pref_align_ci": [finite(r["pref_align_ci_low"]), finite(r["pref_align_ci_high"])],
        "normalign": finite(r["normalign"]),
        "normalign_ci": [finite(r["normalign_ci_low"]), finite(r["normalign_ci_high"])],
        "normalign_n": int(r["normalign_n"]),
        "normalign_reason": r["normalign_reason"] or None,
        "n_questions": finite(r["n_questions"]),
        "questions_saved": finite(r["questions_saved"]),
        "questions_saved_ci": [finite(r["questions_saved_ci_low"]), finite(r["questions_saved_ci_high"])],
        "questions_saved_n": int(r["questions_saved_n"]),
        "elicited_weight": finite(r["elicited_weight"]),
        "reask_rate": finite(r["reask_rate"]),
        "reask_n": int(r["reask_n"]),
    }


def _gain_entries(gains: pd.DataFrame, slopes: pd.DataFrame) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for s in slopes.to_dict("records"):
        arm = s["arm"]
        by = gains.loc[gains["arm"] == arm].sort_values("position")
        out[arm] = {
            "by_position": [
                {
                    "position": int(g["position"]),
                    "n": int(g["gain_n"]),
                    "gain": finite(g["gain"]),
                    "ci": [finite(g["ci_low"]), finite(g["ci_high"])],
                    "reason": g["reason"] or None,
                }
                for g in by.to_dict("records")
            ],
            "mean_gain": finite(s["mean_gain"]),
            "slope": finite(s["slope"]),
            "slope_ci": [finite(s["ci_low"]), finite(s["ci_high"])],
            "slope_reason": s["reason"] or None,
            "n_positions": int(s["n_positions"]),
            "n_sessions": int(s["n_sessions"]),
        }
    return out


def _label_entries(labels: pd.DataFrame) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for (arm, position), sub in labels.groupby(["arm", "position"], sort=True):
        values = {r["label"]: r for r in sub.to_dict("records")}
        entry: dict[str, Any] = {"position": int(position)}
        for kind in ("recurring", "new", "changed"):
            entry[kind] = finite(values[kind]["pref_align"]) if kind in values else None
            entry[f"n_{kind}"] = int(values[kind]["n"]) if kind in values else 0
        out.setdefault(str(arm), []).append(entry)
    return {arm: out[arm] for arm in ARMS if arm in out}


def _stale_entries(stale: pd.DataFrame) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for arm, sub in stale.groupby("arm", sort=True):
        pooled = sub.loc[sub["position"].isna()].to_dict("records")[0]
        out[str(arm)] = {
            "stale": finite(pooled["stale"]),
            "ci": [finite(pooled["ci_low"]), finite(pooled["ci_high"])],
            "n": int(pooled["n"]),
            "n_criteria": int(pooled["n_criteria"]),
            "reason": pooled["reason"] or None,
            "by_position": [
                {
                    "position": int(r["position"]),
                    "stale": finite(r["stale"]),
                    "ci": [finite(r["ci_low"]), finite(r["ci_high"])],
                    "n": int(r["n"]),
                    "n_criteria": int(r["n_criteria"]),
                }
                for r in sub.loc[sub["position"].notna()].sort_values("position").to_dict("records")
            ],
        }
    return out


def build_transfer(
    results: pd.DataFrame,
    attributes: pd.DataFrame | None,
    trial_rows: pd.DataFrame,
    transcripts: Path | None,
    transcript_rows: pd.DataFrame | None,
    *,
    seed: int,
    n_boot: int,
) -> Transfer | None:
    """The Transfer section of a run: ``results`` and ``attributes`` with their trials averaged, ``trial_rows`` the
    results as run (the re-ask rate is per trial); None when the run has no sessions."""
    if not has_sessions(results):
        return None
    reask = reask_rates(trial_rows, transcript_dialogues(transcripts, transcript_rows))
    positions = position_table(results, reask, seed=seed, n_boot=n_boot)
    gains, slopes = gain_tables(results, seed=seed, n_boot=n_boot)
    criteria = labelled_criteria(attributes, results)
    transfer = Transfer(
        positions=positions,
        gains=gains,
        slopes=slopes,
        labels=label_table(criteria),
        stale=stale_table(criteria, seed=seed, n_boot=n_boot),
    )
    has_transcripts = transcripts is not None or transcript_rows is not None
    transfer.readings = readings(positions, slopes, transfer.labels, transfer.stale, has_transcripts)
    return transfer


def _value(r: dict[str, Any], key: str, digits: int, reason: str | None = None) -> str:
    low, high = r.get(f"{key}_ci_low"), r.get(f"{key}_ci_high")
    text = shown(r[key], digits)
    if r[key] is not None and low is not None:
        text += f" {interval(low, high, digits)}"
    elif r[key] is None and reason and r.get(reason):
        text += f" ({r[reason]})"
    return text


def _view(t: Transfer) -> dict[str, Any]:
    """The section's readings and rows of formatted cells (``templates/sections/transfer.*``)."""
    cell = ("model", "task", "arm")
    positions = [
        {k: r[k] for k in (*cell, "position", "n")}
        | {
            "pref_align": _value(r, "pref_align", 2),
            "normalign": _value(r, "normalign", 1, "normalign_reason") + f" n={r['normalign_n']}",
            "n_questions": shown(r["n_questions"], 2),
            "questions_saved": _value(r, "questions_saved", 2) if r["arm"] != "discovery" else "",
            "reask_rate": shown(r["reask_rate"], 2),
            "elicited_weight": shown(r["elicited_weight"], 2),
        }
        for r in records(t.positions)
    ]
    gains = [
        {k: r[k] for k in (*cell, "position")}
        | {
            "n": r["gain_n"],
            "gain": "—" if r["gain"] is None else f"{shown(r['gain'], 1)} {interval(r['ci_low'], r['ci_high'])}",
            "reason": r["reason"] or "",
        }
        for r in records(t.gains)
    ]
    slopes = [
        {k: r[k] for k in cell}
        | {
            "mean_gain": shown(r["mean_gain"], 1),
            "slope": "—" if r["slope"] is None else f"{shown(r['slope'], 2)} {interval(r['ci_low'], r['ci_high'], 2)}",
            "sessions": r["n_sessions"],
            "reason": r["reason"] or "",
        }
        for r in records(t.slopes)
    ]
    return {
        "readings": [r.__dict__ for r in t.readings],
        "positions": positions,
        "gains": gains,
        "slopes": slopes,
        "labels": [] if t.labels is None else records(t.labels),
        "stale": [] if t.stale is None else records(t.stale),
    }


@section("transfer", order=70, place="section", title="Transfer")
def transfer_section(ctx: Context) -> Part | None:
    """A sessions run's Transfer section; None (no section, no key) for any other run."""
    d = ctx.data
    transfer = build_transfer(
        ctx.results, ctx.attributes, d.results, d.transcripts, d.transcript_rows, seed=ctx.seed, n_boot=ctx.n_boot
    )
    if transfer is None:
        return None
    summary = {"transfer": transfer.summary(), "transfer_readings": [r.__dict__ for r in transfer.readings]}
    return Part(summary, transfer.tables(), transfer.charts, view=_view(transfer), value=transfer)
