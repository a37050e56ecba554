from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

import prefdisco.annotate.serve_options as serve_options
from prefdisco.annotate.cli import register
from prefdisco.annotate.labels import LabelRow, write_csv
from prefdisco.annotate.service import prepare
from prefdisco.annotate.store import Store
from prefdisco.errors import UserError
from test_annotate_bench import standard_bench


def agreement_stats(rows: list[LabelRow]) -> Any:
    """``prefdisco.annotate.stats.agreement_stats``; the module imports scikit-learn and statsmodels (a second and a
    half), so it is imported when a test first calls it, not at collection."""
    from prefdisco.annotate.stats import agreement_stats as stats

    return stats(rows)


def majority(votes: Any) -> Any:
    """``prefdisco.annotate.stats.majority``, imported at first use (``agreement_stats``)."""
    from prefdisco.annotate.stats import majority as vote

    return vote(votes)


def rows_from(matrix: list[list[int]], llm: list[int], annotators: list[str] | None = None) -> list[LabelRow]:
    """matrix[item][annotator] -> label rows; item k is (scenario "s<k//3>", attribute "a<k%3>")."""
    names = annotators or [f"r{j}" for j in range(len(matrix[0]))]
    return [
        LabelRow(name, f"s{k // 3}", f"a{k % 3}", llm[k], labels[j])
        for k, labels in enumerate(matrix)
        for j, name in enumerate(names)
    ]


def test_two_raters_three_items_by_hand() -> None:
    # items: both say 1; both say 0; they split.
    # P_i = 1, 1, 0 -> P̄ = 2/3; p(1) = p(0) = 3/6 -> P_e = 1/2; κ = (2/3 - 1/2) / (1 - 1/2) = 1/3
    stats = agreement_stats(rows_from([[1, 1], [0, 0], [1, 0]], llm=[1, 0, 0]))
    assert stats.fleiss_kappa == pytest.approx(1 / 3)
    assert (stats.n_items, stats.n_annotators) == (3, 2)
    # vs the other rater: agree on items 1 and 2 -> 2/3 each
    assert stats.annotator_accuracy_vs_majority == {"r0": pytest.approx(2 / 3), "r1": pytest.approx(2 / 3)}
    # majority of both: item 3 is a tie -> relevant (1); so r0 matches all three, r1 two of three
    assert stats.annotator_accuracy_vs_majority_all == {"r0": 1.0, "r1": pytest.approx(2 / 3)}
    assert stats.mean_accuracy_vs_majority == pytest.approx(2 / 3)
    # human majority [1, 0, 1] vs LLM [1, 0, 0]: TP 1, FN 1, TN 1, FP 0
    llm = stats.llm_vs_majority
    assert llm["accuracy"] == pytest.approx(2 / 3)
    assert llm["precision"] == 1.0
    assert llm["recall"] == 0.5
    # Cohen: p_o = 2/3; p_e = P(h=1)P(l=1) + P(h=0)P(l=0) = 2/3·1/3 + 1/3·2/3 = 4/9; κ = (2/3-4/9)/(5/9) = 0.4
    assert llm["cohen_kappa"] == pytest.approx(0.4)


def test_fleiss_kappa_matches_statsmodels_on_hand_made_data() -> None:
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa  # a second to import

    rng = random.Random(11)
    truth = [rng.random() < 0.4 for _ in range(30)]
    matrix = [[int(t) if rng.random() < 0.8 else int(not t) for _ in range(4)] for t in truth]
    stats = agreement_stats(rows_from(matrix, llm=[int(t) for t in truth]))
    table, _ = aggregate_raters(np.array(matrix))
    assert stats.fleiss_kappa == pytest.approx(fleiss_kappa(table, method="fleiss"))
    assert 0 < stats.fleiss_kappa < 1
    assert (stats.n_items, stats.n_annotators) == (30, 4)


def test_tie_rule_counts_a_tie_as_relevant() -> None:
    assert majority(np.array([[1, 0]])).tolist() == [1]
    assert majority(np.array([[1, 1, 0, 0], [1, 0, 0, 0], [1, 1, 1, 0]])).tolist() == [1, 0, 1]
    # four annotators, leave-one-out: for r0 the others (three) never tie; with all four, item 0 is a 2-2 tie
    stats = agreement_stats(rows_from([[0, 0, 1, 1], [0, 0, 0, 1]], llm=[1, 0]))
    assert stats.annotator_accuracy_vs_majority_all == {"r0": 0.5, "r1": 0.5, "r2": 1.0, "r3": 0.5}
    assert stats.llm_vs_majority["accuracy"] == 1.0  # majority [1 (tie), 0] equals the LLM's [1, 0]
    assert "tie" in stats.tie_rule and "relevant (1)" in stats.tie_rule


def test_three_annotators_leave_one_out_accuracy() -> None:
    matrix = [[1, 1, 0], [0, 1, 0], [1, 1, 1], [0, 0, 1]]
    stats = agreement_stats(rows_from(matrix, llm=[1, 1, 1, 0], annotators=["ann", "ben", "cy"]))
    # others of ann: (ben, cy) -> ties count as 1: [1, 1, 1, 1] vs ann [1, 0, 1, 0] -> 2/4
    # others of ben: (ann, cy) -> [1, 0, 1, 1] vs ben [1, 1, 1, 0] -> 2/4
    # others of cy:  (ann, ben) -> [1, 1, 1, 0] vs cy [0, 0, 1, 1] -> 1/4
    assert stats.annotator_accuracy_vs_majority == {"ann": 0.5, "ben": 0.5, "cy": 0.25}
    assert stats.mean_accuracy_vs_majority == pytest.approx(5 / 12)


def test_fewer_than_two_annotators_or_no_data_gives_null_with_reason() -> None:
    one = agreement_stats(rows_from([[1], [0], [1]], llm=[1, 1, 1]))
    assert one.fleiss_kappa is None and "at least 2 annotators" in (one.fleiss_kappa_note or "")
    assert one.annotator_accuracy_vs_majority == {"r0": None} and one.mean_accuracy_vs_majority is None
    assert one.llm_vs_majority["accuracy"] == pytest.approx(2 / 3)  # against the one human
    empty = agreement_stats([])
    assert empty.fleiss_kappa is None and empty.n_items == 0 and empty.n_annotators == 0
    assert set(empty.llm_vs_majority.values()) == {None}
    same = agreement_stats(rows_from([[1, 1], [1, 1]], llm=[1, 1]))
    assert same.fleiss_kappa is None and "same label" in (same.fleiss_kappa_note or "")
    assert same.llm_vs_majority["cohen_kappa"] is None and same.llm_vs_majority["accuracy"] == 1.0
    json.dumps(same.to_json())  # None, never NaN, in the JSON


def test_items_not_rated_by_everyone_are_left_out() -> None:
    rows = rows_from([[1, 0], [0, 0], [1, 1]], llm=[1, 0, 1])
    rows.append(LabelRow("r0", "s9", "extra", 1, 1))  # only r0 labelled this one
    stats = agreement_stats(rows)
    assert (stats.n_items, stats.n_items_partial) == (3, 1)
    assert stats.fleiss_kappa == pytest.approx(agreement_stats(rows[:-1]).fleiss_kappa)


# -- CLI ------------------------------------------------------------------------------------------------


@pytest.fixture
def cli() -> typer.Typer:
    app = typer.Typer()
    register(app)
    return app


def test_stats_cli_json_from_db_and_csv_agree(tmp_path: Path, cli: typer.Typer) -> None:
    db = tmp_path / "a.sqlite"
    prepare(standard_bench(tmp_path), db)
    store = Store(db)
    for name, flip in (("alice", 0), ("bob", 1), ("carol", 2)):
        for item in store.items():
            labels = {c.attribute: c.llm_relevant for c in item.candidates}
            target = sorted(labels)[flip]
            labels[target] = not labels[target]
            store.submit(name, item.scenario_id, labels)
    runner = CliRunner()
    out = tmp_path / "labels.csv"
    result = runner.invoke(cli, ["annotate", "export", "--db", str(db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    from_db = json.loads(runner.invoke(cli, ["annotate", "stats", "--db", str(db), "--json"]).stdout)
    from_csv = json.loads(runner.invoke(cli, ["annotate", "stats", "--from", str(out), "--json"]).stdout)
    assert from_db == from_csv
    for key in ("fleiss_kappa", "annotator_accuracy_vs_majority", "mean_accuracy_vs_majority",
                "llm_vs_majority", "n_items", "n_annotators"):  # fmt: skip
        assert key in from_db
    assert set(from_db["llm_vs_majority"]) == {"accuracy", "precision", "recall", "cohen_kappa"}
    assert from_db["n_annotators"] == 3 and from_db["n_items"] == 94
    # each annotator flipped a different attribute per item, so the majority of all three is the LLM's flag
    assert from_db["llm_vs_majority"]["accuracy"] == 1.0
    assert from_db["fleiss_kappa"] == pytest.approx(agreement_stats(store.label_rows()).fleiss_kappa)
    table = runner.invoke(cli, ["annotate", "stats", "--db", str(db)])
    assert table.exit_code == 0 and "Fleiss' kappa" in table.stdout and "alice" in table.stdout


def test_stats_cli_needs_exactly_one_source_and_documents_the_tie_rule(tmp_path: Path, cli: typer.Typer) -> None:
    runner = CliRunner()
    help_text = " ".join(runner.invoke(cli, ["annotate", "stats", "--help"]).stdout.split())
    assert "tie in a majority vote" in help_text and "counts as relevant" in help_text
    result = runner.invoke(cli, ["annotate", "stats"])
    assert isinstance(result.exception, UserError) and "exactly one of --db or --from" in str(result.exception)
    write_csv([LabelRow("a", "s", "x", 1, 1)], tmp_path / "one.csv")
    result = runner.invoke(cli, ["annotate", "stats", "--from", str(tmp_path / "one.csv"), "--json"])
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert payload["fleiss_kappa"] is None and "at least 2 annotators" in payload["fleiss_kappa_note"]


def test_serve_cli_prints_summary_without_tokens(
    tmp_path: Path, cli: typer.Typer, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []
    monkeypatch.setattr(serve_options, "serve_app", lambda *args: calls.append(args))
    bench, db = standard_bench(tmp_path), tmp_path / "a.sqlite"
    args = [
        "annotate",
        "serve",
        str(bench),
        "--db",
        str(db),
        "--token",
        "alice=SEKRIT-1",
        "--token",
        "bob=SEKRIT-2",
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "5 items sampled and stored" in result.stdout
    assert "access tokens configured for: alice, bob" in result.stdout
    assert "only 1 distinct problem" in result.stdout
    assert "SEKRIT" not in result.output
    (app, host, port) = calls[0]
    server = app.state.server  # the one app, hosting the default study alone
    assert [study.pages.path for study in server.studies] == ["/annotate"]
    called_db, tokens = server.studies[0].store.path, server.tokens
    assert (called_db, host, port) == (db, "127.0.0.1", 8000) and tokens.allows("bob", "SEKRIT-2")
