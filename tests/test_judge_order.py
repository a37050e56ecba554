"""A sturdier judge (issue 25 part 5), planted through the real run (``evaluation.run.run_conditions``) with scripted
judges (``scripted/<name>``, ``tests/transfer_world.py``'s model API), every figure computed by hand:

* the structured judge shuffles each call's criteria, seeded (the same on a rerun, another order across calls) and
  records each criterion's call and position, exactly as the prompt listed it;
* a rubric longer than ``--judge-max-criteria N`` is split over ceil(k/N) calls, each with its own criteria, and
  every criterion's score lands on its own attribute wherever it was listed;
* the report's position effect (mean score by list position with its bootstrap interval, the slope) equals a hand
  computation on a judge that gives the last-listed criterion one point less;
* the effective number of judges n / (1 + (n − 1)·ρ̄) of a panel with planted correlations, and the warning for a
  panel of one model family;
* the judge temperature and the run seed in the report's header.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage

import transfer_world  # noqa: F401  (registers the scripted/<name> model API)
from prefdisco.analysis.report.build import build_report, make_report
from prefdisco.analysis.validity.effective_judges import family_warning, judge_family, pair_correlation
from prefdisco.errors import UserError
from prefdisco.evaluation.run import run_conditions
from prefdisco.evaluation.running.guard import guard_run
from prefdisco.evaluation.running.task import prefdisco as prefdisco_task
from prefdisco.evaluation.settings.config import PANEL_DEFAULTS, UNCOMPARED_SETTINGS, RunConfig
from prefdisco.results.table import load_results
from prefdisco.schema import PreferenceItem, PreferenceProfile, Problem, RubricCriterion, Scenario
from prefdisco.scoring.criterion_order import DEFAULT_MAX_CRITERIA, criterion_calls
from scripted import Scripted, constant, make_persona
from test_report import HEADER, write_csv
from transfer_world import SCRIPTS

SEED = 7
LISTED = re.compile(r"^Criterion c(\d+) — (.+)$", re.MULTILINE)
PROBLEM = re.compile(r"Problem (\d+) of the world")


def scenario(index: int, weights: tuple[float, ...]) -> Scenario:
    """Scenario ``w<index>`` with criteria ``Crit A``, ``Crit B``, … of ``weights``; its problem names its index."""
    names = [f"Crit {chr(ord('A') + i)}" for i in range(len(weights))]
    items = [
        PreferenceItem(attribute=n, value=f"value-{n[-1]}", weight=w, description=f"what {n} means")
        for n, w in zip(names, weights, strict=True)
    ]
    rubric = [
        RubricCriterion(
            attribute=n,
            preferred_value=f"value-{n[-1]}",
            description=f"uses value-{n[-1]}",
            levels={lvl: f"level {lvl} of {n}" for lvl in range(1, 6)},
        )
        for n in names
    ]
    problem = Problem(
        id=f"prob-{index}",
        benchmark="demo",
        domain="math",
        question=f"Problem {index} of the world: what is 1 + 1?",
        choices=["0", "2", "7", "9"],
        answer="B",
        answer_type="letter",
    )
    return Scenario(
        id=f"w{index}",
        problem=problem,
        persona=make_persona(f"p{index}", f"Person {index}"),
        profile=PreferenceProfile(items=items),
        rubric=rubric,
    )


def listed(messages: list[ChatMessage]) -> tuple[int, list[str]]:
    """The scenario index and the criteria a structured judge call lists, in the order listed (c1, c2, …)."""
    text = "\n".join(m.text for m in messages)
    keys = [(int(k), name) for k, name in LISTED.findall(text)]
    assert [k for k, _ in keys] == list(range(1, len(keys) + 1))
    return int(PROBLEM.search(text).group(1)), [name for _, name in keys]


def run(folder: Path, scenarios: list[Scenario], **settings) -> Path:
    config = RunConfig(
        models=["scripted/answer-b"],
        user_model="scripted/answer-b",
        log_dir=folder,
        audit=False,
        quality=False,  # the judges here score the rubric only
        seed=SEED,
        display="none",
        **settings,
    )
    config.validate()
    run_conditions(scenarios, config)
    return folder


SCRIPTS["answer-b"] = lambda messages: "B."


# ---- the shuffle, its record, and the position effect -----------------------------------------------------------

SENT: list[tuple[int, tuple[str, ...]]] = []
"""Every (scenario index, order listed) the last-point-less judge was sent."""


def last_point_less(messages: list[ChatMessage]) -> str:
    """Every listed criterion scores 4 except the last-listed, which scores 3, whatever the criterion."""
    index, names = listed(messages)
    SENT.append((index, tuple(names)))
    return json.dumps({f"c{i}": 3 if i == len(names) else 4 for i in range(1, len(names) + 1)})


SCRIPTS["last-point-less"] = last_point_less
WEIGHTS3 = (0.5, 0.3, 0.2)


def test_the_shuffle_is_seeded_recorded_as_sent_and_the_position_effect_is_the_hand_figure(tmp_path):
    """Six scenarios of three criteria (weights A .5, B .3, C .2), baseline and oracle: 12 structured calls of 3.

    By hand. Every call lists 3 criteria and scores them 4, 4, 3 by place, so over the 12 calls:
    mean at the 1st place = 4 (n = 12), 2nd = 4 (n = 12), 3rd = 3 (n = 12). The OLS slope of score on place: per
    call x = 1, 2, 3 (x̄ = 2), y = 4, 4, 3 (ȳ = 11/3): Σ(x − x̄)(y − ȳ) = −(1/3) + 0 − (2/3) = −1, Σ(x − x̄)² = 2,
    and every call is alike, so slope = −12/24 = −0.5 points per place. Every scenario shows the same pattern, so
    every bootstrap resample of the scenarios gives the same figures: each interval is its point ([4, 4], [4, 4],
    [3, 3], slope [−0.5, −0.5]). A response's PrefAlign is 4 − w(last-listed): 3.5 when A is last, 3.7 for B, 3.8
    for C — so it tells which criterion the recorded order put last.
    """
    SENT.clear()
    scenarios = [scenario(i, WEIGHTS3) for i in range(6)]
    folder = run(
        tmp_path / "run",
        scenarios,
        grader_model="scripted/last-point-less",
        judge="structured",
        modes=["baseline", "oracle"],
    )
    sent = list(SENT)
    assert len(sent) == 12  # one call per response: 3 criteria <= the default 10

    att = pd.read_csv(folder / "attributes.csv")
    results = pd.read_csv(folder / "results.csv")
    assert len(att) == 36 and set(att["judge_call"]) == {1}
    # recorded as sent: each response's recorded positions are the order its one call listed
    recorded = {
        (sid, mode): tuple(g.sort_values("judge_position")["attribute"])
        for (sid, mode), g in att.groupby(["scenario_id", "mode"])
    }
    assert sorted((int(sid[1:]), order) for (sid, _mode), order in recorded.items()) == sorted(sent)
    for order in recorded.values():
        assert sorted(order) == ["Crit A", "Crit B", "Crit C"]  # a permutation of the rubric
    assert len(set(recorded.values())) > 1  # calls differ in order (6 orders are possible; 12 calls drew several)
    # each criterion's score lands on its attribute: the last-listed one holds the 3, the response's PrefAlign says so
    weight = dict(zip(["Crit A", "Crit B", "Crit C"], WEIGHTS3, strict=True))
    for r in results.itertuples():
        last = recorded[(r.scenario_id, r.mode)][-1]
        rows = att.loc[(att["scenario_id"] == r.scenario_id) & (att["mode"] == r.mode)].set_index("attribute")
        assert rows.loc[last, "score"] == 3 and (rows.drop(index=last)["score"] == 4).all()
        assert r.pref_align == pytest.approx(4 - weight[last])

    # seeded: the same run in another folder (same --seed) sends the same orders; a rerun in place sends nothing
    SENT.clear()
    run(
        tmp_path / "again",
        scenarios,
        grader_model="scripted/last-point-less",
        judge="structured",
        modes=["baseline", "oracle"],
    )
    assert sorted(SENT) == sorted(sent)
    SENT.clear()
    run(folder, scenarios, grader_model="scripted/last-point-less", judge="structured", modes=["baseline", "oracle"])
    assert SENT == []  # finished samples are reused: no judge call
    # another --seed draws other orders for the same calls
    SENT.clear()
    config_seed = {"grader_model": "scripted/last-point-less", "judge": "structured", "modes": ["baseline", "oracle"]}
    other = RunConfig(
        models=["scripted/answer-b"],
        user_model="scripted/answer-b",
        log_dir=tmp_path / "seed8",
        audit=False,
        quality=False,
        seed=8,
        display="none",
        **config_seed,
    )
    run_conditions(scenarios, other)
    assert sorted(SENT) != sorted(sent)

    report, _ = make_report(folder, tmp_path / "report", seed=3, n_boot=200, figures=False)
    effect = report.summary["judge_position_effect"]["scripted/last-point-less"]
    for place, mean in (("1", 4.0), ("2", 4.0), ("3", 3.0)):
        assert effect["positions"][place]["mean"] == pytest.approx(mean)
        assert effect["positions"][place]["n"] == 12
        assert effect["positions"][place]["ci"] == [pytest.approx(mean), pytest.approx(mean)]
    assert effect["slope"] == pytest.approx(-0.5)
    assert effect["slope_ci"] == [pytest.approx(-0.5), pytest.approx(-0.5)]
    assert (effect["n_calls"], effect["n_judgements"], effect["n_scenarios"]) == (12, 36, 6)
    table = pd.read_csv(tmp_path / "report" / "table_judge_position.csv")
    assert list(table["position"]) == [1, 2, 3] and list(table["mean"]) == pytest.approx([4.0, 4.0, 3.0])
    [reading] = [v for v in report.summary["validity"] if v["instrument"].startswith("Judge position effect")]
    assert "1st 4.00 [4.00, 4.00], 2nd 4.00 [4.00, 4.00], 3rd 3.00 [3.00, 3.00]" in reading["finding"]
    assert "slope -0.500 [-0.50, -0.50] per place" in reading["finding"]
    assert "order bias" in reading["reading"] and "-0.500 points per place" in reading["reading"]
    # a whole level from the first place to the last: the report's top says its PrefAlign is void
    void = [c for c in report.caveats if c.startswith("PrefAlign is void for scripted/last-point-less")]
    assert len(void) == 1 and "(-0.50 per place over 3 places)" in void[0]
    # the header: the judge, its temperature (0, the default) and the run seed, from run.json
    md = (tmp_path / "report" / "report.md").read_text()
    assert "Judge settings (run.json): judge structured · judge temperature 0 · at most 10 criteria" in md
    assert "run seed 7" in md and "run seed 7" in (tmp_path / "report" / "report.html").read_text()
    assert report.summary["judge_settings"]["grader_temperature"] == [0.0]
    assert report.summary["judge_settings"]["seed"] == [7] and report.summary["judge_settings"]["run_files"] == 1


def test_intervals_need_four_scenarios_and_widen_when_scenarios_differ(tmp_path):
    """Three scenarios: no interval ("too few scenarios (n = 3)"), as every bootstrap of the report. Then a judge
    whose last-listed criterion loses a point in scenarios 0-2 and none in 3-5: means by place over the 12 calls are
    4, 4 and (6·3 + 6·4)/12 = 3.5; the 3rd place's interval lies within the per-scenario means [3, 4] and has width
    (resamples of the six scenarios mix the two kinds), while the 1st and 2nd stay [4, 4]."""
    SENT.clear()
    small = run(
        tmp_path / "small",
        [scenario(i, WEIGHTS3) for i in range(3)],
        grader_model="scripted/last-point-less",
        judge="structured",
        modes=["baseline", "oracle"],
    )
    small_report = build_report(load_results(small), seed=1, n_boot=200, figures=False)
    own = small_report.summary["judge_position_effect"]["scripted/last-point-less"]
    assert own["positions"]["3"]["ci"] == [None, None] and own["reason"] == "too few scenarios (n = 3)"
    assert not any(c.startswith("PrefAlign is void") for c in small_report.caveats)  # no interval: not called void

    def half(messages: list[ChatMessage]) -> str:
        index, names = listed(messages)
        last = 3 if index < 3 else 4
        return json.dumps({f"c{i}": last if i == len(names) else 4 for i in range(1, len(names) + 1)})

    SCRIPTS["half"] = half
    folder = run(
        tmp_path / "mixed",
        [scenario(i, WEIGHTS3) for i in range(6)],
        grader_model="scripted/half",
        judge="structured",
        modes=["baseline", "oracle"],
    )
    mixed = build_report(load_results(folder), seed=1, n_boot=400, figures=False)
    own = mixed.summary["judge_position_effect"]["scripted/half"]
    assert own["positions"]["3"]["mean"] == pytest.approx(3.5)
    low, high = own["positions"]["3"]["ci"]
    assert 3.0 <= low < 3.5 < high <= 4.0
    assert own["positions"]["1"]["ci"] == [pytest.approx(4.0), pytest.approx(4.0)]
    # slope by hand: 6 calls of (4, 4, 3) give −0.5 each, 6 of (4, 4, 4) give 0; pooled Σ(x−x̄)(y−ȳ) = 6·(−1) + 0 over
    # Σ(x − x̄)² = 12·2 (ȳ differs between calls but x̄ = 2 in every call, so the pooled slope is −6/24 = −0.25)
    assert own["slope"] == pytest.approx(-0.25)
    # half a level from the first place to the last: an order bias for Validity, not a void PrefAlign at the top
    assert not any(c.startswith("PrefAlign is void") for c in mixed.caveats)


def placed_run(folder: Path, calls: list[list[float]], n: int) -> Path:
    """A hand-made run of one structured judge: ``n`` scenarios per listed call, each scenario's baseline response
    judged in one call whose criteria score ``calls[i]`` by place (1st, 2nd, …); results and attribute tables."""
    folder.mkdir(parents=True)
    results, attributes = [], []
    for i, scores in enumerate(calls):
        for j in range(n):
            sid = f"c{i}s{j}"
            results.append(["m-a", "openai", "t1", sid, "baseline", "", sum(scores) / len(scores), 1, 0, 0, 1, 1, 0])
            for place, score in enumerate(scores, start=1):
                weight = 1 / len(scores)
                attributes.append(["m-a", "t1", sid, "baseline", "", f"crit{place}", weight, score, "J", 1, 1, place])
    write_csv(folder / "results.csv", HEADER, results)
    header = ["model", "task", "scenario_id", "mode", "fixed_k", "attribute", "weight", "score", "judge", "repeat"]
    write_csv(folder / "attributes.csv", [*header, "judge_call", "judge_position"], attributes)
    return folder


def test_a_judge_that_scores_long_rubrics_lower_has_no_position_effect(tmp_path):
    """Issue 45, defect 5. Sixteen scenarios: eight judged in a call of 2 criteria that all score 4, eight in a call
    of 4 that all score 2. No call's score moves with the place, only with the rubric's length.

    By hand, one slope over the pooled judgements (the old figure): per pair of calls x = 1, 2 | 1, 2, 3, 4 and
    y = 4, 4 | 2, 2, 2, 2; x̄ = 13/6, ȳ = 8/3; Σ(x − x̄)(y − ȳ) = (4/3)·(−7/6 − 1/6) + (−2/3)·(10 − 4·13/6) = −8/3,
    Σ(x − x̄)² = 35 − 6·(13/6)² = 41/6: slope −16/41 = −0.39 per place, 1.17 levels over 4 places, and the report's
    top called PrefAlign void. Within calls (each score and place less its call's mean) every score's difference
    is 0: slope 0 with every resample's 0, so the interval [0, 0] and no caveat; each place's mean is the mean of
    all judgements, (8·8 + 8·8)/48 = 8/3, plus a difference of 0 (the plain means would be 3, 3, 2, 2)."""
    data = load_results(placed_run(tmp_path / "run", [[4, 4], [2, 2, 2, 2]], 8))
    report = build_report(data, seed=1, n_boot=200, figures=False)
    effect = report.summary["judge_position_effect"]["J"]
    assert effect["slope"] == pytest.approx(0.0, abs=1e-12)
    assert effect["slope_ci"] == [pytest.approx(0.0, abs=1e-12), pytest.approx(0.0, abs=1e-12)]
    assert (effect["n_calls"], effect["n_judgements"], effect["n_scenarios"]) == (16, 48, 16)
    for place in ("1", "2", "3", "4"):
        assert effect["positions"][place]["mean"] == pytest.approx(8 / 3)
    assert [effect["positions"][p]["n"] for p in ("1", "2", "3", "4")] == [16, 16, 8, 8]
    assert not any(c.startswith("PrefAlign is void") for c in report.caveats)


def test_a_planted_order_bias_within_calls_is_found_with_its_slope(tmp_path):
    """Six scenarios judged in a call of 3 scoring 4, 4, 1 by place and six in a call of 2 scoring 5, 4 (calls of
    other lengths and levels, a true order bias in both). By hand, within calls: the 3-call's places less their mean
    are −1, 0, 1 and its scores less theirs (3) 1, 1, −2: Σ dx·dy = −3, Σ dx² = 2; the 2-call's −½, ½ and ½, −½:
    Σ dx·dy = −½, Σ dx² = ½. Pooled: (6·(−3) + 6·(−½)) / (6·2 + 6·½) = −3.5/2.5 = −1.4 per place. A resample of the
    scenarios mixes the two kinds, so its slope lies between the 2-calls' alone (−1) and the 3-calls' alone (−1.5):
    the interval excludes 0, and 1.4 × (3 − 1) places = 2.8 levels ≥ 1 calls PrefAlign void at the report's top.
    The mean by place: all judgements' mean (6·9 + 6·9)/60 = 3.6 plus the mean difference at the place, (1 + ½)/2,
    (1 − ½)/2 and −2: 4.35, 3.85, 1.6."""
    data = load_results(placed_run(tmp_path / "run", [[4, 4, 1], [5, 4]], 6))
    report = build_report(data, seed=1, n_boot=400, figures=False)
    effect = report.summary["judge_position_effect"]["J"]
    assert effect["slope"] == pytest.approx(-1.4)
    low, high = effect["slope_ci"]
    assert -1.5 <= low < -1.4 < high <= -1.0
    means = [effect["positions"][p]["mean"] for p in ("1", "2", "3")]
    assert means == [pytest.approx(4.35), pytest.approx(3.85), pytest.approx(1.6)]
    [void] = [c for c in report.caveats if c.startswith("PrefAlign is void for J")]
    assert "(-1.40 per place over 3 places)" in void


# ---- the split --------------------------------------------------------------------------------------------------

PLANTED = {"Crit A": 5, "Crit B": 1, "Crit C": 4, "Crit D": 2, "Crit E": 3}
SPLIT_SENT: list[tuple[int, tuple[str, ...]]] = []


def by_name(messages: list[ChatMessage]) -> str:
    """Each listed criterion gets its planted score, wherever it is listed."""
    index, names = listed(messages)
    SPLIT_SENT.append((index, tuple(names)))
    return json.dumps({f"c{i}": PLANTED[n] for i, n in enumerate(names, start=1)})


SCRIPTS["by-name"] = by_name


def test_a_long_rubric_is_split_into_ceil_k_over_n_calls_and_scores_keep_their_meaning(tmp_path):
    """Five criteria (weights .3, .25, .2, .15, .1), --judge-max-criteria 2: ceil(5/2) = 3 calls a response, of 2, 2
    and 1 criteria (near-equal parts, the larger first), disjoint, together the rubric. The judge scores by name
    (A 5, B 1, C 4, D 2, E 3), so PrefAlign = .3·5 + .25·1 + .2·4 + .15·2 + .1·3 = 1.5 + .25 + .8 + .3 + .3 = 3.15 in
    every response, whatever order each call drew; attributes.csv holds each planted score on its own attribute."""
    SPLIT_SENT.clear()
    weights = (0.3, 0.25, 0.2, 0.15, 0.1)
    scenarios = [scenario(i, weights) for i in range(2)]
    folder = run(
        tmp_path / "run",
        scenarios,
        grader_model="scripted/by-name",
        judge="structured",
        judge_max_criteria=2,
        modes=["baseline"],
    )
    assert len(SPLIT_SENT) == 2 * 3
    for index in range(2):
        parts = [names for i, names in SPLIT_SENT if i == index]
        assert sorted(len(p) for p in parts) == [1, 2, 2]
        assert sorted(n for p in parts for n in p) == sorted(PLANTED)  # disjoint, and every criterion once
    results = pd.read_csv(folder / "results.csv")
    assert list(results["pref_align"]) == pytest.approx([3.15, 3.15])
    att = pd.read_csv(folder / "attributes.csv")
    assert all(PLANTED[r.attribute] == r.score for r in att.itertuples())
    for (sid, _), g in att.groupby(["scenario_id", "mode"]):
        calls = {c: tuple(h.sort_values("judge_position")["attribute"]) for c, h in g.groupby("judge_call")}
        assert sorted(calls) == [1, 2, 3] and [len(calls[c]) for c in (1, 2, 3)] == [2, 2, 1]
        assert set(calls.values()) == {names for i, names in SPLIT_SENT if i == int(sid[1:])}  # recorded as sent
    assert json.loads((folder / "run.json").read_text())["judge_max_criteria"] == 2


def test_the_split_rule_cuts_near_equal_parts():
    """k = 7, N = 3: ceil(7/3) = 3 calls of 3, 2, 2; k = 4, N = 4: one call; k = 10, N = 4: 3 calls of 4, 3, 3."""
    for k, n, sizes in ((7, 3, [3, 2, 2]), (4, 4, [4]), (10, 4, [4, 3, 3]), (5, 1, [1] * 5)):
        calls = criterion_calls(k, n, seed=11)
        assert [len(c.criteria) for c in calls] == sizes
        assert sorted(i for c in calls for i in c.criteria) == list(range(k))
    assert [c.criteria for c in criterion_calls(4, 10, None)] == [(0, 1, 2, 3)]  # no seed: the rubric's order


def test_the_inspect_task_takes_judge_max_criteria_and_refuses_a_bad_one(tmp_path):
    """``-T judge_max_criteria=2`` on a rubric of three: ceil(3/2) = 2 calls of 2 and 1 criteria."""
    bench = tmp_path / "scenarios.jsonl"
    bench.write_text(scenario(0, WEIGHTS3).model_dump_json() + "\n")
    with pytest.raises(
        UserError, match=r"^--judge-max-criteria: expected a whole number of criteria per judge call >= 1, got 0$"
    ):
        prefdisco_task(str(bench), judge="structured", judge_max_criteria=0)
    task = prefdisco_task(str(bench), judge="structured", judge_max_criteria=2, quality=False, audit=False)
    grader = Scripted(lambda call, i: json.dumps({f"c{j}": 3 for j in range(1, len(LISTED.findall(call.text)) + 1)}))
    [log] = inspect_eval(
        task,
        model=Scripted(constant("B.")).model,
        model_roles={"user": Scripted(constant("Fine.")).model, "grader": grader.model},
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success"
    assert sorted(len(LISTED.findall(c.text)) for c in grader.calls) == [1, 2]


def config(folder: Path, **changes) -> RunConfig:
    return replace(RunConfig(models=["m"], user_model="u", grader_model="g", log_dir=folder), **changes)


def test_judge_max_criteria_is_recorded_when_changed_and_a_resume_with_another_is_refused(tmp_path):
    default = config(tmp_path).fingerprint("set", 2)
    assert "judge_max_criteria" not in default  # a run at the default keeps its old fingerprint
    four = config(tmp_path, judge_max_criteria=4).fingerprint("set", 2)
    assert four == {**default, "judge_max_criteria": 4, "protocol_id": four["protocol_id"]}
    assert four["protocol_id"].startswith("custom-") and default["protocol_id"] == "default-v1.0"  # a protocol change
    with pytest.raises(UserError, match=r"^--judge-max-criteria: expected .* got 0$"):
        config(tmp_path, judge_max_criteria=0).validate()

    def guard(folder: Path, **changes) -> None:
        guard_run(folder, config(folder, **changes).fingerprint("set", 2), UNCOMPARED_SETTINGS, PANEL_DEFAULTS)

    guard(tmp_path / "a")
    guard(tmp_path / "a", judge_max_criteria=DEFAULT_MAX_CRITERIA)  # the default given: the same run
    with pytest.raises(UserError, match=r"judge_max_criteria = 10, not 4"):
        guard(tmp_path / "a", judge_max_criteria=4)
    guard(tmp_path / "b", judge_max_criteria=4)
    guard(tmp_path / "b", judge_max_criteria=4)
    with pytest.raises(UserError, match=r"judge_max_criteria = 4, not 10"):
        guard(tmp_path / "b")


# ---- the effective number of judges -----------------------------------------------------------------------------


def panel_judge(kind: str):
    """A per-criterion judge scoring by the scenario index s (0..3): ``parity`` 2 + 2·(s mod 2), ``half``
    2 + 2·(s div 2)."""

    def respond(messages: list[ChatMessage]) -> str:
        s = int(PROBLEM.search("\n".join(m.text for m in messages)).group(1))
        return json.dumps({"score": 2 + 2 * (s % 2 if kind == "parity" else s // 2)})

    return respond


SCRIPTS |= {
    "alpha-judge": panel_judge("parity"),
    "beta-judge": panel_judge("parity"),
    "gamma-judge": panel_judge("half"),
    "gpt-4.1": panel_judge("parity"),
    "gpt-4.1-mini": panel_judge("half"),
}


def test_effective_judges_of_a_planted_panel_and_the_one_family_warning(tmp_path):
    """Three judges over 4 scenarios × 3 criteria (baseline): 12 items. alpha and beta both score 2, 4, 2, 4 by
    scenario (r = 1); gamma scores 2, 2, 4, 4: centred, (−1, 1, −1, 1)·(−1, −1, 1, 1) = 0, so r(alpha, gamma) =
    r(beta, gamma) = 0. ρ̄ = (1 + 0 + 0)/3 = 1/3 and n_eff = 3 / (1 + 2·(1/3)) = 9/5 = 1.8. Their families
    (scripted/alpha, scripted/beta, scripted/gamma) differ: no warning.

    Then two judges scripted/gpt-4.1 (2, 4, 2, 4) and scripted/gpt-4.1-mini (2, 2, 4, 4): r = 0, ρ̄ = 0, n_eff = 2,
    but both of the family scripted/gpt: the Validity reading warns and the caveat at the report's top says it."""
    scenarios = [scenario(i, WEIGHTS3) for i in range(4)]
    folder = run(
        tmp_path / "three",
        scenarios,
        grader_model="scripted/alpha-judge",
        judge_panel=["scripted/beta-judge", "scripted/gamma-judge"],
        modes=["baseline"],
    )
    report = build_report(load_results(folder), n_boot=0, figures=False)
    panel = report.summary["effective_judges"]
    assert panel["n_judges"] == 3
    pairs = {tuple(p["judges"]): (p["r"], p["n_items"]) for p in panel["pairs"]}
    assert pairs == {
        ("scripted/alpha-judge", "scripted/beta-judge"): (pytest.approx(1.0), 12),
        ("scripted/alpha-judge", "scripted/gamma-judge"): (pytest.approx(0.0, abs=1e-12), 12),
        ("scripted/beta-judge", "scripted/gamma-judge"): (pytest.approx(0.0, abs=1e-12), 12),
    }
    assert panel["rho_bar"] == pytest.approx(1 / 3)
    assert panel["n_eff"] == pytest.approx(1.8)
    assert panel["same_family"] is False and panel["warning"] is None
    assert not any("one model family" in line for line in report.caveats)
    [reading] = [v for v in report.summary["validity"] if v["instrument"].startswith("Effective number of judges")]
    assert reading["finding"].startswith("1.80 of 3 judges (mean pairwise Pearson ρ̄ 0.33)")
    assert report.summary["judge_position_effect"] == {}  # per-criterion judging lists no order

    folder = run(
        tmp_path / "gpt",
        scenarios,
        grader_model="scripted/gpt-4.1",
        judge_panel=["scripted/gpt-4.1-mini"],
        modes=["baseline"],
    )
    report = build_report(load_results(folder), n_boot=0, figures=False)
    panel = report.summary["effective_judges"]
    assert panel["rho_bar"] == pytest.approx(0.0, abs=1e-12) and panel["n_eff"] == pytest.approx(2.0)
    assert panel["families"] == {"scripted/gpt-4.1": "scripted/gpt", "scripted/gpt-4.1-mini": "scripted/gpt"}
    assert panel["same_family"] is True
    warning = "is of one model family (scripted/gpt)"
    assert warning in panel["warning"] and any(warning in line for line in report.caveats)
    [reading] = [v for v in report.summary["validity"] if v["instrument"].startswith("Effective number of judges")]
    assert reading["reading"].startswith("warning: Every judge of the panel") and warning in reading["reading"]


def test_families_of_realistic_model_names():
    assert judge_family("openai/gpt-4.1") == judge_family("openai/gpt-4.1-mini") == "openai/gpt"
    assert judge_family("anthropic/claude-sonnet-4") == "anthropic/claude"
    assert judge_family("openrouter/anthropic/claude-3.5-sonnet") == "anthropic/claude"
    assert judge_family("google/gemini-2.5-pro") == "google/gemini"
    assert judge_family("openai/o3") == "openai/o"
    assert family_warning(["openai/gpt-4.1", "openai/gpt-4.1-mini"]) is not None
    assert family_warning(["openai/gpt-4.1", "anthropic/claude-sonnet-4"]) is None
    assert family_warning(["openai/gpt-4.1"]) is None  # one judge is no panel


def effective_of_table(folder: Path, scores: dict[str, list[float | str]]) -> dict:
    """``effective_judges`` of a hand-made run: results of scenarios s1..sN (baseline), one criterion each, judged by
    ``scores`` (judge → its score per scenario; "" = invalid)."""
    folder.mkdir(parents=True)
    n = len(next(iter(scores.values())))
    results = [["m", "openai", "t", f"s{i}", "baseline", "", 3, 1, 0, 0, 10, 5, 0] for i in range(n)]
    write_csv(folder / "results.csv", HEADER, results)
    header = ["model", "task", "scenario_id", "mode", "fixed_k", "attribute", "weight", "score", "judge", "repeat"]
    rows = [["m", "t", f"s{i}", "baseline", "", "depth", 1.0, s[i], j, 1] for j, s in scores.items() for i in range(n)]
    write_csv(folder / "attributes.csv", header, rows)
    return build_report(load_results(folder), n_boot=0, figures=False).summary["effective_judges"]


def test_effective_judges_is_none_with_a_reason_for_constant_scores_too_few_items_or_one_judge(tmp_path):
    constant_judge = effective_of_table(tmp_path / "c", {"a/x": [1, 2, 3, 4], "b/y": [3, 3, 3, 3]})
    assert constant_judge["n_eff"] is None and constant_judge["rho_bar"] is None
    assert constant_judge["reason"] == (
        "no correlation for a/x and b/y: constant scores: a judge gave every shared item the same score, so r is "
        "undefined"
    )
    # two items both judged validly (the third is invalid for b/y): fewer than 3
    few = effective_of_table(tmp_path / "f", {"a/x": [1, 2, 3], "b/y": [2, 4, ""]})
    assert few["n_eff"] is None and few["reason"].endswith("2 item(s) scored by both judges; need at least 3")
    one = effective_of_table(tmp_path / "o", {"a/x": [1, 2, 3]})
    assert one["n_eff"] is None and one["reason"].startswith("a single judge")
    # a negative correlation counts as 0: n_eff = n, never more. (1, 2, 3) vs (3, 2, 1): r = −1
    negative = effective_of_table(tmp_path / "n", {"a/x": [1, 2, 3], "b/y": [3, 2, 1]})
    assert negative["rho_bar"] == pytest.approx(-1.0) and negative["n_eff"] == pytest.approx(2.0)
    r, why = pair_correlation(np.array([1.0, 2.0, 4.0, math.nan]), np.array([2.0, 4.0, 8.0, 1.0]))
    assert r == pytest.approx(1.0) and why is None  # the NaN item is not shared


def test_the_eval_flag_reaches_the_run_and_the_dry_run_plans_ceil_k_over_n_calls(tmp_path):
    """``prefdisco eval --judge-max-criteria``: 0 is refused in one line naming the flag; 2 on rubrics of 5, 4 and 5
    criteria plans ceil(5/2) + ceil(4/2) + ceil(5/2) = 3 + 2 + 3 = 8 structured calls a condition (3 conditions: 24),
    where the default (10) plans one a response (9)."""
    from typer.testing import CliRunner

    import prefdisco.cli as cli
    from mock_openai import tagged_scenarios, write_scenarios
    from prefdisco.evaluation.estimate.plan import estimate_run

    scenarios = tagged_scenarios(3)
    assert [len(s.rubric) for s in scenarios] == [5, 4, 5]
    bench = write_scenarios(tmp_path / "scenarios.jsonl", scenarios)
    cli._register()
    args = ["eval", str(bench), "--model", "m/a", "--log-dir", str(tmp_path / "run"), "--judge", "structured"]
    refused = CliRunner().invoke(cli.app, [*args, "--judge-max-criteria", "0", "--dry-run"])
    assert refused.exit_code != 0
    assert "--judge-max-criteria: expected a whole number of criteria per judge call >= 1, got 0" in refused.output
    assert CliRunner().invoke(cli.app, [*args, "--judge-max-criteria", "2", "--dry-run"]).exit_code == 0

    def judge_calls(**settings) -> int:
        config = RunConfig(models=["m/a"], user_model="m/u", grader_model="m/g", log_dir=tmp_path, judge="structured")
        estimate = estimate_run(scenarios, replace(config, **settings))
        return sum(ln.calls for ln in estimate.lines if ln.role == "grader" and ln.part == "judge")

    assert judge_calls(judge_max_criteria=2) == 24
    assert judge_calls() == 9


def test_the_header_says_when_no_run_json_records_the_judge_settings(tmp_path):
    """A hand-made table has no run.json: the header says so, and ``judge_settings`` reads no file."""
    folder = tmp_path / "table"
    effective_of_table(folder, {"a/x": [1, 2, 3]})
    report, _ = make_report(folder / "results.csv", tmp_path / "report", n_boot=0, figures=False)
    assert report.summary["judge_settings"]["run_files"] == 0
    assert (
        "Judge settings (run.json): judge settings not recorded (no run.json beside the results)"
        in (tmp_path / "report" / "report.md").read_text()
    )
