"""Benchmark-folder fixtures for the annotation tests (imported by the other test_annotate_* modules), and
tests of reading a benchmark folder. Folders are written by the real writer, ``prefdisco.benchio.write_bench``;
tests of bad inputs corrupt its files."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn

from prefdisco import benchio
from prefdisco.annotate.bench import load_benchmark
from prefdisco.errors import UserError
from prefdisco.schema import (
    ATTRIBUTE_CATEGORIES,
    AnswerType,
    Attribute,
    Persona,
    PreferenceItem,
    PreferenceProfile,
    Problem,
    RubricCriterion,
    Scenario,
    TraitScore,
)

ATTRIBUTE_NAMES = [
    "domain_expertise", "math_background", "misconception_awareness", "working_memory_load",
    "reasoning_style", "need_for_examples", "topic_anxiety", "motivation", "self_monitoring",
    "reflection_habit", "verbosity", "formality", "use_of_analogies", "visual_explanations",
    "step_by_step_detail", "directness", "jargon_tolerance", "humor", "encouragement", "pace",
    "summary_first", "citation_preference", "confidence_calibration", "curiosity", "practical_focus",
    "historical_context",
]  # fmt: skip
HOSTILE = "<script>alert('x')</script> & <b>bold</b>"


def make_attributes() -> list[Attribute]:
    attributes = [
        Attribute(
            name=name,
            category=ATTRIBUTE_CATEGORIES[i % len(ATTRIBUTE_CATEGORIES)],  # type: ignore[arg-type]
            description=f"How the user relates to {name.replace('_', ' ')}.",
            value_space=["low", "high"],
        )
        for i, name in enumerate(ATTRIBUTE_NAMES)
    ]
    attributes[0].description = f"Expertise in the domain; markup must show literally: {HOSTILE}"
    attributes[1].aliases = ["maths_background"]
    return attributes


def make_scenario(sid: str, task: str, problem_id: str, relevant: list[str], question: str = "") -> Scenario:
    persona = Persona(
        id=f"persona-{sid}",
        name="Ada Example",
        age=34,
        occupation="engineer",
        summary="An engineer who reads carefully.",
        big_five={
            t: TraitScore(level="medium", score=3.0)
            for t in ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")
        },
    )
    attribute = relevant[0] if relevant else ATTRIBUTE_NAMES[-1]
    return Scenario(
        id=sid,
        problem=Problem(
            id=problem_id,
            benchmark=task,
            question=question or f"Question {problem_id} of {task}: which option is right?",
            choices=["first option", "second option", "third option", "fourth option"],
            answer="B",
            answer_type=AnswerType.LETTER,
        ),
        persona=persona,
        profile=PreferenceProfile(items=[PreferenceItem(attribute=attribute, value="high", weight=1.0)]),
        rubric=[
            RubricCriterion(
                attribute=attribute,
                preferred_value="high",
                description="checks the attribute",
                levels={level: f"level {level}" for level in range(1, 6)},
            )
        ],
        relevant_attributes=relevant,
    )


def standard_scenarios() -> list[Scenario]:
    """Two tasks with 3 problems each (one problem has two scenarios), 12 relevant attributes per problem,
    and a third task with a single problem that has only 4 relevant attributes."""
    scenarios = []
    for t, task in enumerate(("mmlu", "gpqa")):
        for p in range(3):
            relevant = [ATTRIBUTE_NAMES[(t * 7 + p * 3 + k) % 26] for k in range(12)]
            question = HOSTILE if (task, p) == ("gpqa", 0) else ""
            scenarios.append(make_scenario(f"{task}-p{p}-s0", task, f"{task}-p{p}", relevant, question))
            if p == 1:
                scenarios.append(make_scenario(f"{task}-p{p}-s1", task, f"{task}-p{p}", relevant, question))
    scenarios.append(make_scenario("simpleqa-p0-s0", "simpleqa", "simpleqa-p0", ATTRIBUTE_NAMES[3:7]))
    return scenarios


def write_bench(folder: Path, scenarios: list[Scenario], attributes: list[Attribute] | None = None) -> Path:
    """A benchmark folder written by ``benchio.write_bench``; its personas are the scenarios' unique personas."""
    personas = list({s.persona.id: s.persona for s in scenarios}.values())
    catalogue = attributes if attributes is not None else make_attributes()
    benchio.write_bench(folder, scenarios, personas, catalogue)
    return folder


def standard_bench(tmp_path: Path) -> Path:
    return write_bench(tmp_path / "bench", standard_scenarios())


def restamp(folder: Path) -> None:
    """Give the manifest the content hash of the files as they are now (a folder edited and then re-stamped),
    so the reader gets past the hash check to the file's own content."""
    manifest = json.loads((folder / benchio.MANIFEST_FILE).read_text())
    manifest["content_hash"] = benchio.content_hash({n: (folder / n).read_bytes() for n in benchio.HASHED_FILES})
    (folder / benchio.MANIFEST_FILE).write_text(json.dumps(manifest))


def edit_lines(folder: Path, name: str, edit: Callable[[list[str]], object], stamp: bool = True) -> None:
    """Apply ``edit`` (a function of the list of lines) to a data file; re-stamp the manifest unless told not to."""
    path = folder / name
    lines = path.read_text().splitlines()
    edit(lines)
    path.write_text("\n".join(lines) + "\n")
    if stamp:
        restamp(folder)


@contextmanager
def running_server(app: object) -> Iterator[str]:
    """Serve ``app`` with uvicorn in a background thread on a free 127.0.0.1 port; yields the base URL.

    Logging is left unconfigured (``log_config=None``) so uvicorn's records reach pytest's log capture.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="info", lifespan="off", log_config=None)  # type: ignore[arg-type]
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the uvicorn test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        sock.close()


# -------------------------------------------------------------------------------------------------------


def test_loads_scenarios_and_catalogue(tmp_path: Path) -> None:
    folder = standard_bench(tmp_path)
    bench = load_benchmark(folder)
    assert len(bench.scenarios) == 9
    assert len(bench.attributes) == 26
    assert len(bench.personas) == 9  # the scenarios' unique personas
    assert bench.manifest["content_hash"].startswith("sha256:")
    assert bench.manifest["content_hash"] == benchio.read_bench(folder).manifest["content_hash"]


def test_a_folder_without_manifest_is_refused(tmp_path: Path) -> None:
    folder = standard_bench(tmp_path)
    (folder / "manifest.json").unlink()
    with pytest.raises(UserError, match=r"manifest\.json: missing \(not a benchmark folder"):
        load_benchmark(folder)
    with pytest.raises(UserError, match=r"not a folder"):
        load_benchmark(tmp_path / "absent")


def test_a_data_file_changed_after_the_manifest_fails_the_hash_check(tmp_path: Path) -> None:
    folder = standard_bench(tmp_path)
    edit_lines(folder, "scenarios.jsonl", lambda lines: lines.pop(), stamp=False)
    with pytest.raises(UserError, match=r"manifest\.json: content_hash .* does not match the files"):
        load_benchmark(folder)


def test_bad_json_line_names_file_and_line(tmp_path: Path) -> None:
    folder = standard_bench(tmp_path)
    edit_lines(folder, "scenarios.jsonl", lambda lines: lines.insert(2, "{not json"))
    with pytest.raises(UserError, match=r"scenarios\.jsonl:3: invalid JSON"):
        load_benchmark(folder)


def test_invalid_scenario_names_line_and_field(tmp_path: Path) -> None:
    folder = standard_bench(tmp_path)

    def bad_answer(lines: list[str]) -> None:
        record = json.loads(lines[0])
        record["problem"]["answer"] = "Z"
        lines[0] = json.dumps(record)

    edit_lines(folder, "scenarios.jsonl", bad_answer)
    with pytest.raises(UserError, match=r"scenarios\.jsonl:1: problem.*option letters"):
        load_benchmark(folder)


def test_duplicate_scenario_id_is_rejected(tmp_path: Path) -> None:
    folder = standard_bench(tmp_path)
    edit_lines(folder, "scenarios.jsonl", lambda lines: lines.append(lines[0]))
    with pytest.raises(UserError, match=r"scenarios\.jsonl: duplicate scenario id 'mmlu-p0-s0'"):
        load_benchmark(folder)


def test_relevant_attribute_missing_from_catalogue(tmp_path: Path) -> None:
    scenarios = [
        make_scenario("s1", "mmlu", "p1", ["domain_expertise", "maths_background"]),  # an alias is fine
        make_scenario("s2", "mmlu", "p2", ["domain_expertise", "no_such_attribute"]),
    ]
    folder = write_bench(tmp_path / "b", scenarios)
    with pytest.raises(UserError, match=r"scenarios\.jsonl:2: relevant_attributes \['no_such_attribute'\] are not"):
        load_benchmark(folder)
    edit_lines(folder, "scenarios.jsonl", lambda lines: lines.insert(0, ""))  # blank lines hold no record
    with pytest.raises(UserError, match=r"scenarios\.jsonl:3: relevant_attributes \['no_such_attribute'\]"):
        load_benchmark(folder)


def test_a_folder_without_scenarios_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"scenarios\.jsonl: no scenarios"):
        load_benchmark(write_bench(tmp_path / "b", []))


def test_missing_or_bad_catalogue(tmp_path: Path) -> None:
    folder = standard_bench(tmp_path)
    (folder / "attributes.json").write_text("{}")
    restamp(folder)
    with pytest.raises(UserError, match=r"attributes\.json: expected a JSON list of attributes"):
        load_benchmark(folder)
    catalogue = [a.model_dump(mode="json") for a in make_attributes()]
    (folder / "attributes.json").write_text(json.dumps([*catalogue, catalogue[3]]))
    restamp(folder)
    with pytest.raises(UserError, match=r"attributes\.json: entry 26: field name: 'working_memory_load' dup"):
        load_benchmark(folder)
    (folder / "attributes.json").unlink()
    with pytest.raises(UserError, match=r"attributes\.json: missing"):
        load_benchmark(folder)
