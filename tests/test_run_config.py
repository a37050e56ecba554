"""One configuration object: ``prefdisco eval`` and inspect's own ``inspect eval prefdisco/prefdisco -T …`` build the
same task from the same settings, so a scenario gets the same seeds and the same scores through both."""

from __future__ import annotations

import json
from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.util import Store

from prefdisco.dialogue.state import DialogueRecord
from prefdisco.evaluation.running.evalset import build_tasks
from prefdisco.evaluation.settings.config import RunConfig
from prefdisco.seeds import TrialSeeds, call_seed, seed_scope
from scripted import Call, Scripted, make_scenario

SETTINGS = {
    "max_questions": 2,
    "user_type": "cooperative",
    "audit": False,
    "epochs": 2,
    "seed": 11,
    "judge_panel": ["mockllm/judge-b"],
    "judge_repeats": 2,
}


def assistant(call: Call, index: int) -> str:
    return (
        "QUESTION: How detailed?" if sum(m.role == "assistant" for m in call.messages) == 0 else "ANSWER: B, 3 trips."
    )


def judge(call: Call, index: int) -> str:
    """A score that depends on the seed the call carries: equal scores mean equal seeds."""
    return json.dumps({"score": 1 + (call.config.seed or 0) % 5})


def run(task_or_name, tmp_path: Path, **task_args) -> list:
    user, first, second = Scripted(lambda c, i: "Step by step."), Scripted(judge), Scripted(judge)
    [log] = inspect_eval(
        task_or_name,
        task_args=task_args,
        model=Scripted(assistant).model,
        model_roles={"user": user.model, "grader": first.model, "grader_2": second.model},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    return sorted(log.samples, key=lambda s: s.epoch)


def test_inspect_eval_of_the_registered_task_sends_the_seeds_and_gives_the_scores_of_prefdisco_eval(tmp_path):
    scenario = make_scenario()
    path = tmp_path / "scenarios.jsonl"
    path.write_text(scenario.model_dump_json() + "\n")
    config = RunConfig(**SETTINGS)
    [ours] = build_tasks([scenario], RunConfig(**SETTINGS, modes=["discovery"]))  # what prefdisco eval runs
    through_eval = run(ours, tmp_path / "eval")
    task_args = {**SETTINGS, "scenarios": str(path), "mode": "discovery"}
    through_inspect = run("prefdisco/prefdisco", tmp_path / "inspect", **task_args)

    scope = seed_scope(config.seed)
    for a, b in zip(through_eval, through_inspect, strict=True):
        seeds_a, seeds_b = TrialSeeds(store=Store(a.store)), TrialSeeds(store=Store(b.store))
        fields = ("epoch", "assistant", "user", "grader")
        assert [getattr(seeds_a, f) for f in fields] == [getattr(seeds_b, f) for f in fields]
        assert seeds_a.grader == call_seed(scope, "s1", "discovery", a.epoch, "grader")  # --seed 11's, by hand
        assert a.scores["prefdisco_scorer"].value == b.scores["prefdisco_scorer"].value
        judgements = a.scores["prefdisco_scorer"].metadata["judgements"]
        assert judgements == b.scores["prefdisco_scorer"].metadata["judgements"]
        assert len(judgements) == 3 * 2 * 2  # three criteria, two judges, two repeats each
        record = DialogueRecord(store=Store(b.store))
        assert record.n_questions == 1 and record.final_response == "B, 3 trips."
    assert through_eval[0].epoch == 1 and through_eval[1].epoch == 2
