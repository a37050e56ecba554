"""The Transfer section's readings: one line per question a sessions run answers, for a reader who is not a
statistician (``transfer/section.py``): the transfer gain and its slope, questions saved and the re-ask rate,
recurring vs new attributes, stale application under drift. A question the run could not answer says why and what
would answer it. A reading lists at most four cells (``model/task arm``), then how many more.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from prefdisco.analysis.section.registry import Reading
from prefdisco.analysis.section.shown import finite, fixed, listed
from prefdisco.analysis.transfer.measures import ARMS, CARRY_ARMS, COLD


def _pooled(frame: pd.DataFrame, value: str, weight: str) -> float | None:
    """The mean of ``value`` over the positions after the first, weighted by ``weight`` (their scenarios)."""
    later = frame.loc[(frame["position"] > 1) & frame[value].notna() & (frame[weight] > 0)]
    if later.empty:
        return None
    w = later[weight].to_numpy(dtype=float)
    return float(np.sum(later[value].to_numpy(dtype=float) * w) / w.sum())


def gain_reading(slopes: pd.DataFrame) -> Reading:
    name = "Transfer gain (carry NormAlign − cold NormAlign, by position)"
    if slopes.empty:
        return Reading(name, "no carry arm run", "add carry_transcript or carry_notes to --modes to measure transfer")
    parts, words = [], set()
    for s in slopes.to_dict("records"):
        ci = "" if finite(s["ci_low"]) is None else f" [{fixed(s['ci_low'], 1)}, {fixed(s['ci_high'], 1)}]"
        has_slope = finite(s["slope"]) is not None
        slope = f"slope {fixed(s['slope'], 1, sign=True)}{ci} per position" if has_slope else "no slope"
        gain_text = f"{fixed(s['mean_gain'], 1, sign=True)} points after position 1"
        parts.append(f"{s['model']}/{s['task']} {s['arm']}: {gain_text}, {slope}")
        gain = finite(s["mean_gain"])
        words.add("none" if gain is None else "up" if gain > 0 else "down" if gain < 0 else "zero")
    if words == {"up"}:
        text = "every carry arm reaches a higher NormAlign than the cold arm: it uses what it learned about the person"
    elif words == {"zero"}:
        text = "no carry arm gains anything over the cold arm: what it carried changed nothing"
    elif words == {"down"}:
        text = "every carry arm is below the cold arm: what it carried hurt"
    elif words == {"none"}:
        text = "no gain could be measured (the table gives each position's reason)"
    else:
        text = "the carry arms differ: compare each cell's gain and its interval"
    return Reading(name, listed(parts), text)


def questions_reading(positions: pd.DataFrame, has_transcripts: bool) -> Reading:
    name = "Questions saved and re-ask rate (after position 1)"
    parts: list[str] = []
    compared: list[int] = []  # per carry arm with both rates: -1 re-asks less often than cold, 0 as often, 1 more
    for (model, task), cell in positions.groupby(["model", "task"], sort=True):
        bits, rates = [], {}
        for arm in ARMS:
            rows = cell.loc[cell["arm"] == arm]
            if rows.empty:
                continue
            rates[arm] = _pooled(rows, "reask_rate", "reask_n")
            saved = f", {fixed(_pooled(rows, 'questions_saved', 'questions_saved_n'), 2)} saved" if arm != COLD else ""
            bits.append(f"{arm} re-asks {fixed(rates[arm], 2)}{saved}")
        parts.append(f"{model}/{task}: " + ", ".join(bits))
        cold = rates.get(COLD)
        compared += [
            int(np.sign(r - cold)) for a, r in rates.items() if a != COLD and r is not None and cold is not None
        ]
    if positions["reask_rate"].isna().all():
        why = "no transcripts beside the results" if not has_transcripts else "no reply records what it revealed"
        return Reading(name, listed(parts), f"re-ask rate not measured ({why}): run with --user-type targeted")
    if not compared:
        text = "the cold arm and a carry arm were not both measured: nothing to compare"
    elif set(compared) == {-1}:
        text = "the carry arms ask again less often than the cold arm about what the person already said"
    elif set(compared) == {0}:
        text = "the carry arms ask again exactly as often as the cold arm about what the person already said"
    elif -1 not in compared:
        text = "the carry arms ask again as often as the cold arm or more about what the person already said"
    else:
        text = "some carry arms ask again less often than the cold arm, some do not"
    return Reading(name, listed(parts), text)


def labels_reading(labels: pd.DataFrame | None) -> Reading:
    name = "Recurring vs new attributes (PrefAlign, after position 1)"
    if labels is None or labels.empty:
        return Reading(name, "not measured", "needs the per-attribute table of a sessions run (session_label)")
    parts, lifts = [], []
    for (model, task), cell in labels.groupby(["model", "task"], sort=True):
        cold = cell.loc[cell["arm"] == COLD]
        for arm in CARRY_ARMS:
            carry = cell.loc[cell["arm"] == arm]
            if carry.empty:
                continue
            values = {}
            for kind in ("recurring", "new"):
                values[kind] = [_pooled(f.loc[f["label"] == kind], "pref_align", "n") for f in (carry, cold)]
            rec, new = values["recurring"], values["new"]
            parts.append(
                f"{model}/{task} {arm}: recurring {fixed(rec[0], 2)} (cold {fixed(rec[1], 2)}), new {fixed(new[0], 2)} "
                f"(cold {fixed(new[1], 2)})"
            )
            if rec[0] is not None and rec[1] is not None:
                lifts.append(rec[0] - rec[1])
    if not parts:
        return Reading(name, "no carry arm run", "add a carry arm to --modes to compare it with the cold arm")
    if not lifts:
        text = "no recurring attribute was scored after position 1 in both arms"
    elif all(x > 0 for x in lifts):
        text = "the carry arms serve attributes the person had before better than the cold arm: they reuse them"
    elif all(x == 0 for x in lifts):
        text = "on recurring attributes the carry arms score what the cold arm scores: nothing was reused"
    else:
        text = "the carry arms do not serve recurring attributes consistently better than the cold arm"
    return Reading(name, listed(parts), text)


def stale_reading(stale: pd.DataFrame | None, labels: pd.DataFrame | None = None) -> Reading:
    name = "Stale application (changed attributes: carry − cold criterion score)"
    if stale is None:
        return Reading(name, "not measured", "needs the per-attribute table of a sessions run (session_label)")
    pooled = stale.loc[stale["position"].isna()]
    if pooled.empty and labels is not None and (labels["label"] == "changed").any():
        return Reading(
            name,
            "changed attributes were scored, but not in both the cold arm and a carry arm",
            "add discovery and carry_transcript or carry_notes to --modes to compare them on changed attributes",
        )
    if pooled.empty:
        return Reading(
            name,
            "no changed attribute scored in a carry arm and the cold arm",
            "plan the sessions with --drift F (prefdisco sessions) to see whether a memory applies an old value",
        )
    parts = []
    for r in pooled.to_dict("records"):
        ci = f" [{fixed(r['ci_low'], 2)}, {fixed(r['ci_high'], 2)}]" if finite(r["ci_low"]) is not None else ""
        parts.append(f"{r['model']}/{r['task']} {r['arm']}: {fixed(r['stale'], 2, sign=True)}{ci} (n = {r['n']})")
    values = pooled["stale"].to_numpy(dtype=float)
    if (values < 0).all():
        text = "negative: where the person's preference changed, the carry arms kept applying the old value"
    elif (values == 0).all():
        text = "zero: on changed preferences the carry arms do what the cold arm does"
    elif (values > 0).all():
        text = "positive: on changed preferences the carry arms did better than the cold arm"
    else:
        text = "mixed: some carry arms applied the old value of a changed preference"
    return Reading(name, listed(parts), text)


def readings(
    positions: pd.DataFrame,
    slopes: pd.DataFrame,
    labels: pd.DataFrame | None,
    stale: pd.DataFrame | None,
    has_transcripts: bool,
) -> list[Reading]:
    """The section's four readings, in the order the section shows them."""
    return [
        gain_reading(slopes),
        questions_reading(positions, has_transcripts),
        labels_reading(labels),
        stale_reading(stale, labels),
    ]
