"""The report's "Validity" section: can the run's numbers be trusted? One line per instrument, each with its figure
and a one-line reading for a reader who is not a statistician.

The instruments are computed elsewhere — the negative control (``control.py``), the simulated user's errors and what the
dialogues elicited (``simulator.py``), judge agreement, noise and length bias (``judges.py``), the human calibration
(``calibrate.py``, with ``prefdisco report --human``), the variance parts and the smallest detectable NormAlign
difference (``variance.py``); this module words each reading (``validity/section.py`` puts them in the table). An
instrument the run did not measure says so, with the flag that would measure it.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from prefdisco.analysis.section.registry import Reading
from prefdisco.analysis.section.shown import finite, fixed, nested
from prefdisco.analysis.stats.normalign import MIN_INTERVAL_SCENARIOS, too_few
from prefdisco.analysis.validity.calibrate import Calibration
from prefdisco.analysis.validity.effective_judges import EffectiveJudges
from prefdisco.analysis.validity.judges import MIN_LENGTH_POINTS, NO_LENGTHS, JudgeReliability
from prefdisco.analysis.validity.position import PositionEffect
from prefdisco.analysis.validity.variance import PARTS
from prefdisco.results.contract import condition_label


def variance_summary(variance: pd.DataFrame | None, detectable: pd.DataFrame | None) -> dict[str, Any]:
    """``summary.json``'s ``variance`` (model → task → condition → parts) and ``normalign_mde`` (model → task →
    smallest detectable difference)."""
    out: dict[str, Any] = {"variance": {}, "normalign_mde": {}}
    for r in [] if variance is None else variance.to_dict("records"):
        parts = {k: finite(r[k]) for k in ("between", "assistant", "simulator", "judge")}
        parts |= {k: int(r[k]) for k in ("n_scenarios", "epochs", "repeats")}
        parts |= {"split": r["split"], "reason": r["reason"] or None}
        condition = condition_label(r["mode"], None if pd.isna(r["fixed_k"]) else r["fixed_k"])
        out["variance"].setdefault(str(r["model"]), {}).setdefault(str(r["task"]), {})[condition] = parts
    if detectable is not None:
        out["normalign_mde"] = nested(detectable, ["model", "task"], lambda r: finite(r["mde"]))
    return out


def _span(low: Any, high: Any, n: Any) -> str:
    """An interval as ``[low, high]``, or why there is none (``n``: the cell's scenarios, when known)."""
    if finite(low) is None or finite(high) is None:
        few = n is not None and int(n) < MIN_INTERVAL_SCENARIOS
        return f"({too_few(int(n)) if few else 'no interval'})"
    return f"[{fixed(low)}, {fixed(high)}]"


def control_reading(control: pd.DataFrame | None) -> Reading:
    name = "Negative control (oracle − wrong_persona PrefAlign)"
    if control is None or control.empty:
        return Reading(name, "not run", "add wrong_persona to --modes to check that the judge rewards the right user")
    flagged = control.loc[control["flagged"].astype(bool)]
    gaps = ", ".join(
        f"{r.model}/{r.task} {fixed(r.gap)} {_span(r.ci_low, r.ci_high, getattr(r, 'n', None))}"
        for r in control.itertuples()
    )
    if flagged.empty:
        text = f"in every cell the judge scores the true profile above another user's ({len(control)} cell(s))"
    else:
        cells = ", ".join(f"{r.model}/{r.task}" for r in flagged.itertuples())
        text = (
            f"in {len(flagged)} of {len(control)} cell(s) ({cells}) the judge does not clearly score the true profile "
            "above another user's: there, PrefAlign cannot tell personalization from generic quality"
        )
    return Reading(name, gaps, text)


def simulator_reading(simulator: pd.DataFrame | None) -> Reading:
    name = "Simulated user (critical errors, elicited weight)"
    if simulator is None or simulator.empty:
        return Reading(name, "not measured", "run discovery with the audit on (the default) to audit the simulator")
    share = pd.to_numeric(simulator["critical_share"], errors="coerce")
    weight = pd.to_numeric(simulator["elicited_weight"], errors="coerce")
    worst = finite(share.max())
    finding = (
        f"dialogues with a critical simulator error: at most {fixed(None if worst is None else 100 * worst, 1)} % per "
        f"cell; mean elicited weight {fixed(weight.mean())}"
    )
    audited = pd.to_numeric(simulator.get("n_audited", pd.Series(dtype=float)), errors="coerce").sum()
    hits = pd.to_numeric(simulator.get("n_hit_rate", pd.Series(dtype=float)), errors="coerce").sum()
    asked = pd.to_numeric(simulator.get("n_asked", pd.Series(dtype=float)), errors="coerce").sum()
    if worst is None and not audited and not hits and not asked:
        text = "no dialogue asked a question, so there was no simulated-user turn to audit"
    elif worst is None and not audited and asked:
        text = (
            f"{int(asked)} dialogues asked questions but none has a valid audit: the audit was off (--no-audit) or "
            "every audit was invalid, so the simulator's errors are not measured"
        )
    elif worst is None:
        text = "no valid audit: the simulator's errors are unknown"
    elif worst == 0:
        text = "the audit found no dialogue where the simulated user gave the task away or misstated the profile"
    else:
        text = (
            "some dialogues were helped or hindered by the simulated user itself; compare cells with care "
            "and read the flagged transcripts"
        )
    return Reading(name, finding, text)


def judge_readings(judges: JudgeReliability | None) -> list[Reading]:
    agreement = "Judge agreement (Krippendorff's α, ordinal)"
    noise = "Judge noise (α among repeats)"
    length = "Length bias (Spearman ρ, score vs response length)"
    if judges is None:
        absent = "no per-attribute table"
        return [Reading(agreement, absent, "—"), Reading(noise, absent, "—"), Reading(length, absent, "—")]
    alphas = pd.to_numeric(judges.agreement["alpha"], errors="coerce").dropna()
    if alphas.empty:
        reasons = sorted({str(r) for r in judges.agreement["reason"] if r})
        out = [Reading(agreement, "; ".join(reasons) or "not measured", "repeat --judge-model to measure it")]
    else:
        low = float(alphas.min())
        word = "agree well" if low >= 0.8 else ("agree moderately" if low >= 0.667 else "disagree")
        out = [
            Reading(
                agreement,
                f"α from {low:.2f} to {float(alphas.max()):.2f} over {len(alphas)} cell(s)",
                f"the judges {word} (0.8 and above is usually read as reliable, below 0.667 as not)",
            )
        ]
    noise_alpha = pd.to_numeric(judges.noise["alpha"], errors="coerce").dropna()
    if noise_alpha.empty:
        out.append(Reading(noise, "not measured", "--judge-repeats 2 or more re-judges each response"))
    else:
        sd = pd.to_numeric(judges.noise["mean_sd"], errors="coerce")
        out.append(
            Reading(
                noise,
                f"α {float(noise_alpha.min()):.2f}–{float(noise_alpha.max()):.2f}; mean score SD {fixed(sd.mean())}",
                "how much one judge disagrees with itself on the same response",
            )
        )
    rho = pd.to_numeric(judges.length["spearman"], errors="coerce").dropna()
    if rho.empty:
        out.append(Reading(length, *_length_unmeasured(judges.length)))
    else:
        strongest = float(rho.abs().max())
        word = "scores barely follow length" if strongest < 0.3 else "longer responses tend to score differently"
        out.append(Reading(length, f"|ρ| at most {strongest:.2f}", word))
    return out


def _length_unmeasured(table: pd.DataFrame) -> tuple[str, str]:
    """The finding and reading of a length-bias probe with no ρ, from why each (judge, condition) has none
    (``judges.length_bias``): no transcripts, too few responses with a length, or no variation."""
    reasons = [str(r) for r in table["reason"].dropna()]
    if not reasons:
        return "not measured: no judged response", "needs judged responses with their transcripts"
    if all(r.startswith(NO_LENGTHS) for r in reasons):
        return "not measured: no transcripts", "needs transcripts (final responses) beside the results"
    n = pd.to_numeric(table["n"], errors="coerce")
    if any("need at least" in r for r in reasons):
        most = int(n.max()) if n.notna().any() else 0
        return (
            f"not measured: at most {most} scored response(s) with a length per judge and condition",
            f"Spearman's ρ needs at least {MIN_LENGTH_POINTS} responses in a condition; run more scenarios",
        )
    return (
        "not measured: no variation in scores or in response lengths",
        "every response of a condition had the same score or the same length, so ρ is undefined",
    )


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def position_reading(effect: PositionEffect | None) -> Reading:
    """The structured judge's mean score by list position and its slope, per judge (``validity/position.py``)."""
    name = "Judge position effect (mean score by list position, structured judge)"
    if effect is None:
        return Reading(
            name,
            "not measured",
            "--judge structured shuffles each call's criteria and records their positions, which measures it",
        )
    findings, biased, flat = [], [], []
    for r in effect.slopes.to_dict("records"):
        own = effect.positions.loc[effect.positions["judge"] == r["judge"]]
        means = ", ".join(
            f"{_ordinal(int(p['position']))} {fixed(p['mean'])} {_span(p['ci_low'], p['ci_high'], r['n_scenarios'])}"
            for p in own.to_dict("records")
        )
        if finite(r["slope"]) is None:
            findings.append(f"{r['judge']}: {means} ({r['reason']})")
            continue
        slope = f"slope {fixed(r['slope'], 3)} {_span(r['ci_low'], r['ci_high'], r['n_scenarios'])} per place"
        findings.append(f"{r['judge']}: {means}; {slope} ({r['n_calls']} calls)")
        low, high = finite(r["ci_low"]), finite(r["ci_high"])
        if low is not None and high is not None and (low > 0 or high < 0):
            biased.append(f"{r['judge']} {fixed(r['slope'], 3)}")
        elif low is not None:
            flat.append(str(r["judge"]))
    why = (
        "the criteria are shuffled in every call, so a criterion's place is unrelated to which criterion it is: a "
        "slope by position is the judge's own order bias"
    )
    if biased:
        text = f"{why}; here scores change with the place in the list ({', '.join(biased)} points per place)"
    elif flat:
        text = f"{why}; no slope is told apart from 0 here"
    else:
        text = f"{why}; no interval to tell a slope from 0"
    return Reading(name, "; ".join(findings), text)


def effective_judges_reading(panel: EffectiveJudges | None) -> Reading:
    """The panel's effective number of judges, and the warning for a panel of one family (``effective_judges.py``)."""
    name = "Effective number of judges (n / (1 + (n − 1)·ρ̄))"
    if panel is None:
        return Reading(name, "no per-attribute table", "—")
    families = ", ".join(f"{j} ({panel.families[j]})" for j in panel.judges)
    if len(panel.judges) < 2:
        finding = "one judge"
        text = "repeat --judge-model with judges of other families to measure how many independent votes they are"
    elif panel.n_eff is None:
        finding = f"{len(panel.judges)} judges: {families}; {panel.reason}"
        text = "no effective number: a pair of judges has no correlation on these items (the reason says why)"
    else:
        rho = f"mean pairwise Pearson ρ̄ {fixed(panel.rho_bar)}"
        finding = f"{fixed(panel.n_eff)} of {len(panel.judges)} judges ({rho}): {families}"
        text = "how many independent judges the panel's agreement is worth; correlated judges add less than a vote"
    if panel.warning is not None:
        text = f"warning: {panel.warning}"
    return Reading(name, finding, text)


def calibration_reading(calibration: Calibration | None) -> Reading:
    name = "Human calibration"
    if calibration is None:
        return Reading(
            name,
            "no human ratings",
            "rate a sample with `prefdisco annotate serve-ratings`, then `prefdisco report --human RATINGS.csv`",
        )
    finding = (
        f"{calibration.n_pairs} rated items, Spearman {fixed(calibration.spearman)}, weighted κ "
        f"{fixed(calibration.weighted_kappa)}, judge bias {fixed(calibration.judge_bias)}"
    )
    bias = calibration.judge_bias
    direction = "above" if bias > 0 else "below"
    return Reading(name, finding, f"the judge scores {abs(bias):.2f} points {direction} people on average")


def missing_parts(variance: pd.DataFrame) -> dict[str, str]:
    """The variance parts some cell did not measure, each with how to measure it (``variance.py``'s reasons)."""
    out: dict[str, str] = {}
    for part in PARTS:
        values = pd.to_numeric(variance[part], errors="coerce")
        if not values.isna().any():
            continue
        if part == "judge":
            out[part] = "--judge-repeats 2 or more"
        elif pd.to_numeric(variance["between"], errors="coerce").isna().any():
            out[part] = "--epochs 2 or more"
        else:  # a dialogue cell without an oracle cell to take the assistant's part from
            out[part] = "oracle in --modes (with --epochs 2 or more)"
    return out


def variance_reading(variance: pd.DataFrame | None, detectable: pd.DataFrame | None) -> list[Reading]:
    """The variance parts' reading: shares of assistant / simulator / judge only when every cell measured all
    three; otherwise which part is missing and the flag that measures it."""
    parts = "Variance by source (assistant / simulator / judge)"
    if variance is None or variance.empty:
        out = [Reading(parts, "not measured", "--epochs 2 or more and --judge-repeats 2 or more measure it")]
    elif missing := missing_parts(variance):
        finding = "; ".join(f"{part} part not measured (needs {how})" for part, how in missing.items())
        out = [
            Reading(
                parts, finding, "shares are given only when the assistant, simulator and judge parts are all measured"
            )
        ]
    else:
        sums = {k: float(pd.to_numeric(variance[k], errors="coerce").sum()) for k in PARTS}
        total = sum(sums.values())
        if total <= 0:
            out = [Reading(parts, "no variation", "trials agree: no part to attribute")]
        else:
            shares = ", ".join(f"{k} {100 * v / total:.0f} %" for k, v in sums.items())
            biggest = max(sums, key=lambda k: sums[k])
            out = [Reading(parts, shares, f"most of the trial-to-trial variation comes from the {biggest}")]
    out.append(detectable_reading(detectable))
    return out


def _cells(rows: pd.DataFrame, limit: int = 4) -> str:
    names = [f"{r['model']}/{r['task']}" for r in rows.to_dict("records")]
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def detectable_reading(detectable: pd.DataFrame | None) -> Reading:
    """The smallest detectable NormAlign difference over the cells that have one; the others' reasons (too few
    scenarios, no bootstrap, an interval of no width), never a range of zeros."""
    name = "Smallest detectable NormAlign difference"
    if detectable is None or detectable.empty:
        return Reading(name, "no NormAlign cell", "—")
    mde = pd.to_numeric(detectable["mde"], errors="coerce")
    reasons = detectable["reason"] if "reason" in detectable.columns else pd.Series("no interval", detectable.index)
    measured = mde.notna() & (mde > 0)
    missing = detectable.loc[~measured].assign(_why=reasons[~measured].replace("", "no interval"))
    why = []
    for reason, rows in missing.groupby("_why", sort=False):
        single = len(detectable) == 1
        why.append(str(reason) if single else f"{reason} in {_cells(rows)}")
    if measured.any():
        low, high = float(mde[measured].min()), float(mde[measured].max())
        finding = f"{low:.1f} NormAlign points" if low == high else f"{low:.1f} to {high:.1f} NormAlign points"
        return Reading(
            name,
            "; ".join([finding, *why]),
            "two models closer than this are not told apart by a run of this size (80 % power, 5 % test)",
        )
    if missing["_why"].str.startswith("too few scenarios").any():
        text = f"a bootstrap interval needs at least {MIN_INTERVAL_SCENARIOS} scenarios scored in all three conditions"
    elif missing["_why"].str.startswith("no bootstrap").any():
        text = "bootstrap intervals (--bootstrap > 0) are needed"
    else:
        text = "no cell's interval measures a difference"
    return Reading(name, "; ".join(why), text)
