"""The rendered report in real headless Chromium (Debian's /usr/bin/chromium): the console's caveats stand at the
top of the page, on its first screen, and no label is cut off, on a desktop and on a phone; a sessions run's report
has its Transfer section, whose figures and tables cut no label either."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright
from typer.testing import CliRunner

from test_annotate_browser import CHROMIUM, CHROMIUM_ARGS
from test_report import HEADER, _app, write_csv

MODELS = ("prefdisco/smollm2", "openai-api/some-provider/a-model-name-long-enough-to-wrap-2025-06-01")
TOKEN = "x" * 240  # one unbreakable word in a transcript

# Every element whose text must fit its own box. A table may be wider than the page: it sits in a scrolling box
# (.scroll), which is the one element allowed to be narrower than its content.
OVERFLOWING = """() => {
  const cut = [];
  for (const el of document.querySelectorAll('body *')) {
    if (el.classList.contains('scroll') || getComputedStyle(el).display === 'inline' || !el.clientWidth) continue;
    if (el.scrollWidth > el.clientWidth + 1) cut.push(`${el.tagName}.${el.className}: ${el.textContent.slice(0, 80)}`);
  }
  const page = document.documentElement;
  if (page.scrollWidth > page.clientWidth + 1) cut.push(`the page: ${page.scrollWidth} > ${page.clientWidth} px`);
  return cut;
}"""


def run_folder(folder: Path) -> Path:
    """Two models whose discovery asks nothing over a tiny oracle − baseline gap, with transcripts and attributes."""
    folder.mkdir()
    rows, attributes = [], []
    with (folder / "transcripts.jsonl").open("w") as fh:
        for model in MODELS:
            for i, sid in enumerate(("s1", "s2", "s3", "s4")):
                prefs = {"baseline": 2.40 + 0.01 * i, "discovery": 2.45 + 0.02 * i, "oracle": 2.48 + 0.01 * i}
                for mode, pref in prefs.items():
                    rows.append([model, "fam", "demo", sid, mode, "", pref, 1, 0, 0, 100, 50, 0])
                    attributes.append([model, "demo", sid, mode, "", "Explanation of wrong answer options", 1, 3])
                    message = {"role": "user", "content": f"question of {sid} with {TOKEN}"}
                    record = {"model": model, "task": "demo", "scenario_id": sid, "mode": mode, "fixed_k": None}
                    fh.write(json.dumps(record | {"messages": [message], "final_response": TOKEN}) + "\n")
    write_csv(folder / "results.csv", HEADER, rows)
    write_csv(
        folder / "attributes.csv",
        ["model", "task", "scenario_id", "mode", "fixed_k", "attribute", "weight", "score"],
        attributes,
    )
    return folder


@pytest.mark.browser
def test_the_rendered_report_shows_the_console_caveats_first_and_cuts_no_label(tmp_path: Path) -> None:
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: make test installs it, or run 'sudo apt-get install -y chromium'")
    out = tmp_path / "report"
    cli = CliRunner().invoke(_app(), ["report", str(run_folder(tmp_path / "run")), "--out", str(out)])
    assert cli.exit_code == 0, cli.output
    caveats = json.loads((out / "summary.json").read_text())["caveats"]
    assert len(caveats) == 3 and caveats[0].startswith("The embedded model prefdisco/smollm2 proves the plumbing")
    console = " ".join(cli.output.split())
    assert all(line in console for line in caveats)  # what the console said ...

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            for width in (1280, 420):  # a desktop and a phone
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.goto(out.joinpath("report.html").as_uri())
                # ... the page says first, right under its title, on the first screen
                assert page.evaluate("document.querySelector('h1').nextElementSibling.id") == "caveats"
                assert page.locator("#caveats li").all_inner_texts() == caveats
                box = page.locator("#caveats").bounding_box()
                assert box is not None and box["y"] + box["height"] <= 900, f"{width} px: caveats below the fold"
                assert page.evaluate(OVERFLOWING) == [], f"{width} px wide"
                assert page.locator(".example").count() >= 1  # the examples, with the unbreakable word
                page.close()
        finally:
            browser.close()


@pytest.mark.browser
def test_a_sessions_report_shows_its_transfer_section_and_cuts_no_label(tmp_path: Path, transfer_runs) -> None:
    """The planted sessions world (``tests/transfer_world.py``) under a long model name, through the real run and
    ``prefdisco report``: the Transfer section is there, linked from the page's top, with its readings, figures and
    tables; no element of the page and no text of its figures is cut, on a desktop and on a phone."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    import prefdisco.cli as prefdisco_cli
    from prefdisco.analysis.report.build import build_report
    from prefdisco.results.table import load_results
    from test_report_caveats import drawn_texts
    from transfer_world import SMART

    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: make test installs it, or run 'sudo apt-get install -y chromium'")
    prefdisco_cli._register()
    run = transfer_runs(SMART, epochs=2)  # the run tests/test_transfer.py reads
    out = tmp_path / "report"
    cli = CliRunner().invoke(_app(), ["report", str(run), "--out", str(out), "--bootstrap", "200"])
    assert cli.exit_code == 0, cli.output

    report = build_report(load_results(run), n_boot=200, n_examples=0)
    assert report.part("transfer") is not None
    for chart in report.part("transfer").charts():  # every text of the Transfer figures lies inside its figure, uncut
        canvas = FigureCanvasAgg(chart.figure)
        canvas.draw()
        box = chart.figure.bbox
        shown = drawn_texts(chart.figure)
        for text in shown:
            e = text.get_window_extent(canvas.get_renderer())
            inside = e.x0 >= box.x0 - 1 and e.x1 <= box.x1 + 1 and e.y0 >= box.y0 - 1 and e.y1 <= box.y1 + 1
            assert inside, f"{chart.name}: {text.get_text()!r} at {e} outside {box}"
        whole = {"".join(t.get_text().split()) for t in shown}  # a wrapped text without its line breaks
        assert f"scripted/{SMART}·demo" in whole, chart.name  # the panel's title: the whole name

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            for width in (1280, 420):
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.goto(out.joinpath("report.html").as_uri())
                assert page.locator('nav a[href="#transfer"]').count() == 1
                section = page.locator("#transfer")
                assert section.inner_text() == "Transfer"
                readings = page.locator("#transfer ~ div.scroll").first.locator("tr")
                assert readings.count() == 1 + 4  # the header and one line per question
                images = page.locator('img[alt^="NormAlign by position"], img[alt^="Questions asked and re-ask"]')
                assert images.count() == 2
                assert page.locator('img[alt^="PrefAlign on recurring and new"]').count() == 1
                widths = page.evaluate(
                    "() => [...document.querySelectorAll('img')].filter(i => i.alt.includes('position'))"
                    ".map(i => [i.naturalWidth, i.getBoundingClientRect().right])"
                )
                assert all(natural > 0 and right <= width for natural, right in widths), widths
                text = page.locator("body").inner_text()
                assert "Stale application under drift" in text and "Recurring vs new attributes" in text
                assert page.evaluate(OVERFLOWING) == [], f"{width} px wide"
                page.close()
        finally:
            browser.close()


@pytest.mark.browser
def test_the_harms_section_renders_and_cuts_no_label(tmp_path: Path, harms_runs) -> None:
    """The planted harms world (``tests/test_harms.py``: breakage, pushback, a stated belief, distractors) under a
    long model name, through the real run and ``prefdisco report``: the Harms section is there, linked from the
    page's top, with its five readings, its two figures and its table; no element of the page and no text of its
    figures is cut, on a desktop and on a phone."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    import prefdisco.cli as prefdisco_cli
    from harms_world import HARMFUL
    from prefdisco.analysis.report.build import build_report
    from prefdisco.results.table import load_results
    from test_report_caveats import drawn_texts

    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: make test installs it, or run 'sudo apt-get install -y chromium'")
    prefdisco_cli._register()
    run = harms_runs(HARMFUL)  # the run tests/test_harms.py reads
    out = tmp_path / "report"
    cli = CliRunner().invoke(_app(), ["report", str(run), "--out", str(out), "--bootstrap", "200"])
    assert cli.exit_code == 0, cli.output

    report = build_report(load_results(run), n_boot=200, n_examples=0)
    assert report.part("harms") is not None
    charts = report.part("harms").charts()
    assert [c.name for c in charts] == ["fig_harms_breakage.png", "fig_harms_flip.png"]
    for chart in charts:  # every text of the Harms figures lies inside its figure, uncut
        canvas = FigureCanvasAgg(chart.figure)
        canvas.draw()
        box = chart.figure.bbox
        shown = drawn_texts(chart.figure)
        for text in shown:
            e = text.get_window_extent(canvas.get_renderer())
            inside = e.x0 >= box.x0 - 1 and e.x1 <= box.x1 + 1 and e.y0 >= box.y0 - 1 and e.y1 <= box.y1 + 1
            assert inside, f"{chart.name}: {text.get_text()!r} at {e} outside {box}"
        whole = {"".join(t.get_text().split()) for t in shown}  # a wrapped text without its line breaks
        assert f"scripted/{HARMFUL}·demo" in whole, chart.name  # the panel's title: the whole name
        assert "oracle_distractor" in whole and "stated_belief" in whole, chart.name  # the conditions, whole

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            for width in (1280, 420):
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.goto(out.joinpath("report.html").as_uri())
                assert page.locator('nav a[href="#harms"]').count() == 1
                assert page.locator("#harms").inner_text() == "Harms"
                readings = page.locator("#harms ~ div.scroll").first.locator("tr")
                assert readings.count() == 1 + 5  # the header and one line per question
                images = page.locator(
                    'img[alt="Breakage and repair against baseline"], img[alt="Flip rate under pushback"]'
                )
                assert images.count() == 2
                widths = images.evaluate_all(
                    "(imgs) => imgs.map(i => [i.naturalWidth, i.getBoundingClientRect().right])"
                )
                assert all(natural > 0 and right <= width for natural, right in widths), widths
                text = page.locator("body").inner_text()
                assert "agreement with the stated wrong belief" in text and "flip rate − baseline flip rate" in text
                assert page.evaluate(OVERFLOWING) == [], f"{width} px wide"
                page.close()
        finally:
            browser.close()
