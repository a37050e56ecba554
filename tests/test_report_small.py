"""A report fits its data (issue 49): a small run's first report led with a 1×1 heatmap, a boxplot of one box and a
card titled "OLS slope, local" showing "—". Now a figure that cannot show anything is left out and its place says
why, a slope card stands only where there is a slope, and a run of few scenarios shows one of its dialogues first."""

from __future__ import annotations

import json
from pathlib import Path

from prefdisco.analysis.paper.examples import FEW_SCENARIOS
from prefdisco.analysis.report.build import build_report, make_report
from prefdisco.analysis.report.render import render_html
from prefdisco.results.table import load_results
from test_report import HEADER, write_csv


def row(sid: str, mode: str, pref: float, nq: int = 0, k: object = "", model: str = "prefdisco/smollm2") -> list:
    return [model, "local", "demo", sid, mode, k, pref, 1, nq, 0, 100, 50, 0]


def transcript(sid: str, mode: str, k: int | None, turns: list[tuple[str, str]], final: str) -> dict:
    messages = [{"role": role, "content": text} for role, text in turns]
    key = {"model": "prefdisco/smollm2", "task": "demo", "scenario_id": sid, "mode": mode, "fixed_k": k, "epoch": 1}
    return key | {"messages": messages, "final_response": final}


def one_scenario_run(folder: Path) -> Path:
    """The quick demo's shape: one scenario in baseline, discovery (no question), oracle and fixed-K 2."""
    folder.mkdir()
    rows = [row("s1", "baseline", 2.0), row("s1", "discovery", 2.2), row("s1", "oracle", 4.0)]
    rows.append(row("s1", "fixed_k", 3.0, nq=2, k=2))
    write_csv(folder / "results.csv", HEADER, rows)
    lines = [
        transcript("s1", "baseline", None, [("user", "What is 2 + 2?")], "4"),
        transcript("s1", "discovery", None, [("user", "What is 2 + 2?")], "4, at once"),
        transcript("s1", "oracle", None, [("user", "What is 2 + 2? (profile)")], "4, for you"),
        transcript(
            "s1",
            "fixed_k",
            2,
            [
                ("user", "What is 2 + 2?"),
                ("assistant", "QUESTION: How much detail do you want?"),
                ("user", "Very little, please."),
                ("assistant", "QUESTION: Words or digits?"),
                ("user", "Digits."),
            ],
            "4 (short, in digits)",
        ),
    ]
    (folder / "transcripts.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return folder


def test_a_one_scenario_report_leaves_out_what_it_cannot_show_and_leads_with_a_dialogue(tmp_path):
    run = one_scenario_run(tmp_path / "run")
    out = tmp_path / "report"
    report, written = make_report(run, out, n_boot=0, n_examples=1)
    # the figures that cannot show anything are not drawn, and their places say why
    assert set(report.figures_omitted) == {"fig_normalign", "fig_normalign_scenarios", "fig_questions", "fig_fixed_k"}
    assert {p.name for p in written if p.suffix == ".png"} == {"fig_accuracy.png", "fig_harms_breakage.png"}
    html = (out / "report.html").read_text()
    md = (out / "report.md").read_text()
    for text in (html, md):
        assert "No figure: one (model, task) cell, whose NormAlign Table 1 gives." in text
        assert "No figure: the run has one K (2): alignment against K needs two values of it." in text
        assert "No figure: fewer than 3 scored discovery scenarios (1) and fewer than two (model, task) cells" in text
    # no card of an undefined slope ("OLS slope, local: —")
    assert "OLS slope, local" not in html and "PrefAlign per question asked" not in html
    # one scenario (< FEW_SCENARIOS): its fixed-K dialogue, the one that asked most, before the first section
    top = html[: html.index('<h2 id="normalign">')]
    assert '<h2 id="dialogue">A dialogue of this run</h2>' in top and "This run has 1 scenario," in top
    assert "fixed_k=2 of prefdisco/smollm2 · demo · s1" in top
    for text in ("QUESTION: How much detail do you want?", "Very little, please.", "4 (short, in digits)"):
        assert text in top
    assert top.index("A dialogue of this run") > top.index('id="caveats"')  # the caveats still come first
    md_top = md[: md.index("## 1. NormAlign")]
    assert "## A dialogue of this run" in md_top and "QUESTION: Words or digits?" in md_top


def test_a_run_of_enough_scenarios_keeps_its_figures_and_leads_with_its_numbers(tmp_path):
    rows = []
    for i in range(FEW_SCENARIOS):
        sid = f"s{i:02d}"
        rows += [row(sid, "baseline", 2.0), row(sid, "discovery", 2.0 + 0.2 * i, nq=i % 4), row(sid, "oracle", 4.5)]
        rows += [row(sid, "fixed_k", 3.0, nq=1, k=1), row(sid, "fixed_k", 3.5, nq=3, k=3)]
    data = load_results(write_csv(tmp_path / "results.csv", HEADER, rows))
    report = build_report(data, n_boot=0, n_examples=1, figures=False)
    assert report.lead is None  # ten scenarios: the numbers lead
    assert set(report.figures_omitted) == {"fig_normalign"}  # one (model, task) cell still: Table 1's one number
    html = render_html(report)
    assert 'id="dialogue"' not in html
    slope = report.questions.slopes.set_index("family").loc["local", "slope"]
    card = f"PrefAlign per question asked, local models<b>{slope:.3f}</b>"
    assert card in html and f"OLS slope over {FEW_SCENARIOS} discovery scenarios of prefdisco/smollm2" in html
