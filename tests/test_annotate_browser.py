"""A whole annotation session for two annotators in real headless Chromium (Debian's /usr/bin/chromium)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import expect, sync_playwright

from prefdisco.annotate.app import create_app
from prefdisco.annotate.auth import Tokens
from prefdisco.annotate.rating_app import create_rating_app
from prefdisco.annotate.rating_service import RatingStudy, export_ratings, prepare_ratings
from prefdisco.annotate.rating_store import RatingStore
from prefdisco.annotate.sampling import Item
from prefdisco.annotate.serve_options import build_app
from prefdisco.annotate.service import RelevanceStudy, prepare
from prefdisco.annotate.store import Store
from prefdisco.annotate.study import ServeOptions
from test_annotate_bench import HOSTILE, running_server, standard_bench
from test_annotate_ratings import rating_run

# Debian's chromium, which `make test` installs where it is missing (the Makefile's CHROMIUM, given to the tests as
# PREFDISCO_CHROMIUM)
CHROMIUM = Path(os.environ.get("PREFDISCO_CHROMIUM") or "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOT = Path(__file__).resolve().parents[1] / "artifacts" / "annotate_page.png"
RATING_SCREENSHOT = SCREENSHOT.with_name("rate_page.png")
TOKENS = {"alice": "alice-T0K3N-4b1d", "bob": "bob-T0K3N-92ce"}


def choice(annotator: str, item: Item, attribute: str) -> bool:
    """alice agrees with the builder LLM everywhere; bob flips the first candidate (by name) of each item."""
    llm = next(c.llm_relevant for c in item.candidates if c.attribute == attribute)
    flipped = annotator == "bob" and attribute == item.candidates[0].attribute
    return llm != flipped


def log_in(browser, base: str, name: str, dialogs: list[str], posts: list[str]):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: r.method == "POST" and posts.append(r.url))
    page.goto(f"{base}/")
    page.wait_for_url("**/login")
    page.fill("#name", name)
    page.fill("#token", TOKENS[name])
    page.click("#login-form button[type=submit]")
    return context, page


@pytest.mark.browser
def test_two_annotators_complete_a_session_in_chromium(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: make test installs it, or run 'sudo apt-get install -y chromium'")
    db = tmp_path / "annotations.sqlite"
    items = prepare(standard_bench(tmp_path), db, per_task=1).items  # gpqa, mmlu, simpleqa
    total = len(items)
    caplog.set_level(logging.INFO)
    dialogs: list[str] = []
    api_posts: list[str] = []
    with running_server(create_app(db, Tokens(TOKENS))) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            for name in ("alice", "bob"):
                context, page = log_in(browser, base, name, dialogs, api_posts)
                for item in items:
                    if name == "bob" and item.position == 2:
                        # bob stops after one item and comes back in a new browser session: resumes at 2
                        context.close()
                        context, page = log_in(browser, base, name, dialogs, api_posts)
                    page.wait_for_url(f"**/annotate/{item.position}")
                    expect(page.locator("#progress-text")).to_contain_text(
                        f"Scenario {item.position} of {total} · {item.position - 1} of {total} completed"
                    )
                    assert page.inner_text("#task-text") == item.task_text
                    assert page.inner_text("#annotator-name") == name
                    shown = page.locator("fieldset.candidate").evaluate_all(
                        "nodes => nodes.map(node => node.dataset.attribute)"
                    )
                    assert sorted(shown) == [c.attribute for c in item.candidates]
                    if len(item.candidates) < 20:
                        expect(page.locator("#short-note")).to_contain_text("14 candidate attributes instead of 20")
                    for attribute in shown:  # click Yes/No like a person, in the order shown
                        value = "1" if choice(name, item, attribute) else "0"
                        page.check(f"fieldset[data-attribute='{attribute}'] input[value='{value}']")
                    if name == "alice" and item.position == 1:
                        SCREENSHOT.parent.mkdir(exist_ok=True)
                        page.screenshot(path=str(SCREENSHOT), full_page=True)
                    page.click("#submit")
                page.wait_for_url("**/overview")
                expect(page.locator("#all-done")).to_be_visible()
                if name == "alice":
                    page.goto(f"{base}/annotate/{next(i.position for i in items if i.task == 'gpqa')}")
                    descriptions = page.locator(".description").all_inner_texts()
                    hostile_seen = [page.inner_text("#task-text"), *descriptions]
                    assert any(HOSTILE in text for text in hostile_seen)  # shown as text, not run as markup
                context.close()
        finally:
            browser.close()

    assert dialogs == []  # the <script> in the benchmark text never ran
    assert sum(url.endswith("/api/annotations") for url in api_posts) == 2 * total  # the page script posted JSON

    rows = Store(db).label_rows()
    by_id = {item.scenario_id: item for item in items}
    assert len(rows) == 2 * sum(len(item.candidates) for item in items)
    for row in rows:
        assert row.label == int(choice(row.annotator, by_id[row.scenario_id], row.attribute))

    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa  # a second to import: not at collection

    from prefdisco.annotate.stats import agreement_stats

    stats = agreement_stats(rows)
    matrix = np.array(
        [[int(choice(a, item, c.attribute)) for a in ("alice", "bob")] for item in items for c in item.candidates]
    )
    table, _ = aggregate_raters(matrix, n_cat=2)
    assert stats.fleiss_kappa == pytest.approx(fleiss_kappa(table))
    assert (stats.n_annotators, stats.n_items) == (2, len(matrix))
    agree = 1 - total / len(matrix)  # bob disagrees with alice once per item
    assert stats.annotator_accuracy_vs_majority == {
        "alice": pytest.approx(agree),
        "bob": pytest.approx(agree),
    }
    # the 1-1 ties count as relevant: the LLM misses exactly where it said 0 and bob flipped to 1
    misses = sum(not item.candidates[0].llm_relevant for item in items)
    assert stats.llm_vs_majority["accuracy"] == pytest.approx(1 - misses / len(matrix))

    logged = caplog.text
    assert "POST /api/annotations" in logged and "POST /login" in logged
    for token in TOKENS.values():
        assert token not in logged
        assert all(token.encode() not in p.read_bytes() for p in tmp_path.glob("annotations.sqlite*"))


@pytest.mark.browser
def test_an_annotator_rates_a_response_in_chromium_and_it_is_exported(tmp_path: Path) -> None:
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: make test installs it, or run 'sudo apt-get install -y chromium'")
    run, bench = rating_run(tmp_path)
    db = tmp_path / "ratings.sqlite"
    items = prepare_ratings(run, db, bench=bench, n_items=3).items
    dialogs: list[str] = []
    posts: list[str] = []
    with running_server(create_rating_app(db, Tokens(TOKENS))) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context, page = log_in(browser, base, "alice", dialogs, posts)
            page.wait_for_url("**/rate/1")
            first = items[0]
            expect(page.locator("#progress-text")).to_contain_text("Response 1 of 3 · 0 of 3 rated")
            assert page.inner_text("#task-text") == first.problem_text
            assert page.inner_text("#response-text") == first.response  # the hostile markup shown as text
            assert page.inner_text("#criterion-name") == first.attribute
            anchors = page.locator("#levels .anchor").all_inner_texts()
            assert anchors == list(first.levels)
            page.click("#submit")  # nothing chosen: the browser's own check (required) keeps the form
            assert page.url.endswith("/rate/1") and posts == [f"{base}/login"]
            page.check("#levels input[value='4']")
            SCREENSHOT.parent.mkdir(exist_ok=True)
            page.screenshot(path=str(RATING_SCREENSHOT), full_page=True)
            page.click("#submit")
            page.wait_for_url("**/rate/2")
            expect(page.locator("#progress-text")).to_contain_text("1 of 3 rated")
            page.goto(f"{base}/rate/1")  # the stored score is shown again
            expect(page.locator("#levels input[value='4']")).to_be_checked()
            context.close()
        finally:
            browser.close()
    assert dialogs == []
    assert sum(url.endswith("/api/ratings") for url in posts) == 1  # the page script posted JSON, once
    out = tmp_path / "ratings.csv"
    assert export_ratings(db, out)[0] == 1
    assert out.read_text().splitlines() == [
        "annotator,scenario_id,mode,attribute,score",
        f"alice,{first.scenario_id},{first.mode},{first.attribute},4",
    ]


@pytest.mark.browser
def test_one_session_visits_two_studies_of_one_server_in_chromium(tmp_path: Path) -> None:
    """One server hosts the relevance and the rating study from one database: alice logs in once, lands on the
    overview, answers a relevance item under /annotate and rates a response under /rate in the same session."""
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: make test installs it, or run 'sudo apt-get install -y chromium'")
    run, bench = rating_run(tmp_path)
    db = tmp_path / "one.sqlite"
    relevance = prepare(bench, db, per_task=1).items
    assert len(relevance) == 1  # the run's benchmark: one task, one problem
    ratings = prepare_ratings(run, db, bench=bench, n_items=3).items
    studies = [RelevanceStudy(db, ServeOptions()), RatingStudy(db, ServeOptions())]
    dialogs: list[str] = []
    posts: list[str] = []
    with running_server(build_app(studies, Tokens(TOKENS))) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context, page = log_in(browser, base, "alice", dialogs, posts)
            page.wait_for_url("**/overview")  # several studies: the overview lists each one's items
            expect(page.locator("section.study")).to_have_count(2)
            expect(page.locator("#study-annotate")).to_contain_text("0 of 1 items completed")
            expect(page.locator("#study-rate")).to_contain_text("0 of 3 responses rated")
            page.click("#study-annotate >> text=Continue")
            page.wait_for_url("**/annotate/1")
            assert page.inner_text("#annotator-name") == "alice"
            item = relevance[0]
            for candidate in item.candidates:
                page.check(f"fieldset[data-attribute='{candidate.attribute}'] input[value='1']")
            page.click("#submit")
            page.wait_for_url("**/overview")  # the study's last item: back to the overview, the other study open
            expect(page.locator("#all-done-annotate")).to_be_visible()
            expect(page.locator("#study-rate")).to_contain_text("0 of 3 responses rated")
            page.click("#study-rate >> text=Continue")
            page.wait_for_url("**/rate/1")  # the same session: no second log-in
            assert page.inner_text("#annotator-name") == "alice"
            assert page.inner_text("#response-text") == ratings[0].response
            page.check("#levels input[value='4']")
            page.click("#submit")
            page.wait_for_url("**/rate/2")
            expect(page.locator("#progress-text")).to_contain_text("1 of 3 rated")
            page.goto(f"{base}/overview")
            expect(page.locator("#study-rate")).to_contain_text("1 of 3 responses rated")
            context.close()
        finally:
            browser.close()
    assert dialogs == []
    assert [url.removeprefix(base) for url in posts] == ["/login", "/api/annotations", "/api/ratings"]
    assert Store(db).completed("alice") == {item.scenario_id}
    assert RatingStore(db).rated("alice") == {1: 4}
