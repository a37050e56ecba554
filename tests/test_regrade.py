"""``prefdisco regrade`` (issue 25, part 3): a run's dialogues judged again against a corrected benchmark, with no
dialogue call, changing exactly the affected criteria's scores, and recording the protocol change.

The run: two mock scenarios c0000, c0001 in baseline and discovery (no dialogue of theirs shows a weight or derives
anything from the gold). FIXED corrects two things:

* c0000's criterion ``Explanation depth``: its level-1 text is rewritten. Its judge prompt changes in each of the
  two conditions, so exactly 2 judge calls are made (every other prompt — the other criteria, correctness, the
  audit, the quality judge — is unchanged and replays from the run's cache); those 3 scores are whatever the judge
  now says, every other attribute score stays as it was;
* c0001's weights: ``Familiarity with technical terminology`` .3 ↔ ``Formality`` .2 swapped. No judge call; its
  PrefAlign is the same scores under the new weights: Σ w'·g, by hand from the attribute rows.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from mock_openai import MockOpenAI, tagged_scenarios, write_scenarios
from test_reliability import mock_env

# under xdist the module's tests stay on one worker, which builds its module fixture (an eval and its regrade) once
pytestmark = pytest.mark.xdist_group("test_regrade")

DEPTH, ANXIETY = "Explanation depth", "Subject anxiety"
TERMS, FORMALITY = "Familiarity with technical terminology", "Formality"
NEW_WEIGHTS = {TERMS: 0.2, "Use of analogies": 0.25, "Explanation of wrong options": 0.25, FORMALITY: 0.3}


def corrected(scenarios):
    a, b = scenarios
    rubric = [
        c.model_copy(update={"levels": {**c.levels, 1: "Skips the steps entirely (corrected wording)."}})
        if c.attribute == DEPTH
        else c
        for c in a.rubric
    ]
    items = [i.model_copy(update={"weight": NEW_WEIGHTS[i.attribute]}) for i in b.profile.items]
    return [
        a.model_copy(update={"rubric": rubric}),
        b.model_copy(update={"profile": b.profile.model_copy(update={"items": items})}),
    ]


@pytest.fixture(scope="module")
def regraded(tmp_path_factory):
    import prefdisco.cli as cli

    cli._register()
    base = tmp_path_factory.mktemp("regrade")
    scenarios = tagged_scenarios(2)
    bench = write_scenarios(base / "scenarios.jsonl", scenarios)
    fixed = write_scenarios(base / "fixed.jsonl", corrected(scenarios))
    monkeypatch = pytest.MonkeyPatch()
    try:
        with MockOpenAI() as mock:
            mock_env(monkeypatch, mock, base)
            model = f"openai-api/mock/m{mock.port}"
            args = ["eval", str(bench), "--model", model, "--log-dir", str(base / "run"), "--display", "none"]
            args += ["--modes", "baseline,discovery"]
            assert (made := CliRunner().invoke(cli.app, args)).exit_code == 0, made.output
            before = dict(mock.stats()["by_role"])
            judged_before = dict(mock.judged)
            out = CliRunner().invoke(
                cli.app, ["regrade", str(base / "run"), "--bench", str(fixed), "--out", str(base / "run2")]
            )
            assert out.exit_code == 0, out.output
            after = dict(mock.stats()["by_role"])
            calls = {role: n - before.get(role, 0) for role, n in after.items() if n != before.get(role, 0)}
            again = CliRunner().invoke(
                cli.app, ["regrade", str(base / "run"), "--bench", str(fixed), "--out", str(base / "run2")]
            )
            assert again.exit_code == 0, again.output
            calls_again = sum(mock.stats()["by_role"].values()) - sum(after.values())
            judged_after = dict(mock.judged)
    finally:
        monkeypatch.undo()
    return {
        "base": base,
        "bench": bench,
        "fixed": fixed,
        "calls": calls,
        "calls_again": calls_again,
        "output": out.output,
        "again": again.output,
        "judged_before": judged_before,
        "judged_after": judged_after,
        "app": cli.app,
    }


def attributes(folder):
    frame = pd.read_csv(folder / "attributes.csv")
    return frame.set_index(["scenario_id", "mode", "attribute"])["score"].sort_index()


def test_only_the_changed_criteria_are_judged_again_and_no_dialogue_call_is_made(regraded):
    assert regraded["calls"] == {"judge": 2}  # c0000 x Explanation depth x 2 conditions; no assistant/user/audit
    assert regraded["calls_again"] == 0 and "0 log(s) (2 already regraded)" in regraded["again"]
    before, after = attributes(regraded["base"] / "run"), attributes(regraded["base"] / "run2")
    assert list(before.index) == list(after.index)
    moved = [k for k in before.index if k[0] == "c0000" and k[2] == DEPTH]
    assert len(moved) == 2
    pd.testing.assert_series_equal(before.drop(moved), after.drop(moved))  # every other criterion as it was
    for sid, mode, attribute in moved:  # the new judgements are what the judge said to the corrected prompts
        assert after[(sid, mode, attribute)] == regraded["judged_after"][(sid, mode, attribute)]
    transcripts = [
        [
            json.loads(line)["final_response"]
            for line in (regraded["base"] / name / "transcripts.jsonl").read_text().splitlines()
        ]
        for name in ("run", "run2")
    ]
    assert sorted(transcripts[0]) == sorted(transcripts[1])  # the dialogues are the run's own


def test_a_changed_weight_changes_pref_align_by_hand(regraded):
    frame = pd.read_csv(regraded["base"] / "run2" / "attributes.csv")
    results = pd.read_csv(regraded["base"] / "run2" / "results.csv").set_index(["scenario_id", "mode"])
    old = pd.read_csv(regraded["base"] / "run" / "results.csv").set_index(["scenario_id", "mode"])
    for mode in ("baseline", "discovery"):
        rows = frame[(frame["scenario_id"] == "c0001") & (frame["mode"] == mode)].set_index("attribute")
        by_hand = sum(w * rows.loc[a, "score"] for a, w in NEW_WEIGHTS.items())
        old_hand = sum(w * rows.loc[a, "score"] for a, w in (NEW_WEIGHTS | {TERMS: 0.3, FORMALITY: 0.2}).items())
        assert old.loc[("c0001", mode), "pref_align"] == pytest.approx(old_hand)  # the same scores, old weights
        assert results.loc[("c0001", mode), "pref_align"] == pytest.approx(by_hand)
        assert results.loc[("c0000", mode), "correct"] == old.loc[("c0000", mode), "correct"]
    moved = [
        m
        for m in ("baseline", "discovery")
        if results.loc[("c0001", m), "pref_align"] != old.loc[("c0001", m), "pref_align"]
    ]
    assert moved  # the swap is not idle: some condition scored the two criteria differently


def test_the_protocol_change_is_recorded(regraded):
    run2 = regraded["base"] / "run2"
    record = json.loads((run2 / "protocol.json").read_text())
    origin = json.loads((regraded["base"] / "run" / "protocol.json").read_text())
    assert record["id"] == origin["id"] == "default-v1.0"  # the rules are the same; the rubrics are not
    assert record["rubrics"] != origin["rubrics"]
    assert record["regraded_from"]["run"] == "../run"  # RUN relative to RUN2: no path of the machine (issue 49)
    assert record["regraded_from"]["changes"] == [f'rubrics "{origin["rubrics"]}" vs "{record["rubrics"]}"']
    assert json.loads((run2 / "run.json").read_text())["regraded_from"] == "../run"
    assert "protocol: default-v1.0" in regraded["output"] and "changed: rubrics" in regraded["output"]
    # a report of the run beside its regrade refuses: the rubrics differ
    out = CliRunner().invoke(
        regraded["app"], ["report", str(regraded["base"] / "run"), str(run2), "--out", str(regraded["base"] / "rep")]
    )
    assert out.exit_code == 2 and "rubrics" in out.output


def test_a_change_to_what_the_dialogue_was_made_of_is_refused(regraded, tmp_path):
    scenarios = tagged_scenarios(2)
    a, b = scenarios
    items = [i.model_copy(update={"value": "something else"}) if i.attribute == ANXIETY else i for i in a.profile.items]
    moved = a.model_copy(update={"profile": a.profile.model_copy(update={"items": items})})
    cases = {
        "value": ([moved, b], "scenario 'c0000' changes profile.items[0].value, which its dialogue was made of"),
        "missing": ([a], "has no scenario 'c0001', which the run holds"),
    }
    for name, (given, said) in cases.items():
        fixed = write_scenarios(tmp_path / f"{name}.jsonl", given)
        out = CliRunner().invoke(
            regraded["app"],
            ["regrade", str(regraded["base"] / "run"), "--bench", str(fixed), "--out", str(tmp_path / name)],
        )
        assert out.exit_code == 2 and said in out.output, (name, out.output)
        assert not (tmp_path / name).exists()
    other = CliRunner().invoke(
        regraded["app"],
        [
            "regrade",
            str(regraded["base"] / "run"),
            "--bench",
            str(regraded["bench"]),
            "--out",
            str(regraded["base"] / "run2"),
        ],
    )
    assert other.exit_code == 2 and "holds something other than this regrade" in other.output


def test_a_weight_or_gold_a_dialogue_was_made_of_is_refused_naming_the_conditions(tmp_path, monkeypatch):
    """Issue 31, defect 2: the oracle and oracle_distractor prompts print each attribute's importance, wrong_persona
    prints its decoy's, and stated_belief and ``--pushback`` derive their wrong answer from the gold. A regrade that
    changes one of those is refused in one line naming the scenario, the field and the conditions; before, it was
    accepted and NormAlign's denominator was an oracle written for the old weights, scored against the new."""
    import prefdisco.cli as cli
    from prefdisco.dialogue.wrong_answers import wrong_answer, wrong_answer_key
    from prefdisco.schema import Problem
    from prefdisco.seeds import seed_scope

    cli._register()
    scenarios = tagged_scenarios(2)
    a, b = scenarios
    bench = write_scenarios(tmp_path / "scenarios.jsonl", scenarios)
    items = [i.model_copy(update={"weight": NEW_WEIGHTS[i.attribute]}) for i in b.profile.items]
    reweighted = b.model_copy(update={"profile": b.profile.model_copy(update={"items": items})})
    gold = wrong_answer(a.problem, wrong_answer_key(seed_scope(0), a.id))
    problem = Problem.model_validate({**a.problem.model_dump(exclude={"answer_spec"}), "answer": gold})
    regold = a.model_copy(update={"problem": problem})
    cases = {
        "oracle": (
            "baseline,oracle,wrong_persona",
            [a, reweighted],
            "scenario 'c0001' changes its profile weights, which oracle, wrong_persona (as 'c0000''s decoy) was shown",
        ),
        "distractor": ("baseline,oracle_distractor", [a, reweighted], "which oracle_distractor was shown"),
        "belief": (
            "baseline,stated_belief",
            [regold, b],
            "scenario 'c0000' changes its gold answer, which stated_belief",
        ),
        "pushback": ("baseline", [regold, b], "changes its gold answer, which baseline (--pushback) derived"),
    }
    with MockOpenAI() as mock:
        mock_env(monkeypatch, mock, tmp_path)
        model = f"openai-api/mock/m{mock.port}"
        for name, (modes, given, said) in cases.items():
            run = tmp_path / f"run-{name}"
            args = ["eval", str(bench), "--model", model, "--log-dir", str(run), "--modes", modes]
            args += ["--pushback", "1"] if name == "pushback" else []
            made = CliRunner().invoke(cli.app, [*args, "--display", "none"])
            assert made.exit_code == 0, made.output
            fixed = write_scenarios(tmp_path / f"{name}.jsonl", given)
            out = CliRunner().invoke(
                cli.app, ["regrade", str(run), "--bench", str(fixed), "--out", str(tmp_path / name)]
            )
            assert out.exit_code == 2 and said in out.output, (name, out.output)
            assert not (tmp_path / name).exists()
        # the weight change is judged-only where no dialogue showed it: the pushback run (baseline) takes it
        fixed = write_scenarios(tmp_path / "weights.jsonl", [a, reweighted])
        out = CliRunner().invoke(
            cli.app, ["regrade", str(tmp_path / "run-pushback"), "--bench", str(fixed), "--out", str(tmp_path / "w")]
        )
        assert out.exit_code == 0, out.output


def test_a_relative_run_folder_regrades_as_its_absolute_path_does(regraded, tmp_path, monkeypatch):
    """The README's own form, ``prefdisco regrade runs/m --out runs/m2``, from the run's parent folder: the same
    regraded scores as the absolute paths give (it crashed on the logs' absolute names and left --out empty). A
    judge of this test's own mock (inspect keeps a model by its name, and the run's judge named a closed port)."""
    base = regraded["base"]
    monkeypatch.chdir(base)
    with MockOpenAI() as mock:
        mock_env(monkeypatch, mock, tmp_path)
        judge = ["--bench", "fixed.jsonl", "--judge-model", f"openai-api/mock/m{mock.port}"]
        relative = CliRunner().invoke(regraded["app"], ["regrade", "run", *judge, "--out", "run-relative"])
        absolute = CliRunner().invoke(
            regraded["app"], ["regrade", str(base / "run"), *judge, "--out", str(base / "run-absolute")]
        )
    assert relative.exit_code == 0, relative.output
    assert absolute.exit_code == 0, absolute.output
    assert "result rows → run-relative/results.csv" in " ".join(relative.output.split())
    assert attributes(base / "run-relative").equals(attributes(base / "run-absolute"))
    assert len(attributes(base / "run-relative")) == len(attributes(base / "run2"))
