from __future__ import annotations

import json
import re
import sqlite3
import threading
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from prefdisco.annotate.app import create_app
from prefdisco.annotate.auth import Tokens, parse_tokens
from prefdisco.annotate.service import prepare
from prefdisco.annotate.store import Store
from prefdisco.errors import UserError
from test_annotate_bench import HOSTILE, running_server, standard_bench

TOKENS = {"alice": "tok-alice-9f3b2c", "bob": "tok-bob-71d0aa"}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "annotations.sqlite"
    prepare(standard_bench(tmp_path), path)
    return path


def client_for(db: Path, tokens: dict[str, str] | None = None) -> TestClient:
    return TestClient(create_app(db, Tokens(tokens)), follow_redirects=False)


def login(client: TestClient, name: str, token: str | None = None) -> None:
    data = {"name": name} | ({"token": token} if token is not None else {})
    response = client.post("/login", data=data)
    assert response.status_code == 303, response.text


def full_answer(db: Path, position: int, value: bool = True) -> dict:
    item = Store(db).items()[position - 1]
    return {"scenario_id": item.scenario_id, "labels": {c.attribute: value for c in item.candidates}}


def count_rows(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT COUNT(*) FROM annotations").fetchone()[0]


def test_item_page_shows_task_candidates_and_progress(db: Path) -> None:
    client = client_for(db)
    assert client.get("/annotate").headers["location"] == "/login"
    login(client, "alice")
    assert client.get("/annotate").headers["location"] == "/annotate/1"
    page = client.get("/annotate/1")
    assert page.status_code == 200
    item = Store(db).items()[0]
    html = page.text
    assert "Is this attribute relevant for personalizing a response to this specific task?" in html
    assert "Scenario 1 of 5" in html and "0 of 5 completed" in html
    assert html.count('class="candidate"') == 20
    for candidate in item.candidates:
        assert f'data-attribute="{candidate.attribute}"' in html
    assert "A. first option" in html
    assert page.headers["content-security-policy"].startswith("default-src 'self'")
    assert client.get("/annotate/99").status_code == 404
    # candidates appear in the annotator's own order, which differs between annotators
    order = re.findall(r'data-attribute="([^"]+)"', html)
    bob = client_for(db)
    login(bob, "bob")
    assert re.findall(r'data-attribute="([^"]+)"', bob.get("/annotate/1").text) != order
    assert sorted(order) == sorted(c.attribute for c in item.candidates)


def test_benchmark_text_is_escaped(db: Path) -> None:
    client = client_for(db)
    login(client, "alice")
    pages = [client.get(f"/annotate/{n}").text for n in range(1, 6)]
    assert any("&lt;script&gt;alert(" in p for p in pages)  # the hostile question and description
    assert all("<script>alert" not in p and "<b>bold</b>" not in p for p in pages)
    assert HOSTILE not in "".join(pages)


def test_short_item_says_fewer_candidates(db: Path) -> None:
    client = client_for(db)
    login(client, "alice")
    position = next(i.position for i in Store(db).items() if i.task == "simpleqa")
    html = client.get(f"/annotate/{position}").text
    assert "shows 14 candidate attributes instead of" in html and html.count('class="candidate"') == 14
    assert 'id="short-note"' in html and 'id="short-note"' not in client.get("/annotate/1").text


def test_api_submission_progress_resume_and_replace(db: Path) -> None:
    client = client_for(db)
    login(client, "alice")
    response = client.post("/api/annotations", json=full_answer(db, 1, True))
    assert response.status_code == 200
    assert response.json() == {"saved": 20, "completed": 1, "total": 5, "next": "/annotate/2"}
    assert count_rows(db) == 20
    # stop and resume in a fresh browser session: the next open item comes up, answers are kept
    later = client_for(db)
    login(later, "alice")
    assert later.get("/annotate").headers["location"] == "/annotate/2"
    assert "answered" in later.get("/annotate/1").text and later.get("/annotate/1").text.count("checked") == 20
    # resubmitting replaces
    assert later.post("/api/annotations", json=full_answer(db, 1, False)).status_code == 200
    assert count_rows(db) == 20
    assert set(Store(db).answers("alice", full_answer(db, 1)["scenario_id"]).values()) == {False}


def test_form_fallback_saves_and_redirects(db: Path) -> None:
    client = client_for(db)
    login(client, "carol")
    answer = full_answer(db, 2, True)
    form = {f"label:{name}": "1" if i % 2 else "0" for i, name in enumerate(sorted(answer["labels"]))}
    response = client.post("/annotate/2", data=form)
    assert response.status_code == 303 and response.headers["location"] == "/annotate/3"
    stored = Store(db).answers("carol", answer["scenario_id"])
    assert stored == {name: bool(i % 2) for i, name in enumerate(sorted(answer["labels"]))}
    bad = dict(form)
    bad[next(iter(bad))] = "maybe"
    response = client.post("/annotate/2", data=bad)
    assert response.status_code == 422 and "Invalid answer" in response.text
    missing = dict(list(form.items())[:-1])
    response = client.post("/annotate/3", data=missing)
    assert response.status_code == 422 and "attribute(s) not shown" in response.text
    assert count_rows(db) == 20


def test_invalid_posts_get_4xx_and_change_nothing(db: Path) -> None:
    client = client_for(db)
    assert client.post("/api/annotations", json=full_answer(db, 1)).status_code == 401
    login(client, "alice")
    assert client.post("/api/annotations", json=full_answer(db, 1, False)).status_code == 200
    before = Store(db).label_rows()

    good = full_answer(db, 1, True)
    first = next(iter(good["labels"]))
    cases: list[tuple[dict, int, str]] = [
        ({"json": {**good, "scenario_id": "no-such-scenario"}}, 404, "unknown scenario_id"),
        ({"json": {**good, "labels": {**good["labels"], "invented": True}}}, 422, "not shown for scenario"),
        ({"json": {**good, "labels": dict(list(good["labels"].items())[:-1])}}, 422, "missing answer"),
        ({"json": {**good, "labels": {}}}, 422, "labels"),
        ({"json": {"scenario_id": good["scenario_id"]}}, 422, "labels: Field required"),
        ({"json": {**good, "labels": {**good["labels"], first: "yes"}}}, 422, "valid boolean"),
        ({"json": {**good, "labels": {**good["labels"], first: 1}}}, 422, "valid boolean"),
        ({"json": {**good, "labels": {**good["labels"], first: None}}}, 422, "valid boolean"),
        ({"json": {**good, "scenario_id": 17}}, 422, "scenario_id"),
        ({"json": {**good, "labels": list(good["labels"])}}, 422, "labels"),
        ({"json": {**good, "annotator": "mallory"}}, 422, "annotator: Extra inputs are not permitted"),
        ({"json": [good]}, 422, "request body"),
        ({"content": b"{not json", "headers": {"content-type": "application/json"}}, 400, "not valid JSON"),
        ({"data": {"scenario_id": good["scenario_id"]}}, 415, "application/json"),
        ({"content": json.dumps(good) + " " * 70_000, "headers": {"content-type": "application/json"}}, 413,
         "too large"),
    ]  # fmt: skip
    for kwargs, status, message in cases:
        response = client.post("/api/annotations", **kwargs)
        assert response.status_code == status, (kwargs, response.text)
        assert message in response.json()["detail"], response.json()
    assert Store(db).label_rows() == before


def test_body_cap_applies_without_content_length(db: Path) -> None:
    client = client_for(db)
    login(client, "alice")

    def chunks():  # a streamed (chunked) body: no Content-Length header
        for _ in range(20):
            yield b" " * 4096
        yield json.dumps(full_answer(db, 1)).encode()

    response = client.post("/api/annotations", content=chunks(), headers={"content-type": "application/json"})
    assert response.status_code == 413
    assert count_rows(db) == 0


def test_tokens_restrict_login_and_never_show_up(db: Path) -> None:
    client = client_for(db, TOKENS)
    page = client.get("/login").text
    assert 'name="token"' in page
    for name, token, status in (("alice", "wrong", 403), ("mallory", TOKENS["alice"], 403), ("", "x", 400)):
        response = client.post("/login", data={"name": name, "token": token})
        assert response.status_code == status
        assert TOKENS["alice"] not in response.text and "set-cookie" not in response.headers
    assert client.post("/api/annotations", json=full_answer(db, 1)).status_code == 401
    login(client, "alice", TOKENS["alice"])
    cookie = client.cookies.get("prefdisco_annotator")
    assert cookie and TOKENS["alice"] not in cookie
    pages = [client.get(f"/annotate/{n}").text for n in range(1, 6)] + [client.get("/overview").text]
    assert client.post("/api/annotations", json=full_answer(db, 1)).status_code == 200
    assert all(token not in page for page in pages for token in TOKENS.values())
    assert all(token.encode() not in p.read_bytes() for p in db.parent.glob("annotations.sqlite*")
               for token in TOKENS.values())  # fmt: skip
    # a cookie signed by another server (e.g. before a restart) is not accepted
    other = client_for(db, TOKENS)
    other.cookies.set("prefdisco_annotator", cookie)
    assert other.get("/annotate").headers["location"] == "/login"


def test_parse_tokens_from_options_and_file(tmp_path: Path) -> None:
    path = tmp_path / "tokens.txt"
    path.write_text("# annotators\nalice = s3cret-a\n\nbob=s3cret-b\n")
    tokens = parse_tokens(["carol=s3cret-c"], path)
    assert tokens.annotators == ["alice", "bob", "carol"]
    assert tokens.allows("alice", "s3cret-a") and not tokens.allows("alice", "s3cret-b")
    assert "s3cret" not in repr(tokens)
    with pytest.raises(UserError, match="line 2: expected NAME=TOKEN") as info:
        path.write_text("alice=ok\nbob-without-token-s3cret\n")
        parse_tokens([], path)
    assert "s3cret" not in str(info.value)
    with pytest.raises(UserError, match="already"):
        parse_tokens(["alice=a", "alice=b"])
    assert Tokens().allows("anyone", "") and not parse_tokens(["a=b"]).permits("anyone")


def test_twenty_concurrent_annotators_lose_no_write(db: Path) -> None:
    items = Store(db).items()
    per_annotator = sum(len(i.candidates) for i in items)
    barrier = threading.Barrier(20)
    errors: list[str] = []

    def annotate(base: str, name: str) -> None:
        with httpx.Client(base_url=base, timeout=60) as http:
            http.post("/login", data={"name": name})
            barrier.wait()
            for position in range(1, len(items) + 1):
                answer = full_answer(db, position, value=(position + len(name)) % 2 == 0)
                response = http.post("/api/annotations", json=answer)
                if response.status_code != 200:
                    errors.append(f"{name}: {response.status_code} {response.text}")

    with running_server(create_app(db)) as base:
        threads = [threading.Thread(target=annotate, args=(base, f"annotator{n:02d}")) for n in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []
    assert count_rows(db) == 20 * per_annotator
    store = Store(db)
    assert all(len(store.completed(f"annotator{n:02d}")) == len(items) for n in range(20))
