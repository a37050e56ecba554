"""``prefdisco simfidelity``, the measures: how far each simulated user is from the person it stands in for.

**Replay** (from the records of ``simfidelity/replay.py``; one per simulator, dialogue and turn). Per simulator,
over every replayed turn (``S``: the attributes a reply revealed, ``A``: those its question asked about, both read
by the audit; ``L``: a reply's length in words):

* ``revealed_person`` / ``revealed_simulator`` — mean |S|; ``over_reveal`` — mean (|S_sim| − |S_person|);
* ``reveal_agreement`` — mean Jaccard |S_sim ∩ S_person| / |S_sim ∪ S_person| (1 when both revealed nothing);
* ``volunteered_person`` / ``volunteered_simulator`` — mean |S − A| (revealed though not asked);
* ``length_person`` / ``length_simulator`` (mean words) and ``length_ratio`` (simulator / person);
* ``flagged_person`` / ``flagged_simulator`` — the share of replies the hygiene checks flag;
* ``value_agreement`` — over the attributes both revealed on a turn, the share the grader reads as the ``same``
  preference, of those it could tell (``same`` or ``different``); None when no attribute was revealed by both.

A turn whose audit is invalid (for the person or the simulator) is left out of the reveal measures.

**Outcome**: on the scenarios both runs scored, for each model under test in both, PrefAlign in discovery and
NormAlign (the report's own ``scenario_table`` / ``intersection_norm_align``) with the person and with the
simulator, the difference (simulator − person) and a seeded paired bootstrap interval (the shared scenarios
resampled together); with three or more models, Spearman's rank correlation of the models' NormAlign.

**Replay fidelity** (``replay_fidelity``; named apart from the reference fidelity of
``simfidelity/answer_behaviour.py``,
a simulator's answers against a reference of people's answers; 1 = indistinguishable from the person on every
measure), the unweighted mean of the components
that every simulator compared has (``shared_components``; the ``components`` column names them, and a component one
simulator lacks is left out of every score, so all are ranked on one mean):

* reveal = ``reveal_agreement``;
* volunteering = 1 − min(1, mean |vol_sim − vol_person| per turn);
* length = mean per turn of min(L_sim, L_person) / max(L_sim, L_person) (1 when both are empty);
* clean = 1 − max(0, ``flagged_simulator`` − ``flagged_person``);
* values = ``value_agreement``;
* outcome = 1 − min(1, mean over models of |ΔNormAlign| / 100).

Simulators are ranked by it (ties by name): a leaderboard of simulated users, to pick the one closest to people.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from prefdisco.analysis.report.caveats import plumbing_note
from prefdisco.analysis.stats.bootstrap import per_resample, percentile_interval, resampled
from prefdisco.analysis.stats.normalign import (
    MIN_INTERVAL_SCENARIOS,
    intersection_norm_align,
    norm_align_of,
    scenario_table,
    too_few,
)
from prefdisco.schema import CONDITIONS

COMPONENTS: tuple[str, ...] = ("reveal", "volunteering", "length", "clean", "values", "outcome")
MIN_RANK_MODELS = 3


def _words(text: Any) -> int:
    return len(str(text or "").split())


def _jaccard(a: set[str], b: set[str]) -> float:
    return 1.0 if not a and not b else len(a & b) / len(a | b)


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if len(values) else None


def turn_table(records: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """One row per replayed turn with its per-turn measures."""
    rows = []
    for r in records:
        audited = r.get("person_revealed") is not None and r.get("simulator_revealed") is not None
        person: list[str] = list(r.get("person_revealed") or ())
        sim: list[str] = list(r.get("simulator_revealed") or ())
        asked_p, asked_s = set(r.get("person_asked") or ()), set(r.get("simulator_asked") or ())
        lp, ls = _words(r["person_reply"]), _words(r["simulator_reply"])
        values = r.get("values") or {}
        rows.append(
            {
                **{k: r.get(k) for k in ("simulator", "model", "task", "scenario_id", "mode", "epoch", "turn")},
                "audited": audited,
                "revealed_person": len(person) if audited else np.nan,
                "revealed_simulator": len(sim) if audited else np.nan,
                "reveal_jaccard": _jaccard(set(person), set(sim)) if audited else np.nan,
                "volunteered_person": len(set(person) - asked_p) if audited else np.nan,
                "volunteered_simulator": len(set(sim) - asked_s) if audited else np.nan,
                "length_person": lp,
                "length_simulator": ls,
                "length_closeness": 1.0 if max(lp, ls) == 0 else min(lp, ls) / max(lp, ls),
                "flagged_person": int(bool(r.get("person_flags"))),
                "flagged_simulator": int(bool(r.get("simulator_flags"))),
                "values_same": sum(v == "same" for v in values.values()),
                "values_different": sum(v == "different" for v in values.values()),
                "values_unclear": sum(v == "unclear" for v in values.values()),
                "values_invalid": int(r.get("values", {}) is None),  # the value reader's reply stayed invalid
            }
        )
    return pd.DataFrame(rows)


def replay_measures(turns: pd.DataFrame) -> pd.DataFrame:
    """One row per simulator: the replay measures of the module docstring."""
    out = []
    for simulator, group in turns.groupby("simulator", sort=True):
        audited = group.loc[group["audited"].astype(bool)]
        told = int(group["values_same"].sum() + group["values_different"].sum())
        vol_gap = (audited["volunteered_simulator"] - audited["volunteered_person"]).abs()
        out.append(
            {
                "simulator": simulator,
                "n_turns": len(group),
                "n_audited": len(audited),
                "revealed_person": _mean(audited["revealed_person"].tolist()),
                "revealed_simulator": _mean(audited["revealed_simulator"].tolist()),
                "over_reveal": _mean((audited["revealed_simulator"] - audited["revealed_person"]).tolist()),
                "reveal_agreement": _mean(audited["reveal_jaccard"].tolist()),
                "volunteered_person": _mean(audited["volunteered_person"].tolist()),
                "volunteered_simulator": _mean(audited["volunteered_simulator"].tolist()),
                "volunteer_gap": _mean(vol_gap.tolist()),
                "length_person": float(group["length_person"].mean()),
                "length_simulator": float(group["length_simulator"].mean()),
                "length_ratio": float(group["length_simulator"].mean() / group["length_person"].mean())
                if group["length_person"].mean() > 0
                else None,
                "length_closeness": float(group["length_closeness"].mean()),
                "flagged_person": float(group["flagged_person"].mean()),
                "flagged_simulator": float(group["flagged_simulator"].mean()),
                "value_agreement": float(group["values_same"].sum() / told) if told else None,
                "value_pairs": told,
                "value_pairs_unclear": int(group["values_unclear"].sum()),
                "value_judgements_invalid": int(group["values_invalid"].sum()),
            }
        )
    return pd.DataFrame(out)


def _paired_interval(
    diffs: Sequence[np.ndarray], rng: np.random.Generator, n_boot: int, stat: Any
) -> tuple[float | None, float | None]:
    if len(diffs[0]) < MIN_INTERVAL_SCENARIOS or n_boot <= 0:
        return None, None
    lo, hi, _ = percentile_interval(resampled(diffs, rng, n_boot, per_resample(stat)))
    return lo, hi


def _norm_align(frame: pd.DataFrame) -> float | None:
    value, _, _ = intersection_norm_align(frame)
    return value


def outcome_table(
    human: pd.DataFrame, simulated: dict[str, pd.DataFrame], *, seed: int, n_boot: int
) -> tuple[pd.DataFrame, dict[str, dict[str, Any]]]:
    """Per simulator and model: PrefAlign (discovery) and NormAlign with the person and with the simulator on the
    scenarios both scored, the differences with paired bootstrap intervals; and per simulator the rank
    correlation of the models' NormAlign (three or more models)."""
    base = scenario_table(human)
    rows, ranks = [], {}
    for label, results in simulated.items():
        sim = scenario_table(results)
        merged = base.merge(sim, on=["model", "task", "scenario_id"], suffixes=("_person", "_simulator"))
        per_model = []
        for model, group in merged.groupby("model", sort=True):
            group = group.sort_values(["task", "scenario_id"]).reset_index(drop=True)
            person = group[[f"{m}_person" for m in CONDITIONS]].set_axis(list(CONDITIONS), axis=1)
            simulator = group[[f"{m}_simulator" for m in CONDITIONS]].set_axis(list(CONDITIONS), axis=1)
            na_p, na_s = _norm_align(person), _norm_align(simulator)
            cols = [person[m].to_numpy() for m in CONDITIONS] + [simulator[m].to_numpy() for m in CONDITIONS]

            def na_diff(bp, dp, op, bs, ds, os_):  # the simulator's NormAlign − the person's, of a resample
                means = [float(c.mean()) for c in (bp, dp, op, bs, ds, os_)]
                return float(norm_align_of(*means[3:]) - norm_align_of(*means[:3]))

            rng = np.random.default_rng([seed, zlib.crc32(label.encode()), zlib.crc32(str(model).encode())])
            pa_lo, pa_hi = _paired_interval(
                [simulator["discovery"].to_numpy() - person["discovery"].to_numpy()], rng, n_boot, lambda d: d.mean()
            )
            na_lo, na_hi = _paired_interval(cols, rng, n_boot, na_diff)
            n = len(group)
            row = {
                "simulator": label,
                "model": model,
                "n_scenarios": n,
                "pref_align_person": float(person["discovery"].mean()),
                "pref_align_simulator": float(simulator["discovery"].mean()),
                "pref_align_diff": float((simulator["discovery"] - person["discovery"]).mean()),
                "pref_align_diff_low": pa_lo,
                "pref_align_diff_high": pa_hi,
                "normalign_person": na_p,
                "normalign_simulator": na_s,
                "normalign_diff": None if na_p is None or na_s is None else na_s - na_p,
                "normalign_diff_low": na_lo,
                "normalign_diff_high": na_hi,
                "interval_reason": too_few(n) if n < MIN_INTERVAL_SCENARIOS else "",
            }
            rows.append(row)
            per_model.append(row)
        defined = [r for r in per_model if r["normalign_person"] is not None and r["normalign_simulator"] is not None]
        if len(defined) >= MIN_RANK_MODELS:
            rho = spearmanr([r["normalign_person"] for r in defined], [r["normalign_simulator"] for r in defined])
            ranks[label] = {"spearman": float(rho.statistic), "n_models": len(defined), "reason": ""}
        else:
            reason = f"fewer than {MIN_RANK_MODELS} models with NormAlign in both runs (n = {len(defined)})"
            ranks[label] = {"spearman": None, "n_models": len(defined), "reason": reason}
    return pd.DataFrame(rows), ranks


def _defined(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def shared_components(table: pd.DataFrame) -> list[str]:
    """The components every simulator of ``table`` has: the only ones a ranking may average."""
    return [c for c in COMPONENTS if len(table) and all(_defined(v) for v in table[c].tolist())]


def replay_fidelity_table(measures: pd.DataFrame, outcome: pd.DataFrame) -> pd.DataFrame:
    """``fidelity.csv``: each simulator's components, replay fidelity and rank (module docstring), best first. The
    score averages the components every simulator has (``shared_components``, named in the ``components`` column): a
    simulator with one component less would otherwise be ranked on another mean."""
    rows = []
    for m in measures.to_dict("records"):
        label = m["simulator"]
        diffs = (
            outcome.loc[outcome["simulator"] == label, "normalign_diff"].dropna().abs().tolist() if len(outcome) else []
        )
        components = {
            "reveal": m["reveal_agreement"],
            "volunteering": None if m["volunteer_gap"] is None else 1 - min(1.0, m["volunteer_gap"]),
            "length": m["length_closeness"],
            "clean": 1 - max(0.0, m["flagged_simulator"] - m["flagged_person"]),
            "values": m["value_agreement"],
            "outcome": 1 - min(1.0, float(np.mean(diffs)) / 100) if diffs else None,
        }
        rows.append({"simulator": label, **components})
    table = pd.DataFrame(rows, columns=["simulator", *COMPONENTS])
    if table.empty:
        return table
    shared = shared_components(table)
    scores = [float(np.mean([r[c] for c in shared])) if shared else None for r in table.to_dict("records")]
    table.insert(1, "replay_fidelity", scores)
    table.insert(2, "n_components", len(shared))
    table.insert(3, "components", ",".join(shared))
    table = table.sort_values(["replay_fidelity", "simulator"], ascending=[False, True], na_position="last")
    table.insert(0, "rank", range(1, len(table) + 1))
    return table.reset_index(drop=True)


def fidelity_caveats(models: Sequence[str], left_out: Sequence[str], invalid: int) -> list[str]:
    """What the console says of a replay fidelity result besides its ranking, kept in its ``summary.json``
    (``caveats``) so the files never show a number without it: an embedded simulator or judge proves only the
    plumbing, the components left out of the ranking, the value judgements that stayed invalid."""
    notes = [note for note in (plumbing_note(models),) if note]
    if left_out:
        notes.append(f"ranked without {', '.join(left_out)} (not measured for every simulator)")
    if invalid:
        notes.append(f"{invalid} value judgement(s) stayed invalid and were left out of value agreement")
    return notes
