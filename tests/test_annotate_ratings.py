"""Response rating: stratified seeded sampling, the store, the blind pages and the JSON API, the export.

The run folders are written by ``test_calibrate.write_run``; the benchmark by ``benchio.write_bench``.
"""

from __future__ import annotations

import csv
import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
import typer
from starlette.testclient import TestClient
from typer.testing import CliRunner

from prefdisco import benchio
from prefdisco.analysis.validity.calibrate import calibrate
from prefdisco.annotate.auth import Tokens
from prefdisco.annotate.cli import register
from prefdisco.annotate.rating_app import create_rating_app
from prefdisco.annotate.rating_items import Judged, RatingItem, judge_level, sample_ratings
from prefdisco.annotate.rating_service import export_ratings, prepare_ratings
from prefdisco.annotate.rating_store import RatingStore
from prefdisco.errors import UserError
from prefdisco.evaluation.settings.config import scenario_set_hash
from prefdisco.schema import Problem, Scenario
from scripted import make_scenario
from test_annotate_bench import HOSTILE, make_attributes
from test_calibrate import write_run

MODEL = "mockllm/secret-model-name"
CRITERIA = ("Explanation depth", "Use of analogies", "Technical vocabulary")  # weights 0.5, 0.3, 0.2
MODES = ("baseline", "discovery", "oracle")


def scenarios(n: int = 4) -> list[Scenario]:
    out = []
    for i in range(1, n + 1):
        question = HOSTILE if i == 1 else f"Problem {i}: how many ferry trips carry {10 * i} cars?"
        problem = Problem(id=f"p{i}", benchmark="demo", question=question, answer="3", answer_type="integer")
        out.append(make_scenario(f"s{i}", problem=problem))
    return out


def judge_score(i: int) -> float:
    """Judge scores cycling through the levels, each a quarter off an integer (so none is an integer)."""
    return [1.25, 2.25, 2.75, 3.25, 4.25, 4.75][i % 6]


def rating_run(tmp_path: Path, models: tuple[str, ...] = (MODEL,), epochs: int = 1) -> tuple[Path, Path]:
    """A benchmark of 4 scenarios and a run of it (3 conditions, 3 criteria per response, run.json)."""
    bench_scenarios = scenarios()
    bench = tmp_path / "bench"
    benchio.write_bench(bench, bench_scenarios, [bench_scenarios[0].persona], make_attributes())
    samples, responses, i = {}, {}, 0
    for model in models:
        for s in bench_scenarios:
            for mode in MODES:
                for epoch in range(1, epochs + 1):
                    key = (model, "demo", s.id, mode, None, epoch)
                    criteria = {}
                    for name, weight in zip(CRITERIA, (0.5, 0.3, 0.2), strict=True):
                        criteria[name] = (weight, judge_score(i))
                        i += 1
                    samples[key] = criteria
                    responses[key] = f"Answer to {s.id}, trial {epoch}: take it step by step. {HOSTILE}"
    run = write_run(tmp_path / "run", samples, responses)
    fingerprint = {"scenario_set": scenario_set_hash(bench_scenarios), "n_scenarios": len(bench_scenarios)}
    (run / "run.json").write_text(json.dumps(fingerprint))
    return run, bench


def population(counts: dict[tuple[str, int], int]) -> list[Judged]:
    """Judged criteria: ``counts[(mode, level)]`` of each, judge score = the level."""
    out = []
    for (mode, level), n in counts.items():
        for j in range(n):
            out.append(Judged(("m", "t", f"{mode}-{level}-{j}", mode, -1, 1, "a"), float(level)))
    return out


def test_sampling_is_stratified_by_mode_and_judge_level_and_seeded() -> None:
    full = population({(mode, level): 4 for mode in MODES for level in range(1, 6)})  # 15 strata of 4
    chosen = sample_ratings(full, n=30, seed=3)
    assert Counter(j.stratum for j in chosen) == {(mode, level): 2 for mode in MODES for level in range(1, 6)}
    assert sample_ratings(full, n=30, seed=3) == chosen  # deterministic given the seed
    assert sample_ratings(list(reversed(full)), n=30, seed=3) == chosen  # ... whatever the input order
    assert sample_ratings(full, n=30, seed=4) != chosen
    # a stratum with one item gives what it has; the 29 others spread as 2 each over 14 strata plus one extra
    short = population({(mode, level): (1 if (mode, level) == ("oracle", 5) else 4) for mode in MODES
                        for level in range(1, 6)})  # fmt: skip
    counts = Counter(j.stratum for j in sample_ratings(short, n=30, seed=0))
    assert counts[("oracle", 5)] == 1
    assert sorted(counts.values()) == [1] + [2] * 13 + [3]
    assert len(sample_ratings(full, n=500)) == 60  # all there are
    assert [judge_level(x) for x in (1.0, 1.49, 1.5, 2.5, 4.75, 5.0)] == [1, 1, 2, 3, 5, 5]


def test_first_start_draws_and_stores_items_later_starts_check_options(tmp_path: Path) -> None:
    run, bench = rating_run(tmp_path)
    db = tmp_path / "ratings.sqlite"
    with pytest.raises(UserError, match=r"--bench: give the benchmark the run evaluated"):
        prepare_ratings(run, db)
    prepared = prepare_ratings(run, db, bench=bench, n_items=15, seed=1)
    assert prepared.created and len(prepared.items) == 15 and prepared.key_columns == []
    assert [i.position for i in prepared.items] == list(range(1, 16))
    again = prepare_ratings(run, db)
    assert not again.created and again.items == prepared.items and again.n_items == 15 and again.seed == 1
    with pytest.raises(UserError, match=r"drawn with --items 15; drop the option or use a new --db"):
        prepare_ratings(run, db, n_items=20)
    with pytest.raises(UserError, match=r"drawn with --seed 1"):
        prepare_ratings(run, db, seed=2)
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(UserError, match=r"its rating items were drawn from .*run, not RUN_DIR .*other"):
        prepare_ratings(other, db)
    item = prepared.items[0]
    scenario = next(s for s in scenarios() if s.id == item.scenario_id)
    criterion = scenario.criterion(item.attribute)
    assert item.problem_text == scenario.problem.prompt_text()
    assert item.response.startswith(f"Answer to {item.scenario_id}, trial 1")
    assert item.levels == tuple(criterion.levels[k] for k in range(1, 6))
    assert (item.description, item.preferred_value) == (criterion.description, criterion.preferred_value)


def test_items_are_stratified_over_the_run(tmp_path: Path) -> None:
    run, bench = rating_run(tmp_path)
    items = prepare_ratings(run, tmp_path / "r.sqlite", bench=bench, n_items=15).items
    # the i-th criterion written (scenario, mode, criterion order) has judge_score(i)
    order = [(s.id, mode, name) for s in scenarios() for mode in MODES for name in CRITERIA]
    level = {key: judge_level(judge_score(i)) for i, key in enumerate(order)}
    strata = Counter((i.mode, level[(i.scenario_id, i.mode, i.attribute)]) for i in items)
    assert strata == {(mode, lv): 1 for mode in MODES for lv in range(1, 6)}


def test_the_benchmark_must_be_the_one_the_run_evaluated(tmp_path: Path) -> None:
    run, _ = rating_run(tmp_path)
    changed = scenarios()
    changed[2] = make_scenario("s3", problem=changed[2].problem.model_copy(update={"question": "Another question"}))
    other = tmp_path / "other-bench"
    benchio.write_bench(other, changed, [changed[0].persona], make_attributes())
    with pytest.raises(UserError, match=r"--bench .*other-bench: not the benchmark .*run evaluated \(run\.json"):
        prepare_ratings(run, tmp_path / "r.sqlite", bench=other)
    (run / "run.json").unlink()  # no run.json: every scored scenario must still be in the benchmark
    smaller = tmp_path / "smaller"
    benchio.write_bench(smaller, scenarios()[:2], [changed[0].persona], make_attributes())
    with pytest.raises(UserError, match=r"--bench .*smaller: 2 scenario\(s\) of .*run are not in it \(first: 's3'\)"):
        prepare_ratings(run, tmp_path / "r.sqlite", bench=smaller)


def client_for(db: Path, tokens: dict[str, str] | None = None) -> TestClient:
    return TestClient(create_rating_app(db, Tokens(tokens)), follow_redirects=False)


def login(client: TestClient, name: str, token: str | None = None) -> None:
    response = client.post("/login", data={"name": name} | ({"token": token} if token else {}))
    assert response.status_code == 303 and response.headers["location"] == "/rate", response.text


def test_the_page_shows_problem_response_and_criterion_and_never_the_judge_score(tmp_path: Path) -> None:
    run, bench = rating_run(tmp_path)
    db = tmp_path / "r.sqlite"
    items = prepare_ratings(run, db, bench=bench, n_items=15).items
    client = client_for(db)
    assert client.get("/rate").headers["location"] == "/login"
    login(client, "alice")
    assert client.get("/rate").headers["location"] == "/rate/1"
    pages = [client.get(f"/rate/{i.position}").text for i in items]
    for item, html in zip(items, pages, strict=True):
        assert f"Response {item.position} of 15" in html
        assert item.description in html and item.preferred_value in html
        for anchor in item.levels:
            assert anchor in html
        assert html.count('type="radio" name="score"') == 5
    assert all("&lt;script&gt;alert(" in p and "<script>alert" not in p for p in pages)  # shown as text
    judge_strings = {f"{judge_score(i):g}" for i in range(6)}  # 1.25, 2.25, ... 4.75
    for html in [*pages, client.get("/overview").text]:
        assert not any(s in html for s in judge_strings)
        assert MODEL not in html and "secret-model-name" not in html
        assert not any(mode in html for mode in MODES)  # nor the condition
    # the store has no column for it, and a rating item no field
    with sqlite3.connect(db) as conn:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(rating_items)")]
    assert not any("judge" in c or c == "score" for c in columns)
    assert not any("judge" in f or "score" in f for f in RatingItem.__dataclass_fields__)
    assert client.get("/rate/99").status_code == 404


def test_rating_through_api_and_form_then_export(tmp_path: Path) -> None:
    run, bench = rating_run(tmp_path)
    db = tmp_path / "r.sqlite"
    items = prepare_ratings(run, db, bench=bench, n_items=6).items
    anonymous = client_for(db)
    assert anonymous.post("/api/ratings", json={"position": 1, "score": 3}).status_code == 401
    client = client_for(db, {"alice": "tok-a-1234", "bob": "tok-b-5678"})
    assert client.post("/login", data={"name": "alice", "token": "wrong"}).status_code == 403
    login(client, "alice", "tok-a-1234")
    response = client.post("/api/ratings", json={"position": 1, "score": 4})
    assert response.status_code == 200
    assert response.json() == {"saved": 1, "completed": 1, "total": 6, "next": "/rate/2"}
    assert client.post("/api/ratings", json={"position": 1, "score": 5}).json()["completed"] == 1  # replaced
    assert client.post("/rate/2", data={"score": "2"}).headers["location"] == "/rate/3"
    assert client.post("/rate/3", data={"score": "9"}).status_code == 422
    assert client.post("/api/ratings", json={"position": 3, "score": 0}).status_code == 422
    assert client.post("/api/ratings", json={"position": 3, "score": "4"}).status_code == 422  # strict int
    assert client.post("/api/ratings", json={"position": 99, "score": 4}).status_code == 404
    assert client.post("/api/ratings", content=b"x", headers={"content-type": "text/plain"}).status_code == 415
    assert "rated — you may change your score" in client.get("/rate/1").text
    bob = client_for(db, {"alice": "tok-a-1234", "bob": "tok-b-5678"})
    login(bob, "bob", "tok-b-5678")
    assert bob.get("/rate").headers["location"] == "/rate/1"  # bob's own progress
    bob.post("/api/ratings", json={"position": 2, "score": 3})

    out = tmp_path / "ratings.csv"
    n, columns = export_ratings(db, out)
    assert n == 3 and columns == ["annotator", "scenario_id", "mode", "attribute", "score"]
    with out.open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == columns
    expected = [("alice", items[0], 5), ("alice", items[1], 2), ("bob", items[1], 3)]
    assert rows[1:] == [[a, i.scenario_id, i.mode, i.attribute, str(s)] for a, i, s in expected]
    tokens_in_db = b"".join(p.read_bytes() for p in tmp_path.glob("r.sqlite*"))
    assert b"tok-a-1234" not in tokens_in_db and b"tok-b-5678" not in tokens_in_db


def test_export_names_model_and_epoch_when_the_run_has_several_and_calibrate_reads_it(tmp_path: Path) -> None:
    run, bench = rating_run(tmp_path, models=("m-one", "m-two"), epochs=2)
    db = tmp_path / "r.sqlite"
    prepared = prepare_ratings(run, db, bench=bench, n_items=20)
    assert prepared.key_columns == ["model", "epoch"]
    store = RatingStore(db)
    for item in prepared.items:  # the annotator gives the judge's level: calibration is then near identity
        level = judge_level(_judge_of(run, item))
        store.rate("alice", item.position, level)
        store.rate("bob", item.position, level)
    out = tmp_path / "ratings.csv"
    n, columns = export_ratings(db, out)
    assert n == 40 and columns == ["annotator", "model", "scenario_id", "mode", "epoch", "attribute", "score"]
    result = calibrate(out, run, n_boot=0)
    assert (result.n_pairs, result.n_ratings, result.n_annotators) == (20, 40, 2)
    assert result.human_alpha == pytest.approx(1.0)  # the two annotators agree everywhere
    assert result.weighted_kappa == pytest.approx(1.0)  # and with the rounded judge


def _judge_of(run: Path, item: RatingItem) -> float:
    with (run / "attributes.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            if (row["model"], row["scenario_id"], row["mode"], int(row["epoch"]), row["attribute"]) == (
                item.model, item.scenario_id, item.mode, item.epoch, item.attribute,
            ):  # fmt: skip
                return float(row["score"])
    raise AssertionError(item)


def test_cli_export_ratings(tmp_path: Path) -> None:
    run, bench = rating_run(tmp_path)
    db = tmp_path / "r.sqlite"
    cli = typer.Typer()
    register(cli)
    runner = CliRunner()
    result = runner.invoke(cli, ["annotate", "export-ratings", "--db", str(db), "--out", str(tmp_path / "o.csv")])
    assert isinstance(result.exception, UserError) and "annotation database not found" in str(result.exception)
    prepare_ratings(run, db, bench=bench, n_items=3)
    RatingStore(db).rate("carol", 2, 1)
    result = runner.invoke(cli, ["annotate", "export-ratings", "--db", str(db), "--out", str(tmp_path / "o.csv")])
    assert result.exit_code == 0, result.output
    assert "wrote 1 ratings" in result.stdout
    assert (tmp_path / "o.csv").read_text().splitlines()[0] == "annotator,scenario_id,mode,attribute,score"
    help_text = " ".join(runner.invoke(cli, ["annotate", "serve-ratings", "--help"]).stdout.split())
    assert "never the judge's score" in help_text and "--bench" in help_text and "--items" in help_text
