"""``prefdisco build --session-length K``: every chosen persona on at least K problems, profiles written in problem
order per persona with the persona's earlier values in the prompt, the manifest's ``sessions`` shares, the refusal,
resume, the dry run, and a build without the flag choosing exactly as before."""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections import Counter
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
from prefdisco.builder.sessions import assign_personas
from prefdisco.errors import UserError
from prefdisco.schema import Persona
from test_build_personas import _persona
from test_build_support import FakeBuilder, fake_model, make_problems, same_profile

LEVELS = ["HHHHH", "LLLLL", "MMMMM", "HLHLH", "LHLHL", "MHMHM", "HMHMH", "LMLML", "MLMLM", "HHLLM"]


def _library(n: int) -> list[Persona]:
    return [_persona(i, "healthcare", 30 + i, LEVELS[i]) for i in range(n)]


def _config(out: Path, library: Path, **kw: Any) -> BuildConfig:
    values: dict[str, Any] = {
        "benchmark": "toy",
        "problems": 4,
        "personas_per_problem": 1,
        "persona_library": library,
        "models": ["mockllm/a"],
        "out": out,
    }
    values.update(kw)
    return BuildConfig.model_validate(values)


def _saved_library(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "personas.jsonl"
    save_library(path, _library(n))
    return path


def _build(fake: FakeBuilder, config: BuildConfig, n_problems: int) -> BuildReport:
    models = [fake_model(fake, "a")]
    return asyncio.run(pipeline.build_benchmark(config, models=models, problems=make_problems(n_problems)))


def _loads(plan: dict[str, list[Persona]]) -> list[int]:
    return sorted(Counter(p.id for chosen in plan.values() for p in chosen).values())


# --- who gets which problems ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n_problems", "per_problem", "length", "library", "loads"),
    [
        (3, 2, 2, 5, [2, 2, 2]),  # 6 slots / 2 = 3 personas, each on exactly 2 problems
        (4, 2, 3, 5, [4, 4]),  # 8 // 3 = 2 personas: both on all 4 problems
        (5, 2, 3, 5, [3, 3, 4]),  # 10 // 3 = 3 personas over 10 slots: 4, 3, 3
        (7, 2, 3, 10, [3, 3, 4, 4]),  # 14 // 3 = 4 personas over 14 slots
        (4, 2, 1, 3, [2, 3, 3]),  # the library (3) is smaller than 8 // 1: all of it, 8 slots
    ],
)
def test_every_chosen_persona_gets_at_least_k_problems(n_problems, per_problem, length, library, loads) -> None:
    problems = make_problems(n_problems)
    plan = assign_personas(_library(library), problems, per_problem, length, seed=3)
    assert list(plan) == [p.id for p in problems]
    assert all(len({p.id for p in chosen}) == per_problem for chosen in plan.values())  # distinct per problem
    assert _loads(plan) == loads


def test_the_assignment_is_seeded_and_ignores_the_global_random_state() -> None:
    problems, library = make_problems(7), _library(10)
    random.seed(1)
    first = assign_personas(library, problems, 2, 3, seed=5)
    random.seed(2)
    again = assign_personas(library, problems, 2, 3, seed=5)
    assert {k: [p.id for p in v] for k, v in first.items()} == {k: [p.id for p in v] for k, v in again.items()}
    other = assign_personas(library, problems, 2, 3, seed=6)
    assert {k: [p.id for p in v] for k, v in first.items()} != {k: [p.id for p in v] for k, v in other.items()}


def test_a_session_longer_than_the_problems_is_refused_in_one_line_before_any_call(tmp_path: Path) -> None:
    fake = FakeBuilder()
    config = _config(tmp_path / "bench", _saved_library(tmp_path, 3), problems=2, session_length=3)
    line = (
        "--session-length 3: the build has 2 problem(s) and a persona gets at most one scenario per problem; "
        "give --problems 3 or more, or --session-length 2 or less"
    )
    with pytest.raises(UserError) as err:
        _build(fake, config, n_problems=2)
    assert str(err.value) == line
    assert fake.total == 0 and not (tmp_path / "bench").exists()
    with pytest.raises(UserError) as err:
        estimate_build(config, problems=make_problems(2))
    assert str(err.value) == line


# --- a stable core --------------------------------------------------------------------------------------------------

# The script of one persona over toy-0..toy-3: which attributes of F(i) (by position) it picks on each problem.
PICKS = {0: [0, 1, 2], 1: [0, 1, 3], 2: [0, 2, 3], 3: [0, 1, 2]}


def _problem_index(prompt: str) -> int:
    m = re.search(r"What is (\d+) \+ 2 \* 3\?", prompt) or re.search(r"\(variant (\d+)\)", prompt)
    assert m is not None
    return int(m.group(1))


def keeper(fake: FakeBuilder, prompt: str, schema: dict[str, Any], n: int) -> Any:
    """Keeps every value the prompt shows as this person's earlier one; otherwise the first allowed value, except on
    problem 2, where the first attribute moves to its second value."""
    options = schema["properties"]["preferences"]["items"]["anyOf"]
    index = _problem_index(prompt)
    lines = set(prompt.splitlines())
    preferences = []
    for pick in PICKS[index]:
        name = options[pick]["properties"]["attribute"]["enum"][0]
        values = options[pick]["properties"]["value"]["enum"]
        shown = [v for v in values if f"- {name}: {v}" in lines]
        value = shown[0] if shown else values[0]
        if index == 2 and pick == 0:
            value = values[1]
        preferences.append({"attribute": name, "value": value, "justification": "Scripted.", "importance": 3})
    return {"preferences": preferences}


def _note_values(prompt: str) -> dict[str, str]:
    """The earlier values a profile prompt shows: the lines after the session note's opening."""
    if "their earlier profiles gave them" not in prompt:
        return {}
    tail = prompt.split("their earlier profiles gave them", 1)[1].splitlines()[1:]
    pairs = [line[2:].split(": ", 1) for line in tail if line.startswith("- ")]
    return {name: value for name, value in pairs}


def test_later_prompts_carry_earlier_values_and_the_manifest_counts_kept_and_changed_ones(tmp_path: Path) -> None:
    fake = FakeBuilder({"profile": keeper})
    config = _config(tmp_path / "bench", _saved_library(tmp_path, 3), session_length=4)
    report = _build(fake, config, n_problems=4)
    bench = read_bench(tmp_path / "bench")
    assert {s.persona.id for s in bench.scenarios} == {bench.scenarios[0].persona.id}  # 4 // 4 = 1 persona

    prompts = [p for name, p in fake.prompts if name == "profile"]
    assert [_problem_index(p) for p in prompts] == [0, 1, 2, 3]  # one chain, in problem order
    f_i = bench.scenarios[0].relevant_attributes  # the scripted F(i): the same 8 names on every problem
    v = {name: next(a.value_space for a in bench.attributes if a.name == name) for name in f_i[:4]}
    assert _note_values(prompts[0]) == {}
    assert _note_values(prompts[1]) == {f_i[0]: v[f_i[0]][0], f_i[1]: v[f_i[1]][0], f_i[2]: v[f_i[2]][0]}
    assert _note_values(prompts[3]) == {  # the latest value of each: f_i[0] moved on problem 2
        f_i[0]: v[f_i[0]][1],
        f_i[1]: v[f_i[1]][0],
        f_i[2]: v[f_i[2]][0],
        f_i[3]: v[f_i[3]][0],
    }

    # Items 3 + 3 + 3 + 3 = 12. Recurring: toy-1 f0 f1; toy-2 f0 f2 f3; toy-3 f0 f1 f2 = 8.
    # Stable: all of them but toy-2's f0, which moved = 7.
    assert bench.manifest["sessions"] == {
        "length": 4,
        "personas": 1,
        "personas_below_length": 0,
        "problems_per_persona": {"min": 4, "mean": 4.0, "max": 4},
        "items": 12,
        "recurring_items": 8,
        "stable_items": 7,
        "recurring_share": 0.6667,
        "stable_share": 0.875,
    }
    assert report.sessions == bench.manifest["sessions"]
    assert bench.manifest["config"]["session_length"] == 4


def test_a_session_build_gives_every_persona_k_problems_and_resumes_without_a_call(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    config = _config(out, _saved_library(tmp_path, 5), problems=5, personas_per_problem=2, session_length=3)
    first = FakeBuilder()
    _build(first, config, n_problems=5)
    bench = read_bench(out)
    per_persona = Counter(s.persona.id for s in bench.scenarios)
    assert sorted(per_persona.values()) == [3, 3, 4]  # 10 // 3 = 3 personas of the 5, over 10 scenarios
    assert bench.manifest["sessions"]["problems_per_persona"] == {"min": 3, "mean": 3.33, "max": 4}
    assert first.calls == {"relevance": 5, "profile": 10, "rubric": 10}
    scenarios = (out / "scenarios.jsonl").read_text()

    again = FakeBuilder()
    _build(again, config, n_problems=5)
    assert again.total == 0 and (out / "scenarios.jsonl").read_text() == scenarios

    checkpoint = out / ".checkpoint" / "steps.jsonl"
    lines = checkpoint.read_text().splitlines()
    dropped = lines[1::2]  # a build killed with every other item unwritten
    checkpoint.write_text("".join(line + "\n" for line in lines[0::2]))
    redo = FakeBuilder()
    _build(redo, config, n_problems=5)
    steps = [json.loads(line)["step"] for line in dropped]
    assert dict(redo.calls) == {s: steps.count(s) for s in set(steps)}  # only the dropped items, once each
    assert (out / "scenarios.jsonl").read_text() == scenarios


def test_a_regenerated_profile_keeps_its_persona_s_earlier_values_in_view(tmp_path: Path) -> None:
    fake = FakeBuilder({"profile": same_profile})
    config = _config(tmp_path / "bench", _saved_library(tmp_path, 3), problems=2, personas_per_problem=2)
    _build(fake, config.model_copy(update={"session_length": 2}), n_problems=2)
    regenerated = [p for name, p in fake.prompts if name == "profile" and "Note: another person" in p]
    assert len(regenerated) == 2  # one per problem: both personas are on both problems
    later = [p for p in regenerated if _problem_index(p) == 1]
    assert len(later) == 1 and len(_note_values(later[0])) == 3  # the second problem's: same_profile's 3 values


def test_an_old_build_resumes_and_a_session_build_onto_it_is_refused(tmp_path: Path) -> None:
    out, library = tmp_path / "bench", _saved_library(tmp_path, 3)
    plain = _config(out, library, problems=2)
    _build(FakeBuilder(), plain, n_problems=2)
    manifest = json.loads((out / "manifest.json").read_text())
    del manifest["config"]["session_length"]  # written before the setting existed
    (out / "manifest.json").write_text(json.dumps(manifest))
    setup.check_existing_build(plain)  # the same settings: it resumes
    with pytest.raises(UserError, match=r"session_length null there, 2 now"):
        setup.check_existing_build(plain.model_copy(update={"session_length": 2}))


# --- the build without the flag, the dry run and the CLI ------------------------------------------------------------


def test_without_the_flag_the_personas_per_problem_are_the_old_choice(tmp_path: Path) -> None:
    library, fake = _library(5), FakeBuilder()
    config = _config(tmp_path / "bench", _saved_library(tmp_path, 5), problems=3, personas_per_problem=3)
    _build(fake, config, n_problems=3)
    bench = read_bench(tmp_path / "bench")
    built: dict[str, set[str]] = {}
    for s in bench.scenarios:
        built.setdefault(s.problem.id, set()).add(s.persona.id)
    old = {  # the per-problem choice as it was written before sessions existed
        p.id: {x.id for x in random.Random(f"0\x1fpersonas\x1ftoy\x1f{p.id}").sample(library, 3)}
        for p in make_problems(3)
    }
    assert built == old
    assert "sessions" not in bench.manifest
    assert not any("earlier profiles" in p for _, p in fake.prompts)


def test_the_dry_run_counts_a_session_build(tmp_path: Path) -> None:
    library = _saved_library(tmp_path, 5)
    plain_config = _config(tmp_path / "b", library, problems=5, personas_per_problem=2)
    plain = estimate_build(plain_config, problems=make_problems(5))
    config = _config(tmp_path / "b", library, problems=5, personas_per_problem=2, session_length=3)
    estimate = estimate_build(config, problems=make_problems(5))
    profile = estimate.steps["profile"]
    assert profile.calls == plain.steps["profile"].calls == 10
    assert "sessions: 3 personas, each on 3+ problems" in profile.note
    assert profile.input_tokens > plain.steps["profile"].input_tokens  # 10 - 3 prompts carry earlier values
    generated = BuildConfig.model_validate({**config.model_dump(), "persona_library": None, "library_size": None})
    assert generated.library_size == 3  # a generated library holds what the sessions use: 10 // 3


def test_cli_session_build_prints_its_sessions_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from prefdisco.builder import estimate

    fake = FakeBuilder({"profile": keeper})
    monkeypatch.setattr(setup, "resolve_models", lambda names, config: [fake_model(fake)])
    for module in (pipeline, estimate):
        monkeypatch.setattr(module, "load_build_problems", lambda config: make_problems(config.problems))
    app = typer.Typer()
    register(app)
    args = ["build", "--benchmark", "toy", "--problems", "4", "--personas-per-problem", "1"]
    args += ["--persona-library", str(_saved_library(tmp_path, 3)), "--model", "mockllm/a"]
    result = CliRunner().invoke(app, [*args, "--session-length", "4", "--out", str(tmp_path / "bench")])
    assert result.exit_code == 0, result.output
    line = "sessions: 1 persona with 4 problems each, recurring attributes 67% of profile items, 88% of them with "
    line += "their earlier value"
    assert line in result.output
    dry = [*args, "--session-length", "5", "--out", str(tmp_path / "b2"), "--dry-run"]
    refused = CliRunner().invoke(app, dry)
    assert isinstance(refused.exception, UserError) and str(refused.exception).startswith("--session-length 5: ")
    counted = CliRunner().invoke(app, [*dry[:-5], "--session-length", "2", "--out", str(tmp_path / "b2"), "--dry-run"])
    assert counted.exit_code == 0 and "sessions: 2 personas, each on at least 2 problems" in counted.output
