"""`prefdisco build` against a faulty OpenAI-compatible server.

* transient faults (429 with Retry-After, 500, hung requests, dropped connections, empty and prose completions)
  and replies that stay invalid: the build finishes, every scenario it writes validates, and every planned
  (problem, persona) pair is a scenario or an explained failure in manifest.json — none silently lost; a rerun
  asks again for the failed items only;
* kill -9 mid-build, then the same command: the uninterrupted build's scenarios exactly, and no completed call
  made twice; a further rerun makes no call;
* a malformed HTTP 200 body (not retried by inspect) must be one item's failure, not the end of the build;
* bad builder inputs (a broken persona library, ``--out`` naming a file, an unreachable base URL): one
  ``error:`` line, a non-zero exit and nothing written.

The server is ``mock_openai.MockOpenAI`` on a free 127.0.0.1 port, reached through inspect's ``openai-api/mock/m``
provider; ``INSPECT_HTTP_REQUEST_TIMEOUT`` bounds a hung request. inspect sends the builder's response schemas
without list sizes or string lengths, so the mock's own ``from_schema`` cannot write valid builder replies:
``builder_reply`` fills the four builder schemas (persona, relevance, profile, rubric) deterministically from the
request, within the bounds its prompt states. The mock's replies depend only on the request, so two builds with
the same seed get the same replies whatever the temperature.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import prefdisco.cli as cli
from mock_openai import MockConfig, MockOpenAI
from prefdisco.benchmarks import load_problems
from prefdisco.release.validate import validate_bench

FIRST = ("Ada", "Bram", "Chiara", "Dev", "Elif", "Femi", "Greta", "Hugo", "Ines", "Jonas", "Kemal", "Lina", "Mateo")
LAST = ("Okafor", "Lindqvist", "Moreau", "Tanaka", "Novak", "Haddad", "Quispe", "Brennan", "Ivanova", "Ostrowski")
NEW_ATTRIBUTES = ("Preference for checklists", "Tolerance for ambiguity")


def _question(messages: list[dict[str, Any]]) -> str:
    first = next((m for m in messages if m.get("role") == "user"), {})
    content = first.get("content", "")
    return content if isinstance(content, str) else " ".join(str(p.get("text", "")) for p in content)


def _bounds(pattern: str, text: str, default: tuple[int, int]) -> tuple[int, int]:
    found = re.search(pattern, text)
    return (int(found.group(1)), int(found.group(2))) if found else default


def _members(array: dict[str, Any]) -> list[dict[str, Any]]:
    items = array.get("items", {})
    return list(items.get("anyOf") or [items])


def _persona(question: str, props: dict[str, Any], rng: random.Random, h: int) -> dict[str, Any]:
    initials = re.search(r"first name starting with (\w) and a last name starting with (\w)", question)
    first = initials.group(1) if initials else "A"
    last = initials.group(2) if initials else "B"
    lo, hi = _bounds(r"age between (\d+) and (\d+)", question, (30, 50))
    group = re.search(r"occupation group: (.+?) \(name", question)
    groups = props["occupation_group"]["enum"]
    expertise = props["expertise"]["properties"]
    return {
        "name": f"{first}{rng.choice(FIRST).lower()} {last}{rng.choice(LAST).lower()}",
        "age": rng.randint(lo, hi),
        "occupation": f"specialist grade {h % 100_000}",
        "occupation_group": group.group(1) if group and group.group(1) in groups else rng.choice(groups),
        "location": "Lyon, France",
        "education": "a vocational qualification",
        "summary": f"A careful person who likes clear answers (profile {h % 997}).",
        "backstory": "Grew up in a small town. Moved to the city for work.",
        "expertise": {k: rng.choice(v["enum"]) for k, v in expertise.items()},
    }


def _relevance(question: str, props: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    names = props["relevant"]["items"]["enum"]
    lo, hi = _bounds(r"Select the (\d+) to (\d+) catalogue attributes", question, (8, 8))
    reply: dict[str, Any] = {"relevant": rng.sample(names, min(len(names), rng.randint(lo, hi)))}
    if "new_attributes" in props:
        categories = props["new_attributes"]["items"]["properties"]["category"]["enum"]
        reply["new_attributes"] = []
        if rng.random() < 0.5:  # a proposal shared by several problems: the build-wide dedup merges them
            name = rng.choice(NEW_ATTRIBUTES)
            reply["new_attributes"].append(
                {
                    "name": name,
                    "category": categories[len(name) % len(categories)],
                    "description": f"How much the person wants: {name.lower()}.",
                    "values": ["low", "medium", "high"],
                }
            )
    return reply


def _profile(question: str, props: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    members = _members(props["preferences"])
    lo, hi = _bounds(r"Choose only the (\d+) to (\d+) attributes", question, (3, 5))
    chosen = rng.sample(members, min(len(members), rng.randint(lo, hi)))
    return {
        "preferences": [
            {
                "attribute": m["properties"]["attribute"]["enum"][0],
                "value": rng.choice(m["properties"]["value"]["enum"]),
                "justification": "It matches how this person likes to learn.",
                "importance": rng.choice(m["properties"]["importance"]["enum"]),
            }
            for m in chosen
        ]
    }


def _rubric(props: dict[str, Any]) -> dict[str, Any]:
    criteria = []
    for m in _members(props["criteria"]):
        name = m["properties"]["attribute"]["enum"][0]
        criteria.append(
            {
                "attribute": name,
                "description": f"Whether the answer respects the preference for {name.lower()}.",
                "levels": {str(n): f"Level {n} of 5 in following this preference." for n in range(1, 6)},
            }
        )
    return {"criteria": criteria}


def builder_reply(messages: list[dict[str, Any]], schema: dict[str, Any], h: int) -> dict[str, Any] | None:
    """A valid, deterministic reply to a builder request (None for any other schema: the mock's default)."""
    question = _question(messages)
    props = schema.get("properties", {})
    rng = random.Random(h)
    if "occupation_group" in props:
        return _persona(question, props, rng, h)
    if "relevant" in props:
        return _relevance(question, props, rng)
    if "preferences" in props:
        return _profile(question, props, rng)
    if "criteria" in props:
        return _rubric(props)
    if "duplicate_of" in props:
        return {"reason": "scripted by the mock", "duplicate_of": "new"}
    return None


# ---- running the builder against the mock -------------------------------------------------------------------

PROBLEMS, K, LIBRARY, SEED = 4, 2, 4, 3  # 4 problems x 2 personas from a generated library of 4
PAIR_STEPS = ("profile", "profile_regenerate", "rubric", "scenario")
STRUCTURED_STEPS = ("persona", "relevance", "dedup", "profile", "rubric")
INJECTED = re.compile(r"Field required|contains no JSON object|reply was empty")
"""The reasons an injected bad reply can end with: a JSON object of the wrong shape, prose, an empty reply."""
WRONG_SHAPE = {"unexpected": "this object is not what the schema asked for"}


@pytest.fixture(scope="module")
def app():
    cli._register()
    return cli.app


def mock_env(monkeypatch: pytest.MonkeyPatch, mock: MockOpenAI, tmp_path: Path) -> None:
    for key, value in mock.env("mock").items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))
    monkeypatch.setenv("INSPECT_HTTP_REQUEST_TIMEOUT", "1.5")
    monkeypatch.setenv("INSPECT_DISPLAY", "none")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


def model_of(mock: MockOpenAI) -> str:
    # a model name per server: inspect memoizes models by name, and a memoized client would still point at the
    # port of an earlier test's server
    return f"openai-api/mock/m{mock.port}"


def build_args(model: str, source: Path, out: Path, *extra: str) -> list[str]:
    return [
        "build",
        "--benchmark",
        source.parent.name,
        "--source",
        str(source),
        "--out",
        str(out),
        "--model",
        model,
        "--problems",
        str(PROBLEMS),
        "--personas-per-problem",
        str(K),
        "--library-size",
        str(LIBRARY),
        "--seed",
        str(SEED),
        *extra,
    ]


def fault_seed(settings: dict[str, float], kinds: tuple[str, ...], within: int) -> int:
    """The first mock seed whose fault draws hold every one of ``kinds`` among the first ``within`` requests: the
    mock draws one number per request from its seeded RNG, so the build meets each fault whatever its order."""
    for seed in itertools.count():
        probe = MockOpenAI(MockConfig(**settings, seed=seed))  # not started: only its RNG is used
        if set(kinds) <= {probe._draw_fault() for _ in range(within)}:
            return seed
    raise AssertionError("unreachable")


def read_build(out: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    lines = (out / "scenarios.jsonl").read_text(encoding="utf-8").splitlines()
    return manifest, [json.loads(line) for line in lines if line.strip()]


def pair_of(item: str) -> tuple[str, str]:
    """(problem id, persona id) of a failure item: ``problem|persona`` for a step, ``problem::persona`` for a
    scenario."""
    problem, sep, persona = item.partition("|")
    if not sep:
        problem, _, persona = item.rpartition("::")
    return problem, persona


def check_accounting(out: Path, problem_ids: list[str], k: int) -> dict[str, Any]:
    """Every planned (problem, persona) pair is exactly one of: a scenario, a pair-level failure in the manifest,
    or one of the k pairs of a problem whose relevance step failed; the manifest's counts agree."""
    manifest, scenarios = read_build(out)
    ids = [s["id"] for s in scenarios]
    assert len(ids) == len(set(ids)), f"duplicate scenario ids: {sorted(i for i, n in Counter(ids).items() if n > 1)}"
    built = Counter((s["problem"]["id"], s["persona"]["id"]) for s in scenarios)
    failures = manifest["failures"]["items"]
    assert manifest["failures"]["count"] == len(failures)
    assert all(f["reason"].strip() and f["attempts"] >= 1 for f in failures), failures
    relevance_failed = {f["item"] for f in failures if f["step"] == "relevance"}
    pair_failed = Counter(pair_of(f["item"]) for f in failures if f["step"] in PAIR_STEPS)
    assert max(pair_failed.values(), default=1) == 1, f"a pair failed twice: {pair_failed}"
    assert not set(built) & set(pair_failed), "a pair is both a scenario and a failure"
    mentioned = {p for p, _ in built} | {p for p, _ in pair_failed} | relevance_failed
    assert mentioned <= set(problem_ids), f"problems that were not sampled: {mentioned - set(problem_ids)}"
    for pid in problem_ids:
        done = sum(1 for p, _ in built if p == pid)
        failed = sum(1 for p, _ in pair_failed if p == pid)
        if pid in relevance_failed:
            assert done == failed == 0, pid
        else:
            assert done + failed == k, f"{pid}: {done} scenario(s) + {failed} failure(s) != {k} personas"
    skipped = manifest["skipped"]
    assert skipped.get("relevance_failed", 0) == k * len(relevance_failed), skipped
    assert sum(n for key, n in skipped.items() if key != "relevance_failed") == len(pair_failed), skipped
    counts = manifest["build_counts"]
    assert counts["scenarios"] == len(scenarios) and counts["problems"] == len(problem_ids)
    planned = len(scenarios) + len(pair_failed) + k * len(relevance_failed)
    assert counts["planned_scenarios"] == len(problem_ids) * k == planned  # none silently lost
    return {
        "manifest": manifest,
        "scenarios": scenarios,
        "failures": failures,
        "relevance_failed": relevance_failed,
        "pair_failed": set(pair_failed),
    }


def assert_valid(app, out: Path, n: int) -> None:
    report = validate_bench(out)
    assert report.ok, [str(i) for i in report.issues]
    assert report.records == n
    result = CliRunner().invoke(app, ["validate", str(out)])
    assert result.exit_code == 0, result.output


def step_of_question(question: str) -> str:
    """The builder step a question (first user message) belongs to, from the opening words of its template."""
    from prefdisco import prompts

    for step in STRUCTURED_STEPS:
        opening = prompts.load(f"build_{step}").template.split("$")[0].strip()[:40]
        if question.startswith(opening):
            return step
    raise AssertionError(f"not a builder prompt: {question[:80]!r}")


class SpoilFirst:
    """``builder_reply``, except that the first question the mock sees of each builder step is answered with a JSON
    object of the wrong shape every time it is asked (re-asks and reruns included), so that item ends invalid."""

    def __init__(self) -> None:
        self.spoiled: dict[str, str] = {}  # step -> its spoiled question (the first user message)

    def __call__(self, messages: list[dict[str, Any]], schema: dict[str, Any], h: int) -> Any:
        question = _question(messages)
        if self.spoiled.setdefault(step_of_question(question), question) == question:
            return WRONG_SHAPE
        return builder_reply(messages, schema, h)


# ---- 1. transient faults ------------------------------------------------------------------------------------

FAULTS = {
    "rate_429": 0.10,
    "retry_after_s": 0.2,
    "rate_500": 0.05,
    "rate_timeout": 0.03,
    "hang_s": 4.0,  # held longer than the client's 1.5 s timeout
    "rate_drop": 0.03,
    "rate_empty": 0.02,
    "rate_garbage": 0.02,
}
TRANSIENT = ("fault_429", "fault_500", "fault_timeout", "fault_drop", "fault_empty", "fault_garbage")


@pytest.mark.slow
def test_transient_faults_end_in_valid_scenarios_or_reported_failures(
    app, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared_benchmarks: Path
) -> None:
    source = shared_benchmarks / "mmlu" / "test.jsonl"
    problem_ids = [p.id for p in load_problems("mmlu", source=source, n=PROBLEMS, seed=SEED)]
    out = tmp_path / "bench"
    seed = fault_seed(FAULTS, TRANSIENT, within=24)
    spoiler = SpoilFirst()
    with MockOpenAI(MockConfig(**FAULTS, seed=seed), structured=spoiler) as mock:
        mock_env(monkeypatch, mock, tmp_path)
        result = CliRunner().invoke(app, build_args(model_of(mock), source, out, "--retries", "2"))
        stats = mock.stats()

        # the same command once the transient faults are gone: only the failed items are asked again
        mock.config.update({key: 0.0 for key in FAULTS if key.startswith("rate_")})
        mock.reset()
        rerun = CliRunner().invoke(app, build_args(model_of(mock), source, out, "--retries", "2"))
        rerun_stats = mock.stats()

    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    # every kind of fault really happened (and was retried by the SDK / inspect, or re-asked by the builder)
    assert all(stats.get(kind, 0) > 0 for kind in TRANSIENT), stats
    assert sorted(spoiler.spoiled) == sorted(STRUCTURED_STEPS)

    first = check_accounting(out, problem_ids, K)
    faults = {kind: stats.get(kind, 0) for kind in TRANSIENT}
    print(
        f"mock seed {seed}: {stats['received']} requests, faults {faults}; {len(first['scenarios'])} scenarios, "
        f"failures {Counter(f['step'] for f in first['failures'])}, rerun {rerun_stats['received']} requests"
    )
    assert first["scenarios"], "no scenario survived"
    assert_valid(app, out, len(first["scenarios"]))

    # each failure is an injected bad reply that stayed bad through every re-ask ...
    failures = first["failures"]
    invalid = [f for f in failures if INJECTED.search(f["reason"])]
    others = [f for f in failures if f not in invalid]
    assert all("still identical" in f["reason"] for f in others), others
    assert all(f["attempts"] == 3 for f in invalid), invalid  # 1 + --retries 2
    # ... and each spoiled question ended as a failure of its step (never as a scenario built from defaults)
    by_step = Counter("profile" if f["step"] == "profile_regenerate" else f["step"] for f in invalid)
    assert all(by_step[step] >= 1 for step in STRUCTURED_STEPS), by_step
    assert len(first["relevance_failed"]) >= 1 and len(first["pair_failed"]) >= 2, by_step
    rejected = first["manifest"]["personas"]["rejections"].get("invalid_output", 0)
    assert rejected == by_step["persona"], (rejected, by_step)

    # the rerun made exactly the calls of the failed items, and ended with the same scenarios and failures
    assert rerun.exit_code == 0, rerun.output
    assert rerun_stats["received"] == rerun_stats["completions"] == sum(f["attempts"] for f in invalid)
    second = check_accounting(out, problem_ids, K)
    assert second["scenarios"] == first["scenarios"]
    key = [(f["step"], f["item"], f["reason"]) for f in failures]
    assert sorted((f["step"], f["item"], f["reason"]) for f in second["failures"]) == sorted(key)
    assert_valid(app, out, len(second["scenarios"]))


# ---- 2. kill -9 mid-build, then the same command ------------------------------------------------------------

MAX_CONNECTIONS = 4


def checkpoint_records(out: Path) -> list[dict[str, Any]]:
    """Whole records of the build's checkpoint (a line the kill cut off does not count)."""
    path = out / ".checkpoint" / "steps.jsonl"
    records = []
    for line in path.read_text(encoding="utf-8").splitlines() if path.exists() else []:
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


def bench_files(out: Path) -> dict[str, Any]:
    manifest, scenarios = read_build(out)
    return {
        "scenarios": sorted(scenarios, key=lambda s: s["id"]),
        "personas": (out / "personas.jsonl").read_text(encoding="utf-8"),
        "attributes": (out / "attributes.json").read_text(encoding="utf-8"),
        "counts": manifest["build_counts"],
        "failures": manifest["failures"],
        "content_hash": manifest["content_hash"],
    }


@pytest.mark.slow
def test_kill_9_mid_build_then_rerun_gives_the_uninterrupted_build(
    app, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared_benchmarks: Path
) -> None:
    source = shared_benchmarks / "math500" / "test.jsonl"
    problem_ids = [p.id for p in load_problems("math500", source=source, n=PROBLEMS, seed=SEED)]
    extra = ("--max-connections", str(MAX_CONNECTIONS))
    # latency, so that calls are in flight when the process dies
    with MockOpenAI(MockConfig(latency_s=0.2), structured=builder_reply) as mock:
        mock_env(monkeypatch, mock, tmp_path)
        model = model_of(mock)

        # 1. uninterrupted
        done = CliRunner().invoke(app, build_args(model, source, tmp_path / "straight", *extra))
        assert done.exit_code == 0, done.output
        uninterrupted = mock.stats()["completions"]
        expected = bench_files(tmp_path / "straight")

        # 2. killed (SIGKILL) once the server has answered between 20 % and 80 % of the calls
        mock.reset()
        killed = tmp_path / "killed"
        seed = random.randrange(1_000_000)
        kill_at = random.Random(seed).randint(max(1, uninterrupted // 5), uninterrupted * 4 // 5)
        process = subprocess.Popen(
            [sys.executable, "-m", "prefdisco", *build_args(model, source, killed, *extra)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=os.environ.copy(),
        )
        deadline = time.monotonic() + 300
        while mock.stats()["completions"] < kill_at and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        os.kill(process.pid, signal.SIGKILL)
        _, stderr = process.communicate()
        assert process.returncode == -signal.SIGKILL, f"seed {seed}: the build ended before the kill: {stderr!r}"
        time.sleep(0.5)  # let the server finish the answers it had started
        first = mock.stats()["completions"]
        records = checkpoint_records(killed)
        assert all(r["attempts"] == 1 for r in records)  # one call per finished item: no invalid replies here
        in_flight = first - len(records)  # answered, but not yet checkpointed when the process died
        assert not (killed / "manifest.json").exists() and not (killed / "scenarios.jsonl").exists()

        # 3. the same command again
        mock.reset()
        again = CliRunner().invoke(app, build_args(model, source, killed, *extra))
        assert again.exit_code == 0, f"seed {seed}: {again.output}"
        second = mock.stats()["completions"]

        # 4. and once more: everything is in the checkpoint
        mock.reset()
        third = CliRunner().invoke(app, build_args(model, source, killed, *extra))
        assert third.exit_code == 0, third.output
        assert mock.stats()["received"] == 0

    report = (
        f"seed {seed}: killed at {kill_at}; calls {first} + {second} vs {uninterrupted} uninterrupted, "
        f"{len(records)} checkpointed, {in_flight} in flight"
    )
    print(report)
    resumed = bench_files(killed)
    assert resumed == expected, report  # same ids, same content, byte-identical files
    check_accounting(killed, problem_ids, K)
    assert len(resumed["scenarios"]) == PROBLEMS * K
    assert_valid(app, killed, PROBLEMS * K)
    assert 0 <= in_flight <= MAX_CONNECTIONS, report
    assert second == uninterrupted - len(records), report  # the rerun asked for exactly the unfinished items
    assert first + second <= uninterrupted + in_flight, report
    assert bench_files(killed) == resumed  # the call-free rerun rewrote the same benchmark


# ---- 3. a malformed HTTP 200 body ---------------------------------------------------------------------------


def test_a_malformed_response_body_fails_its_item_not_the_build(
    app, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared_benchmarks: Path
) -> None:
    """The openai SDK raises ``json.JSONDecodeError`` on a 200 whose body is not JSON, which inspect does not
    retry. One such reply must not end the build: its item is retried or reported as a failure."""
    source = shared_benchmarks / "mmlu" / "test.jsonl"
    problem_ids = [p.id for p in load_problems("mmlu", source=source, n=PROBLEMS, seed=SEED)]
    settings = {"rate_malformed": 0.1}
    seed = fault_seed(settings, ("fault_malformed",), within=8)
    with MockOpenAI(MockConfig(**settings, seed=seed), structured=builder_reply) as mock:
        mock_env(monkeypatch, mock, tmp_path)
        result = CliRunner().invoke(app, build_args(model_of(mock), source, tmp_path / "bench"))
        stats = mock.stats()
    assert stats.get("fault_malformed", 0) > 0, stats
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"the build died on a malformed body: {result.exception!r}"
    )
    assert result.exit_code == 0, result.output
    accounted = check_accounting(tmp_path / "bench", problem_ids, K)
    assert_valid(app, tmp_path / "bench", len(accounted["scenarios"]))


# ---- 4. bad builder inputs ----------------------------------------------------------------------------------


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"" for p in root.rglob("*")}


def library_lines() -> list[str]:
    from prefdisco.demo import demo_scenarios

    personas = {s.persona.id: s.persona for s in demo_scenarios()}
    return [p.model_dump_json() for p in personas.values()]


def _not_json(lines: list[str]) -> list[str]:
    return [lines[0], lines[1][: len(lines[1]) // 2], *lines[2:]]  # a line cut off mid-record


def _no_age(lines: list[str]) -> list[str]:
    record = json.loads(lines[1])
    del record["age"]
    return [lines[0], json.dumps(record), *lines[2:]]


@pytest.mark.parametrize(("defect", "expect"), [(_not_json, ":2: "), (_no_age, ":2: age")], ids=["torn", "no-age"])
def test_a_broken_persona_library_line_is_one_error_and_no_call(
    defect, expect: str, app, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared_benchmarks: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    library = workspace / "personas.jsonl"
    library.write_text("\n".join(defect(library_lines())) + "\n", encoding="utf-8")
    before = tree(workspace)
    with MockOpenAI(structured=builder_reply) as mock:
        mock_env(monkeypatch, mock, tmp_path)
        args = build_args(model_of(mock), shared_benchmarks / "mmlu" / "test.jsonl", workspace / "out")
        result = CliRunner().invoke(app, [*args, "--persona-library", str(library)])
        calls = mock.stats()["received"]
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert lines[0].startswith("error: ") and f"{library}{expect}" in lines[0], lines[0]
    assert calls == 0  # the library is read before any model call
    assert tree(workspace) == before  # no --out folder, no checkpoint


def test_a_persona_the_mock_cannot_write_is_refused_with_every_reason(
    app, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared_benchmarks: Path
) -> None:
    """The mock's own instance of the persona schema breaks four of its rules; the build's one line names all four,
    not the first and "(+3 more)" (issue 49, finding 5), and the re-ask told the model all four too."""
    asked: list[list[dict[str, Any]]] = []

    def default_instance(messages: list[dict[str, Any]], schema: dict[str, Any], h: int) -> None:
        asked.append(messages)  # and the mock's own instance of the schema (None)

    with MockOpenAI(structured=default_instance) as mock:
        mock_env(monkeypatch, mock, tmp_path)
        args = build_args(model_of(mock), shared_benchmarks / "mmlu" / "test.jsonl", tmp_path / "out")
        result = CliRunner().invoke(app, [*args, "--retries", "1"])
    retry = next(str(m[-1]["content"]) for m in asked if len(m) > 1)  # a re-ask: the question, the reply, why
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.output
    reasons = (
        "name: name must be a first and a last name",
        "age: Input should be greater than or equal to 13",
        "summary: String should have at least 10 characters",
        "backstory: String should have at least 10 characters",
    )
    assert "first failure: persona " in lines[0] and all(r in lines[0] for r in reasons), lines[0]
    assert "more)" not in lines[0]
    assert all(r in retry for r in reasons), retry
    assert not (tmp_path / "out" / "scenarios.jsonl").exists()


def test_out_naming_an_existing_file_is_one_error_before_any_call(
    app, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared_benchmarks: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    out = workspace / "bench"
    out.write_text("not a folder\n", encoding="utf-8")
    before = tree(workspace)
    with MockOpenAI(structured=builder_reply) as mock:
        mock_env(monkeypatch, mock, tmp_path)
        result = CliRunner().invoke(app, build_args(model_of(mock), shared_benchmarks / "mmlu" / "test.jsonl", out))
        calls = mock.stats()["received"]
    lines = result.stderr.strip().splitlines()
    crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
    assert not crashed, f"uncaught {result.exception!r} after {calls} model call(s)"
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert lines[0].startswith("error: ") and str(out) in lines[0], lines[0]
    assert calls == 0, f"{calls} model call(s) made before the unusable --out was noticed"
    assert tree(workspace) == before


@pytest.mark.slow
def test_an_unreachable_base_url_is_one_error_and_nothing_written(tmp_path: Path, shared_benchmarks: Path) -> None:
    """Connection refused on every call. inspect retries connection errors until ``max_retries``/``timeout``
    (unbounded by default), so the build needs the same limits as ``prefdisco eval`` to end at all; once they
    are spent the error must be one line, not a traceback, and --out must stay unwritten. ``--max-retries 0``: each
    inspect retry waits 3-6 s and the build tries each persona four times, so one retry took the test 45 s; the bound
    reaching inspect is what is tested (without it the build never ends)."""
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {
        **os.environ,
        "DEAD_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "DEAD_API_KEY": "sk-test-unused",
        "INSPECT_DISPLAY": "none",
        "INSPECT_HTTP_REQUEST_TIMEOUT": "1.5",
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    out = tmp_path / "out"
    args = build_args("openai-api/dead/m", shared_benchmarks / "mmlu" / "test.jsonl", out)
    try:
        result = subprocess.run(
            # the openai client's own two retries of a refused connection (0.5-2 s each) off too: `-M max_retries=0`
            [sys.executable, "-m", "prefdisco", *args, "--max-retries", "0", "--timeout", "20", "-M", "max_retries=0"],
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
            env=env,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("prefdisco build was still retrying an unreachable base URL after 240 s")
    assert "No such option" not in result.stderr, (
        "prefdisco build has no --max-retries/--timeout (prefdisco eval has them): nothing bounds inspect's "
        "retries, and against an unreachable base URL the build retries forever"
    )
    lines = result.stderr.strip().splitlines()
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr[-2000:]
    assert "dead" in lines[0] or str(port) in lines[0], lines[0]
    assert not out.exists()
