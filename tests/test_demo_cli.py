"""``prefdisco demo --model M``: the demo with another model in every role ends with the HTML report's path and
no plumbing note (the embedded run's note is checked by the embedded test)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

import prefdisco.cli as cli
from mock_openai import MockOpenAI
from prefdisco.demo import PLUMBING_NOTE


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
    assert run["constrain_protocol"] is False  # the grammar is the embedded model's only
    assert "prefdisco demo --model" in PLUMBING_NOTE
