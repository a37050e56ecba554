"""The shared pages (log-in, overview, error) say each task kind's own words and load its own assets."""

from __future__ import annotations

import re
from pathlib import Path

from starlette.testclient import TestClient

from prefdisco.annotate.app import create_app
from prefdisco.annotate.auth import Tokens
from prefdisco.annotate.rating_app import create_rating_app
from prefdisco.annotate.rating_service import prepare_ratings
from prefdisco.annotate.rating_store import RatingStore
from prefdisco.annotate.service import prepare
from prefdisco.annotate.store import Store
from test_annotate_bench import standard_bench
from test_annotate_ratings import rating_run


def assets(html: str) -> list[str]:
    return re.findall(r'(?:href|src)="/static/([^"]+)"', html)


def logged_in(client: TestClient) -> TestClient:
    assert client.post("/login", data={"name": "alice"}).status_code == 303
    return client


def test_attribute_pages(tmp_path: Path) -> None:
    db = tmp_path / "a.sqlite"
    items = prepare(standard_bench(tmp_path), db, per_task=1).items  # gpqa, mmlu, simpleqa
    client = TestClient(create_app(db, Tokens()), follow_redirects=False)
    login = client.get("/login").text
    assert "<h1>Log in to annotate</h1>" in login and "PrefDisco · attribute relevance annotation" in login
    assert assets(login) == ["annotate.css", "submit.js", "annotate.js"]  # the shared helper first
    logged_in(client)
    assert '0 of 3 items completed. <a href="/annotate">Continue</a>' in client.get("/overview").text
    missing = client.get("/annotate/4")
    assert missing.status_code == 404 and '<a href="/annotate">Back to annotating</a>' in missing.text
    store = Store(db)
    for item in items:
        store.submit("alice", item.scenario_id, {c.attribute: True for c in item.candidates})
    overview = client.get("/overview").text
    assert "You answered all 3 items. You can still open any item to change your answers." in overview
    assert "<th>#</th><th>Task</th><th>Status</th>" in overview
    assert overview.count("<td>answered</td>") == 3 and '<a href="/annotate/3">3</a>' in overview
    assert "answered — you may change your answers" in client.get("/annotate/2").text


def test_rating_pages(tmp_path: Path) -> None:
    run, bench = rating_run(tmp_path)
    db = tmp_path / "r.sqlite"
    items = prepare_ratings(run, db, bench=bench, n_items=3).items
    client = TestClient(create_rating_app(db, Tokens()), follow_redirects=False)
    login = client.get("/login").text
    assert "<h1>Log in to rate responses</h1>" in login and "PrefDisco · response rating" in login
    assert assets(login) == ["annotate.css", "rate.css", "submit.js", "rate.js"]
    logged_in(client)
    assert '0 of 3 responses rated. <a href="/rate">Continue</a>' in client.get("/overview").text
    missing = client.get("/rate/4")
    assert missing.status_code == 404 and '<a href="/rate">Back to rating</a>' in missing.text
    for item in items:
        RatingStore(db).rate("alice", item.position, 2)
    overview = client.get("/overview").text
    assert "You rated all 3 responses. You can still open any item to change your score." in overview
    assert "<th>#</th><th>Task</th><th>Criterion</th><th>Status</th>" in overview
    assert overview.count("<td>rated</td>") == 3
    assert f"<td>{items[0].task}</td><td>{items[0].attribute}</td>" in overview
    assert "rated — you may change your score" in client.get("/rate/2").text
