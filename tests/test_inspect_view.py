"""``inspect view`` shows PrefDisco's columns (issue 25, part 7): every task carries a viewer configuration whose
columns name the scores its samples really hold (a column naming a key no sample has would show empty)."""

from __future__ import annotations

import json

import pytest
from inspect_ai import eval as inspect_eval

from prefdisco.evaluation.running.task import build_task
from prefdisco.evaluation.settings.config import RunConfig
from prefdisco.scoring.deferred import JUDGED_SCORE, PENDING_SCORE
from scripted import Scripted, constant, make_scenario, replies

PREFIX = "score__"


def run(tmp_path, judge: str):
    assistant = Scripted(replies("QUESTION: How detailed?", "ANSWER: 3 trips"))
    config = RunConfig(judge=judge, audit=False)
    [log] = inspect_eval(
        build_task([make_scenario()], config, "discovery"),
        model=assistant.model,
        model_roles={
            "user": Scripted(constant("Step by step.")).model,
            "grader": Scripted(constant(json.dumps({"score": 4, "reasoning": 4, "completeness": 4, "facts": 4}))).model,
        },
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    return log


@pytest.mark.parametrize(("judge", "scorer"), [("per_criterion", JUDGED_SCORE), ("later", PENDING_SCORE)])
def test_the_logs_viewer_columns_name_scores_the_samples_hold(tmp_path, judge, scorer):
    log = run(tmp_path, judge)
    view = log.eval.viewer.task_samples_view
    ids = [c.id for c in view.columns]
    assert ids[:2] == ["sampleId", "epoch"]
    named = [i.removeprefix(f"{PREFIX}{scorer}__") for i in ids if i.startswith(PREFIX)]
    [sample] = log.samples
    held = sample.scores[scorer].value
    assert named and all(name in held for name in named), (named, sorted(held))
    assert set(view.score_labels) == set(named)
    if judge == "per_criterion":
        assert named == ["pref_align", "correct", "n_questions", "user_flags", "quality"]
        assert view.sort[0].column == f"{PREFIX}{scorer}__pref_align"  # the worst personalized answers first
        scale = view.score_color_scales["pref_align"]
        assert (scale.palette, scale.min, scale.max) == ("good-high", 1, 5)
        assert held["pref_align"] == pytest.approx(4.0)
    else:
        assert named == ["n_questions", "user_flags"] and view.sort is None
