"""Bad inputs across files, settings, CLI arguments and environment, table-driven over every command.

Each case must end with a non-zero exit and one clear message — a ``UserError`` (printed by ``prefdisco.cli.main``
as ``error: <message>``), a click usage error, or for ``validate`` its list of problems — never a Python traceback,
and nothing may be written: the workspace holds exactly the files it held before the command ran.

Most cases run in-process with typer's CliRunner (fast); two run ``python -m prefdisco`` to check the real exit
code and stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

import prefdisco.cli as cli
from prefdisco.benchio import write_bench
from prefdisco.demo import demo_scenarios

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
RELEASE = SHARED / "data" / "prefdisco_release" / "example_record.jsonl"
MOCK = "openai-api/mock/m"


@dataclass
class Case:
    id: str
    args: Callable[[Path], list[str]]
    expect: str  # a substring of the message
    kind: str = "user"  # user: UserError | usage: click usage error | report: validate's problem list
    env: dict[str, str | None] = field(default_factory=dict)
    setup: Callable[[Path], None] | None = None


def scenario_json(edit: Callable[[dict], None] | None = None) -> str:
    data = json.loads(demo_scenarios()[0].model_dump_json())
    if edit:
        edit(data)
    return json.dumps(data)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def good_jsonl(ws: Path) -> Path:
    return write(ws / "in" / "scenarios.jsonl", "".join(s.model_dump_json() + "\n" for s in demo_scenarios()[:2]))


def bench_folder(ws: Path) -> Path:
    scenarios = demo_scenarios()[:2]
    write_bench(ws / "in" / "bench", scenarios, [s.persona for s in scenarios], [])
    return ws / "in" / "bench"


def tampered_bench(ws: Path) -> Path:
    """A benchmark folder whose scenarios.jsonl changed after the manifest was written."""
    folder = bench_folder(ws)
    with (folder / "scenarios.jsonl").open("a") as f:
        f.write("\n")
    return folder


def published_folder(ws: Path) -> Path:
    """A benchmark folder published (``prefdisco publish``) into ``in/published``."""
    from prefdisco.publish.writer import publish

    return publish(bench_folder(ws), ws / "in" / "published").out


def tampered_published(ws: Path) -> Path:
    """A published folder whose persona library changed after it was published."""
    folder = published_folder(ws)
    with (folder / "prefdisco" / "personas.jsonl").open("a") as f:
        f.write("\n")
    return folder


def unbuilt_folder(ws: Path) -> Path:
    """A folder with a scenarios.jsonl and no manifest: scenarios, not a built benchmark."""
    return good_jsonl(ws).parent


def out_with_a_file(ws: Path) -> Path:
    write(ws / "out" / "pub" / "notes.txt", "mine\n")
    return ws / "out" / "pub"


def a_file(ws: Path) -> Path:
    return write(ws / "in" / "plain.txt", "not a folder\n")


def eval_args(bench: Path, ws: Path, *extra: str, model: str = MOCK) -> list[str]:
    return ["eval", str(bench), "--model", model, "--log-dir", str(ws / "out" / "run"), "--display", "none", *extra]


def set_weight(data: dict) -> None:
    data["profile"]["items"][0]["weight"] += 0.25


def zero_weight(data: dict) -> None:
    """The first profile attribute at weight 0, its weight given to the second: the weights still sum to 1."""
    items = data["profile"]["items"]
    items[1]["weight"] += items[0]["weight"]
    items[0]["weight"] = 0.0


def results_table(ws: Path) -> Path:
    """A run's results table (a row per scenario and condition), as ``prefdisco eval`` writes it."""
    header = "model,family,task,scenario_id,mode,fixed_k,pref_align,correct,n_questions,failed\n"
    rows = "".join(f"m,fam,demo,s{i},{mode},,3.0,1,0,0\n" for i in range(30) for mode in ("baseline", "oracle"))
    return write(ws / "in" / "run" / "results.csv", header + rows)


def raw_rows(ws: Path) -> Path:
    """The MATH-500 rows of the shared data as the Hub serves them: a build's --source, no benchmark."""
    return write(ws / "in" / "test.jsonl", (SHARED / "data" / "benchmarks" / "math500" / "test.jsonl").read_text())


def truncated_log(ws: Path) -> Path:
    """A run folder whose only eval log was cut off mid-file."""
    run = ws / "in" / "run"
    run.mkdir(parents=True)
    log = run / "2026-01-01T00-00-00-00-00_prefdisco-baseline_mock_abc.eval"
    log.write_bytes(b"PK\x03\x04" + b"\x00" * 40)
    return run


def resumable_run_with_truncated_log(ws: Path) -> None:
    """The run folder of this very scenario set (so it resumes) holding a log cut off mid-file."""
    from prefdisco.evaluation.settings.config import scenario_set_hash

    write(ws / "out" / "run" / "run.json", json.dumps({"scenario_set": scenario_set_hash(demo_scenarios()[:2])}))
    (ws / "out" / "run" / "2026-01-01T00-00-00-00-00_prefdisco-baseline_mock_abc.eval").write_bytes(b"PK\x03\x04")


def a_run(ws: Path) -> Path:
    """A run folder holding a results table (never read: the refusal comes first)."""
    write(ws / "in" / "run" / "results.csv", "model,task\n")
    return ws / "in" / "run"


def submissions(ws: Path, text: str) -> Path:
    """A folder of submissions holding one file, ``m.json``, of ``text``."""
    return write(ws / "in" / "subs" / "m.json", text).parent


def library_file(ws: Path) -> Path:
    return write(
        ws / "in" / "personas.jsonl", "".join(s.persona.model_dump_json() + "\n" for s in demo_scenarios()[:2])
    )


def demo_of_two(ws: Path) -> None:
    """The demo folder of the first 2 embedded demo scenarios."""
    from prefdisco.demo import embedded_selection
    from prefdisco.evaluation.settings.config import scenario_set_hash

    recorded = {"scenario_set": scenario_set_hash(embedded_selection(demo_scenarios())[:2]), "n_scenarios": 2}
    write(ws / "out" / "demo" / "logs" / "run.json", json.dumps(recorded))


def run_of_other_settings(ws: Path) -> None:
    """The run folder of this very scenario set, recorded with another user type."""
    from prefdisco.evaluation.settings.config import scenario_set_hash

    recorded = {"scenario_set": scenario_set_hash(demo_scenarios()[:2]), "user_type": "cooperative"}
    write(ws / "out" / "run" / "run.json", json.dumps(recorded))


CASES = [
    # ---- eval: benchmark files --------------------------------------------------------------------------
    Case("eval-missing-bench", lambda ws: eval_args(ws / "in" / "nope.jsonl", ws), "nope.jsonl"),
    Case(
        "eval-malformed-jsonl-line",
        lambda ws: eval_args(write(ws / "in" / "s.jsonl", scenario_json() + "\n{not json\n"), ws),
        "s.jsonl:2",
    ),
    Case(
        "eval-wrong-field-type",
        lambda ws: eval_args(write(ws / "in" / "s.jsonl", scenario_json(lambda d: d.update(rubric="x")) + "\n"), ws),
        "s.jsonl:1: rubric",
    ),
    Case(
        "eval-weight-0",
        lambda ws: eval_args(write(ws / "in" / "s.jsonl", scenario_json(zero_weight) + "\n"), ws),
        "of weight 0",
    ),
    Case(
        "eval-weights-not-summing-to-1",
        lambda ws: eval_args(write(ws / "in" / "s.jsonl", scenario_json(set_weight) + "\n"), ws),
        "weights must sum to 1",
    ),
    Case(
        "eval-missing-required-field",
        lambda ws: eval_args(write(ws / "in" / "s.jsonl", scenario_json(lambda d: d.pop("persona")) + "\n"), ws),
        "s.jsonl:1: persona",
    ),
    Case(  # issue 35, class 4: a benchmark folder's manifest was read as scenarios ("id: Field required")
        "eval-a-benchmark-folders-manifest",
        lambda ws: eval_args(bench_folder(ws) / "manifest.json", ws),
        "a file of the benchmark folder",
    ),
    Case("eval-empty-jsonl", lambda ws: eval_args(write(ws / "in" / "s.jsonl", "\n"), ws), "no scenarios"),
    Case(
        "eval-duplicate-ids",
        lambda ws: eval_args(write(ws / "in" / "s.jsonl", (scenario_json() + "\n") * 2), ws),
        "duplicate scenario id",
    ),
    Case(
        "eval-folder-without-scenarios",
        lambda ws: eval_args(a_file(ws).parent, ws),
        "no manifest.json or scenarios.jsonl",
    ),
    Case("eval-bench-hash-mismatch", lambda ws: eval_args(tampered_bench(ws), ws), "content_hash"),
    Case(
        "eval-not-utf8",
        lambda ws: eval_args(ws / "in" / "bin.jsonl", ws),
        "bin.jsonl",
        setup=lambda ws: (ws / "in").mkdir(parents=True) or (ws / "in" / "bin.jsonl").write_bytes(b"\xff\xfe\x00{"),
    ),
    # ---- eval: settings and arguments -------------------------------------------------------------------
    Case("eval-unknown-mode", lambda ws: eval_args(good_jsonl(ws), ws, "--modes", "baseline,telepathy"), "telepathy"),
    Case("eval-fixed-k-not-int", lambda ws: eval_args(good_jsonl(ws), ws, "--fixed-k", "two"), "--fixed-k"),
    Case("eval-fixed-k-zero", lambda ws: eval_args(good_jsonl(ws), ws, "--fixed-k", "0"), "--fixed-k"),
    Case("eval-model-arg-no-equals", lambda ws: eval_args(good_jsonl(ws), ws, "-M", "temperature"), "-M"),
    Case("eval-unknown-user-type", lambda ws: eval_args(good_jsonl(ws), ws, "--user-type", "chatty"), "chatty"),
    Case("eval-unknown-judge", lambda ws: eval_args(good_jsonl(ws), ws, "--judge", "vibes"), "vibes"),
    Case("eval-limit-zero", lambda ws: eval_args(good_jsonl(ws), ws, "--limit", "0"), "--limit", kind="usage"),
    # ---- eval: settings no provider or condition can use (issue 35, class 4) --------------------------------------
    Case(
        "eval-max-tokens-zero",
        lambda ws: eval_args(good_jsonl(ws), ws, "--max-tokens", "0"),
        "--max-tokens: expected at least 1",
    ),
    Case(
        "eval-judge-max-tokens-zero",
        lambda ws: eval_args(good_jsonl(ws), ws, "--judge-max-tokens", "0"),
        "--judge-max-tokens: expected at least 1",
    ),
    Case(
        "eval-negative-temperature",
        lambda ws: eval_args(good_jsonl(ws), ws, "--temperature", "-1"),
        "--temperature: expected 0 to 2",
    ),
    Case(
        "eval-user-temperature-above-2",
        lambda ws: eval_args(good_jsonl(ws), ws, "--user-temperature", "2.5"),
        "--user-temperature: expected 0 to 2",
    ),
    Case(
        "eval-model-twice",
        lambda ws: eval_args(good_jsonl(ws), ws, "--model", MOCK),
        "given more than once; each model is evaluated once",
    ),
    Case(
        "eval-distractors-without-their-condition",
        lambda ws: eval_args(good_jsonl(ws), ws, "--distractors", "2"),
        "only oracle_distractor reads it",
    ),
    Case(
        "eval-batch-where-nothing-has-a-batch-api",
        lambda ws: eval_args(good_jsonl(ws), ws, "--batch", "on"),
        "has a batch API inspect drives",
    ),
    Case("eval-batch-size-zero", lambda ws: eval_args(good_jsonl(ws), ws, "--batch", "0"), "batch size is at least 1"),
    Case(
        "eval-batch-unreadable-settings",
        lambda ws: eval_args(good_jsonl(ws), ws, "--batch", str(write(ws / "in" / "batch.json", "{size: 2"))),
        "not a JSON object of batch settings",
    ),
    Case("eval-no-model", lambda ws: ["eval", str(good_jsonl(ws)), "--log-dir", str(ws / "out")], "--model", "usage"),
    Case("eval-unknown-provider", lambda ws: eval_args(good_jsonl(ws), ws, model="nosuch/model"), "nosuch/model"),
    Case(
        "eval-unknown-embedded-model",
        lambda ws: eval_args(good_jsonl(ws), ws, model="prefdisco/no-such-model"),
        "no-such-model",
    ),
    Case(
        "eval-unwritable-log-dir",
        lambda ws: ["eval", str(good_jsonl(ws)), "--model", MOCK, "--log-dir", str(a_file(ws) / "run")],
        "--log-dir",
    ),
    Case(
        "eval-log-dir-of-another-run",
        lambda ws: eval_args(good_jsonl(ws), ws),
        "different scenario set",
        setup=lambda ws: write(ws / "out" / "run" / "run.json", json.dumps({"scenario_set": "0123456789abcdef"})),
    ),
    Case(
        "eval-log-dir-with-other-settings",
        lambda ws: eval_args(good_jsonl(ws), ws),
        'user_type = "cooperative", not "passive"',
        setup=run_of_other_settings,
    ),
    Case(
        "eval-corrupt-run-json",
        lambda ws: eval_args(good_jsonl(ws), ws),
        "run.json",
        setup=lambda ws: write(ws / "out" / "run" / "run.json", '{"scenario_set": '),
    ),
    Case(
        "eval-log-dir-with-truncated-log",
        lambda ws: eval_args(good_jsonl(ws), ws),
        ".eval",
        setup=resumable_run_with_truncated_log,
    ),
    # ---- eval: environment ------------------------------------------------------------------------------
    Case("env-missing-api-key", lambda ws: eval_args(good_jsonl(ws), ws), "MOCK_API_KEY", env={"MOCK_API_KEY": None}),
    Case(
        "env-missing-base-url", lambda ws: eval_args(good_jsonl(ws), ws), "MOCK_BASE_URL", env={"MOCK_BASE_URL": None}
    ),
    # ---- demo -------------------------------------------------------------------------------------------
    Case("demo-limit-zero", lambda ws: ["demo", "--out", str(ws / "out" / "demo"), "--limit", "0"], "--limit", "usage"),
    Case(
        "demo-unwritable-out",
        lambda ws: ["demo", "--out", str(a_file(ws) / "demo"), "--limit", "1", "--display", "none"],
        "plain.txt",
    ),
    # ---- publish ----------------------------------------------------------------------------------------
    Case(
        "publish-unbuilt-folder",
        lambda ws: ["publish", str(unbuilt_folder(ws)), "--out", str(ws / "out" / "pub")],
        "not a built benchmark (no manifest.json)",
    ),
    Case(
        "publish-hash-mismatch",
        lambda ws: ["publish", str(tampered_bench(ws)), "--out", str(ws / "out" / "pub")],
        "content_hash",
    ),
    Case(
        "publish-out-holds-files",
        lambda ws: ["publish", str(bench_folder(ws)), "--out", str(out_with_a_file(ws))],
        "holds 1 entry; give --overwrite",
    ),
    Case(
        "publish-out-is-the-bench",
        lambda ws: ["publish", str(bench_folder(ws)), "--out", str(ws / "in" / "bench" / "pub"), "--overwrite"],
        "the benchmark folder",
    ),
    Case(
        "publish-a-published-folder",
        lambda ws: ["publish", str(published_folder(ws)), "--out", str(ws / "out" / "pub")],
        "already a published folder",
    ),
    Case(
        "build-out-holds-a-published-benchmark",
        lambda ws: ["build", "--benchmark", "mmlu", "--model", "mockllm/model", "--out", str(published_folder(ws))],
        "holds a published benchmark of 2 scenarios; give --overwrite",
    ),
    Case(
        "eval-log-dir-is-a-published-folder",  # the run's logs would be uploaded with the dataset
        lambda ws: ["eval", str(good_jsonl(ws)), "--model", MOCK, "--log-dir", str(published_folder(ws))],
        "holds a published benchmark of 2 scenarios, not a run; use a --log-dir outside it",
    ),
    Case(
        "eval-log-dir-inside-a-published-folder",
        lambda ws: eval_args(published_folder(ws), ws / "in" / "published"),
        "is inside",
    ),
    Case(
        "eval-log-dir-is-a-benchmark-folder",
        lambda ws: ["eval", str(good_jsonl(ws)), "--model", MOCK, "--log-dir", str(bench_folder(ws))],
        "holds a benchmark of 2 scenarios, not a run",
    ),
    Case(
        "eval-published-hash-mismatch",
        lambda ws: eval_args(tampered_published(ws), ws),
        "does not match prefdisco/manifest.json's",
    ),
    Case(
        "validate-published-hash-mismatch",
        lambda ws: ["validate", str(tampered_published(ws))],
        "does not match the published data",
        kind="report",
    ),
    # ---- validate ---------------------------------------------------------------------------------------
    Case("validate-missing-path", lambda ws: ["validate", str(ws / "in" / "nope.jsonl")], "nope.jsonl"),
    Case(
        "validate-malformed-line",
        lambda ws: ["validate", str(write(ws / "in" / "s.jsonl", scenario_json() + "\n{oops\n"))],
        "s.jsonl:2",
        kind="report",
    ),
    Case(
        "validate-bad-weights",
        lambda ws: ["validate", str(write(ws / "in" / "s.jsonl", scenario_json(set_weight) + "\n"))],
        "weights",
        kind="report",
    ),
    Case(
        "validate-weight-0",
        lambda ws: ["validate", str(write(ws / "in" / "s.jsonl", scenario_json(zero_weight) + "\n"))],
        "adds nothing to PrefAlign but is still judged",
        kind="report",
    ),
    Case(
        "validate-results-table",
        lambda ws: ["validate", str(results_table(ws))],
        "results.csv: the results table of a run (a row per scenario and condition), not a benchmark; its report: "
        "prefdisco report",
    ),
    Case(
        "validate-raw-benchmark-rows",
        lambda ws: ["validate", str(raw_rows(ws))],
        "test.jsonl: rows of the math500 benchmark as its Hugging Face dataset serves them, not a benchmark; build "
        "one from them: prefdisco build --benchmark math500 --source",
    ),
    # ---- import-release / export-release ----------------------------------------------------------------
    Case(
        "import-release-missing-file",
        lambda ws: ["import-release", str(ws / "in" / "nope.jsonl"), "--out", str(ws / "out" / "bench")],
        "nope.jsonl",
    ),
    Case(
        "import-release-malformed-json",
        lambda ws: [
            "import-release",
            str(write(ws / "in" / "r.jsonl", '{"type": "metadata"\n')),
            "--out",
            str(ws / "out" / "b"),
        ],
        "r.jsonl:1",
    ),
    Case(
        "import-release-not-a-release-file",
        lambda ws: ["import-release", str(good_jsonl(ws)), "--out", str(ws / "out" / "bench")],
        "scenarios.jsonl",
    ),
    Case(
        "import-release-record-missing-key",
        lambda ws: [
            "import-release",
            str(
                write(
                    ws / "in" / "r.jsonl",
                    RELEASE.read_text().splitlines()[0] + "\n" + json.dumps({"type": "personalized_problem"}) + "\n",
                )
            ),
            "--out",
            str(ws / "out" / "bench"),
        ],
        "r.jsonl:2",
    ),
    Case(
        "import-release-unwritable-out",
        lambda ws: ["import-release", str(RELEASE), "--out", str(a_file(ws) / "bench")],
        "plain.txt",
    ),
    Case(
        "export-release-missing-bench",
        lambda ws: ["export-release", str(ws / "in" / "nope"), "--out", str(ws / "out" / "r.jsonl")],
        "nope",
    ),
    Case(
        "export-release-unwritable-out",
        lambda ws: ["export-release", str(good_jsonl(ws)), "--out", str(a_file(ws) / "r.jsonl")],
        "plain.txt",
    ),
    # ---- report -----------------------------------------------------------------------------------------
    Case(
        "report-missing-results",
        lambda ws: ["report", str(ws / "in" / "results.csv"), "--out", str(ws / "out" / "rep")],
        "results.csv",
    ),
    Case(
        "report-results-missing-columns",
        lambda ws: [
            "report",
            str(write(ws / "in" / "results.csv", "model,score\na,1\n")),
            "--out",
            str(ws / "out" / "rep"),
        ],
        "results.csv",
    ),
    Case(
        "report-truncated-log",
        lambda ws: ["report", str(truncated_log(ws)), "--out", str(ws / "out" / "rep")],
        ".eval",
    ),
    Case(
        "report-negative-bootstrap",
        lambda ws: ["report", str(ws / "in"), "--out", str(ws / "out" / "rep"), "--bootstrap", "-1"],
        "--bootstrap",
        "usage",
    ),
    Case(  # issue 49: `report --out RUN` mixed 31 report files into the run folder
        "report-out-is-the-run",
        lambda ws: ["report", str(a_run(ws)), "--out", str(a_run(ws))],
        "is the run folder",
    ),
    Case(
        "report-out-beside-its-table",
        lambda ws: ["report", str(a_run(ws) / "results.csv"), "--out", str(a_run(ws))],
        "is the folder of",
    ),
    Case(  # issue 49: three resamples printed intervals as if they meant something
        "report-too-few-resamples",
        lambda ws: ["report", str(ws / "in"), "--out", str(ws / "out" / "rep"), "--bootstrap", "3"],
        "--bootstrap 3: too few resamples for a 95 % percentile interval",
    ),
    Case(
        "leaderboard-too-few-resamples",
        lambda ws: ["leaderboard", str(ws / "in"), "--out", str(ws / "out" / "lb"), "--bootstrap", "199"],
        "give at least 200, or 0 for no interval",
    ),
    # ---- submit / leaderboard --submissions (issue 48, item 3) ------------------------------------------------
    Case(
        "submit-no-run",
        lambda ws: ["submit", str(ws / "in" / "nothing"), "--out", str(ws / "out" / "subs")],
        "no such run folder",
    ),
    Case(  # a results table alone names no benchmark and no protocol: nothing to submit under
        "submit-run-without-protocol",
        lambda ws: ["submit", str(a_run(ws)), "--out", str(ws / "out" / "subs")],
        "no protocol.json",
    ),
    Case(  # a folder of submissions is read whole: the run's own JSON files would be read as submissions
        "submit-out-is-the-run",
        lambda ws: ["submit", str(a_run(ws)), "--out", str(a_run(ws))],
        "is the run folder",
    ),
    Case(
        "submit-too-few-resamples",
        lambda ws: ["submit", str(a_run(ws)), "--out", str(ws / "out" / "subs"), "--bootstrap", "199"],
        "give at least 200, or 0 for no interval",
    ),
    Case(
        "leaderboard-runs-and-submissions",
        lambda ws: ["leaderboard", str(a_run(ws)), "--submissions", str(ws / "in"), "--out", str(ws / "out" / "lb")],
        "give run folders or --submissions DIR, not both",
    ),
    Case(
        "leaderboard-submissions-not-a-folder",
        lambda ws: ["leaderboard", "--submissions", str(a_file(ws)), "--out", str(ws / "out" / "lb")],
        "not a folder (give the --out of prefdisco submit)",
    ),
    Case(
        "leaderboard-submissions-none",
        lambda ws: ["leaderboard", "--submissions", str(a_run(ws)), "--out", str(ws / "out" / "lb")],
        "holds no submission (*.json)",
    ),
    Case(
        "leaderboard-submission-not-json",
        lambda ws: ["leaderboard", "--submissions", str(submissions(ws, "{\n")), "--out", str(ws / "out" / "lb")],
        "m.json: line 2: not JSON",
    ),
    Case(
        "leaderboard-submission-of-another-format",
        lambda ws: ["leaderboard", "--submissions", str(submissions(ws, '{"format": "x"}')), "--out", str(ws / "lb")],
        "not a PrefDisco submission (format 'x', expected 'prefdisco-submission/1')",
    ),
    Case(
        "calibrate-too-few-resamples",
        lambda ws: ["calibrate", "--human", str(ws / "in" / "r.csv"), "--run", str(ws / "in"), "--bootstrap", "3"],
        "--bootstrap 3",
    ),
    # ---- build / personas -------------------------------------------------------------------------------
    Case(
        "build-unknown-benchmark",
        lambda ws: ["build", "--benchmark", "nosuchbench", "--out", str(ws / "out" / "b"), "--model", MOCK],
        "nosuchbench",
    ),
    Case(
        "build-no-model",
        lambda ws: ["build", "--benchmark", "math500", "--out", str(ws / "out" / "b"), "--source", str(ws / "in")],
        "model",
    ),
    Case(  # issue 35, class 4: the dry run passed without --model, the build then refused
        "build-dry-run-no-model",
        lambda ws: [
            "build",
            "--benchmark",
            "mmlu",
            "--out",
            str(ws / "out" / "b"),
            "--source",
            str(SHARED / "data" / "benchmarks" / "mmlu" / "test.jsonl"),
            "--problems",
            "1",
            "--dry-run",
        ],
        "--model: give at least one model",
    ),
    Case(
        "build-missing-source",
        lambda ws: [
            "build",
            "--benchmark",
            "math500",
            "--out",
            str(ws / "out" / "b"),
            "--model",
            MOCK,
            "--source",
            str(ws / "in" / "nope.jsonl"),
        ],
        "nope.jsonl",
    ),
    Case(
        "build-attribute-bounds-reversed",
        lambda ws: [
            "build",
            "--benchmark",
            "math500",
            "--out",
            str(ws / "out" / "b"),
            "--model",
            MOCK,
            "--min-attributes",
            "6",
            "--max-attributes",
            "3",
        ],
        "attributes",
    ),
    Case(
        "build-generic-without-map",
        lambda ws: [
            "build",
            "--benchmark",
            "generic",
            "--out",
            str(ws / "out" / "b"),
            "--model",
            MOCK,
            "--source",
            str(good_jsonl(ws)),
        ],
        "--map",
    ),
    Case(
        "personas-zero",
        lambda ws: ["personas", "--out", str(ws / "out" / "p.jsonl"), "--model", MOCK, "--n", "0"],
        "--n",
        "usage",
    ),
    Case("personas-no-model", lambda ws: ["personas", "--out", str(ws / "out" / "p.jsonl")], "model"),
    # ---- an --out that holds something (issue 26: nothing overwritten without --overwrite) ----------------
    Case(
        "build-out-holds-a-benchmark",
        lambda ws: ["build", "--benchmark", "math500", "--out", str(bench_folder(ws)), "--model", MOCK],
        "holds a benchmark of 2 scenarios; give --overwrite",
    ),
    Case(
        "personas-out-holds-a-library",
        lambda ws: ["personas", "--out", str(library_file(ws)), "--model", MOCK, "--n", "2"],
        "holds a persona library of 2 personas; give --overwrite",
    ),
    Case(
        "import-release-out-holds-a-benchmark",
        lambda ws: ["import-release", str(RELEASE), "--out", str(bench_folder(ws))],
        "holds a benchmark of 2 scenarios; give --overwrite",
    ),
    Case(
        "export-release-out-is-a-benchmark-file",
        lambda ws: ["export-release", str(good_jsonl(ws)), "--out", str(bench_folder(ws) / "scenarios.jsonl")],
        "holds the scenarios.jsonl of the benchmark folder",
    ),
    Case(
        "demo-out-of-another-limit",
        lambda ws: ["demo", "--out", str(ws / "out" / "demo"), "--limit", "3", "--display", "none"],
        "holds the demo of 2 scenarios, not these 3; give another --out",
        setup=demo_of_two,
    ),
    # ---- annotate ---------------------------------------------------------------------------------------
    Case(
        "annotate-export-missing-db",
        lambda ws: ["annotate", "export", "--db", str(ws / "in" / "a.db"), "--out", str(ws / "out" / "l.csv")],
        "a.db",
    ),
    Case("annotate-stats-no-source", lambda ws: ["annotate", "stats"], "--db"),
    Case(
        "annotate-stats-bad-csv",
        lambda ws: ["annotate", "stats", "--from", str(write(ws / "in" / "labels.csv", "who,what\nx,y\n"))],
        "labels.csv",
    ),
    # ---- issue 49, findings 7 and 8: inspect's internals and files left; nonsense accepted in silence ------------
    Case(
        "eval-mode-twice",  # inspect's "task not distinct … @solver decorator", six files written
        lambda ws: eval_args(good_jsonl(ws), ws, "--modes", "baseline,baseline"),
        "--modes: baseline given more than once",
    ),
    Case("eval-fixed-k-twice", lambda ws: eval_args(good_jsonl(ws), ws, "--fixed-k", "2,2"), "--fixed-k: 2 given"),
    Case(
        "eval-log-dir-empty",  # Path("") is the current folder: seven files and a 3 MB logs.json written there
        lambda ws: ["eval", str(good_jsonl(ws)), "--model", MOCK, "--log-dir", "", "--display", "none"],
        "an empty path",
        "usage",
        setup=lambda ws: os.chdir(ws),  # the current folder is the workspace, whose files are compared
    ),
    Case(
        "build-out-empty",
        lambda ws: ["build", "--benchmark", "math500", "--out", "", "--model", MOCK],
        "empty",
        "usage",
    ),
    Case("report-results-empty", lambda ws: ["report", "", "--out", str(ws / "out" / "r")], "an empty path", "usage"),
    Case(
        "eval-model-trailing-space",  # became a model of its own: another cache, another row label
        lambda ws: eval_args(good_jsonl(ws), ws, model=MOCK + " "),
        "has white space at its end",
    ),
    Case(
        "eval-judge-model-trailing-space",
        lambda ws: eval_args(good_jsonl(ws), ws, "--judge-model", " " + MOCK),
        "--judge-model: ",
    ),
    Case(
        "build-model-trailing-space",
        lambda ws: ["build", "--benchmark", "math500", "--out", str(ws / "out" / "b"), "--model", MOCK + " "],
        "has white space at its end",
    ),
]


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture(scope="module")
def app():
    cli._register()
    return cli.app


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    monkeypatch.setenv("MOCK_BASE_URL", "http://127.0.0.1:9/v1")  # never contacted: every case fails first
    monkeypatch.setenv("MOCK_API_KEY", "sk-test-unused")
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))
    monkeypatch.chdir(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, app, workspace: Path, monkeypatch):
    for key, value in case.env.items():
        if value is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, value)
    if case.setup:
        case.setup(workspace)
    # a model name of its own per case: inspect memoizes models by name, and a model resolved by an earlier
    # case would hide this case's environment problem
    args = [a.replace(MOCK, f"{MOCK}-{case.id}") for a in case.args(workspace)]  # also builds the inputs
    before = tree(workspace)

    result = CliRunner().invoke(app, args)

    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output
    error = result.exception
    assert error is None or isinstance(error, SystemExit), f"uncaught {error!r}"
    if case.kind == "user":  # a UserError: one `error: ...` line on stderr, exit 2
        lines = result.stderr.strip().splitlines()
        assert result.exit_code == 2 and len(lines) == 1, result.output
        assert lines[0].startswith("error: ") and case.expect in lines[0], lines[0]
    elif case.kind == "usage":  # click's own usage error, exit 2
        assert result.exit_code == 2 and "Error" in result.stderr and case.expect in result.stderr, result.output
    else:  # validate's own report: every problem as path:line: message, exit 1
        assert result.exit_code == 1 and case.expect in result.output, result.output
    assert tree(workspace) == before, f"files written: {sorted(tree(workspace) - before)}"


def run_main(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "prefdisco", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **env},
    )


@pytest.mark.slow
def test_real_process_prints_one_error_line(tmp_path):
    """Exit code 2 and exactly one ``error:`` line on stderr from the installed entry point."""
    bad = write(tmp_path / "s.jsonl", scenario_json() + "\n{not json\n")
    env = {"MOCK_BASE_URL": "http://127.0.0.1:9/v1", "MOCK_API_KEY": "sk-x", "INSPECT_CACHE_DIR": str(tmp_path / "c")}
    result = run_main("eval", str(bad), "--model", MOCK, "--log-dir", str(tmp_path / "run"), env=env)
    assert result.returncode == 2
    expected = f"error: {bad}:2: invalid JSON: Expecting property name enclosed in double quotes at column 2"
    assert result.stderr.strip().splitlines() == [expected]
    assert not (tmp_path / "run").exists()

    env.pop("MOCK_API_KEY")
    clean = {k: v for k, v in os.environ.items() if k != "MOCK_API_KEY"}
    result = subprocess.run(
        [sys.executable, "-m", "prefdisco", "eval", str(RELEASE), "--model", MOCK, "--log-dir", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**clean, **env},
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "MOCK_API_KEY" in lines[0], result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "run").exists()


def _commands(command, path=()):  # type: ignore[no-untyped-def]
    """Every (path, command) of the CLI, sub-commands included (typer's click classes)."""
    if hasattr(command, "commands"):
        for name, sub in command.commands.items():
            yield from _commands(sub, (*path, name))
    else:
        yield path, command


def test_every_command_ends_bad_input_in_a_message_never_a_traceback(app, tmp_path: Path, monkeypatch):
    """Issue 35, class 3: a sweep of every command the CLI has (a new one is swept without a new line here), each
    given nonexistent paths for its required arguments and options, and an unknown flag: a non-zero exit with a
    message, never an exception escaping the command (a traceback), and nothing written where it ran. ``demo``
    needs no input (it would run), so it is given ``--limit 0``."""
    import typer.main

    monkeypatch.chdir(tmp_path)
    swept = []
    for path, command in _commands(typer.main.get_command(app)):
        argv = list(path)
        for param in command.params:
            if param.required:
                value = [str(tmp_path / "nowhere" / "in")] * max(param.nargs, 1)
                argv += value if type(param).__name__.endswith("Argument") else [param.opts[0], *value]
        if path == ("demo",):
            argv += ["--limit", "0"]
        for args in (argv, [*argv, "--no-such-flag"]):
            result = CliRunner().invoke(app, args)
            escaped = result.exception if not isinstance(result.exception, SystemExit) else None
            assert escaped is None, (args, repr(escaped))
            assert result.exit_code != 0 and "Traceback" not in result.output, (args, result.output)
            assert result.output.strip(), args  # said why
        swept.append(" ".join(path))
    assert {"eval", "report", "leaderboard", "simfidelity", "annotate serve-play", "env serve"} <= set(swept)
    assert list(tmp_path.iterdir()) == []  # nothing written
