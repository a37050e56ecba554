"""A whole play-the-user dialogue in real headless Chromium (Debian's /usr/bin/chromium) against a scripted model
under test that asks two questions and answers: log in, read the persona card and the profile, answer both
questions in the page, reload and come back in a new browser session mid-dialogue (resume), finish; then the
export, and ``prefdisco report`` of it beside a simulated run of the same scenario."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from inspect_ai.model import get_model
from playwright.sync_api import expect, sync_playwright
from typer.testing import CliRunner

from play_world import ANSWER, EAGER, JUDGE, MODEL, PREF_ALIGN, QUESTIONS, play_scenario
from prefdisco import cli
from prefdisco.annotate.auth import Tokens
from prefdisco.annotate.play_app import create_play_app
from prefdisco.annotate.play_store import PlayStore
from test_annotate_bench import running_server
from test_annotate_browser import CHROMIUM, CHROMIUM_ARGS, SCREENSHOT
from test_annotate_play import REPLIES, study_db

TOKEN = "carol-T0K3N-77aa"
SHOTS = {name: SCREENSHOT.with_name(f"play_{name}.png") for name in ("start", "resumed", "finished")}


def log_in(browser, base: str, dialogs: list[str], posts: list[str]):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: r.method == "POST" and posts.append(r.url))
    page.goto(f"{base}/")
    page.wait_for_url("**/login")
    page.fill("#name", "carol")
    page.fill("#token", TOKEN)
    page.click("#login-form button[type=submit]")
    page.wait_for_url("**/play/1")
    return context, page


def shot(page, name: str) -> None:  # type: ignore[no-untyped-def]
    SHOTS[name].parent.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS[name]), full_page=True)


@pytest.mark.browser
def test_a_person_plays_a_whole_dialogue_in_chromium_and_the_report_shows_it(tmp_path, play_runs) -> None:
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: make test installs it, or run 'sudo apt-get install -y chromium'")
    db = study_db(tmp_path)
    scenario = play_scenario()
    dialogs: list[str] = []
    posts: list[str] = []
    app = create_play_app(db, get_model(MODEL), get_model(JUDGE), Tokens({"carol": TOKEN}))
    with running_server(app) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context, page = log_in(browser, base, dialogs, posts)
            # the persona card and the profile, in the persona's voice
            expect(page.locator("#persona-name")).to_have_text(scenario.persona.name)
            expect(page.locator("#persona-summary")).to_have_text(scenario.persona.summary)
            shown = page.locator("li.preference").evaluate_all("nodes => nodes.map(node => node.dataset.attribute)")
            assert shown == [p.attribute for p in sorted(scenario.profile.items, key=lambda p: -p.weight)]
            for item in scenario.profile.items:
                card = page.locator(f"li.preference[data-attribute='{item.attribute}']")
                expect(card.locator(".value")).to_contain_text(item.value)
                expect(card.locator(".reason")).to_contain_text(item.justification)
            assert page.inner_text("#task-text") == scenario.problem.prompt_text()
            expect(page.locator("#pending-question")).to_have_text(QUESTIONS[0])
            expect(page.locator("#budget")).to_contain_text("up to 5 questions")
            html = page.content()
            assert MODEL not in html and JUDGE not in html and "RUBRIC" not in html  # blind, no model, no key
            shot(page, "start")

            page.fill("#reply", REPLIES[0])
            page.click("#submit")
            expect(page.locator("#pending-question")).to_have_text(QUESTIONS[1])
            page.reload()  # a reload mid-dialogue shows the same place
            expect(page.locator("#pending-question")).to_have_text(QUESTIONS[1])
            turns = page.locator("li.turn .said").all_inner_texts()
            assert turns == [QUESTIONS[0], REPLIES[0]]
            context.close()  # the participant closes the page and comes back in a new browser session
            context, page = log_in(browser, base, dialogs, posts)
            expect(page.locator("#pending-question")).to_have_text(QUESTIONS[1])
            assert page.locator("li.turn .said").all_inner_texts() == [QUESTIONS[0], REPLIES[0]]
            shot(page, "resumed")

            page.fill("#reply", REPLIES[1])
            page.click("#submit")
            expect(page.locator("#finished")).to_be_visible()
            expect(page.locator("#final-text")).to_have_text(ANSWER)
            expect(page.locator("#reply-form")).to_have_count(0)
            shot(page, "finished")
            page.click("#next-link")
            page.wait_for_url("**/overview")
            expect(page.locator("#all-done")).to_be_visible()
            context.close()
        finally:
            browser.close()

    assert dialogs == []
    assert sum(url.endswith("/api/play") for url in posts) == 2  # the page script posted each reply as JSON
    stored = PlayStore(db).dialogue("carol", 1)
    assert stored is not None and stored.status == "scored" and stored.score is not None
    assert [t.content for t in stored.state.turns if t.kind == "reply"] == list(REPLIES)

    runner = CliRunner()
    cli._register()
    human = tmp_path / "human"
    exported = runner.invoke(cli.app, ["annotate", "export-play", "--db", str(db), "--out", str(human)])
    assert exported.exit_code == 0, exported.output
    results = pd.read_csv(human / "results.csv")
    played = results[results["mode"] == "discovery"].iloc[0]
    assert played["pref_align"] == pytest.approx(PREF_ALIGN) and played["user_model"].startswith("human:p-")
    assert sorted(results["mode"]) == ["baseline", "discovery", "oracle"]
    sim = play_runs()
    out = tmp_path / "report"
    shown = runner.invoke(
        cli.app, ["report", str(human), str(sim), "--out", str(out), "--allow-mixed", "--bootstrap", "200"]
    )
    assert shown.exit_code == 0, shown.output
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["models"]) == {f"{MODEL} @ human", f"{MODEL} @ sim"}
    report = (out / "report.md").read_text()
    assert f"{MODEL} @ human" in report and f"{MODEL} @ sim" in report

    # simulator fidelity of the person's browser-played run against two simulated runs: the simulated user that
    # replies as the person did is the closest; the eager one (long replies) is further
    eager = play_runs(EAGER, "eager")
    bench = tmp_path / "scenarios.jsonl"
    bench.write_text(scenario.model_dump_json() + "\n")
    args = ["simfidelity", "--human", str(human), "--sim", str(sim), "--sim", str(eager), "--bench", str(bench)]
    fidelity = runner.invoke(cli.app, [*args, "--out", str(tmp_path / "fidelity")])
    assert fidelity.exit_code == 0, fidelity.output
    table = pd.read_csv(tmp_path / "fidelity" / "fidelity.csv")
    assert table["simulator"].tolist() == ["sim", "eager"]
    assert table.loc[0, "replay_fidelity"] == pytest.approx(1.0) and table.loc[1, "replay_fidelity"] < 1
    replayed = [json.loads(line) for line in (tmp_path / "fidelity" / "replay.jsonl").read_text().splitlines()]
    assert [r["person_reply"] for r in replayed if r["simulator"] == "sim"] == list(REPLIES)  # what carol typed
