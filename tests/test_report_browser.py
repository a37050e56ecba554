"""The rendered report in real headless Chromium (Debian's /usr/bin/chromium): the console's caveats stand at the
top of the page, on its first screen, and no label is cut off, on a desktop and on a phone."""

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
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium)")
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
