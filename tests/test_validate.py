"""Benchmark folder IO, `prefdisco validate` (every problem, with its line) and the release CLI commands."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import typer
from pydantic import ValidationError
from typer.testing import CliRunner

from prefdisco.benchio import (
    FORMAT_VERSION,
    MANIFEST_FILE,
    SCENARIOS_FILE,
    read_bench,
    write_bench,
)
from prefdisco.builder.catalogue import load_catalogue
from prefdisco.errors import UserError, validation_messages
from prefdisco.release.convert import load_scenarios as read_scenarios
from prefdisco.release.exporter import export_release
from prefdisco.release.format import EXTENSION_KEY, REQUIRED_KEYS
from prefdisco.release.reader import import_release
from prefdisco.release.validate import validate_path
from prefdisco.schema import Scenario


@pytest.fixture(scope="module")
def example_path(shared_dir: Path) -> Path:
    return shared_dir / "data" / "prefdisco_release" / "example_record.jsonl"


@pytest.fixture(scope="module")
def release_lines(example_path: Path) -> list[dict]:
    return [json.loads(line) for line in example_path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def scenario(example_path: Path) -> Scenario:
    return import_release(example_path).scenarios[0]


def _variant(scenario: Scenario, n: int) -> dict:
    d = scenario.model_dump(mode="json")
    d["id"] = f"s{n}"
    return d


def _write_jsonl(path: Path, lines: list) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    return path


def _issues(path: Path) -> list[tuple[int, str]]:
    report = validate_path(path)
    return [(i.line, i.message) for i in report.issues]


def _lines_matching(issues: list[tuple[int, str]], text: str) -> list[int]:
    return [line for line, msg in issues if text in msg]


# ---------------------------------------------------------------------------------------------------------
# benchmark folder IO
# ---------------------------------------------------------------------------------------------------------


def test_write_and_read_bench(tmp_path, scenario):
    other = Scenario.model_validate(_variant(scenario, 2))
    attrs = load_catalogue()[:5]
    manifest = write_bench(
        tmp_path / "b",
        [scenario, other],
        [scenario.persona],
        attrs,
        {"config": {"n": 2}, "seeds": {"profiles": 7}, "models": {"builder": "mockllm/model"}},
    )
    assert manifest["format"] == FORMAT_VERSION
    assert manifest["counts"] == {"scenarios": 2, "problems": 1, "personas": 1, "attributes": 5}
    assert manifest["content_hash"].startswith("sha256:")
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == [
        "attributes.json",
        "manifest.json",
        "personas.jsonl",
        "scenarios.jsonl",
    ]  # no temp files left behind
    bench = read_bench(tmp_path / "b")
    assert bench.scenarios == [scenario, other]
    assert bench.personas == [scenario.persona]
    assert bench.attributes == attrs
    assert bench.manifest["seeds"] == {"profiles": 7} and bench.manifest["package_version"]
    with pytest.raises(ValueError, match="reserved"):
        write_bench(tmp_path / "c", [scenario], [], attrs, {"counts": {}})


def test_read_bench_detects_edits_and_bad_lines(tmp_path, scenario):
    bench = tmp_path / "b"
    write_bench(bench, [scenario], [scenario.persona], load_catalogue()[:3])
    scenarios_file = bench / SCENARIOS_FILE
    text = scenarios_file.read_text(encoding="utf-8")
    scenarios_file.write_text(text.replace("muffins", "cakes"), encoding="utf-8")
    with pytest.raises(UserError, match=r"content_hash .* does not match"):
        read_bench(bench)
    scenarios_file.write_text(text + "{broken\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"scenarios\.jsonl:2: invalid JSON"):
        read_bench(bench, verify_hash=False)
    d = scenario.model_dump(mode="json")
    d["profile"]["items"][0]["weight"] = 0.5
    scenarios_file.write_text(text + json.dumps(d) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"scenarios\.jsonl:2: profile: profile weights must sum to 1"):
        read_bench(bench, verify_hash=False)
    with pytest.raises(UserError, match=r"manifest\.json: missing"):
        read_bench(tmp_path)


def test_read_scenarios_accepts_all_three_inputs(tmp_path, scenario, example_path):
    write_bench(tmp_path / "b", [scenario], [scenario.persona], load_catalogue()[:3])
    assert read_scenarios(tmp_path / "b") == [scenario]
    assert read_scenarios(tmp_path / "b" / SCENARIOS_FILE) == [scenario]
    assert read_scenarios(example_path) == [scenario]
    with pytest.raises(UserError, match="not found"):
        read_scenarios(tmp_path / "missing.jsonl")


# ---------------------------------------------------------------------------------------------------------
# validate: our format
# ---------------------------------------------------------------------------------------------------------


def test_validate_accepts_good_files(tmp_path, scenario, example_path):
    write_bench(tmp_path / "b", [scenario], [scenario.persona], load_catalogue()[:3])
    for path in (tmp_path / "b", tmp_path / "b" / SCENARIOS_FILE, example_path):
        report = validate_path(path)
        assert report.ok, report.issues
        assert report.records == 1
        assert "valid" in report.summary()


def test_validate_reports_every_problem_with_its_line(tmp_path, scenario):
    """Each problem once, with its line; a model's problems are pydantic's own errors (``field.path: message``)."""
    weights = _variant(scenario, 2)
    for item, w in zip(weights["profile"]["items"], (0.3, 0.1, 0.2, 0.1), strict=True):
        item["weight"] = w  # sums to 0.7
    level = _variant(scenario, 3)
    del level["rubric"][1]["levels"]["4"]
    mismatch = _variant(scenario, 6)
    renamed = mismatch["rubric"][0]["attribute"]
    mismatch["rubric"][0]["attribute"] = "Kitchen Vocabulary"
    several = _variant(scenario, 7)
    several["profile"]["items"][0]["weight"] = 0.02  # sum 0.66
    del several["rubric"][2]["levels"]["1"]
    several["persona"]["age"] = 7
    extra = _variant(scenario, 8)
    extra["rubric"].append({**extra["rubric"][0], "attribute": "Kitchen Vocabulary"})
    path = _write_jsonl(
        tmp_path / SCENARIOS_FILE,
        [
            _variant(scenario, 1),
            weights,
            level,
            '{"id": "s4", oops',
            _variant(scenario, 1),
            mismatch,
            several,
            extra,
        ],
    )
    issues = _issues(path)
    assert _lines_matching(issues, "profile: profile weights must sum to 1, got 0.7") == [2]
    assert _lines_matching(issues, "rubric.1.levels: rubric levels must describe every score 1..5; missing [4]") == [3]
    assert _lines_matching(issues, "invalid JSON") == [4]
    assert _lines_matching(issues, "duplicate id 's1' (first on line 1)") == [5]
    # the Scenario validator names both halves of a mismatch in one message
    assert _lines_matching(
        issues, f"(record): scenario s6: rubric has no criterion for profile attribute(s) ['{renamed}']; rubric "
    ) == [6]
    assert _lines_matching(
        issues, "(record): scenario s8: rubric criterion for attribute(s) ['Kitchen Vocabulary'] not in profile"
    ) == [8]
    line7 = [msg for line, msg in issues if line == 7]
    assert any(m == "profile: profile weights must sum to 1, got 0.66" for m in line7)
    assert any(m.startswith("rubric.2.levels:") and "missing [1]" in m for m in line7)
    assert any(m.startswith("persona.age:") for m in line7)
    assert len(line7) == 3  # each problem once, as pydantic reports it
    assert 1 not in {line for line, _ in issues}
    assert len(issues) == 9


def test_validate_refuses_text_that_is_no_text_and_levels_alike(tmp_path, scenario):
    """What SmolLM2 wrote into a build (issue 49, finding 5): a level of JSON punctuation, one holding a JSON key,
    two levels alike, a persona field of dots. Each is an error on its line, in the folder's personas too; the
    packaged demo scenarios and the paper's example record stay valid."""
    from importlib.resources import files

    junk = _variant(scenario, 1)
    junk["rubric"][0]["levels"]["3"] = '") }, {"'
    junk["rubric"][1]["levels"]["2"] = 'Mostly ignores it", "description": "'
    alike = _variant(scenario, 2)
    alike["rubric"][2]["levels"]["4"] = alike["rubric"][2]["levels"]["2"].upper() + "!"
    persona = _variant(scenario, 3)
    persona["persona"]["summary"] = "... ..."
    path = _write_jsonl(tmp_path / SCENARIOS_FILE, [junk, alike, persona])
    issues = _issues(path)
    first, second, third = (scenario.rubric[i].attribute for i in range(3))
    assert issues == [
        (1, f"""rubric criterion '{first}': level 3 '") }}, {{"': it has no letter or digit"""),
        (
            1,
            f"rubric criterion '{second}': level 2 {junk['rubric'][1]['levels']['2']!r}: it holds a fragment of JSON",
        ),
        (2, f"rubric criterion '{third}': levels 2 and 4 say the same"),
        (3, "persona summary '... ...': it has no letter or digit"),
    ]
    bench = tmp_path / "b"
    write_bench(bench, [Scenario.model_validate(persona)], [Scenario.model_validate(persona).persona], [])
    assert _lines_matching(_issues(bench), "persona summary '... ...'") == [1, 1]  # personas.jsonl, scenarios.jsonl

    demo = files("prefdisco") / "data" / "demo_scenarios.jsonl"
    for good in (Path(str(demo)), _write_jsonl(tmp_path / "one.jsonl", [_variant(scenario, 4)])):
        report = validate_path(good)
        assert report.ok and not report.issues, report.issues


def test_validate_bench_folder_checks_hash_and_personas(tmp_path, scenario):
    bench = tmp_path / "b"
    write_bench(bench, [scenario], [], load_catalogue()[:3])
    issues = _issues(bench)
    assert _lines_matching(issues, "persona id 'okafor_f334feca' is not in personas.jsonl") == [1]
    attrs = bench / "attributes.json"
    data = json.loads(attrs.read_text(encoding="utf-8"))
    data[2]["value_space"] = ["only one"]
    attrs.write_text(json.dumps(data, indent=2), encoding="utf-8")
    issues = _issues(bench)
    manifest_lines = (bench / MANIFEST_FILE).read_text(encoding="utf-8").splitlines()
    hash_line = next(i for i, line in enumerate(manifest_lines, 1) if '"content_hash"' in line)
    assert _lines_matching(issues, "content_hash") == [hash_line]
    attr_line = (
        next(i for i, line in enumerate(json.dumps(data, indent=2).splitlines(), 1) if data[2]["name"] in line) - 1
    )
    assert _lines_matching(issues, "entry 2: value_space") == [attr_line]


# ---------------------------------------------------------------------------------------------------------
# validate: release format
# ---------------------------------------------------------------------------------------------------------


def _severity_lines(path: Path, text: str) -> list[tuple[int, str]]:
    return [(i.line, i.severity) for i in validate_path(path).issues if text in i.message]


def test_validate_release_reports_every_problem(tmp_path, release_lines):
    """Errors for what breaks scoring, warnings for what the paper's evaluator scores anyway; each with its line."""
    meta, good = release_lines
    unknown = copy.deepcopy(good)
    unknown["problem_id"] = "problem_1_okafor_f334feca"
    unknown["evaluation_rubric"]["evaluation_criteria"][2]["preference"] = "Kitchen Vocabulary"
    many = copy.deepcopy(good)
    many["problem_id"] = "okafor-2"
    del many["original_problem"]["answer"]
    many["persona"]["demographics"]["hobbies"] = "gardening"
    many["persona"]["domain_expertise"] = [1, 2]
    del many["persona_preferences"]["Workplace Analogies"]["justification"]
    many["evaluation_rubric"]["evaluation_criteria"][0]["weight"] = 0.06
    missing = {"type": "personalized_problem", "problem_id": "problem_3_x", "persona": good["persona"]}
    path = _write_jsonl(
        tmp_path / "release.jsonl",
        [
            meta,
            good,
            unknown,
            good,
            many,
            "not json at all",
            missing,
            {"type": "metadata"},
            {"type": "other"},
        ],
    )
    report = validate_path(path)
    assert not report.ok
    assert _severity_lines(path, "preference 'Kitchen Vocabulary' is not a key of persona_preferences") == [
        (3, "error")
    ]
    assert _severity_lines(path, "['Workplace Analogies'] have no criterion") == [(3, "warning")]
    assert _severity_lines(path, "duplicate problem_id 'problem_0_okafor_f334feca' (first on line 2)") == [(4, "error")]
    line5 = [(i.severity, i.message) for i in report.issues if i.line == 5]
    for severity, expected in (
        ("warning", "problem_id 'okafor-2' is not problem_<i>_<persona id>"),
        ("warning", "original_problem has no answer field"),
        ("error", "persona.demographics.hobbies must be a list of strings"),
        ("error", "persona.domain_expertise must be a list of strings"),
        ("error", "persona_preferences['Workplace Analogies'] has no 'justification'"),
        ("warning", "criteria weights sum to 0.7, not 1 ± 0.05"),
    ):
        assert sum(sev == severity and expected in m for sev, m in line5) == 1, (expected, line5)
    assert len(line5) == 6
    assert _severity_lines(path, "invalid JSON") == [(6, "error")]
    assert [line for line, _ in _severity_lines(path, "missing required key")] == [7] * 3 + [9] * 5
    assert _severity_lines(path, "a metadata line after 5 record(s) (two generator files concatenated?)") == [
        (8, "warning")
    ]
    assert [(i.line, i.message) for i in report.issues if i.line == 9] == [
        (9, f"missing required key {k!r}") for k in ("problem_id", *REQUIRED_KEYS[1:])
    ]
    assert 1 not in {i.line for i in report.issues} and 2 not in {i.line for i in report.issues}
    assert report.summary() == f"{path}: 14 problem(s) in prefq-bench release (5 records read, 5 warnings)"


def test_validate_release_catches_what_only_the_import_sees(tmp_path, release_lines):
    meta, good = release_lines
    bad = copy.deepcopy(good)
    bad["original_problem"] = {"question": "Pick", "choices": ["a", "b"], "answer": "C"}
    issues = _issues(_write_jsonl(tmp_path / "r.jsonl", [meta, bad]))
    assert len(issues) == 1 and issues[0][0] == 2
    assert "answer 'C' is not one of the option letters" in issues[0][1]


def test_validate_release_reports_every_pydantic_error_of_the_import(tmp_path, example_path, release_lines):
    """The import stops at a model's first error ("(+N more)"); validate shows each, prefixed by the record part."""
    meta, _ = release_lines
    read = import_release(example_path)
    out = tmp_path / "exported.jsonl"
    export_release(read.scenarios, out, metadata=read.metadata)
    _, record = (json.loads(line) for line in out.read_text(encoding="utf-8").splitlines())
    record[EXTENSION_KEY]["persona"]["age"] = 7
    record[EXTENSION_KEY]["persona"]["name"] = " "
    path = _write_jsonl(tmp_path / "r.jsonl", [meta, record])
    with pytest.raises(UserError, match=r"r\.jsonl:2: prefdisco: name: .* \(\+1 more\)"):
        import_release(path)
    issues = _issues(path)
    assert [line for line, _ in issues] == [2, 2]
    assert issues[0][1].startswith(f"{EXTENSION_KEY}: name: ")
    assert issues[1][1] == f"{EXTENSION_KEY}: age: Input should be greater than or equal to 13"


def test_validation_messages_group_by_type_and_location():
    def error(kind: str, loc: tuple, ctx: dict | None = None) -> dict:
        return {"type": kind, "loc": loc, "input": None, **({"ctx": ctx} if ctx else {})}

    err = ValidationError.from_exception_data(
        "Scenario",
        [
            error("value_error", ("profile",), {"error": ValueError("profile weights must sum to 1, got 0.7")}),
            error("missing", ("persona", "age")),
            error("value_error", ("profile",), {"error": ValueError("another reason")}),
            error("value_error", ("profile",), {"error": ValueError("another reason")}),
            error("string_too_short", (), {"min_length": 1}),
        ],
    )
    assert validation_messages(err) == [
        "profile: profile weights must sum to 1, got 0.7; another reason",
        "persona.age: Field required",
        "(record): String should have at least 1 character",
    ]


def test_validate_and_import_split_lines_alike(tmp_path, release_lines):
    """A JSON string may hold U+2028 unescaped (``ensure_ascii=False``): it is not a line break for either."""
    meta, good = release_lines
    record = copy.deepcopy(good)
    record["persona"]["backstory"] += "\u2028Second paragraph.\x0c"
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(meta) + "\n" + json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    assert import_release(path).scenarios[0].persona.backstory.endswith("\u2028Second paragraph.\x0c")
    report = validate_path(path)
    assert report.ok, report.issues
    assert report.records == 1


# ---------------------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cli_app() -> typer.Typer:
    """The real app when every sibling module exists; otherwise a fresh app with only these commands."""
    import prefdisco.cli as cli

    try:
        cli._register()
        return cli.app
    except ImportError:
        from prefdisco.release.cli import register

        app = typer.Typer(pretty_exceptions_enable=False)
        register(app)
        return app


def test_cli_validate_exit_codes(tmp_path, cli_app, scenario, example_path):
    runner = CliRunner()
    ok = runner.invoke(cli_app, ["validate", str(example_path)])
    assert ok.exit_code == 0, ok.output
    assert ok.output.strip().splitlines() == [f"{example_path}: valid prefq-bench release, 1 record"]

    bad = _variant(scenario, 2)
    bad["profile"]["items"][0]["weight"] = 0.06
    path = _write_jsonl(tmp_path / "s.jsonl", [_variant(scenario, 1), bad, "{oops", _variant(scenario, 1)])
    res = runner.invoke(cli_app, ["validate", str(path)])
    assert res.exit_code == 1
    out = res.output.strip().splitlines()
    assert out[0] == f"{path}:2: profile: profile weights must sum to 1, got 0.7"
    assert out[1].startswith(f"{path}:3: invalid JSON")
    assert out[2] == f"{path}:4: duplicate id 's1' (first on line 1)"
    assert out[3] == f"{path}: 3 problem(s) in scenarios file (3 scenarios read)"

    missing = runner.invoke(cli_app, ["validate", str(tmp_path / "nope")])
    assert missing.exit_code == 2
    assert "error: " in missing.output and "not found" in missing.output


def test_cli_import_and_export_release(tmp_path, cli_app, example_path, release_lines):
    runner = CliRunner()
    bench = tmp_path / "bench"
    res = runner.invoke(cli_app, ["import-release", str(example_path), "--out", str(bench)])
    assert res.exit_code == 0, res.output
    assert "1 scenario, 1 problem, 1 persona, 4 attributes" in res.output
    loaded = read_bench(bench)
    assert loaded.manifest["release_metadata"] == [{"at": 0, "line": release_lines[0]}]
    assert [a.name for a in loaded.attributes] == list(release_lines[1]["persona_preferences"])
    assert runner.invoke(cli_app, ["validate", str(bench)]).exit_code == 0

    out = tmp_path / "export.jsonl"
    res = runner.invoke(cli_app, ["export-release", str(bench), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "1 record" in res.output and "1 records" not in res.output
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert lines[0] == release_lines[0]  # metadata carried through the bench manifest
    assert lines[1]["original_problem"] == release_lines[1]["original_problem"]
    assert runner.invoke(cli_app, ["validate", str(out)]).exit_code == 0
    assert import_release(out).scenarios == loaded.scenarios
