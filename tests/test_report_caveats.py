"""The report says what the console says (issue 26, item 6): the caveats at the report's top and on the console of
``prefdisco report``, "too few scenarios (n = N)" instead of a statistic of too few, an empty figure panel that
says why, labels never cut, and an example in every report whose rows did not all fail."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text
from typer.testing import CliRunner

from prefdisco.analysis.paper.examples import FALLBACK
from prefdisco.analysis.report.build import build_report, charts, make_report
from prefdisco.analysis.report.caveats import caveats, plumbing_note
from prefdisco.results.table import load_results
from test_report import HEADER, _app, write_csv

SILENT = (
    "Discovery asked no question: the model answered at once (the protocol lets it), so its discovery rows are "
    "baseline answers under another prompt."
)
EMBEDDED_NOTE = (
    "The embedded model prefdisco/smollm2 proves the plumbing, not quality: its numbers say nothing about "
    "personalization. The same demo on a real model (every role): prefdisco demo --model openai/gpt-4.1"
)


def row(model: str, task: str, sid: str, mode: str, pref: object, correct: object = 1, nq: int = 0) -> list:
    return [model, "fam", task, sid, mode, "", pref, correct, nq, 0, 100, 50, 0]


def triple(model: str, task: str, sid: str, b: float, d: float, o: float, nq: int = 0) -> list[list]:
    return [
        row(model, task, sid, "baseline", b),
        row(model, task, sid, "discovery", d, nq=nq),
        row(model, task, sid, "oracle", o),
    ]


def embedded_run(folder: Path) -> Path:
    """The embedded demo's situation: discovery asks nothing, oracle − baseline is +0.04.

    s1: b 2.40, d 2.60, o 2.48; s2: b 2.50, d 2.40, o 2.50 → means b 2.45, d 2.50, o 2.49: gap +0.04,
    NormAlign 100 · 0.05 / 0.04 = 125."""
    folder.mkdir()
    rows = triple("prefdisco/smollm2", "demo", "s1", 2.40, 2.60, 2.48) + triple(
        "prefdisco/smollm2", "demo", "s2", 2.50, 2.40, 2.50
    )
    return write_csv(folder / "results.csv", HEADER, rows)


def top_of_markdown(md: str) -> str:
    """What report.md says before its first line of numbers (the Source line)."""
    return md.split("\nSource:", 1)[0]


def test_the_caveats_stand_at_the_top_of_the_report_and_on_its_console(tmp_path):
    results = embedded_run(tmp_path / "run")
    out = tmp_path / "report"
    cli = CliRunner().invoke(_app(), ["report", str(results), "--out", str(out), "--bootstrap", "200", "--no-figures"])
    assert cli.exit_code == 0, cli.output
    gap = "NormAlign divides by oracle - baseline PrefAlign, here +0.04: over so small a gap it swings by hundreds "
    gap += "of points and means nothing."
    expected = [EMBEDDED_NOTE, SILENT, gap]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["normalign"]["prefdisco/smollm2"]["demo"] == pytest.approx(125.0)
    assert summary["caveats"] == expected
    console = " ".join(cli.output.split())
    assert all(line in console for line in expected)
    # issue 49: before the numbers they qualify (the NormAlign table), as at the report's top
    assert all(console.index(line) < console.index("NormAlign (%)") for line in expected), console
    html = (out / "report.html").read_text()
    top = html[html.index("<h1>") : html.index("<h2")]  # before the first section
    assert all(f"<li>{line}</li>" in top for line in expected)
    assert top.index('id="caveats"') < top.index("Source:")
    md = top_of_markdown((out / "report.md").read_text())
    assert all(f"> - {line}" in md for line in expected)


def test_the_demos_normalign_line_carries_its_qualifier(tmp_path):
    """Issue 49: the demo's console printed "NormAlign: -400.0" alone, its caveat lines after it. The line itself now
    says when its denominator (oracle − baseline, here +0.04) is too small for the number to mean anything."""
    from prefdisco.demo import norm_align_line, summarize

    summary = summarize(load_results(embedded_run(tmp_path / "run")).results, {})
    assert summary["norm_align"] == pytest.approx(125.0) and summary["norm_align_gap"] == pytest.approx(0.04)
    line = norm_align_line(summary)
    assert line.startswith("NormAlign: 125.0") and "means nothing" in line and "+0.04" in line
    wide = summarize(load_results(write_csv(tmp_path / "wide.csv", HEADER, triple("m", "t", "s", 1, 3, 5))).results, {})
    assert norm_align_line(wide) == "NormAlign: 50.0"  # a gap of 4: the number alone


def test_a_caveat_that_holds_in_some_cells_names_them(tmp_path):
    # m-a/t1: asks nothing; means b (2.0 + 3.0)/2 = 2.5, o (2.1 + 3.1)/2 = 2.6: gap +0.10.
    # m-b/t1: one question, gap 4 − 2 = 2: neither caveat.
    rows = triple("m-a", "t1", "s1", 2.0, 2.05, 2.1) + triple("m-a", "t1", "s2", 3.0, 3.0, 3.1)
    rows += triple("m-b", "t1", "s1", 2.0, 3.0, 4.0, nq=1)
    report = build_report(load_results(write_csv(tmp_path / "results.csv", HEADER, rows)), n_boot=200, figures=False)
    assert report.caveats == [
        SILENT.replace("Discovery asked no question:", "Discovery asked no question in m-a/t1:"),
        "NormAlign divides by oracle - baseline PrefAlign, here +0.10 (m-a/t1): over so small a gap it swings by "
        "hundreds of points and means nothing.",
    ]
    # a NormAlign left undefined (oracle = baseline) is explained by its reason, not by a caveat
    flat = triple("m-a", "t1", "s1", 2.0, 2.5, 2.0, nq=1)
    flat_report = build_report(load_results(write_csv(tmp_path / "flat.csv", HEADER, flat)), n_boot=200, figures=False)
    assert flat_report.caveats == []


def test_the_embedded_note_follows_the_models_of_the_run() -> None:
    assert plumbing_note(["openai/gpt-4.1", "prefdisco/smollm2"]) == EMBEDDED_NOTE
    assert plumbing_note(["openai/gpt-4.1", "anthropic/claude"]) is None
    # a real assistant judged by the embedded model: the judge's numbers say nothing either
    results = pd.DataFrame({"model": ["openai/gpt-4.1"], "mode": ["baseline"], "failed": [False], "n_questions": [0.0]})
    cells = pd.DataFrame(columns=["model", "task", "normalign", "mean_oracle", "mean_baseline"])
    judged = pd.DataFrame({"judge": ["prefdisco/smollm2"]})
    assert caveats(results, cells, judged) == [EMBEDDED_NOTE]
    assert caveats(results, cells, None) == []
    # ... and a table that names the simulated user's model
    assert caveats(results.assign(user_model="prefdisco/smollm2"), cells, None) == [EMBEDDED_NOTE]


@pytest.mark.slow  # an eval of its own: the worlds' benchmarks are hand-written
def test_a_run_on_a_benchmark_the_embedded_model_built_says_so_in_its_report(tmp_path, monkeypatch):
    """A real model (the mock) run on scenarios whose profiles and rubrics SmolLM2 wrote (issue 49, finding 5): the
    run's protocol.json names the builders, and its report (summary, markdown, console) and leaderboard carry the
    caveat, though no model of the run is embedded."""
    import prefdisco.cli as cli
    from mock_openai import MockOpenAI, mock_env, tagged_scenarios, write_scenarios
    from prefdisco.analysis.leaderboard.board import build_leaderboard
    from prefdisco.results.merge import load_runs

    built = {
        "persona": "",
        "relevance": "prefdisco/smollm2",
        "profile": "prefdisco/smollm2",
        "rubric": "prefdisco/smollm2",
    }
    bench = write_scenarios(
        tmp_path / "bench" / "scenarios.jsonl",
        [s.model_copy(update={"provenance": built}) for s in tagged_scenarios(2)],
    )
    cli._register()
    run = tmp_path / "run"
    with MockOpenAI() as mock:
        mock_env(monkeypatch, mock, tmp_path)
        args = ["eval", str(bench), "--model", f"openai-api/mock/m{mock.port}", "--log-dir", str(run)]
        args += ["--modes", "baseline,oracle", "--no-quality", "--no-audit", "--display", "none"]
        result = CliRunner().invoke(cli.app, args)
    assert result.exit_code == 0, result.output
    assert json.loads((run / "protocol.json").read_text())["builders"] == ["prefdisco/smollm2"]
    note = (
        "The benchmark was built by the embedded model prefdisco/smollm2: its personas, profiles and rubrics prove "
        "the build's plumbing, not a benchmark, so no number here measures personalization; build one with a real "
        "model (prefdisco build --model ...)."
    )
    out = tmp_path / "report"
    result = CliRunner().invoke(cli.app, ["report", str(run), "--out", str(out), "--bootstrap", "200", "--no-figures"])
    assert result.exit_code == 0, result.output
    assert note in json.loads((out / "summary.json").read_text())["caveats"]
    assert note in " ".join(result.output.split())
    assert note in " ".join((out / "report.md").read_text().split())
    merged = load_runs([run])
    assert note in build_leaderboard(merged.data, protocols=merged.protocols, n_boot=200).caveats


def test_too_few_scenarios_is_said_never_an_interval_of_nothing(tmp_path):
    # m-a/t1: one scenario (b 2, d 3, o 4: NormAlign 50); m-b/t1: four identical scenarios (NormAlign 50, every
    # resample the same: an interval of no width); neither gives a smallest detectable difference
    rows = triple("m-a", "t1", "s1", 2.0, 3.0, 4.0, nq=1)
    for sid in ("s1", "s2", "s3", "s4"):
        rows += triple("m-b", "t1", sid, 2.0, 3.0, 4.0, nq=1)
    report, _ = make_report(write_csv(tmp_path / "results.csv", HEADER, rows), tmp_path / "out", n_boot=200)
    s = report.summary
    assert s["normalign"] == {"m-a": {"t1": 50.0}, "m-b": {"t1": 50.0}}
    assert s["normalign_ci"]["m-a"]["t1"] == [None, None]
    assert s["normalign_ci_reason"] == {"m-a": {"t1": "too few scenarios (n = 1)"}}
    assert s["normalign_ci"]["m-b"]["t1"] == [50.0, 50.0]
    assert s["normalign_mde"] == {"m-a": {"t1": None}, "m-b": {"t1": None}}
    [mde] = [v for v in s["validity"] if v["instrument"] == "Smallest detectable NormAlign difference"]
    assert mde["finding"] == (
        "too few scenarios (n = 1) in m-a/t1; the interval has no width: every resample gives the same NormAlign "
        "in m-b/t1"
    )
    assert mde["reading"] == "a bootstrap interval needs at least 4 scenarios scored in all three conditions"
    html = (tmp_path / "out" / "report.html").read_text()
    md = (tmp_path / "out" / "report.md").read_text()
    for text in (html, md):
        assert "50.0 (no interval: too few scenarios (n = 1))" in text  # Table 1
        assert "0.0 to 0.0" not in text and "NormAlign points" not in text
    # one cell of two scenarios: the finding is the reason alone
    two = triple("m-a", "t1", "s1", 2.0, 3.0, 4.0, nq=1) + triple("m-a", "t1", "s2", 2.0, 2.5, 3.0, nq=2)
    small = build_report(load_results(write_csv(tmp_path / "two.csv", HEADER, two)), n_boot=200, figures=False)
    [mde] = [v for v in small.summary["validity"] if v["instrument"] == "Smallest detectable NormAlign difference"]
    assert mde["finding"] == "too few scenarios (n = 2)"


def test_an_empty_figure_panel_says_why_in_the_panel_and_the_caption(tmp_path):
    # baseline and oracle only, correctness never judged: no discovery point, no per-scenario NormAlign, no accuracy
    rows = [row("m-a", "t1", "s1", "baseline", 2.0, ""), row("m-a", "t1", "s1", "oracle", 3.0, "")]
    report, _ = make_report(write_csv(tmp_path / "results.csv", HEADER, rows), tmp_path / "out", n_boot=200)
    empty = {f.name: f.empty for f in report.figures}
    assert (
        empty["fig_accuracy.png"]
        == ["no row of baseline, discovery or oracle has its correctness judged (correct is empty)"] * 2
    )
    # a figure none of whose panels could show anything is left out, its place saying why (issue 49)
    assert report.figures_omitted["fig_normalign_scenarios"] == (
        "no scenario is scored in all three of baseline, discovery and oracle"
    )
    assert {"fig_normalign", "fig_questions"} <= set(report.figures_omitted) and "fig_questions.png" not in empty
    # three discovery points asking 0, 1, 2 questions and no oracle: the left panel draws, the right one says why
    asked = [row("m-a", "t1", f"d{i}", "discovery", 2.0 + i, nq=i) for i in range(3)] + rows
    data = load_results(write_csv(tmp_path / "asked.csv", HEADER, asked))
    drawn = {c.name: c for c in charts(build_report(data, n_boot=0, figures=False), 0)}
    why = "no (model, task) cell with discovery questions has a NormAlign (Table 1 says why)"
    assert drawn["fig_questions.png"].file().empty == [why]
    panel_texts = [" ".join(t.get_text().split()) for ax in drawn["fig_questions.png"].figure.axes for t in ax.texts]
    assert panel_texts == [why]  # the panel itself says it (its text, wrapped) ...
    # ... and so do the captions of both reports, where the figures left out say why in their place
    html = (tmp_path / "out" / "report.html").read_text()
    md = (tmp_path / "out" / "report.md").read_text()
    for text in (html, md):
        assert "Empty panel: no row of baseline, discovery or oracle has its correctness judged" in text
        assert "No figure: no scenario is scored in all three of baseline, discovery and oracle." in text


def drawn_texts(fig) -> list[Text]:  # type: ignore[no-untyped-def]
    """The texts a figure draws: visible, not empty, not on a hidden panel, and no tick label of a tick outside
    its axis's view (matplotlib keeps those, undrawn)."""
    undrawn = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            slack = 1e-9 * max(1.0, hi - lo)
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                if not lo - slack <= tick.get_loc() <= hi + slack:
                    undrawn |= {tick.label1, tick.label2}
    return [
        t
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip() and (t.axes is None or t.axes.get_visible()) and t not in undrawn
    ]


LONG = ["openai-api/some-provider/model-2025-06-01-a", "openai-api/some-provider/model-2025-06-01-b"]
LONG_TASK = "college_mathematics_long_task_name"


def test_no_figure_label_is_cut_and_every_text_lies_inside_its_figure(tmp_path):
    rows: list[list] = []
    attributes = []
    for model in LONG:
        for i, sid in enumerate(("s1", "s2", "s3", "s4", "s5")):  # five: a box of quartiles each (charts.MIN_BOX)
            rows += triple(model, LONG_TASK, sid, 2.0 + 0.1 * i, 2.5 + 0.2 * i, 3.5, nq=i)
            for k in (1, 2):  # two K: a line of alignment against K
                rows.append([model, "fam", LONG_TASK, sid, "fixed_k", k, 3.0, 1, k, 0, 100, 50, 0])
            for mode in ("baseline", "discovery", "oracle"):
                attributes.append([model, LONG_TASK, sid, mode, "", "Explanation of wrong answer options", 1.0, 3])
    folder = tmp_path / "run"
    folder.mkdir()
    write_csv(folder / "results.csv", HEADER, rows)
    write_csv(
        folder / "attributes.csv",
        ["model", "task", "scenario_id", "mode", "fixed_k", "attribute", "weight", "score"],
        attributes,
    )
    data = load_results(folder)
    report = build_report(data, n_boot=200, n_examples=0)
    drawn = charts(report, 0)
    assert {c.name for c in drawn} >= {
        "fig_normalign.png",
        "fig_normalign_scenarios.png",
        "fig_fixed_k.png",
        "fig_attributes.png",
    }
    for chart in drawn:
        fig = chart.figure
        canvas = FigureCanvasAgg(fig)  # the canvas the PNG is drawn on
        canvas.draw()
        renderer = canvas.get_renderer()
        box = fig.bbox
        shown = drawn_texts(fig)
        for text in shown:
            extent = text.get_window_extent(renderer)
            inside = extent.x0 >= box.x0 - 1 and extent.x1 <= box.x1 + 1
            inside = inside and extent.y0 >= box.y0 - 1 and extent.y1 <= box.y1 + 1
            assert inside, f"{chart.name}: {text.get_text()!r} at {extent} outside {box}"
        whole = {"".join(t.get_text().split()) for t in shown}
        assert not any("…" in t for t in whole), chart.name
        if chart.name in ("fig_normalign.png", "fig_attributes.png"):
            assert set(LONG) <= whole, chart.name  # both names whole: they differ only at their end
        if chart.name == "fig_fixed_k.png":
            assert LONG_TASK in whole and set(LONG) <= whole


def test_a_report_whose_scenarios_fit_no_kind_still_shows_one(tmp_path):
    # every scenario flat (b = d = o) and correct everywhere: no monotone gain, no drop, no correct → incorrect
    rows = triple("m-a", "t1", "s2", 3.0, 3.0, 3.0) + triple("m-a", "t1", "s1", 3.0, 3.0, 3.0)
    report, _ = make_report(write_csv(tmp_path / "results.csv", HEADER, rows), tmp_path / "out", n_examples=1)
    assert [(e.kind, e.scenario_id) for e in report.examples] == [(FALLBACK, "s1")]
    assert f"{FALLBACK}: m-a · t1 · s1" in (tmp_path / "out" / "report.html").read_text()
    off, _ = make_report(tmp_path / "results.csv", tmp_path / "off", n_examples=0, figures=False)
    assert off.examples == []
