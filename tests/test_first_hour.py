"""A researcher's first hour (issue 26): nothing overwritten, failure is not success, never silent, files others can
read, and the small things a first hour trips on. Every test here failed before its fix."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

import prefdisco.cli as cli
from prefdisco.atomic import atomic_open, atomic_write
from prefdisco.benchio import write_bench
from prefdisco.demo import demo_scenarios
from prefdisco.errors import UserError


@pytest.fixture(scope="module")
def app():
    cli._register()
    return cli.app


def invoke(app, *args: str):
    return CliRunner().invoke(app, list(args))


def one_error(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


# ---- item 7: files others can read ----------------------------------------------------------------------------


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o002, 0o664)])
def test_atomic_writes_respect_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    old = os.umask(umask)
    try:
        atomic_write(tmp_path / "a.json", "{}")
        atomic_open(tmp_path / "b.csv", lambda f: f.write("x\n"))
        write_bench(tmp_path / "bench", demo_scenarios()[:1], [demo_scenarios()[0].persona], [])
    finally:
        os.umask(old)
    written = [tmp_path / "a.json", tmp_path / "b.csv", *sorted((tmp_path / "bench").iterdir())]
    assert len(written) == 6
    assert {stat.S_IMODE(p.stat().st_mode) for p in written} == {mode}


# ---- item 8: a malformed line's error points at its column -----------------------------------------------------


def test_a_malformed_line_names_its_real_column(app, tmp_path: Path) -> None:
    # '{"type": "metadata"' ends after 19 characters: the missing ',' or '}' is expected at column 20
    release = tmp_path / "r.jsonl"
    release.write_text('{"type": "metadata"\n', encoding="utf-8")
    result = invoke(app, "validate", str(release))
    assert f"{release}:1: invalid JSON: Expecting ',' delimiter at column 20" in result.output

    # json's own message ends in "at": no "at at"; the string starts at column 9
    bad = tmp_path / "s.jsonl"
    bad.write_text('{"id": 1}\n{"id": "abc\n', encoding="utf-8")
    result = invoke(app, "validate", str(bad))
    assert f"{bad}:2: invalid JSON: Unterminated string starting at column 8" in result.output
    assert "at at" not in result.output

    # eval names the column too
    line = demo_scenarios()[0].model_dump_json()
    scenarios = tmp_path / "e.jsonl"
    scenarios.write_text(line + "\n" + '{"id": oops}\n', encoding="utf-8")
    result = invoke(app, "eval", str(scenarios), "--model", "mockllm/model", "--log-dir", str(tmp_path / "run"))
    assert one_error(result) == f"error: {scenarios}:2: invalid JSON: Expecting value at column 8"


# ---- item 8: --version, counted nouns --------------------------------------------------------------------------


def test_version(app) -> None:
    from prefdisco.version import __version__

    result = invoke(app, "--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"prefdisco {__version__}"


def test_one_scenario_is_not_one_scenarios(app, tmp_path: Path, shared_dir: Path) -> None:
    release = shared_dir / "data" / "prefdisco_release" / "example_record.jsonl"
    result = invoke(app, "import-release", str(release), "--out", str(tmp_path / "b"))
    assert result.exit_code == 0, result.output
    assert f"wrote {tmp_path / 'b'}: 1 scenario, 1 problem, 1 persona, " in result.stdout
    result = invoke(app, "validate", str(tmp_path / "b"))
    assert "1 scenarios" not in result.output and "1 problems" not in result.output, result.output


# ---- item 1: nothing overwritten -------------------------------------------------------------------------------


@pytest.fixture
def fake_builder(monkeypatch: pytest.MonkeyPatch):
    from prefdisco.builder import setup
    from test_build_support import FakeBuilder, fake_model

    fake = FakeBuilder(stable_names=True)
    monkeypatch.setattr(setup, "resolve_models", lambda names, config: [fake_model(fake)])
    return fake


def build_args(shared_benchmarks: Path, benchmark: str, out: Path, *extra: str) -> list[str]:
    source = {"math500": "math500/test.jsonl", "mmlu": "mmlu/test.jsonl"}[benchmark]
    return [
        "build", "--benchmark", benchmark, "--source", str(shared_benchmarks / source), "--problems", "2",
        "--personas-per-problem", "2", "--model", "mockllm/model", "--max-share", "0.5", "--out", str(out), *extra,
    ]  # fmt: skip


def test_build_onto_another_benchmark_is_refused_and_the_same_build_resumes(
    app, tmp_path: Path, shared_benchmarks: Path, fake_builder
) -> None:
    from prefdisco.benchio import read_bench

    out = tmp_path / "bench"
    result = invoke(app, *build_args(shared_benchmarks, "math500", out))
    assert result.exit_code == 0, result.output
    before = (out / "scenarios.jsonl").read_bytes()
    assert len(read_bench(out).scenarios) == 4
    calls = fake_builder.total

    # another benchmark into the same folder: refused before any call, nothing changed
    result = invoke(app, *build_args(shared_benchmarks, "mmlu", out))
    assert one_error(result) == (
        f'error: --out {out}: holds a benchmark of 4 scenarios built with other settings (benchmark "math500" '
        f'there, "mmlu" now); give --overwrite to replace it (its checkpoint is kept: calls already made are not '
        "made again), or another --out"
    )
    assert fake_builder.total == calls and (out / "scenarios.jsonl").read_bytes() == before

    # a nested setting is named by its path
    result = invoke(app, *build_args(shared_benchmarks, "math500", out, "--max-attributes", "4"))
    assert "(profile.max_attributes 7 there, 4 now)" in one_error(result)

    # the same settings (and another --max-connections, which changes nothing built) resume without a call
    result = invoke(app, *build_args(shared_benchmarks, "math500", out, "--max-connections", "2"))
    assert result.exit_code == 0, result.output
    assert fake_builder.total == calls and (out / "scenarios.jsonl").read_bytes() == before

    # the same source given as its folder, not its file, is the same source: it resumes without a call
    args = build_args(shared_benchmarks, "math500", out)
    args[args.index("--source") + 1] = str(shared_benchmarks / "math500")
    result = invoke(app, *args)
    assert result.exit_code == 0, result.output
    assert fake_builder.total == calls
    assert [s.id for s in read_bench(out).scenarios] == [json.loads(line)["id"] for line in before.splitlines()]

    # --overwrite replaces it
    result = invoke(app, *build_args(shared_benchmarks, "mmlu", out, "--overwrite"))
    assert result.exit_code == 0, result.output
    assert {s.problem.benchmark for s in read_bench(out).scenarios} == {"mmlu"}


def test_personas_onto_a_library_is_refused(app, tmp_path: Path, fake_builder) -> None:
    out = tmp_path / "personas.jsonl"
    args = ["personas", "--n", "3", "--model", "mockllm/model", "--max-share", "0.5", "--out", str(out)]
    assert invoke(app, *args).exit_code == 0
    before = out.read_bytes()
    result = invoke(app, *args[:2], "2", *args[3:])
    assert one_error(result) == (
        f"error: --out {out}: holds a persona library of 3 personas; give --overwrite to replace it (its checkpoint "
        f".personas.jsonl.checkpoint.jsonl is kept), or another --out"
    )
    assert out.read_bytes() == before
    result = invoke(app, *args[:2], "2", *args[3:], "--overwrite")
    assert result.exit_code == 0, result.output
    assert len(out.read_text().splitlines()) == 2


def test_import_release_onto_a_built_benchmark_is_refused_and_overwrite_drops_its_checkpoint(
    app, tmp_path: Path, shared_dir: Path
) -> None:
    release = shared_dir / "data" / "prefdisco_release" / "example_record.jsonl"
    out = tmp_path / "bench"
    write_bench(out, demo_scenarios()[:4], [s.persona for s in demo_scenarios()[:4]], [])
    (out / ".checkpoint").mkdir()
    (out / ".checkpoint" / "steps.jsonl").write_text("{}\n")
    before = (out / "scenarios.jsonl").read_bytes()

    result = invoke(app, "import-release", str(release), "--out", str(out))
    assert one_error(result) == (
        f"error: --out {out}: holds a benchmark of 4 scenarios; give --overwrite to replace it, or another --out"
    )
    assert (out / "scenarios.jsonl").read_bytes() == before

    result = invoke(app, "import-release", str(release), "--out", str(out), "--overwrite")
    assert result.exit_code == 0, result.output
    assert len((out / "scenarios.jsonl").read_text().splitlines()) == 1
    assert not (out / ".checkpoint").exists()


def test_export_release_onto_a_benchmark_file_is_refused(app, tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    write_bench(bench, demo_scenarios()[:4], [s.persona for s in demo_scenarios()[:4]], [])
    target = bench / "scenarios.jsonl"
    before = target.read_bytes()
    result = invoke(app, "export-release", str(bench), "--out", str(target))
    assert one_error(result) == (
        f"error: --out {target}: holds the scenarios.jsonl of the benchmark folder {bench} (4 scenarios); give "
        "--overwrite to replace it, or another --out"
    )
    assert target.read_bytes() == before

    release = tmp_path / "r.jsonl"
    assert invoke(app, "export-release", str(bench), "--out", str(release)).exit_code == 0
    result = invoke(app, "export-release", str(bench), "--out", str(release))
    assert "holds a prefq-bench release of 4 records" in one_error(result)
    assert invoke(app, "export-release", str(bench), "--out", str(release), "--overwrite").exit_code == 0


def test_an_export_counts_the_library_the_build_drew_from(app, tmp_path: Path, shared_benchmarks, fake_builder):
    """A build of 2 problems x 2 personas from a library of 6 keeps the 4 it used in its folder; the export's
    metadata line says the library's 6 (the paper's ``total_personas_in_library``), not the 4."""
    bench = tmp_path / "bench"
    result = invoke(app, *build_args(shared_benchmarks, "math500", bench, "--library-size", "6"))
    assert result.exit_code == 0, result.output
    assert len((bench / "personas.jsonl").read_text().splitlines()) == 4
    release = tmp_path / "r.jsonl"
    assert invoke(app, "export-release", str(bench), "--out", str(release)).exit_code == 0
    metadata = json.loads(release.read_text().splitlines()[0])
    assert metadata["type"] == "metadata" and metadata["total_personas_in_library"] == 6


# ---- item 2: failure is not success ----------------------------------------------------------------------------


def quiz_build_args(tmp_path: Path, out: Path, *extra: str) -> list[str]:
    """4 problems x 1 persona from a generic file: 'What is i + i?' for i = 1..4."""
    data = tmp_path / "quiz.jsonl"
    data.write_text("".join(json.dumps({"q": f"What is {i} + {i}?", "a": str(2 * i)}) + "\n" for i in range(1, 5)))
    return [
        "build", "--benchmark", "generic", "--source", str(data), "--map", "question=q,answer=a,answer_type=integer",
        "--problems", "4", "--personas-per-problem", "1", "--model", "mockllm/model", "--max-share", "0.5",
        "--no-semantic-dedup", "--out", str(out), *extra,
    ]  # fmt: skip


def test_a_low_yield_build_exits_1_names_the_flag_and_resumes(app, tmp_path: Path, monkeypatch) -> None:
    from inspect_ai.model import ModelOutput

    from prefdisco.benchio import read_bench
    from prefdisco.builder import setup
    from test_build_support import FakeBuilder, fake_model

    class CutOff(FakeBuilder):
        """Rubrics of every problem but 'What is 1 + 1?' are cut off at the length limit (until ``fixed``)."""

        fixed = False

        def __call__(self, input, tools, tool_choice, config):
            out = super().__call__(input, tools, tool_choice, config)
            cut = config.response_schema.name == "rubric" and "What is 1 + 1?" not in input[0].text
            if not cut or self.fixed:
                return out
            short = ModelOutput.from_content("mockllm", '{"criteria": [{"attribute": "', stop_reason="max_tokens")
            short.usage = out.usage
            return short

    fake = CutOff(stable_names=True)
    monkeypatch.setattr(setup, "resolve_models", lambda names, config: [fake_model(fake)])
    out = tmp_path / "bench"

    result = invoke(app, *quiz_build_args(tmp_path, out))
    assert result.exit_code == 1, result.output
    lines = result.stdout.strip().splitlines()
    assert "  rubric_failed 3: replies cut off at the length limit: --max-attributes 4 (fewer criteria per " in (
        result.stdout
    )
    assert "-M max_string_chars=100 (shorter strings)" in result.stdout
    assert lines[-1].startswith(f"wrote 1 of 4 scenarios planned (25%) to {out} in ")
    assert lines[-1].endswith(
        " s: below --min-yield 0.5; the flags above help, and the same command resumes (finished calls are not "
        "made again)"
    )
    assert len(read_bench(out).scenarios) == 1  # what was kept is written

    # a lower bar passes (the same folder: --min-yield changes nothing built)
    result = invoke(app, *quiz_build_args(tmp_path, out, "--min-yield", "0.25"))
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().splitlines()[-1].endswith("; rerun the same command to retry the skipped ones")

    # once the model fits, the same command resumes: only the 3 missing rubrics are asked
    fake.fixed = True
    before = fake.calls.copy()
    result = invoke(app, *quiz_build_args(tmp_path, out))
    assert result.exit_code == 0, result.output
    assert fake.calls - before == {"rubric": 3}
    assert result.stdout.strip().splitlines()[-1].startswith(f"wrote 4 scenarios to {out} in ")


def test_attribute_names_that_are_not_words_never_reach_a_profile(app, tmp_path: Path, monkeypatch) -> None:
    from prefdisco.benchio import read_bench
    from prefdisco.builder import setup
    from test_build_support import FakeBuilder, default_relevance, fake_model

    NEW = ("Moloch 253.506", "Cabbage 11.21.2018", "Use of 3D diagrams")

    def relevance(fake, prompt, schema, n):
        reply = default_relevance(fake, prompt, schema, n)
        reply["relevant"] = reply["relevant"][:7]  # room for the new ones in F(i)
        reply["new_attributes"] = [
            {"name": name, "category": "communication", "description": "A thing the person cares about.",
             "values": ["low", "high"]}
            for name in NEW
        ]  # fmt: skip
        return reply

    def profile(fake, prompt, schema, n):  # the new attributes first, as a small model might
        options = schema["properties"]["preferences"]["items"]["anyOf"]
        names = [o["properties"]["attribute"]["enum"][0] for o in options]
        order = sorted(range(len(options)), key=lambda i: names[i] not in NEW)
        return {
            "preferences": [
                {"attribute": names[i], "value": options[i]["properties"]["value"]["enum"][0],
                 "justification": "Because.", "importance": 3}
                for i in order[:3]
            ]
        }  # fmt: skip

    fake = FakeBuilder({"relevance": relevance, "profile": profile}, stable_names=True)
    monkeypatch.setattr(setup, "resolve_models", lambda names, config: [fake_model(fake)])
    out = tmp_path / "bench"
    result = invoke(app, *quiz_build_args(tmp_path, out, "--min-relevant", "3"))
    assert result.exit_code == 0, result.output
    assert (
        "new attribute names rejected, not words: 'Cabbage 11.21.2018' ('11.21.2018' is a number), "
        "'Moloch 253.506' ('253.506' is a number)"
    ) in result.stdout
    bench = read_bench(out)
    named = {i.attribute for s in bench.scenarios for i in s.profile.items}
    assert "Use of 3D diagrams" in named  # a new name made of words is kept
    relevant = {name for s in bench.scenarios for name in s.relevant_attributes}
    assert not {"Moloch 253.506", "Cabbage 11.21.2018"} & (relevant | {a.name for a in bench.attributes})
    assert [r["proposed"] for r in bench.manifest["attribute_dedup"]["not_words"]] == [
        "Cabbage 11.21.2018",
        "Moloch 253.506",
    ]


def test_validate_warns_about_attribute_names_that_are_not_words(app, tmp_path: Path) -> None:
    from prefdisco.schema import Attribute

    scenario = demo_scenarios()[0]
    old = scenario.profile.items[0].attribute
    data = json.loads(scenario.model_dump_json().replace(json.dumps(old), json.dumps("Moloch 253.506")))
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(data) + "\n")
    result = invoke(app, "validate", str(path))
    assert result.exit_code == 0, result.output
    assert (
        f"{path}:1: warning: attribute name 'Moloch 253.506' is not words ('253.506' is a number); rename it or "
        "drop the attribute"
    ) in result.stdout

    bench = tmp_path / "bench"
    cabbage = Attribute(name="Cabbage 11.21.2018", category="communication", description="Cabbage things.",
                        value_space=["low", "high"])  # fmt: skip
    ok = Attribute(name="Use of 3D diagrams", category="communication", description="Diagrams in 3D.",
                   value_space=["low", "high"])  # fmt: skip
    write_bench(bench, [scenario], [scenario.persona], [ok, cabbage])
    result = invoke(app, "validate", str(bench))
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stdout.splitlines() if "warning:" in line]
    assert warnings == [
        f"{bench / 'attributes.json'}:12: warning: entry 1: attribute name 'Cabbage 11.21.2018' is not words "
        "('11.21.2018' is a number); rename it or drop the attribute"
    ]


# ---- item 3: never silent --------------------------------------------------------------------------------------

TICK = re.compile(
    r"^(\w+): (?:(\w+) (\d+)/(\d+) done, (\d+) failed(?:; (\d+) model calls made(?:, (\d+) from the cache)?"
    r"(?: \(of about \d+\))?)?(?:[;,] \d+ model calls? running)?(?:; about [\w ]+ left)?"
    r"(?:; latest: ([\w ]+))?|starting); (\d+) s elapsed$"
)
CALLS_TICK = re.compile(r"; (\d+) model calls made(?:, (\d+) from the cache)?")


def ticks(output: str, label: str) -> list[tuple[str, int, int, int]]:
    """(what, done, total, failed) of every progress line of ``label`` in ``output``."""
    found = []
    for line in output.splitlines():
        m = TICK.match(line)
        if m and m.group(1) == label and m.group(2):
            found.append((m.group(2), int(m.group(3)), int(m.group(4)), int(m.group(5))))
    return found


def test_a_build_into_a_file_prints_progress_lines(app, tmp_path: Path, monkeypatch) -> None:
    import time

    from inspect_ai.model import ModelOutput

    from prefdisco.builder import setup
    from test_build_support import FakeBuilder, fake_model

    class Slow(FakeBuilder):
        """0.1 s a call; the relevance of the last problem invalid (1 failure), the rubrics of the others but the
        first cut off (2 failures)."""

        def __call__(self, input, tools, tool_choice, config):
            time.sleep(0.1)
            out = super().__call__(input, tools, tool_choice, config)
            if config.response_schema.name == "relevance" and "What is 4 + 4?" in input[0].text:
                return ModelOutput.from_content("mockllm", "not json")
            if config.response_schema.name == "rubric" and "What is 1 + 1?" not in input[0].text:
                return ModelOutput.from_content("mockllm", "{", stop_reason="max_tokens")
            return out

    fake = Slow(stable_names=True)
    monkeypatch.setattr(setup, "resolve_models", lambda names, config: [fake_model(fake)])
    monkeypatch.setenv("PREFDISCO_PROGRESS_SECONDS", "0.05")
    result = invoke(app, *quiz_build_args(tmp_path, tmp_path / "bench", "--retries", "0", "--min-yield", "0"))
    assert result.exit_code == 0, result.output
    seen = ticks(result.stdout, "build")
    assert {what for what, *_ in seen} >= {"persona", "relevance", "profile", "rubric"}, result.stdout
    assert all(0 <= done <= total for _, done, total, _ in seen)
    assert {(total, failed) for what, _, total, failed in seen if what == "persona"} == {(4, 0)}
    assert {failed for what, *_, failed in seen if what == "profile"} == {0}  # not the relevance step's failure
    rubric = [(done, failed) for what, done, _, failed in seen if what == "rubric"]
    assert rubric == sorted(rubric) and 1 <= rubric[-1][1] <= 2  # the failures are counted as the rubrics end

    # a terminal gets rich's bars instead (no plain line)
    monkeypatch.setattr("rich.console.Console.is_terminal", property(lambda self: True))
    result = invoke(app, *quiz_build_args(tmp_path, tmp_path / "bench2", "--retries", "0", "--min-yield", "0"))
    assert result.exit_code == 0 and not ticks(result.stdout, "build")


def test_personas_into_a_file_print_progress_lines(app, tmp_path: Path, monkeypatch) -> None:
    import time

    from prefdisco.builder import setup
    from test_build_support import FakeBuilder, fake_model

    class Slow(FakeBuilder):
        def __call__(self, *args):
            time.sleep(0.1)
            return super().__call__(*args)

    fake = Slow()
    monkeypatch.setattr(setup, "resolve_models", lambda names, config: [fake_model(fake)])
    monkeypatch.setenv("PREFDISCO_PROGRESS_SECONDS", "0.05")
    out = tmp_path / "p.jsonl"
    args = ["personas", "--n", "3", "--batch", "1", "--model", "m", "--max-share", "0.5", "--out", str(out)]
    result = invoke(app, *args)
    assert result.exit_code == 0, result.output
    seen = ticks(result.stdout, "personas")
    assert {(what, total) for what, _, total, _ in seen} == {("persona", 3)}
    assert [done for _, done, _, _ in seen] == sorted(done for _, done, _, _ in seen)  # it counts up
    assert {done for _, done, _, _ in seen} >= {1, 2}


@pytest.fixture
def slow_mock(tmp_path: Path, monkeypatch):
    from mock_openai import MockConfig, MockOpenAI
    from test_reliability import mock_env

    with MockOpenAI(MockConfig(latency_s=0.15)) as mock:
        mock_env(monkeypatch, mock, tmp_path)
        monkeypatch.setenv("PREFDISCO_PROGRESS_SECONDS", "0.1")
        yield mock


@pytest.mark.slow
def test_eval_and_judge_into_a_file_print_progress_lines_and_eval_names_the_next_command(
    app, tmp_path: Path, slow_mock
) -> None:
    from mock_openai import tagged_scenarios, write_scenarios

    bench = write_scenarios(tmp_path / "scenarios.jsonl", tagged_scenarios(2))
    run = tmp_path / "run"
    model = f"openai-api/mock/m{slow_mock.port}"
    args = ["eval", str(bench), "--model", model, "--modes", "baseline,discovery"]
    result = invoke(app, *args, "--log-dir", str(run), "--display", "plain", "--judge", "later")
    assert result.exit_code == 0, result.output
    seen = ticks(result.stdout, "eval")
    assert seen and {(what, total, failed) for what, _, total, failed in seen} == {("samples", 4, 0)}
    assert [done for _, done, _, _ in seen] == sorted(done for _, done, _, _ in seen)
    assert seen[-1][1] >= 3 or len(seen) > 3, result.stdout  # it counted samples as they finished
    # the model calls are counted as each one finishes (issue 35, class 6), more often than samples finish
    calls = [int(m.group(1)) for m in map(CALLS_TICK.search, result.stdout.splitlines()) if m]
    assert calls and calls == sorted(calls) and len(set(calls)) > len({done for _, done, _, _ in seen}), result.stdout
    assert any("; latest: discovery" in line or "; latest: baseline" in line for line in result.stdout.splitlines())
    # the calls are counted against the run's planned calls (its dry-run estimate) and the time left is estimated
    planned = json.loads((run / "estimate.json").read_text())["lines"]
    of_about = f" (of about {sum(line['calls'] for line in planned)})"
    assert any(of_about in line and " left" in line for line in result.stdout.splitlines()), result.stdout
    report = f"prefdisco report {run} --out {run / 'report'}"
    assert result.stdout.strip().splitlines()[-1] == f"next: prefdisco judge {run}, then {report}"

    result = invoke(app, "judge", str(run))
    assert result.exit_code == 0, result.output
    seen = ticks(result.stdout, "judge")
    assert seen and {(what, total) for what, _, total, _ in seen} == {("samples", 4)}, result.stdout
    assert result.stdout.strip().splitlines()[-1] == f"next: {report}"

    # --display none asks for silence
    result = invoke(app, *args, "--log-dir", str(tmp_path / "quiet"), "--display", "none")
    assert result.exit_code == 0, result.output
    assert not ticks(result.stdout, "eval")
    quiet = tmp_path / "quiet"
    assert result.stdout.strip().splitlines()[-1] == f"next: prefdisco report {quiet} --out {quiet / 'report'}"


# ---- item 5: cost in dollars -----------------------------------------------------------------------------------


def test_the_dry_run_prices_common_models_without_prices_and_says_which(app, tmp_path: Path) -> None:
    bench = tmp_path / "s.jsonl"
    bench.write_text("".join(s.model_dump_json() + "\n" for s in demo_scenarios()[:2]))
    args = ["eval", str(bench), "--model", "openai/gpt-4.1", "--user-model", "anthropic/claude-sonnet-4-20250514"]
    args += ["--judge-model", "ollama/llama3", "--log-dir", str(tmp_path / "run"), "--modes", "baseline", "--dry-run"]
    result = invoke(app, *args)
    assert result.exit_code == 0, result.output
    rows = {line.split()[2]: line.split() for line in result.stdout.splitlines() if line.startswith("assistant ")}
    _, _, _, calls, n_in, n_out, _, usd = rows["openai/gpt-4.1"]
    assert calls == "2" and usd == f"{(int(n_in) * 2.0 + int(n_out) * 8.0) / 1e6:.4f}"  # $2 / $8 per 1M
    judge = [line.split() for line in result.stdout.splitlines() if line.startswith("grader ")]
    assert judge and all(cells[-1] == "—" for cells in judge)
    assert "prices: openai/gpt-4.1 $2 in / $8 out per 1M tokens (the packaged table of 2026-03-21)" in result.stdout
    assert (
        "prices: anthropic/claude-sonnet-4-20250514 $3 in / $15 out per 1M tokens (the packaged table of 2026-03-21)"
    ) in result.stdout
    assert (
        '- no price for ollama/llama3: its USD shows — and is not summed; give --prices FILE with {"MODEL": '
        '{"input": USD per 1M tokens, "output": USD per 1M tokens}}'
    ) in result.stdout

    # --prices adds a model and overrides the table
    own = tmp_path / "prices.json"
    given = {"openai/gpt-4.1": {"input": 1, "output": 1}, "ollama/llama3": {"input": 0, "output": 0}}
    own.write_text(json.dumps(given))
    result = invoke(app, *args, "--prices", str(own))
    assert f"prices: openai/gpt-4.1 $1 in / $1 out per 1M tokens (--prices {own})" in result.stdout
    assert "no price for" not in result.stdout and "—" not in result.stdout


def test_results_cost_dated_snapshots_and_local_models_from_the_packaged_table() -> None:
    from prefdisco.prices import prices
    from prefdisco.results.logs import _costs

    row = {
        "model": "openai/gpt-4.1-2025-04-14", "input_tokens": 1000, "output_tokens": 500,
        "user_model": "anthropic/claude-sonnet-4-20250514", "user_input_tokens": 2000, "user_output_tokens": 100,
        "grader_model": "prefdisco/smollm2", "grader_input_tokens": 9000, "grader_output_tokens": 900,
    }  # fmt: skip
    # 1000 x $2 + 500 x $8 (gpt-4.1) + 2000 x $3 + 100 x $15 (claude-sonnet-4) + nothing for the local judge, / 1M
    costs = _costs(row, prices())
    assert costs["cost_usd"] == pytest.approx((2000 + 4000 + 6000 + 1500) / 1e6)
    assert costs["user_cost_usd"] == pytest.approx((6000 + 1500) / 1e6) and costs["grader_cost_usd"] == 0.0
    unpriced = _costs({**row, "grader_model": "ollama/llama3"}, prices())
    assert unpriced["cost_usd"] is None and unpriced["grader_cost_usd"] is None  # a role without a price: no total


def test_eval_says_which_prices_its_costs_used(app, tmp_path: Path, slow_mock) -> None:
    from mock_openai import tagged_scenarios, write_scenarios

    bench = write_scenarios(tmp_path / "scenarios.jsonl", tagged_scenarios(1))
    model = f"openai-api/mock/m{slow_mock.port}"
    args = ["eval", str(bench), "--model", model, "--modes", "baseline", "--display", "none"]
    result = invoke(app, *args, "--log-dir", str(tmp_path / "a"))
    assert result.exit_code == 0, result.output
    assert f"no price for {model}: its USD shows — and is not summed; give --prices FILE with" in result.stdout
    own = tmp_path / "prices.json"
    own.write_text(json.dumps({model: {"input": 1.5, "output": 2}}))
    result = invoke(app, *args, "--log-dir", str(tmp_path / "b"), "--prices", str(own))
    assert f"prices: {model} $1.5 in / $2 out per 1M tokens (--prices {own})" in result.stdout
    import pandas as pd

    results = pd.read_csv(tmp_path / "b" / "results.csv")
    tokens = results[["input_tokens", "user_input_tokens", "grader_input_tokens"]].sum(axis=1).iloc[0]
    out = results[["output_tokens", "user_output_tokens", "grader_output_tokens"]].sum(axis=1).iloc[0]
    assert results["cost_usd"].iloc[0] == pytest.approx((tokens * 1.5 + out * 2) / 1e6)


# ---- item 8: demo folders, busy ports, identical judge repeats -----------------------------------------------


def test_demo_into_the_folder_of_another_limit_is_refused_naming_out(app, tmp_path: Path, monkeypatch) -> None:
    from prefdisco import demo
    from prefdisco.evaluation.settings.config import scenario_set_hash

    out = tmp_path / "prefdisco-demo"
    first_two = demo.embedded_selection(demo.demo_scenarios())[:2]
    (out / "logs").mkdir(parents=True)
    recorded = {"scenario_set": scenario_set_hash(first_two), "n_scenarios": 2, "models": ["prefdisco/smollm2"]}
    (out / "logs" / "run.json").write_text(json.dumps(recorded))
    monkeypatch.setattr(demo, "run_conditions", lambda *a, **k: pytest.fail("the demo ran"))

    result = invoke(app, "demo", "--out", str(out), "--limit", "3")
    assert one_error(result) == (
        f"error: --out {out}: holds the demo of 2 scenarios, not these 3; give another --out (e.g. --out {out}-3) "
        f"or remove {out}"
    )
    result = invoke(app, "demo", "--out", str(out), "--limit", "2", "--model", "openai/gpt-4.1")
    assert "holds the demo of 2 scenarios, not these 2" in one_error(result)  # another model: other scenarios too
    (out / "logs" / "run.json").write_text(json.dumps({**recorded, "scenario_set": scenario_set_hash(
        demo.demo_scenarios()[:2])}))  # fmt: skip
    result = invoke(app, "demo", "--out", str(out), "--limit", "2", "--model", "openai/gpt-4.1")
    assert "holds the demo of model prefdisco/smollm2, not openai/gpt-4.1" in one_error(result)


@pytest.mark.parametrize("command", ["serve", "serve-ratings"])
def test_annotate_serve_on_a_busy_port_fails_before_writing_anything(app, tmp_path: Path, command: str) -> None:
    import socket

    bench = tmp_path / "bench"
    write_bench(bench, demo_scenarios()[:2], [s.persona for s in demo_scenarios()[:2]], [])
    db = tmp_path / "labels.sqlite"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        args = [str(bench)] if command == "serve" else [str(tmp_path / "run"), "--bench", str(bench)]
        result = invoke(app, "annotate", command, *args, "--db", str(db), "--port", str(port))
    assert one_error(result) == (
        f"error: --port {port}: 127.0.0.1:{port} is in use (another server?); give another --port"
    )
    assert "open http" not in result.stdout and not db.exists()


def test_judge_repeats_at_temperature_0_warn_that_they_are_identical(app, tmp_path: Path) -> None:
    bench = tmp_path / "s.jsonl"
    bench.write_text(demo_scenarios()[0].model_dump_json() + "\n")
    args = ["eval", str(bench), "--model", "openai/gpt-4.1", "--log-dir", str(tmp_path / "r"), "--dry-run"]
    result = invoke(app, *args, "--judge-repeats", "3")
    assert result.exit_code == 0, result.output
    assert result.stderr.strip().splitlines() == [
        "warning: --judge-repeats 3 at judge temperature 0: the 3 judgings will be identical (and paid 3 times); "
        "give --judge-temperature 0.7 (or more) to measure the judge's own variance"
    ]
    result = invoke(app, *args, "--judge-repeats", "3", "--judge-temperature", "0.7")
    assert result.exit_code == 0 and "warning" not in result.stderr


def test_a_build_of_one_says_one_persona_and_one_scenario(app, tmp_path: Path, fake_builder) -> None:
    result = invoke(app, *quiz_build_args(tmp_path, tmp_path / "bench", "--problems", "1"))
    assert result.exit_code == 0, result.output
    assert "persona library (generated): 1 persona, 1 bucket, largest share 1.00, 1 occupation, " in result.stdout
    assert result.stdout.strip().splitlines()[-1].startswith(f"wrote 1 scenario to {tmp_path / 'bench'} in ")


def test_the_build_dry_run_refuses_what_the_build_refuses(
    app, tmp_path: Path, shared_benchmarks: Path, fake_builder
) -> None:
    """Item 4: a persona library too small for --personas-per-problem, and an --out holding another benchmark,
    are refused by --dry-run with the build's own line, before any call and without writing."""
    personas = tmp_path / "personas.jsonl"
    args = ["personas", "--n", "3", "--model", "mockllm/model", "--max-share", "0.5", "--out", str(personas)]
    assert invoke(app, *args).exit_code == 0
    calls = fake_builder.total
    small = [*build_args(shared_benchmarks, "math500", tmp_path / "b"), "--persona-library", str(personas)]
    small[small.index("--personas-per-problem") + 1] = "5"
    dry, real = invoke(app, *small, "--dry-run"), invoke(app, *small)
    assert (
        one_error(dry)
        == one_error(real)
        == ("error: persona library: 3 persona(s), fewer than --personas-per-problem 5")
    )
    assert fake_builder.total == calls and not (tmp_path / "b" / "scenarios.jsonl").exists()

    out = tmp_path / "bench"
    assert invoke(app, *build_args(shared_benchmarks, "math500", out)).exit_code == 0
    other = build_args(shared_benchmarks, "mmlu", out)
    dry, real = invoke(app, *other, "--dry-run"), invoke(app, *other)
    assert one_error(dry) == one_error(real) and "holds a benchmark of 4 scenarios" in one_error(dry)
    assert invoke(app, *build_args(shared_benchmarks, "math500", out), "--dry-run").exit_code == 0


def test_without_the_shared_data_the_suite_stops_in_one_line_before_anything_runs(tmp_path):
    """``make test`` (its ``check-shared`` step, before the install) and pytest itself (a session start hook) name
    the missing folder and how to give it, exit 2, and run no test."""
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}  # a session of its own, not a worker
    env["PREFDISCO_SHARED"] = str(tmp_path / "nowhere")
    made = subprocess.run(["make", "-s", "check-shared"], cwd=repo, env=env, capture_output=True, text=True)
    said = f"the tests need the shared data folder, not found at {tmp_path / 'nowhere' / 'data'}"
    assert made.returncode == 2 and made.stdout == ""
    assert made.stderr.splitlines()[0] == f"make test: {said}: put the shared folder beside the repository or set " + (
        "PREFDISCO_SHARED"
    )
    tests = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "tests/test_bootstrap.py",
    ]
    ran = subprocess.run(tests, cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 2 and said in ran.stdout + ran.stderr
    assert "passed" not in ran.stdout and "failed" not in ran.stdout
    present = subprocess.run(["make", "-s", "check-shared"], cwd=repo, capture_output=True, text=True)
    assert present.returncode == 0 and present.stderr == ""  # the real shared folder beside the repository


def test_each_demo_size_and_model_has_its_own_default_folder(app, tmp_path: Path, monkeypatch) -> None:
    """``prefdisco demo --limit 2`` after ``make demo`` (the whole demo in ``prefdisco-demo``) runs in a folder of
    its own instead of being refused; an explicit ``--out`` is still checked."""
    from prefdisco import demo

    ran: list[Path] = []

    def fake(out, limit, display, model):
        ran.append(out)
        raise SystemExit(0)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(demo, "run_demo", fake)
    for args, folder in (
        ((), "prefdisco-demo"),
        (("--limit", "2"), "prefdisco-demo-2"),
        (("--model", "openai/gpt-4.1"), "prefdisco-demo-openai-gpt-4.1"),
        (("--model", "openai/gpt-4.1", "--limit", "3"), "prefdisco-demo-openai-gpt-4.1-3"),
        (("--limit", "2", "--out", "mine"), "mine"),
    ):
        invoke(app, "demo", *args)
        assert ran[-1] == Path(folder), args


def test_without_the_network_a_hub_benchmark_fails_at_once_naming_source(monkeypatch) -> None:
    """``build --benchmark math500`` offline spent 27 s on the Hub's retries and never named ``--source``: a probe
    of the Hub's host (refused at once here) ends it in one line naming ``--source``, the row format's columns and
    the docs; with ``HF_HUB_OFFLINE`` set and the split not cached, the same hint."""
    import socket

    from prefdisco.benchmarks.loader import load_problems
    from prefdisco.benchmarks.sources import hub_reachable

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    with socket.socket() as closed:  # a port nothing listens on: the connection is refused at once
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    assert not hub_reachable()
    with pytest.raises(UserError) as refused:
        load_problems("math500", n=1)
    said = str(refused.value)
    assert said.startswith("Hugging Face dataset HuggingFaceH4/MATH-500 (default config, test split): the Hugging ")
    assert "pass --source PATH" in said and "(problem, solution, answer, subject, level, unique_id)" in said
    assert 'docs/building.md, "Without the Hub"' in said and "\n" not in said
    assert "## Without the Hub" in (Path(__file__).resolve().parents[1] / "docs" / "building.md").read_text()
    with socket.socket() as listening:  # and a host that accepts is reachable
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{listening.getsockname()[1]}")
        assert hub_reachable()

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(UserError, match=r"HF_HUB_OFFLINE is set and it is not in the Hugging Face cache; pass --so"):
        load_problems("math500", n=1)


def test_a_report_folder_is_neither_replaced_by_another_report_nor_mixed_into_a_run(app, tmp_path: Path) -> None:
    """Issue 35, class 2: ``report --out`` onto another report's folder overwrote it and left its figures behind,
    and ``eval --log-dir`` pointed at a report folder ran and mixed its files in. The report of the same results
    is replaced (a rerun); of other results it is refused without --overwrite, and with it the old report's
    figures go; eval refuses the folder before anything is written."""
    import shutil

    from test_report import make_run_dir

    first = make_run_dir(tmp_path / "a")
    second = tmp_path / "b"
    shutil.copytree(first, second)
    out = tmp_path / "report"
    made = invoke(app, "report", str(first), "--out", str(out), "--bootstrap", "0")
    assert made.exit_code == 0, made.output
    figures = sorted(p.name for p in out.glob("fig_*.png"))
    assert figures and invoke(app, "report", str(first), "--out", str(out), "--bootstrap", "0").exit_code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    other = invoke(app, "report", str(second), "--out", str(out), "--bootstrap", "0")
    assert one_error(other) == (
        f"error: --out {out}: holds the report of {first / 'results.csv'}; give --overwrite to replace it, or "
        "another --out"
    )
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    replaced = invoke(app, "report", str(second), "--out", str(out), "--bootstrap", "0", "--overwrite", "--no-figures")
    assert replaced.exit_code == 0, replaced.output
    assert not list(out.glob("fig_*.png"))  # the first report's figures are not left as this one's
    assert json.loads((out / "summary.json").read_text())["source"] == str(second / "results.csv")

    run = invoke(app, "eval", str(tmp_path / "nope.jsonl"), "--model", "openai-api/mock/m", "--log-dir", str(out))
    assert "holds the report of" not in run.output  # the missing benchmark is named first
    bench = tmp_path / "bench"
    write_bench(bench, demo_scenarios()[:1], [demo_scenarios()[0].persona], [])
    listing = sorted(p.name for p in out.iterdir())
    mixed = invoke(app, "eval", str(bench), "--model", "openai-api/mock/m", "--log-dir", str(out), "--dry-run")
    assert one_error(mixed) == (
        f"error: --log-dir {out}: holds the report of {second / 'results.csv'}, not a run; use a new --log-dir"
    )
    assert sorted(p.name for p in out.iterdir()) == listing


def test_the_same_run_given_twice_is_one_line_naming_it(app, tmp_path: Path) -> None:
    """Issue 35, class 3: ``report a a`` and ``leaderboard a a`` blamed two protocols for one run (and with
    --allow-mixed counted its every row twice): now one line naming the run, nothing written."""
    from test_report import make_run_dir

    run = make_run_dir(tmp_path / "a")
    for command in ("report", "leaderboard"):
        result = invoke(app, command, str(run), str(tmp_path / "." / "a"), "--out", str(tmp_path / command))
        assert one_error(result) == f"error: RESULTS: {run} given twice (the same run); give each run once"
        mixed = invoke(app, command, str(run), str(run), "--out", str(tmp_path / command), "--allow-mixed")
        assert one_error(mixed).endswith("given twice (the same run); give each run once")
        assert not (tmp_path / command).exists()


def test_a_benchmark_corrected_by_hand_is_resealed_by_validate_when_every_file_is_valid(app, tmp_path: Path) -> None:
    """Issue 35, part 1: a benchmark whose rubric was corrected by hand was refused by its content hash with no word
    on how to re-seal it. The refusal names ``prefdisco validate BENCH --reseal``, which records the files' new hash
    (the old one kept) when the hash is the only error, and refuses, changing nothing, while another error stands."""
    from prefdisco.benchio import read_bench

    bench = tmp_path / "bench"
    write_bench(bench, demo_scenarios()[:2], [s.persona for s in demo_scenarios()[:2]], [])
    first = json.loads((bench / "manifest.json").read_text())["content_hash"]
    lines = (bench / "scenarios.jsonl").read_text().splitlines()
    fixed = json.loads(lines[0])
    fixed["rubric"][0]["levels"]["5"] = "Corrected by hand: every step shown."
    (bench / "scenarios.jsonl").write_text("\n".join([json.dumps(fixed), *lines[1:]]) + "\n")
    with pytest.raises(UserError, match=rf"prefdisco validate {re.escape(str(bench))} --reseal\)$"):
        read_bench(bench)

    broken = bench / "personas.jsonl"
    kept = broken.read_text()
    broken.write_text(kept + "{not json\n")
    refused = invoke(app, "validate", str(bench), "--reseal")
    assert one_error(refused).startswith(f"error: --reseal: {bench} has 1 other error(s), first ")
    assert json.loads((bench / "manifest.json").read_text())["content_hash"] == first
    broken.write_text(kept)

    resealed = invoke(app, "validate", str(bench), "--reseal")
    assert resealed.exit_code == 0, resealed.output
    manifest = json.loads((bench / "manifest.json").read_text())
    assert manifest["content_hash"] != first and [r["previous_hash"] for r in manifest["resealed"]] == [first]
    assert "resealed" in resealed.output and first in resealed.output
    assert read_bench(bench).scenarios[0].rubric[0].levels[5] == "Corrected by hand: every step shown."
    assert invoke(app, "validate", str(bench)).exit_code == 0
    again = invoke(app, "validate", str(bench), "--reseal")
    assert again.exit_code == 0 and "nothing to reseal" in again.output
