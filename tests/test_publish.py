"""``prefdisco publish``: a benchmark built by the real builder (scripted models) on problems of two shared
benchmarks (MMLU's test split, CommonsenseQA's validation split) published as a dataset repository, and read back
by ``datasets``, ``mlcroissant``, ``prefdisco validate``, ``prefdisco eval`` and the inspect task's loader."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

import prefdisco.cli as cli
from mock_openai import MockOpenAI, mock_env
from prefdisco.benchio import read_bench
from prefdisco.benchmarks.loader import load_problems
from prefdisco.builder import pipeline
from prefdisco.builder.config import BuildConfig
from prefdisco.publish.card import read_header
from prefdisco.publish.columns import from_row
from prefdisco.release.validate import validate_path
from test_build_support import FakeBuilder, fake_model

SOURCES = (("mmlu", "test"), ("commonsenseqa", "validation"))


@pytest.fixture(scope="module")
def app():
    cli._register()
    return cli.app


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, shared_benchmarks: Path) -> Path:
    """A benchmark of 2 MMLU and 2 CommonsenseQA problems, 2 personas each, built through the real pipeline."""
    out = tmp_path_factory.mktemp("publish") / "bench"
    problems = [p for name, _ in SOURCES for p in load_problems(name, shared_benchmarks / name, n=2, seed=3)]
    config = BuildConfig.model_validate(
        {
            "benchmark": "mmlu",
            "problems": len(problems),
            "personas_per_problem": 2,
            "library_size": 4,
            "max_share": 0.5,
            "models": ["mockllm/a", "mockllm/b"],
            "out": out,
        }
    )
    fake = FakeBuilder()
    models = [fake_model(fake, "a"), fake_model(fake, "b")]
    asyncio.run(pipeline.build_benchmark(config, models=models, problems=problems))
    return out


@pytest.fixture(scope="module")
def published(built: Path, app) -> Path:  # type: ignore[no-untyped-def]
    out = built.parent / "published"
    result = CliRunner().invoke(app, ["publish", str(built), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"wrote {out}: 8 scenarios in 3 configs (all, mmlu, commonsenseqa)" in result.output
    return out


def lines_of(bench: Path) -> list[str]:
    return (bench / "scenarios.jsonl").read_text(encoding="utf-8").splitlines()


def test_the_build_really_has_two_sources_and_two_splits(built: Path) -> None:
    scenarios = read_bench(built).scenarios
    assert {(s.problem.benchmark, s.problem.metadata["split"]) for s in scenarios} == set(SOURCES)
    assert len(scenarios) == 8


def test_load_dataset_gives_back_every_field_of_every_scenario_for_every_config(
    built: Path, published: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datasets

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    lines = lines_of(built)
    by_benchmark = {"mmlu": "test", "commonsenseqa": "validation"}
    expected = {
        ("all", "test"): [i for i, line in enumerate(lines) if '"split":"test"' in line],
        ("all", "validation"): [i for i, line in enumerate(lines) if '"split":"validation"' in line],
    }
    for name, split in by_benchmark.items():
        expected[(name, split)] = [i for i, line in enumerate(lines) if f'"benchmark":"{name}"' in line]
    assert sorted(len(v) for v in expected.values()) == [4, 4, 4, 4]
    for (config, split), indices in expected.items():
        rows = datasets.load_dataset(str(published), config, split=split, cache_dir=str(tmp_path / "hf-cache"))
        assert len(rows) == len(indices)
        # nested fields are nested types, not JSON text
        assert isinstance(rows.features["persona"]["big_five"], dict)
        assert not isinstance(rows.features["rubric"], datasets.Value)
        assert not isinstance(rows.features["persona"]["expertise"], datasets.Value)
        for row, index in zip(rows, indices, strict=True):
            assert row["line"] == index + 1
            back = from_row(row)
            # every field, as scenarios.jsonl has it, byte for byte
            assert back.model_dump_json() == lines[index]
            assert json.loads(back.model_dump_json()) == json.loads(lines[index])


def _text(value: object) -> object:
    """A value as mlcroissant gives it, its sc:Text bytes decoded."""
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list):
        return [_text(v) for v in value]
    return value


def _at(columnar: object, i: int) -> object:
    """Element ``i`` of a list of structs mlcroissant gave as a struct of lists."""
    return {k: _at(v, i) for k, v in columnar.items()} if isinstance(columnar, dict) else columnar[i]  # type: ignore[index]


def _nested(record: dict, field: dict, parent: dict | None) -> object:
    """The value of a Croissant ``field`` in an mlcroissant record, nested again as the Parquet nests it.

    mlcroissant 1.1.1 puts a leaf inside its direct parent only (a list of dicts where the parent is an array), and
    every field with leaves under its own @id at the top of the record."""
    if "subField" not in field:
        if parent is None:
            return _text(record[field["@id"]])
        held = record[parent["@id"]]
        return _text([e[field["@id"]] for e in held] if parent.get("isArray") else held[field["@id"]])
    members = {sub["name"]: _nested(record, sub, field) for sub in field["subField"]}
    if not field.get("isArray"):
        return members
    return [_at(members, i) for i in range(len(record[field["@id"]]))]


def _read_back(published: Path) -> dict[str, list[dict]]:
    """Every record set's records as mlcroissant generates them, each checked against its Parquet rows: the same
    count and ids, and every column's value, nested as the Parquet nests it. Returns the fields by record set."""
    import mlcroissant
    import pyarrow.parquet as pq

    dataset = mlcroissant.Dataset(jsonld=str(published / "croissant.json"))  # raises on a validation error
    described = {rs["@id"]: rs["field"] for rs in json.loads((published / "croissant.json").read_text())["recordSet"]}
    assert sorted(described) == sorted(rs.uuid for rs in dataset.metadata.record_sets)
    for record_set, fields in described.items():
        records = list(dataset.records(record_set))
        config, split = record_set.split("/")
        table = pq.read_table(published / "data" / config / f"{split}-00000-of-00001.parquet")
        assert [f["name"] for f in fields] == table.column_names  # every column a field
        rows = table.to_pylist()
        assert len(records) == len(rows)
        assert [r[f"{record_set}/id"].decode() for r in records] == [row["id"] for row in rows]
        for record, row in zip(records, rows, strict=True):
            assert {f["name"]: _nested(record, f, None) for f in fields} == row
    return described


def test_croissant_describes_every_column_and_mlcroissant_reads_back_every_value(built: Path, published: Path) -> None:
    described = _read_back(published)
    counts = {}
    ids = [json.loads(line)["id"] for line in lines_of(built)]
    for record_set in described:
        config, split = record_set.split("/")
        table = pd.read_parquet(published / "data" / config / f"{split}-00000-of-00001.parquet")
        counts[record_set] = len(table)
        assert [ids[line - 1] for line in table["line"]] == list(table["id"])
    assert counts == {"all/test": 4, "all/validation": 4, "mmlu/test": 4, "commonsenseqa/validation": 4}
    persona = next(f for f in described["all/test"] if f["name"] == "persona")
    expertise = next(f for f in persona["subField"] if f["name"] == "expertise")
    assert expertise["isArray"] and {f["dataType"] for f in expertise["subField"]} == {"sc:Text"}
    assert all(f["description"] for f in persona["subField"])
    data = json.loads((published / "croissant.json").read_text())
    assert data["conformsTo"] == "http://mlcommons.org/croissant/1.1"
    for key in (
        "rai:dataCollection",
        "rai:dataBiases",
        "rai:personalSensitiveInformation",
        "rai:dataUseCases",
        "rai:dataLimitations",
    ):
        assert data[key], key
    assert data["identifier"] == read_bench(built).manifest["content_hash"]


def test_croissant_reads_facets_and_lists_of_lists_and_describes_as_text_what_mlcroissant_cannot_read(
    built: Path, tmp_path: Path
) -> None:
    """Facet scores (a list of structs two structs down), a list of lists, names a jsonPath quotes, and a free-form
    field holding a list of structs inside a list: mlcroissant 1.1.1 fails on that one described nested (an
    IndexError in ReadFields), so it is JSON text in the Parquet and sc:Text in croissant.json, read back as that
    JSON."""
    from prefdisco.benchio import write_bench
    from prefdisco.publish.writer import publish

    bench = read_bench(built)
    scenarios = []
    for i, s in enumerate(bench.scenarios):
        trait = s.persona.big_five["openness"].model_copy(update={"facets": {"imagination": 4.0, "intellect": 2.5}})
        persona = s.persona.model_copy(update={"big_five": {**s.persona.big_five, "openness": trait}})
        extra = {**s.persona.extra, "grid": [[1, 2], [3]], "where": 1, 'it\'s "odd" \\ 1.5': "v"}  # quoted in paths
        persona = persona.model_copy(update={"extra": extra})
        provenance = {**s.provenance, "steps": [{"n": i, "parts": [{"b": "x"}]}, {"n": 7, "parts": []}]}
        scenarios.append(s.model_copy(update={"persona": persona, "provenance": provenance}))
    personas = list({s.persona.id: s.persona for s in scenarios}.values())
    write_bench(tmp_path / "bench", scenarios, personas, bench.attributes, {"models": bench.manifest.get("models")})
    out = publish(tmp_path / "bench", tmp_path / "pub").out
    fields = {f["name"]: f for f in _read_back(out)["all/test"]}
    assert fields["provenance"]["dataType"] == "sc:Text" and "subField" not in fields["provenance"]
    extra = {f["name"]: f for f in fields["persona"]["subField"]}["extra"]
    shapes = {f["name"]: f.get("arrayShape") for f in extra["subField"]}
    assert shapes["grid"] == "-1,-1" and {"where", 'it\'s "odd" \\ 1.5'} <= set(shapes)
    big_five = {f["name"]: f for f in fields["persona"]["subField"]}["big_five"]
    facets = {f["name"]: f for f in big_five["subField"][0]["subField"]}["facets"]
    assert facets["isArray"] and [f["name"] for f in facets["subField"]] == ["facet", "score"]


def test_the_card_yaml_parses_and_names_every_config_with_its_files(built: Path, published: Path) -> None:
    text = (published / "README.md").read_text(encoding="utf-8")
    head = read_header(text)
    configs = {c["config_name"]: c for c in head["configs"]}
    assert set(configs) == {"all", "mmlu", "commonsenseqa"}
    assert configs["all"]["default"] is True
    for name, entry in configs.items():
        for files in entry["data_files"]:
            for path in files["path"]:
                assert (published / path).is_file() and path.startswith(f"data/{name}/{files['split']}-")
    assert {f["split"] for f in configs["all"]["data_files"]} == {"test", "validation"}
    assert head["license"][0] == "cc-by-4.0" and "mit" in head["license"]  # the build's, then MMLU's / CSQA's
    assert head["size_categories"] == ["n<1K"] and head["pretty_name"]
    content_hash = read_bench(built).manifest["content_hash"]
    assert head["prefdisco"]["content_hash"] == content_hash and content_hash in text.split("---", 2)[2]
    for name in ("CITATION.cff", "eval.yaml"):
        assert content_hash in (published / name).read_text(encoding="utf-8")


def test_eval_yaml_pins_the_task_file_and_every_asset(published: Path) -> None:
    import hashlib

    spec = yaml.safe_load((published / "eval.yaml").read_text(encoding="utf-8"))
    assert spec["evaluation_framework"] == "inspect-ai" and spec["task"] == "prefdisco/prefdisco"
    assert {t["id"] for t in spec["tasks"]} == {"all-test", "all-validation", "mmlu", "commonsenseqa"}
    pin = spec["task_file"]
    assert pin["pinned_by"] in ("commit", "version") and pin.get(pin["pinned_by"])
    task = Path(cli.__file__).parent / "evaluation" / "running" / "task.py"
    assert pin["sha256"] == "sha256:" + hashlib.sha256(task.read_bytes()).hexdigest()
    on_disk = {str(p.relative_to(published)) for p in published.rglob("*") if p.is_file()}
    assets = {a["path"]: a["sha256"] for a in spec["assets"]}
    assert set(assets) == on_disk - {"README.md", "croissant.json", "CITATION.cff", "eval.yaml"}
    for path, digest in assets.items():
        assert digest == "sha256:" + hashlib.sha256((published / path).read_bytes()).hexdigest()


def test_a_second_publish_of_the_same_build_is_byte_identical(built: Path, published: Path, app) -> None:  # type: ignore[no-untyped-def]
    again = built.parent / "published-again"
    result = CliRunner().invoke(app, ["publish", str(built), "--out", str(again)])
    assert result.exit_code == 0, result.output
    first = {str(p.relative_to(published)): p.read_bytes() for p in published.rglob("*") if p.is_file()}
    second = {str(p.relative_to(again)): p.read_bytes() for p in again.rglob("*") if p.is_file()}
    assert sorted(first) == sorted(second) and len(first) == 11  # 4 Parquet files, 3 in prefdisco/, 4 describing them
    assert [k for k in first if first[k] != second[k]] == []


def test_validate_accepts_the_published_folder_and_names_each_problem_of_a_changed_one(
    built: Path, published: Path, tmp_path: Path
) -> None:
    report = validate_path(published)
    assert report.ok and report.records == 8 and not report.issues, [str(i) for i in report.issues]
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(published, broken)
    with (broken / "prefdisco" / "personas.jsonl").open("a") as f:
        f.write("\n")
    card = (broken / "README.md").read_text().replace("config_name: mmlu", "config_name: mmlu2")
    (broken / "README.md").write_text(card)
    report = validate_path(broken)
    messages = [str(i) for i in report.issues]
    assert not report.ok
    assert any("does not match the published data" in m for m in messages), messages
    assert any("no config 'mmlu'" in m for m in messages), messages
    assert any("prefdisco/personas.jsonl: sha256 does not match" in m for m in messages), messages
    assert all("\n" not in m for m in messages)


def test_the_inspect_task_loader_reads_the_published_folder_as_the_benchmark(built: Path, published: Path) -> None:
    from prefdisco.evaluation.running.task import load_scenarios

    assert load_scenarios(published) == load_scenarios(built)
    assert [s.model_dump_json() for s in load_scenarios(published)] == lines_of(built)


@pytest.mark.slow
def test_eval_of_the_published_folder_scores_the_same_rows_as_the_benchmark_folder(
    built: Path, published: Path, app, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    tables = {}
    with MockOpenAI() as mock:
        mock_env(monkeypatch, mock, tmp_path)
        model = f"openai-api/mock/m{mock.port}"
        for name, source in (("bench", built), ("published", published)):
            args = ["eval", str(source), "--model", model, "--log-dir", str(tmp_path / name), "--display", "none"]
            result = CliRunner().invoke(app, args)
            assert result.exit_code == 0, result.output
            tables[name] = pd.read_csv(tmp_path / name / "results.csv")
    keys = ["scenario_id", "mode"]
    columns = [c for c in ("pref_align", "correct", "n_questions", "failed") if c in tables["bench"].columns]
    a, b = (t.sort_values(keys)[keys + columns].reset_index(drop=True) for t in tables.values())
    assert len(a) == 8 * 3 and a["failed"].eq(0).all()
    pd.testing.assert_frame_equal(a, b)
    # the same benchmark: both runs name the build's content hash, so their submissions and tables compare
    hashes = {name: json.loads((tmp_path / name / "protocol.json").read_text())["benchmark"] for name in tables}
    assert hashes["published"] == hashes["bench"] == json.loads((built / "manifest.json").read_text())["content_hash"]


def test_overwrite_replaces_the_folder_whole_and_a_failed_publish_leaves_it_as_it_was(
    built: Path, published: Path, tmp_path: Path, app
) -> None:  # type: ignore[no-untyped-def]
    import shutil

    target = tmp_path / "target"
    shutil.copytree(published, target)
    (target / "stale.txt").write_text("from before\n")
    refused = CliRunner().invoke(app, ["publish", str(built), "--out", str(target)])
    assert refused.exit_code == 2 and "holds a published benchmark of 8 scenarios" in refused.stderr
    done = CliRunner().invoke(app, ["publish", str(built), "--out", str(target), "--overwrite"])
    assert done.exit_code == 0, done.output
    assert not (target / "stale.txt").exists()
    before = {str(p.relative_to(target)): p.read_bytes() for p in target.rglob("*") if p.is_file()}
    assert before == {str(p.relative_to(published)): p.read_bytes() for p in published.rglob("*") if p.is_file()}

    changed = tmp_path / "changed"
    shutil.copytree(built, changed)
    with (changed / "personas.jsonl").open("a") as f:
        f.write("\n")
    failed = CliRunner().invoke(app, ["publish", str(changed), "--out", str(target), "--overwrite"])
    assert failed.exit_code == 2 and "content_hash" in failed.stderr
    after = {str(p.relative_to(target)): p.read_bytes() for p in target.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["changed", "target"]  # no temporary folder left
