"""Simulator fidelity (issue 24, part 3): a planted person and two planted simulators, every figure by hand.

Four scenarios f0..f3, each with two preferences: D = ``Explanation depth`` (value ``step by step``, weight .6) and
A = ``Use of analogies`` (``machine analogies``, .4). In discovery the assistant asks about D, then about A, then
answers with every value the replies told it; baseline answers bare; oracle with both values. The judge scores a
criterion 5 when its value is in the response, else 1 (baseline PrefAlign 1, oracle 5).

| reply to | the person ("human" run) | sim_a (over-reveals) | sim_b |
|---|---|---|---|
| Q1 (D) | "I want step by step." (D; 5 words) | "I want step by step and machine analogies." (D, A; 8) | the person's |
| Q2 (A) | "Not sure." (nothing; 2 words) | "I want machine analogies." (A; 4) | the person's |

By hand, per simulator over the 8 replayed turns (4 dialogues x 2):

* sim_a: revealed 0.5 (person) vs 1.5, over_reveal 1.0; Jaccard 1/2 on Q1, 0 on Q2 → reveal_agreement 0.25;
  volunteered 0 vs 0.5 (A on Q1, not asked) → gap 0.5; length 3.5 vs 6.0 words (ratio 12/7), closeness
  (5/8 + 2/4)/2 = 0.5625; no flagged reply; on Q1 both revealed D and want the same → value_agreement 4/4 = 1;
  outcome: the assistant learns D from the person (PrefAlign 1 + 4·.6 = 3.4, NormAlign 60) and D and A from sim_a
  (5.0, NormAlign 100): ΔPrefAlign 1.6, ΔNormAlign 40 with the interval [40, 40] (every scenario alike);
  fidelity = mean(0.25, 1 − 0.5, 0.5625, 1, 1, 1 − 40/100) = 3.9125 / 6;
* sim_b: every measure as the person's: fidelity 1.0, ranked first.
"""

from __future__ import annotations

import json
import os
import re

import pandas as pd
import pytest
from inspect_ai.model import ChatMessage
from typer.testing import CliRunner

from prefdisco.evaluation.run import run_conditions
from prefdisco.evaluation.settings.config import RunConfig
from prefdisco.schema import Problem
from scripted import make_scenario
from transfer_world import PREFERRED, RESPONSE, SCRIPTS

# under xdist the module's tests stay on one worker, which builds its module fixture (3 evals, simfidelity twice) once
pytestmark = pytest.mark.xdist_group("test_simfidelity")

D, A = "Explanation depth", "Use of analogies"
VALUES = {D: "step by step", A: "machine analogies"}
PERSON = {D: "I want step by step.", A: "Not sure."}
OVER = {D: "I want step by step and machine analogies.", A: "I want machine analogies."}


def scenarios():
    out = []
    for i in range(4):
        problem = Problem(
            id=f"prob-f{i}", benchmark="demo", domain="math", question=f"[f{i}] 12 cars a trip: trips for 30 cars?",
            choices=["2", "3", "4", "5"], answer="B", answer_type="letter",
        )  # fmt: skip
        out.append(make_scenario(f"f{i}", weights=(0.6, 0.4), values=tuple(VALUES.values()), problem=problem))
    return out


def asker(messages: list[ChatMessage]) -> str:
    system = "\n".join(m.text for m in messages if m.role == "system")
    if not system:
        return "The answer is B."
    if "QUESTION:" not in system:  # oracle
        return "B. " + " ".join(v for v in VALUES.values() if v in system)
    asked = sum(m.role == "assistant" for m in messages)
    if asked < 2:
        return f"QUESTION: What about {(D, A)[asked]}?"
    told = " ".join(m.text for m in messages[1:] if m.role == "user")
    return "ANSWER: B. " + " ".join(v for v in VALUES.values() if v in told)


CALLS: list[str] = []
"""Every call the simulators and the grader answered (a rerun of simfidelity must add none)."""


def user_of(replies: dict[str, str]):
    def reply(messages: list[ChatMessage]) -> str:
        CALLS.append("user")
        question = messages[-1].text
        return replies[D] if D in question else replies[A]

    return reply


ATTRIBUTE = re.compile(r"^- (a\d+) — (.+?):", re.MULTILINE)
TURN = re.compile(r"^(t\d+)\nAssistant asked: (.*)\nUser replied: (.*)$", re.MULTILINE)


def grader(messages: list[ChatMessage]) -> str:
    """The judge (5 when the criterion's value is in the response), the audit (asked: the attribute named in the
    question; revealed: its value in the reply) and the value-agreement reader (same when both say the value)."""
    CALLS.append("grader")
    text = "\n".join(m.text for m in messages)
    keys = ATTRIBUTE.findall(text)
    if "Assistant asked:" in text:
        return json.dumps(
            {
                t: {
                    "asked": {k: name in question for k, name in keys},
                    "revealed": {k: VALUES[name] in reply for k, name in keys},
                    **dict.fromkeys(("hallucinated", "contradicted", "helped_task", "broke_character"), False),
                }
                for t, question, reply in TURN.findall(text)
            }
        )
    if "Person A replied:" in text:
        first = re.search(r"Person A replied: (.*)", text).group(1)
        second = re.search(r"Person B replied: (.*)", text).group(1)
        return json.dumps({k: "same" if VALUES[n] in first and VALUES[n] in second else "different" for k, n in keys})
    preferred = PREFERRED.search(text).group(1).strip()
    return json.dumps({"score": 5 if preferred in RESPONSE.search(text).group(1) else 1})


SILENT = {D: "Not sure.", A: "Not sure."}
SCRIPTS |= {
    "fid-asker": asker,
    "fid-person": user_of(PERSON),
    "sim_a": user_of(OVER),
    "sim_b": user_of(PERSON),
    "sim_c": user_of(SILENT),
    "fid-grader": grader,
}
SIM_C = {"grader_temperature": 0.5, "user_max_tokens": 64, "user_retry": 1}
"""sim_c's run: another judge temperature (a protocol difference beyond the user), and its user's own limits."""


@pytest.fixture(scope="module")
def fidelity(tmp_path_factory):
    import prefdisco.cli as cli

    cli._register()
    base = tmp_path_factory.mktemp("fidelity")
    bench = base / "scenarios.jsonl"
    bench.write_text("".join(s.model_dump_json() + "\n" for s in scenarios()))
    old = os.environ.get("INSPECT_CACHE_DIR")
    os.environ["INSPECT_CACHE_DIR"] = str(base / "cache")
    try:
        for name, user in (("human", "fid-person"), ("sim_a", "sim_a"), ("sim_b", "sim_b"), ("sim_c", "sim_c")):
            config = RunConfig(
                models=["scripted/fid-asker"], user_model=f"scripted/{user}", grader_model="scripted/fid-grader",
                log_dir=base / name, modes=["baseline", "discovery", "oracle"], audit=False, quality=False,
                display="none", **(SIM_C if name == "sim_c" else {}),
            )  # fmt: skip
            config.validate()
            run_conditions(scenarios(), config)
        args = ["simfidelity", "--human", str(base / "human"), "--sim", str(base / "sim_a"), "--sim"]
        args += [str(base / "sim_b"), "--bench", str(bench), "--out", str(base / "fid"), "--bootstrap", "200"]
        out = CliRunner().invoke(cli.app, args)
        assert out.exit_code == 0, out.output
        made = len(CALLS)
        refused = CliRunner().invoke(cli.app, args)  # its --out holds the result now
        assert refused.exit_code == 2 and "holds a simulator fidelity result (summary.json" in refused.output
        assert "give --overwrite" in refused.output and len(CALLS) == made
        again = CliRunner().invoke(cli.app, [*args, "--overwrite"])  # a rerun replays every call from the cache
        assert again.exit_code == 0 and len(CALLS) == made, again.output
        mixed = ["simfidelity", "--human", str(base / "human"), "--sim", str(base / "sim_a"), "--sim"]
        mixed += [str(base / "sim_c"), "--bench", str(bench), "--out", str(base / "fid-c"), "--bootstrap", "200"]
        other = CliRunner().invoke(cli.app, mixed)
        allowed = CliRunner().invoke(cli.app, [*mixed, "--allow-mixed"])
        assert allowed.exit_code == 0, allowed.output
    finally:
        if old is None:
            os.environ.pop("INSPECT_CACHE_DIR")
        else:
            os.environ["INSPECT_CACHE_DIR"] = old
    return base / "fid", out.output, other.output, (base / "fid-c", allowed.output)


def test_the_replay_measures_are_the_hand_figures(fidelity):
    folder = fidelity[0]
    measures = pd.read_csv(folder / "replay_measures.csv").set_index("simulator")
    a, b = measures.loc["sim_a"], measures.loc["sim_b"]
    assert (a["n_turns"], a["n_audited"]) == (8, 8)
    assert (a["revealed_person"], a["revealed_simulator"], a["over_reveal"]) == pytest.approx((0.5, 1.5, 1.0))
    assert a["reveal_agreement"] == pytest.approx(0.25)
    assert (a["volunteered_person"], a["volunteered_simulator"], a["volunteer_gap"]) == pytest.approx((0, 0.5, 0.5))
    assert (a["length_person"], a["length_simulator"], a["length_ratio"]) == pytest.approx((3.5, 6.0, 12 / 7))
    assert a["length_closeness"] == pytest.approx(0.5625)
    assert (a["flagged_person"], a["flagged_simulator"]) == (0, 0)
    assert (a["value_agreement"], a["value_pairs"]) == (1.0, 4)
    assert (b["over_reveal"], b["reveal_agreement"], b["volunteer_gap"], b["length_closeness"]) == (0, 1, 0, 1)
    turns = pd.read_csv(folder / "replay_turns.csv")
    q2 = turns[(turns["simulator"] == "sim_a") & (turns["turn"] == 2)]
    assert (q2["reveal_jaccard"] == 0).all() and (q2["revealed_simulator"] == 1).all()
    replayed = [json.loads(line) for line in (folder / "replay.jsonl").read_text().splitlines()]
    assert {(r["simulator"], r["turn"], r["simulator_reply"]) for r in replayed} == {
        ("sim_a", 1, OVER[D]), ("sim_a", 2, OVER[A]), ("sim_b", 1, PERSON[D]), ("sim_b", 2, PERSON[A]),
    }  # fmt: skip
    assert {r["person_reply"] for r in replayed if r["turn"] == 2} == {PERSON[A]}  # the person's, as they said it


def test_the_outcome_differences_and_the_fidelity_ranking(fidelity):
    folder, output = fidelity[:2]
    outcome = pd.read_csv(folder / "outcome.csv").set_index("simulator")
    a = outcome.loc["sim_a"]
    assert (a["pref_align_person"], a["pref_align_simulator"], a["pref_align_diff"]) == pytest.approx((3.4, 5.0, 1.6))
    assert (a["normalign_person"], a["normalign_simulator"], a["normalign_diff"]) == pytest.approx((60, 100, 40))
    assert (a["normalign_diff_low"], a["normalign_diff_high"]) == pytest.approx((40, 40))
    assert outcome.loc["sim_b", "normalign_diff"] == pytest.approx(0)
    table = pd.read_csv(folder / "fidelity.csv")
    assert table["simulator"].tolist() == ["sim_b", "sim_a"] and table["rank"].tolist() == [1, 2]
    ranked = table.set_index("simulator")
    assert ranked.loc["sim_b", "replay_fidelity"] == pytest.approx(1.0)
    assert ranked.loc["sim_a", "replay_fidelity"] == pytest.approx(3.9125 / 6)
    assert "fidelity" not in table.columns  # named apart from the reference fidelity (issue 45, defect 8b)
    parts = ranked.loc["sim_a", ["reveal", "volunteering", "length", "clean", "values", "outcome"]].tolist()
    assert parts == pytest.approx([0.25, 0.5, 0.5625, 1, 1, 0.6])
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["rank_correlation"]["sim_a"]["spearman"] is None  # one model: no rank correlation
    assert "fewer than 3 models" in summary["rank_correlation"]["sim_a"]["reason"]
    assert [r["replay_fidelity"] for r in summary["replay_fidelity"]] == pytest.approx([1.0, 3.9125 / 6])
    assert "fidelity" not in summary and "fidelity_components" not in summary
    assert "1. sim_b: replay fidelity 1.000" in output and "2. sim_a: replay fidelity 0.652" in output


def test_the_outcome_normaligns_are_the_reports(fidelity, tmp_path):
    """Every path agrees (issue 31): the report of the person's run and of sim_a's run gives the NormAligns that
    simulator fidelity compares (60 and 100, the hand figures above), from the same scenarios."""
    from prefdisco.analysis.report.build import make_report

    outcome = pd.read_csv(fidelity[0] / "outcome.csv").set_index("simulator").loc["sim_a"]
    for run, column in (("human", "normalign_person"), ("sim_a", "normalign_simulator")):
        report, _ = make_report(fidelity[0].parent / run, tmp_path / run, n_boot=0, figures=False)
        [value] = [v for tasks in report.summary["normalign"].values() for v in tasks.values()]
        assert value == pytest.approx(outcome[column]), run


def test_a_simulator_of_another_protocol_is_refused_and_ranks_use_only_shared_components(fidelity):
    """Issue 31, defect 7. sim_c's run differs from the person's beyond the user (its judge temperature): refused in
    one line unless --allow-mixed. sim_c ("Not sure." to every question) reveals nothing the person revealed, so it
    has no value agreement: both simulators are ranked on the five components they share. sim_c: reveal (0 + 1)/2 =
    0.5, volunteering 1, length (2/5 + 2/2)/2 = 0.7, clean 1, outcome 1 − 60/100 (it learns nothing: NormAlign 0 vs
    the person's 60) = 0.4 → 3.6/5 = 0.72; sim_a: (0.25 + 0.5 + 0.5625 + 1 + 0.6)/5 = 0.5825 (over its six it was
    0.652, another mean than sim_c's)."""
    _, _, refused, (folder, output) = fidelity
    assert "another protocol than --human" in refused and "grader_temperature 0.0 vs 0.5" in refused
    assert "--allow-mixed" in refused
    table = pd.read_csv(folder / "fidelity.csv").set_index("simulator")
    assert table["replay_fidelity"].to_dict() == pytest.approx({"sim_c": 0.72, "sim_a": 0.5825})
    assert table.loc["sim_c", "rank"] == 1 and pd.isna(table.loc["sim_c", "values"])
    assert table.loc["sim_a", "values"] == pytest.approx(1.0)  # shown, not averaged
    assert set(table["components"]) == {"reveal,volunteering,length,clean,outcome"}
    assert set(table["n_components"]) == {5}

    def no_constants(name: str) -> None:
        raise AssertionError(f"summary.json holds {name}: not strict JSON")

    summary = json.loads((folder / "summary.json").read_text(), parse_constant=no_constants)
    assert summary["components_left_out"] == ["values"] and summary["allow_mixed"] is True
    c = next(s for s in summary["simulators"] if s["label"] == "sim_c")
    assert (c["max_tokens"], c["user_retry"], c["temperature"]) == (64, 1, 0.7)  # replayed as its run was
    assert "ranked without values (not measured for every simulator)" in output
    assert summary["caveats"] == ["ranked without values (not measured for every simulator)"]  # what it printed

    replay = pd.read_csv(folder / "replay_measures.csv").set_index("simulator")
    assert replay["value_judgements_invalid"].to_dict() == {"sim_a": 0, "sim_c": 0}


def test_an_embedded_simulator_or_judge_carries_the_plumbing_note():
    from prefdisco.simfidelity.measures import fidelity_caveats

    notes = fidelity_caveats(["prefdisco/smollm2", "openai/gpt-4.1"], [], 2)
    assert notes[0].startswith("The embedded model prefdisco/smollm2 proves the plumbing, not quality")
    assert notes[1] == "2 value judgement(s) stayed invalid and were left out of value agreement"
    assert fidelity_caveats(["openai/gpt-4.1"], [], 0) == []
