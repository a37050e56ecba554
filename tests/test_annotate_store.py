from __future__ import annotations

import csv
import sqlite3
from pathlib import Path

import pytest

from prefdisco import benchio
from prefdisco.annotate.labels import COLUMNS, LabelRow, read_csv, write_csv
from prefdisco.annotate.service import export, prepare
from prefdisco.annotate.store import Store, SubmissionError
from prefdisco.errors import UserError
from test_annotate_bench import standard_bench, standard_scenarios, write_bench


def answers_for(store: Store, scenario_id: str, value: bool = True) -> dict[str, bool]:
    item = next(i for i in store.items() if i.scenario_id == scenario_id)
    return {c.attribute: value for c in item.candidates}


def count_rows(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT COUNT(*) FROM annotations").fetchone()[0]


def test_items_are_fixed_at_first_start(tmp_path: Path) -> None:
    bench, db = standard_bench(tmp_path), tmp_path / "a.sqlite"
    first = prepare(bench, db, per_task=2, seed=7)
    assert first.created and len(first.items) == 5
    again = prepare(bench, db)  # no options: the stored sample is used
    assert not again.created
    assert again.items == first.items and (again.per_task, again.seed) == (2, 7)
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT COUNT(*) FROM candidates").fetchone()[0] == sum(
            len(i.candidates) for i in first.items
        )
    assert any("simpleqa" in note and "only 1 distinct problem" in note for note in first.notes)
    assert any("4 relevant and 10 irrelevant" in note for note in first.notes)
    # the database is keyed by the folder's one content hash, the manifest's
    assert Store(db).meta()["bench_content_hash"] == benchio.read_bench(bench).manifest["content_hash"]


def test_restart_with_other_options_or_benchmark_is_refused(tmp_path: Path) -> None:
    bench, db = standard_bench(tmp_path), tmp_path / "a.sqlite"
    prepare(bench, db)
    with pytest.raises(UserError, match="sampled with --seed 0"):
        prepare(bench, db, seed=3)
    with pytest.raises(UserError, match="sampled with --per-task 2"):
        prepare(bench, db, per_task=3)
    other = write_bench(tmp_path / "other", standard_scenarios()[:3])
    with pytest.raises(UserError, match="different benchmark"):
        prepare(other, db)
    # the same data written again elsewhere (a new manifest, created_at and all) is the same benchmark
    copy = write_bench(tmp_path / "copy", standard_scenarios())
    assert prepare(copy, db).items == prepare(bench, db).items


def test_not_a_database_is_a_user_error(tmp_path: Path) -> None:
    db = tmp_path / "notes.sqlite"
    db.write_text("this is not sqlite, just a text file with enough bytes to look like a header" * 20)
    with pytest.raises(UserError, match="not a PrefDisco annotation database"):
        prepare(standard_bench(tmp_path), db)
    with pytest.raises(UserError, match=r"folder .* does not exist"):
        prepare(standard_bench(tmp_path), tmp_path / "missing" / "a.sqlite")


def test_resubmission_replaces_and_bad_submissions_change_nothing(tmp_path: Path) -> None:
    db = tmp_path / "a.sqlite"
    prepare(standard_bench(tmp_path), db)
    store = Store(db)
    sid = store.items()[0].scenario_id
    assert store.submit("alice", sid, answers_for(store, sid, True)) == 20
    assert store.submit("alice", sid, answers_for(store, sid, False)) == 20
    assert count_rows(db) == 20
    assert set(store.answers("alice", sid).values()) == {False}
    assert store.completed("alice") == {sid}

    partial = answers_for(store, sid, True)
    partial.popitem()
    with pytest.raises(SubmissionError, match="missing answer"):
        store.submit("alice", sid, partial)
    with pytest.raises(SubmissionError, match="not shown for scenario"):
        store.submit("alice", sid, {**answers_for(store, sid, True), "invented": True})
    with pytest.raises(SubmissionError, match="unknown scenario_id") as info:
        store.submit("alice", "nope", {"humor": True})
    assert info.value.status == 404
    assert count_rows(db) == 20 and set(store.answers("alice", sid).values()) == {False}


def test_export_writes_the_five_columns_atomically(tmp_path: Path) -> None:
    db = tmp_path / "a.sqlite"
    prepare(standard_bench(tmp_path), db)
    store = Store(db)
    sid = store.items()[1].scenario_id
    labels = answers_for(store, sid, False)
    first = sorted(labels)[0]
    labels[first] = True
    store.submit("bob", sid, labels)
    out = tmp_path / "labels.csv"
    out.write_text("old content")
    assert export(db, out) == 20
    with out.open() as handle:
        records = list(csv.DictReader(handle))
    assert tuple(records[0]) == COLUMNS
    assert len(records) == 20
    llm = {c.attribute: c.llm_relevant for c in store.items()[1].candidates}
    for record in records:
        assert record["annotator"] == "bob" and record["scenario_id"] == sid
        assert record["label"] == ("1" if record["attribute"] == first else "0")
        assert record["llm_relevant"] == str(int(llm[record["attribute"]]))
    assert read_csv(out) == store.label_rows()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".labels")] == []

    with pytest.raises(UserError, match="does not exist"):
        export(db, tmp_path / "no" / "labels.csv")
    with pytest.raises(UserError, match="annotation database not found"):
        export(tmp_path / "absent.sqlite", tmp_path / "x.csv")
    assert not (tmp_path / "absent.sqlite").exists()


def test_write_csv_leaves_the_old_file_when_writing_fails(tmp_path: Path) -> None:
    out = tmp_path / "labels.csv"
    out.write_text("previous export\n")
    bad_rows = [LabelRow("a", "s", "x", 1, 0), object()]  # the second row cannot be written as CSV
    with pytest.raises(csv.Error):
        write_csv(bad_rows, out)  # type: ignore[arg-type]
    assert out.read_text() == "previous export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labels.csv"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("annotator,scenario_id,attribute,label\n", "missing column.*llm_relevant"),
        ("annotator,scenario_id,attribute,llm_relevant,label\na,s,x,1,yes\n", "row 2: label must be 0 or 1"),
        ("annotator,scenario_id,attribute,llm_relevant,label\na,s,x,1,1\na,s,x,1,0\n", "row 3: second label"),
        ("annotator,scenario_id,attribute,llm_relevant,label\na,s,x,1,1\nb,s,x,0,0\n", "row 3: llm_relevant"),
        ("annotator,scenario_id,attribute,llm_relevant,label\n,s,x,1,1\n", "row 2: annotator is empty"),
    ],
)
def test_read_csv_rejects_bad_rows(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "labels.csv"
    path.write_text(content)
    with pytest.raises(UserError, match=message):
        read_csv(path)
