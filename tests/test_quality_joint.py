"""The general quality inside the structured judge's call (issue 34 part 2): with ``--judge structured`` the first
judge's first call scores the rubric *and* the three quality criteria under their own keys, so a response costs
one grader call fewer; the quality scores are kept apart from the rubric's (never a judgement, never in PrefAlign),
the other judges of a panel and the further calls of a split rubric never ask them, and a reply whose quality part
stays invalid keeps its rubric scores."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from prefdisco.evaluation.protocol.protocols import protocol_id, protocol_templates
from prefdisco.evaluation.running.task import build_task
from prefdisco.evaluation.settings.config import RunConfig
from prefdisco.results.logs import results_from_logs
from scripted import QUALITY_ASKED, Call, Scripted, listed_criteria, make_scenario, run_eval_set, structured_reply

RUBRIC = {"Explanation depth": 5, "Use of analogies": 3, "Technical vocabulary": 1}
"""The planted rubric scores; with the weights 0.5, 0.3, 0.2 PrefAlign is 2.5 + 0.9 + 0.2 = 3.6 by hand."""
HAND_PREF_ALIGN = 3.6
QUALITY = {
    "baseline": {"reasoning": 5, "completeness": 4, "facts": 2},
    "oracle": {"reasoning": 1, "completeness": 1, "facts": 1},
}
"""The planted quality levels of each condition's response: by hand their means are 11/3 and 1."""
HAND_QUALITY = {"baseline": 11 / 3, "oracle": 1.0}


def assistant(call: Call, index: int) -> str:
    return ("ORACLE-RESPONSE" if call.system else "BASELINE-RESPONSE") + " The answer is B: 3 trips."


def judge(call: Call, index: int) -> str:
    which = "oracle" if "ORACLE-RESPONSE" in call.text else "baseline"
    return structured_reply(call, RUBRIC, QUALITY[which])


def scores(log_dir) -> dict[str, dict]:
    out = {}
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info)
        [sample] = log.samples
        out[log.eval.metadata["prefdisco_mode"]] = sample.scores["prefdisco_scorer"]
    return out


@pytest.mark.parametrize("max_criteria", [10, 2])
def test_one_call_per_response_gives_the_rubric_and_the_quality_apart(tmp_path, max_criteria):
    grader = Scripted(judge)
    config = RunConfig(audit=False, judge="structured", judge_max_criteria=max_criteria)
    tasks = [build_task([make_scenario()], config, mode) for mode in QUALITY]
    assert run_eval_set(tasks, tmp_path, Scripted(assistant), Scripted(lambda c, i: "ok"), grader)
    per_response = 1 if max_criteria == 10 else 2  # 3 criteria: one call, or calls of 2 and 1
    assert len(grader.calls) == 2 * per_response  # no quality call of its own
    asking = [c for c in grader.calls if QUALITY_ASKED in c.text]
    assert len(asking) == 2  # one per response: the first call of its judging
    assert all(len(listed_criteria(c)) == min(3, max_criteria) for c in asking)
    # the quality is asked after the person's criteria, and its part never shows the profile's justifications
    assert all(c.text.index("Criterion c1") < c.text.index("general quality") for c in asking)
    results = results_from_logs(tmp_path).results.set_index("mode")
    for mode, score in scores(tmp_path).items():
        assert score.metadata["quality_scores"] == QUALITY[mode]
        assert score.value["quality"] == pytest.approx(HAND_QUALITY[mode])
        judgements = score.metadata["judgements"]
        assert {j["attribute"]: j["score"] for j in judgements} == RUBRIC  # only the rubric's criteria
        assert score.value["pref_align"] == pytest.approx(HAND_PREF_ALIGN)  # the same whatever the quality
        assert results.loc[mode, "quality"] == pytest.approx(HAND_QUALITY[mode])


def test_a_quality_part_that_stays_invalid_keeps_the_rubric_and_makes_no_other_call(tmp_path):
    def bad_quality(call: Call, index: int) -> str:
        reply = json.loads(structured_reply(call, RUBRIC, QUALITY["baseline"]))
        return json.dumps(reply | ({"facts": 9} if "facts" in reply else {}))

    grader = Scripted(bad_quality)
    task = build_task([make_scenario()], RunConfig(audit=False, judge="structured"), "baseline")
    assert run_eval_set([task], tmp_path, Scripted(assistant), Scripted(lambda c, i: "ok"), grader)
    assert len(grader.calls) == 3  # the call and its two re-asks; no quality call after it
    [score] = scores(tmp_path).values()
    assert score.value["pref_align"] == pytest.approx(HAND_PREF_ALIGN)  # the rubric's valid scores are kept
    assert score.value["quality"] is None and score.metadata["quality_scores"] is None
    assert score.metadata["quality_error"].startswith("no valid quality reply")


def test_a_panels_other_judges_and_no_quality_runs_never_ask_it(tmp_path):
    first, second = Scripted(judge), Scripted(judge, name="mockllm/judge2")
    config = RunConfig(audit=False, judge="structured", judge_panel=["mockllm/judge2"], judge_repeats=2)
    task = build_task([make_scenario()], config, "baseline")
    assert run_eval_set([task], tmp_path / "panel", Scripted(assistant), Scripted(lambda c, i: "ok"), first,
                        panel={"grader_2": second})  # fmt: skip
    assert [QUALITY_ASKED in c.text for c in first.calls].count(True) == 1  # its first repeat only
    assert len(first.calls) == 2 and len(second.calls) == 2 and not any(QUALITY_ASKED in c.text for c in second.calls)
    [score] = scores(tmp_path / "panel").values()
    assert score.metadata["quality_scores"] == QUALITY["baseline"]

    off = Scripted(judge)
    task = build_task([make_scenario()], RunConfig(audit=False, judge="structured", quality=False), "baseline")
    assert run_eval_set([task], tmp_path / "off", Scripted(assistant), Scripted(lambda c, i: "ok"), off)
    assert len(off.calls) == 1 and "general quality" not in off.calls[0].text
    [score] = scores(tmp_path / "off").values()
    assert score.value["quality"] is None and score.value["pref_align"] == pytest.approx(HAND_PREF_ALIGN)


def test_the_protocol_names_the_quality_in_the_structured_judges_prompt():
    """The structured judge's prompt differs with the quality in it, so its protocol does; the per-criterion
    judge's prompt is the same either way, so its protocol (a shipped one) does not change with ``--no-quality``."""
    structured = [RunConfig(judge="structured", quality=q) for q in (True, False)]
    assert protocol_id(structured[0]) != protocol_id(structured[1])
    assert "quality_criteria" in protocol_templates(structured[0])
    assert "quality_criteria" not in protocol_templates(structured[1])
    assert {protocol_id(RunConfig(quality=q)) for q in (True, False)} == {"default-v1.0"}
    # a regrade's settings (no quality recorded) read as a run that judged it
    settings = {k: getattr(structured[0], k) for k in ("preset", "ask", "user_type", "judge")}
    assert "quality_criteria" in protocol_templates(SimpleNamespace(**settings))
