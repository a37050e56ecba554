"""Results that travel (issue 48, item 3): ``prefdisco submit`` writes one submission per model in the shipped format
(``schemas/submission.schema.json``), and ``prefdisco leaderboard --submissions DIR`` ranks a folder of them.

On the leaderboard world (``tests/leaderboard_world.py``: good, fair and poor on one benchmark and the default
protocol; late, good again with its simulated user at temperature 1.0): a submission validates against the shipped
schema (checked here with jsonschema's own 2020-12 validator, not the package's check) and carries the numbers of the
report of the same run, key by key; a board rebuilt from submissions is the leaderboard of the runs, byte for byte;
a submission of another benchmark or protocol is refused in one line with nothing written.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pandas as pd
import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

import prefdisco
from prefdisco.schema import CONDITIONS
from prefdisco.version import __version__

SCHEMA = Path(prefdisco.__file__).parent / "analysis" / "leaderboard" / "schemas" / "submission.schema.json"
REPO = Path(__file__).resolve().parents[1]
FLAGS = ("--seed", "3", "--bootstrap", "400")


@pytest.fixture
def lb(leaderboard_runs):
    import prefdisco.cli as cli

    cli._register()
    folder, port = leaderboard_runs
    return cli.app, folder, port


def invoke(app, *args: str):
    return CliRunner().invoke(app, list(args))


def submit(app, out: Path, *runs: Path) -> dict[str, dict]:
    """``prefdisco submit RUNS --out OUT``; model → its submission."""
    made = invoke(app, "submit", *map(str, runs), "--out", str(out), *FLAGS)
    assert made.exit_code == 0, made.output
    found = [json.loads(p.read_text()) for p in sorted(out.glob("*.json"))]
    return {s["model"]: s for s in found}


def one_line_refusal(result, *expected: str) -> None:
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), result.output
    for text in expected:
        assert text in lines[0], lines[0]


def test_a_submission_validates_and_carries_the_reports_figures_key_by_key(lb, tmp_path):
    app, base, port = lb
    model = f"openai-api/mock/good{port}"
    sub = submit(app, tmp_path / "subs", base / "good")[model]
    report = invoke(app, "report", str(base / "good"), "--out", str(tmp_path / "rep"), "--no-figures", *FLAGS)
    assert report.exit_code == 0, report.output
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())

    schema = json.loads(SCHEMA.read_text())
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert not list(Draft202012Validator(schema).iter_errors(sub))

    # what the numbers are of: the benchmark file the run was given, its protocol as settled, the version
    scenarios_file = base / "scenarios.jsonl"
    assert sub["benchmark"]["content_hash"] == "sha256:" + hashlib.sha256(scenarios_file.read_bytes()).hexdigest()
    run_json = json.loads((base / "good" / "run.json").read_text())
    assert sub["benchmark"]["scenario_set"] == run_json["scenario_set"] and sub["benchmark"]["n_scenarios"] == 8
    assert {"run": str(base / "good"), **sub["protocol"]} == summary["protocols"][0]
    assert sub["protocol"]["id"] == summary["protocol_id"] == "default-v1.0" and sub["standard_protocol"]
    assert sub["simulated_user"] == {"type": "passive", "model": f"openai-api/mock/m{port}", "reference_fidelity": None}
    assert sub["judges"] == {"models": [f"openai-api/mock/m{port}"], "kind": "per_criterion", "repeats": 1,
                             "temperature": 0.0}  # fmt: skip
    assert sub["prefdisco_version"] == __version__ and sub["bootstrap"] == {"seed": 3, "resamples": 400}
    assert sub["trials"] == {"epochs": 1, **summary["trials"]}
    assert sub["non_answers"] == summary["non_answers"][model]
    assert sub["caveats"] == [c for c in summary["caveats"] if c in sub["caveats"]]

    # the report's figures, key by key, per task
    cells = pd.read_csv(tmp_path / "rep" / "table1_normalign.csv").set_index("task")
    assert sorted(sub["rankings"]) == sorted(["overall", *summary["tasks"]]) and summary["tasks"] == ["alpha", "beta"]
    for task in summary["tasks"]:
        got = sub["rankings"][task]
        assert got["normalign"]["value"] == summary["normalign"][model][task]
        assert [got["normalign"]["low"], got["normalign"]["high"]] == summary["normalign_ci"][model][task]
        assert got["n_scenarios"] == summary["n_scenarios"][model][task]
        assert got["normalign_scenarios"] == summary["normalign_scenarios"][model][task]
        for m in CONDITIONS:
            acc = got["accuracy"][m]
            assert acc["value"] == summary["accuracy"][model][task][m]
            assert [acc["low"], acc["high"]] == summary["accuracy_ci"][model][task][m]
            assert acc["n"] == summary["accuracy_n"][model][task][m]
        pref = got["pref_align"]
        assert [pref["baseline"], pref["discovery"], pref["oracle"]["value"]] == [
            cells.loc[task, f"mean_{m}"] for m in CONDITIONS
        ]
        for measure, by_condition in summary["harms"][model][task].items():
            for condition, h in by_condition.items():
                want = {"value": h["value"], "low": h["ci_low"], "high": h["ci_high"]}
                assert got["harms"][f"{measure}[{condition}]"] == want
        costs = [c["usd_per_scenario"] for c in summary["cost"][model][task].values()]
        assert got["usd_per_scenario"] == (None if None in costs else sum(costs))  # no price in the mock: None
    overall = sub["rankings"]["overall"]
    for m in CONDITIONS:
        assert overall["accuracy"][m]["value"] == summary["accuracy_overall"][model][m]
        interval = [overall["accuracy"][m]["low"], overall["accuracy"][m]["high"]]
        assert interval == summary["accuracy_overall_ci"][model][m]
    assert overall["mean_questions"] == summary["mean_questions"][model] == 2.0
    per_scenario = pd.read_csv(tmp_path / "rep" / "table_normalign_per_scenario.csv", dtype={"scenario_id": str})
    assert sub["scenarios"] == per_scenario[["task", "scenario_id", *CONDITIONS]].to_dict("records")


def test_a_board_of_submissions_ranks_as_the_leaderboard_of_the_runs(lb, tmp_path):
    """Two submission folders' worth put in one (good and poor from one call, fair from another): the board is the
    leaderboard of the three runs, every number of leaderboard.csv and pairwise.csv the same, byte for byte."""
    app, base, port = lb
    subs = tmp_path / "subs"
    submit(app, subs, base / "good", base / "poor")
    submit(app, subs, base / "fair")
    runs = [str(base / n) for n in ("fair", "good", "poor")]
    assert invoke(app, "leaderboard", *runs, "--out", str(tmp_path / "of-runs"), *FLAGS).exit_code == 0
    made = invoke(app, "leaderboard", "--submissions", str(subs), "--out", str(tmp_path / "of-subs"))
    assert made.exit_code == 0, made.output
    for name in ("leaderboard.csv", "pairwise.csv"):
        assert (tmp_path / "of-subs" / name).read_bytes() == (tmp_path / "of-runs" / name).read_bytes(), name
    table = pd.read_csv(tmp_path / "of-subs" / "leaderboard.csv")
    overall = table[table["task"] == "overall"].set_index("model")
    good, fair, poor = (f"openai-api/mock/{m}{port}" for m in ("good", "fair", "poor"))
    assert overall.loc[good, "rank"] == 1 and overall.loc[good, "group"] == 1
    assert set(overall.loc[[fair, poor], "group"]) == {2}
    html = (tmp_path / "of-subs" / "leaderboard.html").read_text()
    assert "protocol <code>default-v1.0</code>" in html and str(subs / "openai-api_mock_fair") in html
    assert f"1. {good} (group 1): NormAlign 100.0 [100.0, 100.0]" in made.output
    again = invoke(app, "leaderboard", "--submissions", str(subs), "--out", str(tmp_path / "x"), "--seed", "4")
    one_line_refusal(again, "--seed 4: the submissions in", "were made with --seed 3")


def test_a_submission_of_another_protocol_or_benchmark_is_refused_in_one_line(lb, tmp_path):
    app, base, _port = lb
    late = submit(app, tmp_path / "late", base / "late")  # good with its simulated user at temperature 1.0
    subs = tmp_path / "subs"
    submit(app, subs, base / "fair")
    mixed = subs / "zz-late.json"  # read after fair's: the refusal names fair's protocol first
    mixed.write_text(json.dumps(next(iter(late.values()))))
    out = tmp_path / "board"
    refused = invoke(app, "leaderboard", "--submissions", str(subs), "--out", str(out))
    one_line_refusal(refused, "ran different protocols (user_temperature 0.7 vs 1.0)", str(mixed), "--allow-mixed")
    assert not out.exists()
    allowed = invoke(app, "leaderboard", "--submissions", str(subs), "--out", str(out), "--allow-mixed")
    assert allowed.exit_code == 0, allowed.output
    assert "Mixed protocols" in (out / "leaderboard.html").read_text()

    mixed.unlink()
    fair = next(subs.glob("*.json"))
    other = json.loads(fair.read_text())
    other |= {"model": "openai-api/mock/other"}
    other["benchmark"]["content_hash"] = "sha256:" + "0" * 64  # the same protocol, another benchmark file
    (subs / "other.json").write_text(json.dumps(other))
    refused = invoke(app, "leaderboard", "--submissions", str(subs), "--out", str(tmp_path / "b2"))
    one_line_refusal(refused, "are submissions of different benchmarks", "sha256:" + "0" * 64)
    refused = invoke(app, "leaderboard", "--submissions", str(subs), "--out", str(tmp_path / "b2"), "--allow-mixed")
    one_line_refusal(refused, "are submissions of different benchmarks")  # --allow-mixed mixes protocols only
    assert not (tmp_path / "b2").exists()

    del other["judges"]  # not a submission the schema describes: the file and the place named
    (subs / "other.json").write_text(json.dumps(other))
    refused = invoke(app, "leaderboard", "--submissions", str(subs), "--out", str(tmp_path / "b3"))
    one_line_refusal(refused, f"{subs / 'other.json'}: the top level: 'judges' is a required property")
    assert not (tmp_path / "b3").exists()


def test_submit_refuses_a_run_without_the_benchmarks_hash_and_an_out_holding_its_files(lb, tmp_path):
    app, base, port = lb
    older = tmp_path / "older"
    record = json.loads((base / "good" / "protocol.json").read_text())
    older.mkdir()
    for name in ("results.csv", "run.json"):
        (older / name).write_bytes((base / "good" / name).read_bytes())
    (older / "protocol.json").write_text(json.dumps({k: v for k, v in record.items() if k != "benchmark"}))
    refused = invoke(app, "submit", str(older), "--out", str(tmp_path / "subs"))
    one_line_refusal(refused, "records no benchmark content hash", "rerun its prefdisco eval")
    assert not (tmp_path / "subs").exists()

    subs = tmp_path / "subs"
    submit(app, subs, base / "good")
    before = {p.name: p.read_bytes() for p in subs.iterdir()}
    again = invoke(app, "submit", str(base / "good"), "--out", str(subs))
    one_line_refusal(again, f"openai-api_mock_good{port}.json", "give --overwrite to replace it")
    assert {p.name: p.read_bytes() for p in subs.iterdir()} == before
    twice = invoke(app, "submit", str(base / "good"), str(base / "late"), "--out", str(tmp_path / "both"))
    one_line_refusal(twice, "both hold", "give each run to its own --out")
    assert not (tmp_path / "both").exists()


@pytest.mark.slow  # a reference run, two submissions and two boards: about 10 s
def test_a_submission_names_its_simulated_users_fidelity_against_people_where_it_was_measured(tmp_path):
    """``--reference-table``: the simulated user's reference fidelity is ``reference.csv``'s row of the simulator
    whose whole user protocol the run records (``passive@scripted/ref-a``, measured by the reference run of
    ``tests/test_reference.py``'s planted people), with its interval and what it was measured against; the board of
    submissions says it in its protocol box as the board of the run does given the table. A simulator the table did
    not measure: null."""
    import prefdisco.cli as cli
    from prefdisco.evaluation.protocol.protocols import record_of
    from prefdisco.evaluation.settings.config import RunConfig
    from prefdisco.results.protocol_record import write_record
    from test_reference import simfidelity, write_qulac
    from test_report import make_run_dir

    cli._register()
    write_qulac(tmp_path / "qulac.json")
    assert simfidelity(tmp_path).exit_code == 0  # reference run: --out tmp_path/out
    reference = pd.read_csv(tmp_path / "out" / "reference.csv").set_index("simulator")
    run = make_run_dir(tmp_path / "run")
    benchmark = "sha256:" + "1" * 64
    record = record_of(RunConfig(), "scripted/ref-a", ["j"], None, benchmark=benchmark)
    write_record(run, record)
    ref = ("--reference-table", str(tmp_path / "out"))
    made = invoke(cli.app, "submit", str(run), "--out", str(tmp_path / "subs"), "--bootstrap", "0", *ref)
    assert made.exit_code == 0, made.output
    subs = [json.loads(p.read_text()) for p in sorted((tmp_path / "subs").glob("*.json"))]
    assert len(subs) >= 2 and all(s["benchmark"]["content_hash"] == benchmark for s in subs)
    row = reference.loc["passive@scripted/ref-a"]
    for sub in subs:
        fidelity = sub["simulated_user"]["reference_fidelity"]
        got = [fidelity["value"], fidelity["low"], fidelity["high"]]
        assert got == [row["reference_fidelity"], row["reference_fidelity_low"], row["reference_fidelity_high"]]
        assert fidelity["against"].startswith("qulac") and fidelity["reading"].startswith("passive@scripted/ref-a: ")

    board = invoke(cli.app, "leaderboard", "--submissions", str(tmp_path / "subs"), "--out", str(tmp_path / "b"))
    assert board.exit_code == 0, board.output
    of_run = invoke(cli.app, "leaderboard", str(run), "--out", str(tmp_path / "r"), "--bootstrap", "0", *ref)
    assert of_run.exit_code == 0, of_run.output

    def box(folder: Path) -> str:
        page = (folder / "leaderboard.html").read_text()
        return page.split('id="protocol"', 1)[1].split("</div>", 1)[0]

    assert "reference fidelity 0.870 [" in box(tmp_path / "r")
    said = box(tmp_path / "r").split(" · run", 1)[0]  # the protocol, its simulator with its fidelity, its judges
    assert box(tmp_path / "b").split(" · run", 1)[0] == said

    write_record(run, record_of(RunConfig(), "scripted/unmeasured", ["j"], None, benchmark=benchmark))
    again = invoke(cli.app, "submit", str(run), "--out", str(tmp_path / "s2"), "--bootstrap", "0", *ref)
    assert again.exit_code == 0, again.output
    assert all(
        json.loads(p.read_text())["simulated_user"]["reference_fidelity"]["value"] is None
        for p in (tmp_path / "s2").glob("*.json")
    )


def test_the_schema_is_one_file_shipped_as_package_data():
    """An installed prefdisco carries the schema (``submit`` and ``leaderboard --submissions`` check against it):
    its path inside the package matches a ``package-data`` pattern of pyproject.toml, and the repository holds no
    second copy to drift from it."""
    data = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["prefdisco"]
    inside = SCHEMA.relative_to(Path(prefdisco.__file__).parent).as_posix()
    assert any(fnmatch(inside, pattern) for pattern in data), (inside, data)
    copies = [p for p in REPO.rglob("submission.schema.json") if ".venv" not in p.parts]
    assert copies == [REPO / "src" / "prefdisco" / inside]


def test_a_standard_protocol_is_one_the_toolkit_ships():
    """``standard_protocol`` is read from the id by its name (analysis/ and evaluation/ sit on one floor and neither
    imports the other): every shipped protocol's name is one of those, and no custom or human id starts with one."""
    from prefdisco.analysis.leaderboard.submission import STANDARD
    from prefdisco.evaluation.protocol.protocols import SHIPPED

    assert {s.id.rsplit("-v", 1)[0] + "-" for s in SHIPPED} == set(STANDARD)
    assert not any(name.startswith(("custom-", "human-")) for name in STANDARD)
