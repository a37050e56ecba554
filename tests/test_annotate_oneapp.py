"""One annotation app, three studies: ``annotate serve --study ...`` hosts the relevance, rating and play studies
from one database behind one log-in (one token set, one cookie, one overview), each under its own path."""

from __future__ import annotations

import csv
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

import prefdisco.annotate.serve_options as serve_options
from play_world import JUDGE, MODEL, QUESTIONS
from prefdisco import cli
from prefdisco.annotate.auth import CookieSigner, Tokens
from prefdisco.annotate.rating_store import RatingStore
from prefdisco.annotate.service import RelevanceStudy, prepare
from prefdisco.annotate.store import Store
from prefdisco.annotate.study import STUDIES, ServeOptions, Study, study_class
from prefdisco.annotate.task_app import COOKIE, StudyServer
from test_annotate_bench import standard_bench
from test_annotate_play import REPLIES
from test_annotate_ratings import rating_run

TOKEN = "alice-0NE-app-7f3c"


def serve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> tuple[Any, str, list[Any]]:
    """``prefdisco annotate serve`` with the server replaced by a recorder: (its result, its output, the calls)."""
    calls: list[Any] = []
    monkeypatch.setattr(serve_options, "serve_app", lambda *args: calls.append(args))
    run, bench = rating_run(tmp_path)
    args = ["annotate", "serve", str(bench), "--db", str(tmp_path / "one.sqlite"), "--run", str(run), *extra]
    result = CliRunner().invoke(cli.app, args)
    return result, result.output, calls


def test_the_registry_names_each_study_by_its_plug_in() -> None:
    assert list(STUDIES) == ["relevance", "rating", "play"]
    classes = [study_class(name) for name in STUDIES]
    assert all(issubclass(c, Study) and c.name == n for c, n in zip(classes, STUDIES, strict=True))
    prefixes = [p for c in classes for p in (c.pages.path, c.pages.api)]
    assert len(set(prefixes)) == len(prefixes)  # each study under its own paths
    assert [c.pages.path for c in classes] == ["/annotate", "/rate", "/play"]
    tables = [set(re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", c.store.SCHEMA)) for c in classes]
    assert all(tables) and sum(map(len, tables)) == len(set().union(*tables))  # each study's tables its own


def test_one_server_hosts_three_studies_from_one_database_with_one_log_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    study = ["--study", "relevance", "--study", "rating", "--study", "play"]
    play = ["--model", MODEL, "--judge-model", JUDGE, "--items", "3", "--per-task", "1"]
    result, output, calls = serve(tmp_path, monkeypatch, *study, *play, "--token", f"alice={TOKEN}")
    assert result.exit_code == 0, output
    assert "relevance: " in output and "rating: 3 rating items drawn and stored" in output
    assert "play: " in output and "scenarios drawn and stored" in output
    assert "studies: relevance (/annotate), rating (/rate), play (/play)" in output and TOKEN not in output
    assert len(calls) == 1  # one server
    app, host, port = calls[0]
    assert (host, port) == ("127.0.0.1", 8000)
    db = tmp_path / "one.sqlite"
    server = app.state.server
    assert [type(s).__name__ for s in server.studies] == ["AnnotationApp", "RatingApp", "PlayApp"]
    assert {s.tokens is server.tokens and s.signer is server.signer for s in server.studies} == {True}

    client = TestClient(app, follow_redirects=False)
    assert client.get("/").headers["location"] == "/login"
    for path in ("/annotate", "/rate", "/play", "/overview"):
        assert client.get(path).headers["location"] == "/login"
    assert client.post("/api/ratings", json={"position": 1, "score": 4}).status_code == 401
    login = client.get("/login").text
    assert "<h1>Log in</h1>" in login and "PrefDisco · human studies" in login
    assert client.post("/login", data={"name": "alice", "token": "wrong"}).status_code == 403
    logged = client.post("/login", data={"name": "alice", "token": TOKEN})
    assert logged.status_code == 303 and logged.headers["location"] == "/overview"  # several studies: the overview
    assert list(client.cookies.keys()) == [COOKIE]  # one cookie for every study

    overview = client.get("/overview").text
    relevance_items = Store(db).items()
    assert f'0 of {len(relevance_items)} items completed. <a href="/annotate">Continue</a>' in overview
    assert '0 of 3 responses rated. <a href="/rate">Continue</a>' in overview
    assert 'dialogues finished. <a href="/play">Continue</a>' in overview
    assert overview.count('<section class="card study"') == 3
    for brand in ("Attribute relevance annotation", "Response rating", "Play the user"):
        assert brand in overview

    # the relevance study, under /annotate
    assert client.get("/annotate").headers["location"] == "/annotate/1"
    first = relevance_items[0]
    labels = {c.attribute: True for c in first.candidates}
    saved = client.post("/api/annotations", json={"scenario_id": first.scenario_id, "labels": labels})
    assert saved.status_code == 200 and saved.json()["completed"] == 1
    # the rating study, under /rate, same session
    assert client.get("/rate").headers["location"] == "/rate/1"
    assert "How well does the response meet this criterion" in client.get("/rate/1").text
    rated = client.post("/api/ratings", json={"position": 1, "score": 4})
    assert rated.status_code == 200 and rated.json() == {"saved": 1, "completed": 1, "total": 3, "next": "/rate/2"}
    # the play study, under /play, same session
    assert client.get("/play").headers["location"] == "/play/1"
    assert QUESTIONS[0] in client.get("/play/1").text
    replied = client.post("/api/play", json={"position": 1, "reply": REPLIES[0]})
    assert replied.status_code == 200 and replied.json()["next"] == "/play/1"
    assert QUESTIONS[1] in client.get("/play/1").text

    # one database holds every study's answers, under the one name
    assert Store(db).completed("alice") == {first.scenario_id}
    assert RatingStore(db).rated("alice") == {1: 4}
    overview = client.get("/overview").text
    assert len(relevance_items) == 1 and 'id="all-done-annotate"' in overview  # the one relevance item answered
    assert "You answered all 1 items." in overview and "1 of 3 responses rated." in overview

    # each study's export from the one database, through its plug-in (export --study NAME)
    runner = CliRunner()
    for name, columns in (("relevance", "annotator,scenario_id,attribute"), ("rating", "annotator,scenario_id,mode")):
        out = tmp_path / f"{name}.csv"
        exported = runner.invoke(cli.app, ["annotate", "export", "--study", name, "--db", str(db), "--out", str(out)])
        assert exported.exit_code == 0, exported.output
        rows = list(csv.DictReader(out.open()))
        assert out.read_text().startswith(columns) and {row["annotator"] for row in rows} == {"alice"}
    assert [row["score"] for row in csv.DictReader((tmp_path / "rating.csv").open())] == ["4"]
    assert client.post("/logout").headers["location"] == "/login"
    client.cookies.clear()
    for path in ("/annotate/1", "/rate/1", "/play/1"):  # one log-out ends every study's session
        assert client.get(path).headers["location"] == "/login"


def test_the_one_command_refuses_options_no_served_study_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    result, output, calls = serve(tmp_path, monkeypatch, "--study", "relevance")  # --run given, rating not served
    assert result.exit_code == 2 and "--run: none of the studies served reads it (add --study rating)" in output
    result, output, calls = serve(tmp_path, monkeypatch, "--study", "survey")
    assert result.exit_code == 2 and "--study: expected one of relevance, rating, play, got 'survey'" in output
    result, output, calls = serve(tmp_path, monkeypatch, "--study", "rating", "--study", "rating")
    assert result.exit_code == 2 and "each study may be named once" in output
    result, output, calls = serve(tmp_path, monkeypatch, "--study", "rating", "--study", "play")
    assert result.exit_code == 2 and "--model: study play needs it" in output
    assert calls == [] and not (tmp_path / "one.sqlite").exists()  # nothing written, nothing served


def test_two_studies_may_not_share_a_path(tmp_path: Path) -> None:
    db = tmp_path / "a.sqlite"
    prepare(standard_bench(tmp_path), db, per_task=1)
    tokens, signer = Tokens(), CookieSigner()
    one, two = (RelevanceStudy(db, ServeOptions()).handlers(tokens, signer) for _ in range(2))
    with pytest.raises(ValueError, match="share the path prefix"):
        StudyServer([one, two])
    other = RelevanceStudy(db, ServeOptions()).handlers(Tokens({"x": "y"}), signer)
    with pytest.raises(ValueError, match="one token set"):
        StudyServer([one, _renamed(other)])


def _renamed(app: Any) -> Any:
    """The same study under another path (to reach the token check past the path check)."""
    app.pages = replace(app.pages, path="/other", api="/api/other")
    return app


def test_the_old_commands_are_one_study_aliases_of_the_one_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    calls: list[Any] = []
    monkeypatch.setattr(serve_options, "serve_app", lambda *args: calls.append(args))
    run, bench = rating_run(tmp_path)
    db = tmp_path / "r.sqlite"
    args = ["annotate", "serve-ratings", str(run), "--bench", str(bench), "--db", str(db), "--items", "3"]
    result = CliRunner().invoke(cli.app, args)
    assert result.exit_code == 0, result.output
    assert "3 rating items drawn and stored" in result.output and "rating: " not in result.output  # one study
    ((app, _, _),) = calls
    assert [type(s).__name__ for s in app.state.server.studies] == ["RatingApp"]
    client = TestClient(app, follow_redirects=False)
    assert client.post("/login", data={"name": "bob"}).headers["location"] == "/rate"  # straight to its items
    assert "<h1>Log in to rate responses</h1>" in client.get("/login").text  # the study's own words
    again = CliRunner().invoke(cli.app, ["annotate", "serve", str(bench), "--db", str(db), "--study", "rating",
                                         "--run", str(run)])  # fmt: skip
    assert again.exit_code == 0 and "3 rating items loaded from the database" in again.output
