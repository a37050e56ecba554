"""The README works as written on a fresh clone (issue 35, class 1): every ``prefdisco`` command of its code blocks
that can run offline runs, as written, from an empty folder with its output to a file; every other one names a model
or data the reader brings (a placeholder such as ``M``, ``J``, ``BENCH_DIR``, a folder an earlier line makes, or a
provider's model), so a new offline command added to the README without a run here fails this test.

The commands run once per test session (``tests/readme_world.py``); the run is the quickest demo: one scenario
through the four conditions on the embedded model, the report and its logs — the plumbing end to end.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from readme_world import DEMO_FOLDER, OFFLINE

REPO = Path(__file__).resolve().parents[1]
BROUGHT = re.compile(
    r"(?:^|\s)(?:M|N|U|J|BENCH_DIR|POLICY)(?:\s|$)|\b(?:openai|anthropic|google)/|\b(?:bench|runs|reports|personas|"
    r"sessions|annotations|ratings|play|studies|policy|board|fidelity|dpo|hub)[/.\w]*"
)
"""What a command needs that the reader brings or an earlier command makes."""

pytestmark = [pytest.mark.embedded, pytest.mark.slow]


def readme_commands() -> list[str]:
    """Every ``.venv/bin/prefdisco`` line of the README's code blocks, its comment cut, continuations joined."""
    lines, found, fenced, i = (REPO / "README.md").read_text().splitlines(), [], False, 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            fenced = not fenced
        elif fenced and line.startswith(".venv/bin/prefdisco"):
            while line.rstrip().endswith("\\"):
                i += 1
                line = line.rstrip()[:-1] + " " + lines[i].strip()
            found.append(re.sub(r"\s+#.*$", "", line).strip())
        i += 1
    return found


def test_every_readme_command_either_runs_offline_here_or_names_what_the_reader_brings():
    commands = readme_commands()
    assert all(c in commands for c in OFFLINE), [c for c in OFFLINE if c not in commands]
    unexplained = [c for c in commands if c not in OFFLINE and not BROUGHT.search(c.split(" ", 1)[1])]
    assert not unexplained, f"README commands that could run offline but are not run here: {unexplained}"


def test_the_offline_readme_commands_run_as_written_from_an_empty_folder(readme_demo):
    runs = json.loads((readme_demo / "runs.json").read_text())
    assert [r["command"] for r in runs] == list(OFFLINE)
    for run in runs:
        assert run["returncode"] == 0, (run["command"], run["output"][-2000:])
        assert "Traceback" not in run["output"], run["command"]
    outputs = [" ".join(r["output"].split()) for r in runs]
    assert "demo" in outputs[0] and "eval" in outputs[0]  # the help names the commands

    out = readme_demo / DEMO_FOLDER
    text = outputs[1]
    assert "PrefDisco demo" in text and "NormAlign" in text
    assert "proves the plumbing, not quality" in text and "prefdisco demo --model" in text
    assert (out / "report" / "report.html").is_file() and "report: prefdisco-demo-1/report/report.html" in text
    # issue 49: the caveats before the numbers they qualify; the demo's own shipped protocol, not a custom-… id
    assert text.index("proves the plumbing, not quality") < text.index("PrefDisco demo —") < text.index("NormAlign:")
    assert json.loads((out / "logs" / "run.json").read_text())["protocol_id"] == "demo-v1.0"
    # a one-scenario report: its dialogue first, no figure that cannot show anything
    html = (out / "report" / "report.html").read_text()
    assert html.index('<h2 id="dialogue">') < html.index('<h2 id="normalign">')
    assert "No figure: one (model, task) cell" in html and not (out / "report" / "fig_normalign.png").exists()

    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["modes"]) == {"baseline", "discovery", "oracle", "fixed_k=2"}
    assert summary["modes"]["fixed_k=2"]["mean_questions"] in (2.0, None)  # the engine forces two questions
    for mode in summary["modes"].values():
        assert set(mode) >= {"pref_align_mean", "accuracy", "mean_questions", "n"}
        assert mode["n"] + mode["failed"] == 1
        assert mode["pref_align_mean"] is None or 1.0 <= mode["pref_align_mean"] <= 5.0
    assert summary["norm_align"] is not None or summary["norm_align_reason"]
    assert summary["models"] == dict.fromkeys(("assistant", "user", "grader"), "prefdisco/smollm2")

    # the logs are ordinary inspect logs (what `inspect view` reads), one per condition, all finished
    logs = [read_eval_log(info) for info in list_eval_logs(str(out / "logs"))]
    tasks = ["prefdisco_baseline", "prefdisco_discovery", "prefdisco_fixed_k2", "prefdisco_oracle"]
    assert sorted(log.eval.task for log in logs) == tasks
    assert all(log.status == "success" and len(log.samples) == 1 for log in logs)
    discovery = next(log for log in logs if log.eval.task == "prefdisco_discovery")
    for sample in discovery.samples:
        score = sample.scores["prefdisco_scorer"]
        assert score.value["n_questions"] <= 5
        assert len(score.metadata["judgements"]) == len(sample.metadata["scenario"]["rubric"])
    # the demo shows a dialogue: fixed-K 2's turns are two questions, two replies of the simulated user, an answer
    fixed = next(log for log in logs if log.eval.task == "prefdisco_fixed_k2")
    for sample in fixed.samples:
        kinds = [t["kind"] for t in sample.scores["prefdisco_scorer"].metadata["turns"]]
        assert kinds == ["question", "reply", "question", "reply", "answer"]
    assert len((out / "logs" / "results.csv").read_text().splitlines()) == 1 + 4
