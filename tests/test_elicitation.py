"""Elicitation metrics and simulator errors: by hand on scripted dialogues (targeted and audit-based passive),
nulls where nothing is measured, the optional results columns, trial averaging, the analysis table, the summary
keys and the figure."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval

from prefdisco.analysis.report.build import build_report
from prefdisco.analysis.stats.trials import average_trials
from prefdisco.analysis.validity.simulator import elicitation_figure, simulator_table, summary_parts
from prefdisco.errors import UserError
from prefdisco.evaluation.running.task import build_task
from prefdisco.evaluation.settings.config import RunConfig
from prefdisco.results.contract import RESULT_COLUMNS, SIMULATOR_COLUMNS
from prefdisco.results.logs import results_from_logs
from prefdisco.results.table import load_results
from prefdisco.scoring.elicitation import ELICITATION_KEYS, Exchange, elicitation_metrics
from scripted import Call, Scripted, constant, make_scenario, replies

DEPTH, ANALOGIES, VOCABULARY = "Explanation depth", "Use of analogies", "Technical vocabulary"  # 0.5, 0.3, 0.2
NULLS = dict.fromkeys(ELICITATION_KEYS)
NOTHING = {**NULLS, "elicited_weight": 0.0, "elicited_count": 0, "volunteered_count": 0}
"""A dialogue without questions: nothing elicited, the rate and first hit undefined."""


def run(mode, assistant, grader, tmp_path, user=None, k=None, **settings):
    user = user or Scripted(constant("Short answers, please."))
    [log] = inspect_eval(
        build_task([make_scenario()], RunConfig(**settings), mode, k),
        model=assistant.model,
        model_roles={"user": user.model, "grader": grader.model},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    return log.samples[0].scores["prefdisco_scorer"]


def elicited(value):
    return {k: value[k] for k in ELICITATION_KEYS}


def test_the_metrics_by_hand():
    profile = make_scenario().profile
    exchanges = [
        Exchange(frozenset(), frozenset()),  # t1: asked nothing in the profile
        Exchange(frozenset({ANALOGIES}), frozenset({ANALOGIES, VOCABULARY})),  # t2: a hit that volunteers vocabulary
        Exchange(frozenset({ANALOGIES}), frozenset({ANALOGIES, "Not in the profile"})),  # t3: again; a stray name
    ]
    assert elicitation_metrics(profile, exchanges) == {
        "elicited_weight": pytest.approx(0.3 + 0.2),  # analogies and vocabulary, each once
        "elicited_count": 2,
        "question_hit_rate": pytest.approx(2 / 3),
        "volunteered_count": 1,
        "first_hit_turn": 2,
    }
    assert elicitation_metrics(profile, None) == NULLS
    assert elicitation_metrics(profile, []) == NOTHING


def targeted_grader(call: Call, i: int) -> str:
    if "The assistant's question:" in call.text:
        question = call.text.split("The assistant's question:", 1)[1].split("List the name", 1)[0].lower()
        about = [DEPTH] if "deep" in question else ["vague"] if "else" in question else ["none"]
        return json.dumps({"about": about})
    return '{"score": 4}'


def test_targeted_metrics_come_from_its_own_records(tmp_path):
    assistant = Scripted(
        replies(
            "QUESTION: Favourite colour?",  # none
            "QUESTION: How deep should I go?",  # depth
            "QUESTION: Anything else?",  # vague
            "QUESTION: Really deep?",  # depth again
            "ANSWER: 3 trips",
        )
    )
    score = run("discovery", assistant, Scripted(targeted_grader), tmp_path, user_type="targeted", audit=False)
    assert score.value["n_questions"] == 4
    assert elicited(score.value) == {
        "elicited_weight": pytest.approx(0.5),  # depth, once
        "elicited_count": 1,
        "question_hit_rate": pytest.approx(2 / 4),
        "volunteered_count": 0,  # a targeted reply reveals only what it was asked
        "first_hit_turn": 2,
    }
    assert score.value["user_critical_errors"] is None  # no audit


def flags(*on: int) -> dict[str, bool]:
    return {f"a{i}": i in on for i in (1, 2, 3)}  # a1 depth, a2 analogies, a3 vocabulary


def audit_turn(asked, revealed, *errors):
    names = ("hallucinated", "contradicted", "helped_task", "broke_character")
    return {"asked": asked, "revealed": revealed, **{e: e in errors for e in names}}


AUDIT = {
    "t1": audit_turn(flags(), flags()),
    "t2": audit_turn(flags(2), flags(2, 3), "contradicted"),  # critical_hindered, and vocabulary unasked
    "t3": audit_turn(flags(2), flags(2), "broke_character"),  # minor
}


def audit_grader(reply: str):
    return Scripted(lambda call, i: reply if "simulated user" in call.text else '{"score": 3}')


THREE_QUESTIONS = ("QUESTION: Anything else?", "QUESTION: Analogies?", "QUESTION: Analogies again?", "ANSWER: 3")


def test_passive_metrics_come_from_the_audit(tmp_path):
    score = run("discovery", Scripted(replies(*THREE_QUESTIONS)), audit_grader(json.dumps(AUDIT)), tmp_path)
    assert elicited(score.value) == {
        "elicited_weight": pytest.approx(0.3 + 0.2),
        "elicited_count": 2,
        "question_hit_rate": pytest.approx(2 / 3),
        "volunteered_count": 1,
        "first_hit_turn": 2,
    }
    assert score.value["user_critical_errors"] == 1 and score.value["user_leaks"] == 1
    audit = score.metadata["user_audit"]
    assert audit["severities"] == [[], ["critical_hindered", "minor"], ["minor"]]


def test_fixed_k_dialogues_are_measured_too(tmp_path):
    assistant = Scripted(replies("QUESTION: Anything else?", "QUESTION: Analogies?", "QUESTION: Again?", "ANSWER: 3"))
    score = run("fixed_k", assistant, audit_grader(json.dumps(AUDIT)), tmp_path, k=3)
    assert score.value["elicited_count"] == 2 and score.value["first_hit_turn"] == 2


def test_nothing_measured_is_null_and_a_dialogue_without_questions_elicited_nothing(tmp_path):
    grader = audit_grader(json.dumps(AUDIT))
    baseline = run("baseline", Scripted(constant("3 trips")), grader, tmp_path / "b")
    assert elicited(baseline.value) == NULLS and baseline.value["user_critical_errors"] is None
    off = run("discovery", Scripted(replies(*THREE_QUESTIONS)), grader, tmp_path / "off", audit=False)
    assert elicited(off.value) == NULLS  # a passive user does not know what it revealed
    invalid = run("discovery", Scripted(replies(*THREE_QUESTIONS)), audit_grader("not json"), tmp_path / "bad")
    assert elicited(invalid.value) == NULLS and invalid.value["user_critical_errors"] is None
    silent = run("discovery", Scripted(constant("ANSWER: 3 trips")), grader, tmp_path / "silent")
    assert elicited(silent.value) == NOTHING


def test_the_results_table_reads_the_columns_from_the_logs(tmp_path):
    run("discovery", Scripted(replies(*THREE_QUESTIONS)), audit_grader(json.dumps(AUDIT)), tmp_path)
    [row] = results_from_logs(tmp_path).results.to_dict("records")
    assert [c for c in RESULT_COLUMNS if c in SIMULATOR_COLUMNS] == list(SIMULATOR_COLUMNS)
    assert row["elicited_weight"] == pytest.approx(0.5) and row["elicited_count"] == 2
    assert row["question_hit_rate"] == pytest.approx(2 / 3) and row["volunteered_count"] == 1
    assert row["first_hit_turn"] == 2 and row["user_critical_errors"] == 1


# --- the analysis ------------------------------------------------------------------------------------------------

HEADER = "model,family,task,scenario_id,mode,fixed_k,epoch,pref_align,correct,n_questions,judge_invalid,"
HEADER += "input_tokens,output_tokens,failed,elicited_weight,question_hit_rate,user_critical_errors"
ROWS = [
    "m1,mock,t,s1,baseline,,1,2.0,1,0,0,1,1,0,,,",
    "m1,mock,t,s1,oracle,,1,4.0,1,0,0,1,1,0,,,",
    "m1,mock,t,s1,discovery,,1,3.0,1,2,0,1,1,0,0.5,0.5,0",
    "m1,mock,t,s2,discovery,,1,2.0,1,0,0,1,1,0,0.0,,",  # no question: nothing elicited, no audit
    "m1,mock,t,s3,discovery,,1,4.0,1,2,0,1,1,0,,,",  # audit invalid: not measured
    "m1,mock,t,s4,discovery,,1,4.5,1,2,0,1,1,0,1.0,1.0,2",
    "m1,mock,t,s5,discovery,,1,,,,,1,1,1,0.9,1.0,1",  # failed: left out
    "m1,mock,t,s1,fixed_k,2,1,3.5,1,2,0,1,1,0,0.3,0.5,1",
]


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "results.csv"
    path.write_text("\n".join([HEADER, *ROWS]) + "\n")
    return path


def test_simulator_table_and_summary_by_hand(table):
    data = load_results(table)
    sim = simulator_table(data.results)
    # the condition as results.csv has it: mode, and fixed_k (empty for a condition without K)
    got = {(r.pop("mode"), None if pd.isna(k := r.pop("fixed_k")) else int(k)): r for r in sim.to_dict("records")}
    assert got[("discovery", None)] == {
        "model": "m1",
        "task": "t",
        "n": 3,  # s1, s2, s4
        "elicited_weight": pytest.approx((0.5 + 0.0 + 1.0) / 3),
        "n_hit_rate": 2,  # s2 asked nothing
        "question_hit_rate": pytest.approx((0.5 + 1.0) / 2),
        "n_audited": 2,
        "critical_share": pytest.approx(1 / 2),  # s4 had critical errors, s1 none
        "n_asked": 3,  # s1, s3 and s4 asked (s3's audit invalid); s2 asked nothing; s5 failed
    }
    assert got[("fixed_k", 2)]["n"] == 1 and got[("fixed_k", 2)]["critical_share"] == 1.0
    parts = summary_parts(sim)
    assert parts["elicitation"]["m1"]["t"]["discovery"] == {
        "elicited_weight": pytest.approx(0.5),
        "question_hit_rate": pytest.approx(0.75),
        "n": 3,
    }
    assert parts["simulator_errors"] == {
        "m1": {"t": {"discovery": {"critical_share": 0.5, "n": 2}, "fixed_k=2": {"critical_share": 1.0, "n": 1}}}
    }
    assert summary_parts(None) == {"elicitation": {}, "simulator_errors": {}}


def test_the_report_carries_the_keys_the_table_and_the_figure(table):
    report = build_report(load_results(table), n_boot=200, n_examples=0)
    assert report.summary["elicitation"]["m1"]["t"]["fixed_k=2"] == {
        "elicited_weight": 0.3,
        "question_hit_rate": 0.5,
        "n": 1,
    }
    assert report.summary["simulator_errors"]["m1"]["t"]["discovery"] == {"critical_share": 0.5, "n": 2}
    assert report.part("simulator") is not None and "table_simulator.csv" in report.tables
    assert "fig_elicitation.png" in [f.name for f in report.figures]
    fig = elicitation_figure(load_results(table).results)
    [ax] = fig.axes
    assert sum(len(c.get_offsets()) for c in ax.collections) == 4  # s1, s2, s4 and the fixed-K dialogue


def test_a_run_without_the_columns_has_empty_keys(tmp_path):
    path = tmp_path / "results.csv"
    header = HEADER.rsplit(",elicited_weight", 1)[0]
    path.write_text("\n".join([header, *(r.rsplit(",", 3)[0] for r in ROWS)]) + "\n")
    report = build_report(load_results(path), n_boot=200, n_examples=0, figures=False)
    assert report.part("simulator") is None
    assert report.summary["elicitation"] == {} and report.summary["simulator_errors"] == {}


def test_trials_average_the_simulator_columns_over_the_trials_that_did_not_fail(tmp_path):
    path = tmp_path / "results.csv"
    rows = [
        "m1,mock,t,s1,discovery,,1,3.0,1,2,0,1,1,0,0.2,0.5,0",
        "m1,mock,t,s1,discovery,,2,3.0,1,2,0,1,1,0,0.6,1.0,1",
        "m1,mock,t,s1,discovery,,3,,,,,1,1,1,0.9,0.0,3",  # failed
    ]
    path.write_text("\n".join([HEADER, *rows]) + "\n")
    [row] = average_trials(load_results(path).results).to_dict("records")
    assert row["elicited_weight"] == pytest.approx(0.4)
    assert row["question_hit_rate"] == pytest.approx(0.75)
    assert row["user_critical_errors"] == pytest.approx(0.5)


def test_the_analysis_averages_a_scenarios_trials_first(tmp_path):
    path = tmp_path / "results.csv"
    rows = [
        "m1,mock,t,s1,discovery,,1,3.0,1,2,0,1,1,0,0.2,0.5,0",
        "m1,mock,t,s1,discovery,,2,3.0,1,2,0,1,1,0,0.6,1.0,2",  # a critical error in one trial of two
        "m1,mock,t,s2,discovery,,1,3.0,1,2,0,1,1,0,1.0,1.0,0",
        "m1,mock,t,s2,discovery,,2,3.0,1,2,0,1,1,0,1.0,1.0,0",
    ]
    path.write_text("\n".join([HEADER, *rows]) + "\n")
    [row] = simulator_table(load_results(path).results).to_dict("records")
    assert row["n"] == 2 and row["n_audited"] == 2  # scenarios, not trials
    assert row["elicited_weight"] == pytest.approx(((0.2 + 0.6) / 2 + 1.0) / 2)
    assert row["question_hit_rate"] == pytest.approx((0.75 + 1.0) / 2)
    assert row["critical_share"] == pytest.approx((0.5 + 0.0) / 2)
    # N identical trials give the numbers of one
    one = tmp_path / "one.csv"
    one.write_text("\n".join([HEADER, rows[0], rows[2]]) + "\n")
    twice = tmp_path / "twice.csv"
    twice.write_text("\n".join([HEADER, rows[0], rows[0].replace(",,1,", ",,2,", 1), rows[2], rows[3]]) + "\n")
    assert summary_parts(simulator_table(load_results(one).results)) == summary_parts(
        simulator_table(load_results(twice).results)
    )


def test_a_bad_simulator_cell_is_a_one_line_error(tmp_path):
    path = tmp_path / "results.csv"
    path.write_text(HEADER + "\nm1,mock,t,s1,discovery,,1,3.0,1,2,0,1,1,0,0.5,1.5,0\n")
    with pytest.raises(UserError, match=r"data row 1: column question_hit_rate: 1\.5 is not a number in \[0, 1\]"):
        load_results(path)
