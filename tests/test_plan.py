"""One owner of a condition's rules (``dialogue/plan.py``, issue 31, defect 4): every driver takes its
``DialogueRules`` from ``rules_for``; what each condition gets, by hand."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from prefdisco.dialogue.dialogue_state import DialogueRules
from prefdisco.dialogue.plan import PlanSettings, rules_for
from prefdisco.dialogue.presets import preset_named
from prefdisco.schema import MODES

SRC = Path(__file__).resolve().parents[1] / "src" / "prefdisco"


def test_rules_are_made_in_the_plan_only():
    makers = sorted(
        p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py") if re.search(r"\bDialogueRules\(", p.read_text())
    )
    assert makers == ["dialogue/dialogue_state.py", "dialogue/plan.py"]


def test_each_condition_gets_its_rules_and_every_setting_reaches_it():
    settings = PlanSettings(preset="paper", ask="text", max_questions=3, pushback=2, user_retry=1)
    got = {m: rules_for(m, settings, 2 if m == "fixed_k" else None) for m in MODES}
    for m in ("baseline", "oracle", "wrong_persona", "oracle_distractor"):
        r = got[m]
        assert (r.single_turn, r.limit, r.pushback, r.condition) == (True, 0, 2, m)
        assert r.style == preset_named("paper").style
    for m in ("discovery", "stated_belief", "carry_transcript", "carry_notes"):
        r = got[m]
        assert (r.single_turn, r.limit, r.forced, r.pushback, r.user_retry) == (False, 3, False, 2, 1), m
    k = got["fixed_k"]
    assert (k.condition, k.limit, k.forced, k.pushback, k.user_retry) == ("fixed_k2", 2, True, 2, 1)
    tools = rules_for("discovery", PlanSettings(ask="tools"))
    assert tools.ask == "tools" and tools.style != preset_named("default").style
    with pytest.raises(ValueError, match="fixed_k mode needs k >= 1"):
        rules_for("fixed_k", settings)
    with pytest.raises(ValueError, match="constrain_ask needs ask 'text'"):
        rules_for("discovery", PlanSettings(ask="tools", constrain_ask=True))


def test_whether_a_dialogue_needs_a_user_is_one_rule():
    """Asking conditions talk to the person; a single-turn one only when the person pushes back."""
    quiet, pushed = PlanSettings(), PlanSettings(pushback=1)
    assert not rules_for("oracle", quiet).needs_user and rules_for("oracle", pushed).needs_user
    assert rules_for("discovery", quiet).needs_user and rules_for("fixed_k", quiet, 1).needs_user
    assert rules_for("discovery", PlanSettings(max_questions=0)).needs_user  # may not ask, still a dialogue


def _always(monkeypatch):
    monkeypatch.setattr(DialogueRules, "needs_user", property(lambda self: True))


def _baseline_asks(monkeypatch):
    from prefdisco.dialogue import plan

    monkeypatch.setattr(plan, "SINGLE_TURN", tuple(m for m in plan.SINGLE_TURN if m != "baseline"))
    monkeypatch.setattr(plan, "ASKING", (*plan.ASKING, "baseline"))


RULES = {"as planned": (lambda monkeypatch: None, False), "needs_user always": (_always, True)}
RULES["baseline asks in the plan"] = (_baseline_asks, True)
"""A rule changed in one place, and whether a baseline dialogue without pushback then talks to the person."""


@pytest.mark.parametrize("pushback", [0, 1])
@pytest.mark.parametrize("rule", RULES)
def test_a_rule_changed_in_the_plan_reaches_every_driver(rule, pushback, monkeypatch, tmp_path):
    """Every driver decides whether a dialogue talks to a (simulated) person by the plan's one rule
    (``rules_for``'s rules, ``DialogueRules.needs_user``): the condition solver builds the sample's user, the dry run
    plans one, and the model loop refuses to play a dialogue that needs one without it — exactly for a baseline with
    pushback, or for every baseline once the rule is changed (``needs_user`` always, or baseline moved to the asking
    conditions of the plan). A driver with its own copy of the rule (``not rules.single_turn``: pushback forgotten)
    or its own list of conditions would not follow. (This replaces a lint that the source held no such copy.)"""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import MemoryDataset

    from prefdisco.dialogue import solver as solver_module
    from prefdisco.dialogue.conditions import baseline
    from prefdisco.dialogue.drive import play
    from prefdisco.dialogue.engine import Dialogue
    from prefdisco.dialogue.plan import opening_for
    from prefdisco.dialogue.scenario import scenario_sample
    from prefdisco.evaluation.estimate import plan as estimate
    from prefdisco.evaluation.settings.config import RunConfig
    from scripted import Scripted, constant, make_scenario

    change, changed = RULES[rule]
    change(monkeypatch)
    talks = changed or pushback > 0
    built: list[str] = []
    sample_user, build_user = solver_module.sample_user, estimate.build_user
    monkeypatch.setattr(solver_module, "sample_user", lambda *a: built.append("solver") or sample_user(*a))
    monkeypatch.setattr(estimate, "build_user", lambda *a: built.append("dry run") or build_user(*a))
    scenario = make_scenario("s1")
    assistant, user = Scripted(constant("The answer is B.")).model, Scripted(constant("Are you sure?")).model

    task = Task(dataset=MemoryDataset([scenario_sample(scenario)]), solver=baseline(pushback=pushback))
    [log] = eval(task, model=assistant, model_roles={"user": user}, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    config = RunConfig(
        models=["m/a"], user_model="m/u", grader_model="m/g", log_dir=tmp_path / "dry", modes=["baseline"]
    )
    config.pushback = pushback
    planned = estimate.estimate_run([scenario], config)
    assert built == (["solver", "dry run"] if talks else [])
    assert any(ln.role == "user" for ln in planned.lines) == (pushback > 0 or rule == "baseline asks in the plan")

    rules = rules_for("baseline", PlanSettings(pushback=pushback))
    alone = Dialogue.start(scenario.id, rules, opening_for("baseline", rules, scenario, {}), None)
    if talks:
        with pytest.raises(ValueError, match="needs its simulated user"):
            asyncio.run(play(alone, assistant))
    else:
        assert asyncio.run(play(alone, assistant)).done


def test_a_conditions_opening_is_made_from_the_scenario_and_the_samples_metadata():
    """The solvers and the dry run take a condition's opening from ``opening_for``: the decoy, the distractors and
    the stated wrong answer come from the sample's metadata (as the run writes it), never from a copy."""
    from prefdisco.dialogue.decoys import DECOY_KEY, Decoy
    from prefdisco.dialogue.distractors import DISTRACTOR_KEY
    from prefdisco.dialogue.plan import opening_for
    from prefdisco.dialogue.wrong_answers import WRONG_ANSWER_KEY
    from prefdisco.schema import PreferenceItem
    from scripted import make_scenario

    scenario = make_scenario("s1", values=("deep", "analogy", "jargon"))
    decoy = make_scenario("s2", values=("terse", "plain", "simple"))
    quiet = PlanSettings(max_questions=2)

    def text(condition, metadata=None, k=None):
        rules = rules_for(condition, quiet, k)
        return "\n".join(m.text for m in opening_for(condition, rules, scenario, metadata or {}))

    assert "deep" in text("oracle") and "deep" not in text("baseline")
    shown = text("wrong_persona", {DECOY_KEY: Decoy.of(decoy).model_dump(mode="json")})
    assert "terse" in shown and "deep" not in shown
    with pytest.raises(ValueError, match="wrong_persona needs a decoy"):
        text("wrong_persona")
    extra = PreferenceItem(attribute="Humor", value="dry jokes", weight=0.0)
    assert "dry jokes" in text("oracle_distractor", {DISTRACTOR_KEY: [extra.model_dump(mode="json")]})
    assert "I'm fairly sure the answer is 42" in text("stated_belief", {WRONG_ANSWER_KEY: "42"})
    assert "2" in text("discovery") and text("fixed_k", k=1) != text("discovery")


# ---- what a condition is, from the plan only (issue 45, defect 3) ----------------------------------------------


def condition_rows(modes) -> pd.DataFrame:
    """Two scenarios x two trials of every condition, each trial's PrefAlign different (so ``between`` is measured),
    and EVERY row carrying a measured simulator reading (one question, elicited weight .5, s1's dialogue with a
    critical simulator error): what keeps a single-turn row out of the simulator table can only be the plan."""
    rows = []
    for mode in modes:
        for i, sid in enumerate(("s1", "s2")):
            for epoch in (1, 2):
                rows.append(
                    {
                        "model": "m", "task": "t", "scenario_id": sid, "mode": mode,
                        "fixed_k": 2.0 if mode == "fixed_k" else np.nan, "epoch": epoch,
                        "pref_align": 2.0 + i + epoch, "scored": True, "failed": False, "n_questions": 1.0,
                        "elicited_weight": 0.5, "question_hit_rate": 1.0, "user_critical_errors": float(i == 0),
                    }
                )  # fmt: skip
    return pd.DataFrame(rows)


def transcripts(modes) -> list[dict]:
    """One transcript per condition, each with one question its user answered."""
    turns = [{"kind": "question", "content": "How deep?"}, {"kind": "reply", "content": "Very."}]
    return [{"model": "m", "mode": m, "fixed_k": 2 if m == "fixed_k" else None, "turns": turns} for m in modes]


MOVES = {
    "as planned": {},
    "oracle_distractor asks": {"oracle_distractor": "asking"},
    "stated_belief single turn": {"stated_belief": "single"},
}
"""Conditions moved in the plan alone (``plan.SINGLE_TURN`` / ``plan.ASKING``, which ``rules_for`` reads)."""


@pytest.mark.parametrize("move", MOVES)
def test_the_tables_read_a_conditions_dialogue_user_and_audit_from_the_plan(move, monkeypatch):
    """For every condition of ``modes.py``, the plan's rules say whether it is a dialogue with the simulated user
    (``rules_for(...).single_turn`` False), so whether its PrefAlign has a simulator part, whether its audit counts
    (the simulator table, the Validity line, ``summary.json``'s ``simulator_errors``) and whether the fidelity replay
    asks its questions again. The variance, simulator and fidelity tables find the same facts, also after a
    condition is moved in the plan alone. (They kept a list of their own, discovery and fixed-K: stated_belief and
    the carry arms read "no simulated user" and their audits dropped out.)

    By hand for every asking cell: s1's trials 3, 4 and s2's 4, 5 → between = mean(0.5, 0.5) = 0.5, no judge
    repeats, so assistant + simulator = 0.5; the oracle cell's own 0.5 → assistant 0.5, simulator 0; critical
    share 1/2 (s1's dialogue), elicited weight 0.5. Every single-turn cell: assistant 0.5, simulator 0, split
    "no simulated user"."""
    from prefdisco.analysis.validity.simulator import simulator_table, summary_parts
    from prefdisco.analysis.validity.variance import variance_parts
    from prefdisco.dialogue import plan

    for mode, to in MOVES[move].items():
        single = tuple(m for m in plan.SINGLE_TURN if m != mode) + ((mode,) if to == "single" else ())
        monkeypatch.setattr(plan, "SINGLE_TURN", single)
        monkeypatch.setattr(plan, "ASKING", tuple(m for m in plan.ASKING if m != mode) + ((mode,) * (to == "asking")))
    asks = {m: not rules_for(m, PlanSettings(), 2).single_turn for m in MODES}  # the plan's facts
    assert asks["discovery"] and asks["fixed_k"] and not asks["baseline"] and not asks["oracle"]
    assert asks["carry_transcript"] and asks["carry_notes"]
    assert asks["oracle_distractor"] == (move == "oracle_distractor asks")
    assert asks["stated_belief"] == (move != "stated_belief single turn")
    asking = {m for m, yes in asks.items() if yes}

    results = condition_rows(MODES)
    variance = variance_parts(results, None).set_index("mode")
    assert set(variance.index) == set(MODES)
    for mode in MODES:
        cell = variance.loc[mode]
        assert cell["between"] == pytest.approx(0.5) and cell["assistant"] == pytest.approx(0.5), mode
        if mode in asking:
            assert (cell["simulator"], cell["split"]) == (0.0, "assistant part from the oracle cell"), mode
        else:
            assert (cell["simulator"], cell["split"]) == (0.0, "no simulated user"), mode

    simulator = simulator_table(results)
    assert set(simulator["mode"]) == asking
    assert simulator["critical_share"].tolist() == [0.5] * len(asking)
    assert simulator["elicited_weight"].tolist() == [0.5] * len(asking)
    audited = summary_parts(simulator)["simulator_errors"]["m"]["t"]
    assert set(audited) == {"fixed_k=2" if m == "fixed_k" else m for m in asking}

    from prefdisco.simfidelity.replay import replayable  # the replay's choice of dialogues

    assert {t["mode"] for t in replayable(transcripts(MODES))} == asking


def test_the_single_turn_conditions_are_one_solver_logged_under_their_own_names(tmp_path):
    """The four single-turn conditions share one solver (issue 45, defect 9: four identical copies before),
    registered under each condition's own name with the same parameters: a log's plan names ``baseline``,
    ``oracle``, ``wrong_persona`` and ``oracle_distractor`` with the parameters it named before, and inspect's
    eval-set pairs a task with its logs by that plan, so an existing run folder resumes onto its own logs."""
    from inspect_ai import Task, eval

    from prefdisco.dialogue.plan import SINGLE_TURN
    from prefdisco.evaluation.running.task import build_task
    from prefdisco.evaluation.settings.config import RunConfig
    from scripted import Scripted, constant, make_scenario

    config = RunConfig(models=["m/a"], user_model="m/u", grader_model="m/g", log_dir=tmp_path)
    decoys = {"s1": make_scenario("s2")}
    built = [build_task([make_scenario("s1")], config, m, cache_scope="c", decoys=decoys) for m in SINGLE_TURN]
    tasks = [Task(dataset=t.dataset, solver=t.solver, name=t.name) for t in built]  # no scorer: the plan only
    logs = eval(tasks, model=Scripted(constant("The answer is B.")).model, log_dir=str(tmp_path), display="none")
    params = {"cache_scope": "c", "preset": "default", "pushback": 0, "user_type": "passive"}
    for mode, log in zip(SINGLE_TURN, logs, strict=True):
        assert log.status == "success", log.error
        assert log.eval.task == f"prefdisco_{mode}"
        seeded, solver = log.plan.steps
        assert seeded.params_passed == {"scope": "prefdisco-seed-0", "condition": mode}
        assert solver.solver.split("/")[-1] == mode and solver.params_passed == params
