"""The whole build: folder accepted by read_bench, resume without repeated calls, failures reported,
different profiles per persona, provenance and usage, --dry-run without calls, and the CLI."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from prefdisco.benchio import read_bench
from prefdisco.builder import pipeline, setup
from prefdisco.builder.cli import register
from prefdisco.builder.config import BuildConfig
from prefdisco.builder.estimate import estimate_build
from prefdisco.builder.manifest import BuildReport
from prefdisco.builder.personas import save_library
from test_build_support import FakeBuilder, default_rubric, fake_model, make_problems, same_profile


def _config(out: Path, **kw: Any) -> BuildConfig:
    values: dict[str, Any] = {
        "benchmark": "toy",
        "problems": 3,
        "personas_per_problem": 3,
        "library_size": 5,
        "max_share": 0.5,
        "models": ["mockllm/a", "mockllm/b"],
        "out": out,
    }
    values.update(kw)
    return BuildConfig.model_validate(values)


def _build(fake: FakeBuilder, config: BuildConfig, n_problems: int = 3) -> BuildReport:
    models = [fake_model(fake, "a"), fake_model(fake, "b")]
    return asyncio.run(pipeline.build_benchmark(config, models=models, problems=make_problems(n_problems)))


def test_build_writes_a_folder_read_bench_accepts(tmp_path: Path) -> None:
    fake = FakeBuilder()
    report = _build(fake, _config(tmp_path / "bench"))
    bench = read_bench(tmp_path / "bench")
    assert len(bench.scenarios) == report.scenarios == 9
    assert fake.calls == {"persona": 5, "relevance": 3, "profile": 9, "rubric": 9}
    pool = {"mockllm/a", "mockllm/b"}
    for s in bench.scenarios:
        assert 3 <= len(s.profile.items) <= 7
        assert math.fsum(i.weight for i in s.profile.items) == 1.0
        assert {i.attribute for i in s.profile.items} <= set(s.relevant_attributes)
        assert {s.provenance[k] for k in ("relevance", "profile", "rubric", "persona")} <= pool
        assert s.persona.extra["built_by"] in pool
        assert s.provenance["usage"]["calls"] == 2
    by_problem: dict[str, set[str]] = {}
    for s in bench.scenarios:
        by_problem.setdefault(s.problem.id, set()).add(s.persona.id)
    assert all(len(ids) == 3 for ids in by_problem.values())  # distinct personas per problem
    assert {p.id for p in bench.personas} == {s.persona.id for s in bench.scenarios}
    m = bench.manifest
    assert m["models"] == ["mockllm/a", "mockllm/b"]
    assert m["config"]["seed"] == 0 and m["seeds"]["model_choice"] == 0
    assert m["build_counts"]["scenarios"] == 9 and m["failures"]["count"] == 0
    assert m["personas"]["size"] == 5 and "max_bucket_share" in m["personas"]["diversity"]
    usage = m["usage"]
    assert usage["per_step"]["profile"]["calls"] == 9
    assert usage["total"]["calls"] == 26 == fake.total
    assert usage["per_scenario_mean"]["calls"] == pytest.approx(26 / 9)
    assert set(usage["per_scenario"]) == {s.id for s in bench.scenarios}
    assert usage["total"]["input_tokens"] == sum(u["input_tokens"] for u in usage["per_step"].values()) > 0


def test_rerun_makes_no_call_and_half_a_checkpoint_redoes_only_that_half(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    config = _config(out)
    first = FakeBuilder(stable_names=True)  # replies depend on the prompt only
    _build(first, config)
    scenarios = (out / "scenarios.jsonl").read_text()

    again = FakeBuilder(stable_names=True)
    report = _build(again, config)
    assert again.total == 0
    assert report.usage["total"]["calls_run"] == 0 and report.usage["total"]["calls"] == first.total
    assert (out / "scenarios.jsonl").read_text() == scenarios

    checkpoint = out / ".checkpoint" / "steps.jsonl"
    lines = checkpoint.read_text().splitlines()
    assert len(lines) == first.total  # one line per finished item (no retries happened)
    dropped = lines[1::2]
    checkpoint.write_text("".join(line + "\n" for line in lines[0::2]))
    redo = FakeBuilder(stable_names=True)
    _build(redo, config)
    steps = [json.loads(line)["step"] for line in dropped]
    assert redo.total == len(dropped)
    assert dict(redo.calls) == {s: steps.count(s) for s in set(steps)}
    assert (out / "scenarios.jsonl").read_text() == scenarios  # the scripted model is deterministic


def test_invalid_rubric_is_retried_then_reported_and_the_scenario_skipped(tmp_path: Path) -> None:
    def rubric(fake: FakeBuilder, prompt: str, schema: dict[str, Any], n: int) -> Any:
        reply = default_rubric(fake, prompt, schema, n)
        if "Person1 Tester1" in prompt:  # one persona's rubrics always miss level 5
            for c in reply["criteria"]:
                del c["levels"]["5"]
        return reply

    fake = FakeBuilder({"rubric": rubric})
    out = tmp_path / "bench"
    report = _build(fake, _config(out, personas_per_problem=5))  # every persona on every problem
    bench = read_bench(out)
    assert report.scenarios == len(bench.scenarios) == 3 * 4
    assert all(s.persona.name != "Person1 Tester1" for s in bench.scenarios)
    failures = bench.manifest["failures"]
    assert failures["count"] == 3 and failures["by_step"] == {"rubric": 3}
    assert all(f["attempts"] == 3 and "levels.5: Field required" in f["reason"] for f in failures["items"])
    assert bench.manifest["skipped"] == {"rubric_failed": 3}
    assert bench.manifest["usage"]["per_step"]["rubric"]["calls"] == 12 + 3 * 3


def test_identical_profiles_are_regenerated_once_with_a_note(tmp_path: Path) -> None:
    fake = FakeBuilder({"profile": same_profile})
    out = tmp_path / "bench"
    report = _build(fake, _config(out, personas_per_problem=2), n_problems=2)
    bench = read_bench(out)
    assert report.duplicates == {"identical_found": 2, "regenerated": 2, "still_identical": 0}
    notes = [p for name, p in fake.prompts if name == "profile" and "Note: another person" in p]
    assert len(notes) == 2
    assert len(bench.scenarios) == 4
    for problem_id in {s.problem.id for s in bench.scenarios}:
        a, b = [s for s in bench.scenarios if s.problem.id == problem_id]
        assert [(i.attribute, i.value) for i in a.profile.items] != [(i.attribute, i.value) for i in b.profile.items]
    assert sum(s.provenance["regenerated_profile"] for s in bench.scenarios) == 2


def test_profiles_still_identical_after_regeneration_are_dropped_and_reported(tmp_path: Path) -> None:
    def stubborn(fake: FakeBuilder, prompt: str, schema: dict[str, Any], n: int) -> Any:
        return same_profile(fake, prompt.replace("Note: another person", "(ignored)"), schema, n)

    fake = FakeBuilder({"profile": stubborn})
    report = _build(fake, _config(tmp_path / "bench", personas_per_problem=3), n_problems=1)
    assert report.duplicates == {"identical_found": 2, "regenerated": 2, "still_identical": 2}
    assert report.scenarios == 1 and report.skipped == {"identical_profile": 2}
    assert [f["step"] for f in report.failures] == ["profile_regenerate"] * 2


def test_dry_run_estimates_without_any_model_call(tmp_path: Path) -> None:
    config = _config(tmp_path / "bench", problems=4)
    estimate = estimate_build(config, problems=make_problems(4))
    steps = estimate.steps
    assert steps["persona"].calls == 5 and steps["relevance"].calls == 4
    assert steps["profile"].calls == steps["rubric"].calls == 12
    assert all(s.input_tokens > 0 and s.output_tokens > 0 for k, s in steps.items() if s.calls)
    assert estimate.total.calls == 33 and "chars/4" in estimate.method
    assert not (tmp_path / "bench").exists()


@pytest.mark.parametrize(
    ("problems", "per_problem", "expected"),
    [(1, 1, 1), (3, 4, 12), (20, 10, 100), (None, 10, 100), (2, 150, 150)],
)
def test_the_default_library_is_what_the_build_needs(tmp_path: Path, problems, per_problem, expected) -> None:
    """Without --persona-library and --library-size: problems × personas per problem, at most 100, at least the
    personas per problem; the dry-run counts that library's calls (one scenario: one persona call, not 100)."""
    config = _config(tmp_path / "b", problems=problems, personas_per_problem=per_problem, library_size=None)
    assert config.library_size == expected
    if problems is not None:
        estimate = estimate_build(config, problems=make_problems(problems))
        assert estimate.steps["persona"].calls == expected
    assert _config(tmp_path / "b", problems=1, personas_per_problem=1, library_size=7).library_size == 7


def _cli() -> typer.Typer:
    app = typer.Typer()
    register(app)
    return app


def test_cli_dry_run_makes_zero_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared_benchmarks: Path) -> None:
    fake = FakeBuilder()
    monkeypatch.setattr(setup, "resolve_models", lambda names, config: [fake_model(fake)])
    out = tmp_path / "bench"
    args = ["build", "--benchmark", "math500", "--source", str(shared_benchmarks / "math500" / "test.jsonl")]
    args += ["--problems", "3", "--personas-per-problem", "2", "--model", "mockllm/model", "--out", str(out)]
    result = CliRunner().invoke(_cli(), [*args, "--dry-run"])
    assert result.exit_code == 0, result.output
    assert fake.total == 0 and not out.exists()
    assert "dry run" in result.output and "chars/4" in result.output
    assert "relevance" in result.output and "rubric" in result.output


def test_cli_build_from_a_persona_library_and_a_generic_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A persona library made first, then reused by the build.
    fake = FakeBuilder()
    monkeypatch.setattr(setup, "resolve_models", lambda names, config: [fake_model(fake)])
    library = tmp_path / "personas.jsonl"
    result = CliRunner().invoke(
        _cli(), ["personas", "--n", "4", "--model", "mockllm/model", "--out", str(library), "--max-share", "0.5"]
    )
    assert result.exit_code == 0, result.output
    assert fake.calls["persona"] == 4 and "distinct_buckets" in result.output
    assert len(library.read_text().splitlines()) == 4

    data = tmp_path / "quiz.jsonl"
    rows = [{"q": f"What is {i} + {i}?", "a": str(2 * i)} for i in range(1, 5)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "bench"
    args = [
        "build",
        "--benchmark",
        "generic",
        "--source",
        str(data),
        "--map",
        "question=q,answer=a,answer_type=integer",
    ]
    args += ["--problems", "2", "--personas-per-problem", "2", "--persona-library", str(library)]
    args += ["--model", "mockllm/model", "--out", str(out)]
    result = CliRunner().invoke(_cli(), args)
    assert result.exit_code == 0, result.output
    assert fake.calls["persona"] == 4  # the library was reused, not regenerated
    bench = read_bench(out)
    assert len(bench.scenarios) == 4 and "wrote 4 scenarios" in result.output
    assert bench.manifest["personas"]["source"] == str(library)
    assert {s.problem.question for s in bench.scenarios} <= {r["q"] for r in rows}


def test_config_errors_are_user_errors(tmp_path: Path) -> None:
    from prefdisco.errors import UserError

    result = CliRunner().invoke(
        _cli(), ["build", "--benchmark", "generic", "--out", str(tmp_path / "b"), "--model", "x"]
    )
    assert isinstance(result.exception, UserError) and "--map" in str(result.exception)
    result = CliRunner().invoke(
        _cli(),
        ["build", "--benchmark", "toy", "--out", str(tmp_path / "b"), "--min-attributes", "5", "--min-relevant", "4"],
    )
    assert isinstance(result.exception, UserError) and "min_relevant" in str(result.exception)


def test_too_small_a_library_is_a_user_error(tmp_path: Path) -> None:
    from prefdisco.errors import UserError
    from test_build_personas import _persona

    library = tmp_path / "p.jsonl"
    save_library(library, [_persona(0, "healthcare", 30, "HHHHH")])
    fake = FakeBuilder()
    with pytest.raises(UserError, match="fewer than --personas-per-problem 3"):
        _build(fake, _config(tmp_path / "bench", persona_library=library))
    assert fake.total == 0


def test_a_build_where_every_item_fails_writes_nothing_and_says_why(tmp_path: Path) -> None:
    from prefdisco.errors import UserError

    fake = FakeBuilder({"relevance": lambda *a: {"relevant": []}})
    out = tmp_path / "bench"
    with pytest.raises(
        UserError, match=r"no scenario was built \(\{'relevance': 3\} invalid replies; first failure: relevance"
    ):
        _build(fake, _config(out))
    assert not (out / "scenarios.jsonl").exists()
    assert fake.calls["relevance"] == 9  # 3 problems x (1 + 2 retries)
