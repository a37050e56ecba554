"""``prefdisco demo --model M``: the demo with another model in every role ends with the HTML report's path and
no plumbing note (the embedded run's note is checked by the embedded test); its console prints the caveats its
report shows at the top (the rule itself: ``tests/test_report_caveats.py``)."""

from __future__ import annotations

import csv
import json

from typer.testing import CliRunner

import prefdisco.cli as cli
from mock_openai import MockOpenAI
from prefdisco.analysis.report.caveats import PLUMBING_NOTE


def test_demo_with_another_model_writes_the_report_and_prints_its_path(tmp_path, monkeypatch) -> None:
    cli._register()
    out = tmp_path / "demo"
    with MockOpenAI() as mock:
        for key, value in mock.env("mock").items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
        model = f"openai-api/mock/m{mock.port}"
        args = ["demo", "--out", str(out), "--limit", "2", "--display", "none", "--model", model]
        result = CliRunner().invoke(cli.app, args)
    assert result.exit_code == 0, result.output
    report = out / "report" / "report.html"
    assert report.is_file() and 'id="validity"' in report.read_text()
    text = " ".join(result.output.split())
    assert f"report: {report}" in text and "proves the plumbing" not in text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["models"] == {"assistant": model, "user": model, "grader": model}
    assert summary["note"] is None and summary["report"] == str(report) and summary["n_scenarios"] == 2
    run = json.loads((out / "logs" / "run.json").read_text())
    assert run["constrain_ask"] is False  # the grammar is the embedded model's only
    assert "prefdisco demo --model" in PLUMBING_NOTE
    # issue 49: K is an integer in every table the run writes (it was "2.0" beside the empty K of the other modes)
    for name in ("results.csv", "attributes.csv"):
        with (out / "logs" / name).open(newline="") as fh:
            ks = {r["mode"]: r["fixed_k"] for r in csv.DictReader(fh)}
        assert ks == {"baseline": "", "discovery": "", "oracle": "", "fixed_k": "2"}, (name, ks)
    lines = [json.loads(line) for line in (out / "logs" / "transcripts.jsonl").read_text().splitlines()]
    assert {(t["mode"], repr(t["fixed_k"])) for t in lines} == {
        ("baseline", "None"),
        ("discovery", "None"),
        ("oracle", "None"),
        ("fixed_k", "2"),
    }


def test_the_demo_console_says_what_its_report_says(tmp_path, monkeypatch) -> None:
    cli._register()
    out = tmp_path / "demo"
    with MockOpenAI(questions=0) as mock:  # discovery answers at once, as the embedded model does
        for key, value in mock.env("mock").items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
        model = f"openai-api/mock/m{mock.port}"
        args = ["demo", "--out", str(out), "--limit", "2", "--display", "none", "--model", model]
        result = CliRunner().invoke(cli.app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    report = json.loads((out / "report" / "summary.json").read_text())
    assert summary["modes"]["discovery"]["mean_questions"] == 0
    assert summary["caveats"] == report["caveats"]
    assert report["caveats"][0].startswith("Discovery asked no question: the model answered at once")
    console = " ".join(result.output.split())
    # issue 49: the caveats come before the numbers they qualify (the table, NormAlign), as at the report's top
    first_number = min(console.index("PrefDisco demo —"), console.index("NormAlign:"))
    assert all(console.index(line) < first_number for line in report["caveats"]), console
    html = (out / "report" / "report.html").read_text()
    md = (out / "report" / "report.md").read_text()
    top = html[: html.index("<h2")]
    for line in report["caveats"]:
        assert line in console and f"<li>{line}</li>" in top and f"> - {line}" in md.split("\nSource:", 1)[0]
    # two scenarios are too few for a bootstrap interval: said so, never an interval or a detectable difference of 0
    assert "too few scenarios (n = 2)" in html and "0.0 to 0.0" not in html
    # the report shows an example, with the fixed-K dialogue beside the three conditions
    assert html.count('<div class="example">') >= 1 and "<h4>fixed_k=2</h4>" in html
