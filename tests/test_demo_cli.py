"""``prefdisco demo --model M``: the demo with another model in every role ends with the HTML report's path and
no plumbing note (the embedded run's note is checked by the embedded test)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

import prefdisco.cli as cli
from mock_openai import MockOpenAI
from prefdisco.demo import PLUMBING_NOTE, caveats


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


def _summary(base: float, discovery_questions: float, oracle: float, norm_align: float | None) -> dict:
    def mode(pref_align: float, questions: float) -> dict:
        return {"pref_align_mean": pref_align, "mean_questions": questions, "n": 10}

    return {
        "modes": {"baseline": mode(base, 0), "discovery": mode(2.5, discovery_questions), "oracle": mode(oracle, 0)},
        "norm_align": norm_align,
    }


def test_caveats_name_a_silent_discovery_and_a_tiny_normalign_gap() -> None:
    # the case: no question asked, NormAlign 150 over an oracle - baseline gap of 0.04
    lines = caveats(_summary(2.44, 0.0, 2.48, 150.0))
    assert len(lines) == 2
    assert lines[0].startswith("Discovery asked no question")
    assert "+0.04" in lines[1] and "means nothing" in lines[1]
    # a dialogue that asked, over a gap of a whole point: nothing to warn about
    assert caveats(_summary(2.0, 1.5, 3.0, 50.0)) == []
    # an undefined NormAlign is explained by its own reason line, not here
    assert caveats(_summary(2.0, 1.5, 2.1, None)) == []
