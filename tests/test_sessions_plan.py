"""``prefdisco sessions``: session sets planned on hand-made benchmarks, drift, refusals, the command on real files.

Orders are seeded by sha256, so the tests assert what holds for every order (which scenarios, of which person and
problems, disjoint; labels worked out by hand for profiles built so that the order does not change them), and
exact values wherever the rule fixes them.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

import prefdisco.cli as cli
from prefdisco.benchio import write_bench
from prefdisco.schema import Problem, Scenario
from prefdisco.sessions.model import derive_id, read_session_set, write_session_set
from prefdisco.sessions.plan import plan_sessions
from scripted import make_persona, make_scenario

RELEASE = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "prefdisco_release" / "example_record.jsonl"
DEPTH, ANALOGIES, VOCAB = "Explanation depth", "Use of analogies", "Technical vocabulary"
DEFAULT = ("step by step", "machine analogies", "plain words")


def problem(pid: str) -> Problem:
    return Problem(
        id=pid, benchmark="demo", domain="math", question=f"Question {pid}?", choices=["1", "2"], answer="A",
        answer_type="letter",
    )  # fmt: skip


def scenario(persona: str, pid: str, values: tuple[str, ...] = DEFAULT, sid: str | None = None) -> Scenario:
    weights = (0.5, 0.3, 0.2) if len(values) == 3 else (0.6, 0.4)
    return make_scenario(
        sid or f"{persona}-{pid}", persona=make_persona(persona, f"Ada {persona}"), weights=weights, values=values,
        problem=problem(pid),
    )  # fmt: skip


def bench(**problems: int) -> list[Scenario]:
    """``bench(A=5, B=4)``: persona A with problems P1..P5, B with P1..P4, default profiles."""
    return [scenario(persona, f"P{i}") for persona, n in problems.items() for i in range(1, n + 1)]


def with_depth_criterion(s: Scenario, description: str) -> Scenario:
    rubric = [c.model_copy(update={"description": description}) if c.attribute == DEPTH else c for c in s.rubric]
    return s.model_copy(update={"rubric": rubric})


def by_id(scenarios: list[Scenario]) -> dict[str, Scenario]:
    return {s.id: s for s in scenarios}


def built(folder: Path, scenarios: list[Scenario]) -> Path:
    """A benchmark folder of ``scenarios`` (each persona once in its personas file)."""
    write_bench(folder, scenarios, list({s.persona.id: s.persona for s in scenarios}.values()), [])
    return folder


# --------------------------------------------------------------------------------------------------------------
# which sessions
# --------------------------------------------------------------------------------------------------------------


def test_a_persons_scenarios_are_split_into_disjoint_sessions_of_different_problems() -> None:
    scenarios = bench(A=5, B=4, C=1)
    plan = plan_sessions(scenarios, 2)
    # A: floor(5/2) = 2 sessions (one scenario left over), B: 2, C: none
    assert [s.session_id for s in plan.sessions] == ["A~s0-1", "A~s0-2", "B~s0-1", "B~s0-2"]
    assert plan.header.n_sessions == 4 and plan.header.length == 2 and plan.header.drift == 0
    known = by_id(scenarios)
    for session in plan.sessions:
        chain = [known[i] for i in session.scenario_ids]
        assert {s.persona.id for s in chain} == {session.persona_id}
        assert len({s.problem.id for s in chain}) == 2
        assert session.drift_from is None and session.derived == []
    used = plan.positions()  # refuses a scenario in two sessions
    assert {i for i in used if i.startswith("B-")} == {"B-P1", "B-P2", "B-P3", "B-P4"}
    assert len([i for i in used if i.startswith("A-")]) == 4
    assert sorted(position for _, position in used.values()) == [1, 1, 1, 1, 2, 2, 2, 2]


def test_repeated_problems_still_make_every_session_that_can_be_made() -> None:
    # A has problem P1 twice: {P1, P2} and {P1, P3} are two sessions; a plain cut of the order into pairs would
    # make {P1, P1} (not a session) in a third of the orders and lose one
    scenarios = [scenario("A", "P1", sid="A-P1a"), scenario("A", "P1", sid="A-P1b"), *bench(A=3)[1:]]
    for seed in range(12):
        plan = plan_sessions(scenarios, 2, seed=seed)
        problems = [sorted(i.split("-")[1][:2] for i in s.scenario_ids) for s in plan.sessions]
        assert sorted(problems) == [["P1", "P2"], ["P1", "P3"]], seed
    # with P1 twice and P2 once there is one session: {P1, P2}
    plan = plan_sessions(scenarios[:3], 2)
    assert len(plan.sessions) == 1 and "A-P2" in plan.sessions[0].scenario_ids


def test_count_takes_every_persons_first_session_before_any_second() -> None:
    scenarios = bench(A=4, B=4, C=2)  # 2 + 2 + 1 = 5 sessions
    full = {s.session_id: s for s in plan_sessions(scenarios, 2).sessions}
    three = plan_sessions(scenarios, 2, count=3)
    assert [s.session_id for s in three.sessions] == ["A~s0-1", "B~s0-1", "C~s0-1"]
    assert all(s == full[s.session_id] for s in three.sessions)  # a chosen session is the same session
    four = {s.session_id for s in plan_sessions(scenarios, 2, count=4).sessions}
    assert four - {"A~s0-1", "B~s0-1", "C~s0-1"} in ({"A~s0-2"}, {"B~s0-2"})


def test_the_order_is_seeded_and_never_global_random_state() -> None:
    scenarios = bench(A=4)
    random.seed(1)
    first = plan_sessions(scenarios, 4, seed=7)
    random.seed(2)
    assert plan_sessions(scenarios, 4, seed=7) == first
    assert first.sessions[0].session_id == "A~s7-1" and first.header.seed == 7
    orders = {tuple(plan_sessions(scenarios, 4, seed=seed).sessions[0].scenario_ids) for seed in range(10)}
    assert len(orders) > 1  # 24 orders of 4 scenarios: the seed picks one


def test_labels_per_position() -> None:
    # every profile has depth "step by step" (recurring after the first position) and analogies with another value
    # each time (changed after the first); only P1's has vocabulary (new wherever P1 stands)
    scenarios = [
        scenario("A", "P1", ("step by step", "machine analogies", "plain words")),
        scenario("A", "P2", ("step by step", "kitchen analogies")),
        scenario("A", "P3", ("step by step", "football analogies")),
    ]
    for seed in range(4):
        (session,) = plan_sessions(scenarios, 3, seed=seed).sessions
        first, *rest = session.labels
        first_has_vocab = session.scenario_ids[0] == "A-P1"
        assert first.model_dump() == {
            "recurring": [],
            "changed": [],
            "new": [DEPTH, ANALOGIES, *([VOCAB] if first_has_vocab else [])],
        }
        for sid, labels in zip(session.scenario_ids[1:], rest, strict=True):
            vocab = [VOCAB] if sid == "A-P1" else []
            assert labels.model_dump() == {"recurring": [DEPTH], "changed": [ANALOGIES], "new": vocab}


# --------------------------------------------------------------------------------------------------------------
# refusals
# --------------------------------------------------------------------------------------------------------------


def test_a_benchmark_whose_people_do_not_recur_is_refused_saying_how_many_do() -> None:
    twelve_twice = [scenario(f"T{p}", f"P{i}") for p in range(12) for i in (1, 2)]
    forty_once = [scenario(f"O{p}", "P1") for p in range(40)]
    with pytest.raises(Exception, match=r"^no persona has 4 problems") as raised:
        plan_sessions(twelve_twice + forty_once, 4)
    assert str(raised.value) == (
        "no persona has 4 problems: the most is 2 (12 personas have 2, 40 have 1); "
        "give --length 2 or build with --session-length 4"
    )
    with pytest.raises(Exception) as raised:
        plan_sessions([scenario("A", "P1")], 2)
    assert str(raised.value) == (
        "no persona has 2 problems: the most is 1 (1 persona has 1); "
        "sessions need a persona with at least 2; build with --session-length 2"
    )
    # two scenarios of one problem are one problem
    with pytest.raises(Exception, match=r"the most is 1 \(1 persona has 1\)"):
        plan_sessions([scenario("A", "P1", sid="a"), scenario("A", "P1", sid="b")], 2)


def test_a_count_above_what_can_be_made_is_refused_naming_it() -> None:
    with pytest.raises(Exception) as raised:
        plan_sessions(bench(A=4, B=2), 2, count=4)
    assert str(raised.value) == (
        "--count 4: only 3 sessions of length 2 can be made from 2 personas (a persona's scenarios are split into "
        "disjoint sessions); give --count 3 or less"
    )


# --------------------------------------------------------------------------------------------------------------
# drift
# --------------------------------------------------------------------------------------------------------------

B_DEPTH = "B-DEPTH: is the result given at once, with no working?"


def drift_bench() -> list[Scenario]:
    """A: four problems with the same profile. B (one problem, no session): depth "just the answer" under its own
    criterion; analogies and vocabulary have only A's values in the whole benchmark, so they cannot drift."""
    b = scenario("B", "P5", ("just the answer", "machine analogies", "plain words"))
    return [*bench(A=4), with_depth_criterion(b, B_DEPTH)]


def test_drift_flips_a_recurring_attribute_from_the_middle_on_with_the_other_scenarios_value_and_criterion() -> None:
    scenarios = drift_bench()
    known = by_id(scenarios)
    plan = plan_sessions(scenarios, 4, drift=1.0, seed=3)
    (session,) = plan.sessions
    assert session.drift_from == 3  # floor(4 / 2) + 1
    # all three recurring attributes are chosen (round(1.0 x 3)); only depth has another value in the benchmark
    assert (plan.header.n_drifted, plan.header.n_cannot_drift) == (1, 2)
    early, late = session.scenario_ids[:2], session.scenario_ids[2:]
    assert all(i in known for i in early)
    originals = {f"A-P{i}" for i in range(1, 5)} - set(early)
    assert set(late) == {derive_id(o, DEPTH, "just the answer") for o in originals}
    derived = by_id(session.derived)
    assert set(derived) == set(late)
    for original in originals:
        new = derived[derive_id(original, DEPTH, "just the answer")]
        old = known[original]
        item = new.profile.item(DEPTH)
        assert (item.value, item.weight) == ("just the answer", 0.5)
        assert "changed since the earlier problems" in item.justification and '"step by step"' in item.justification
        assert new.criterion(DEPTH) == known["B-P5"].criterion(DEPTH)
        assert new.criterion(DEPTH).description == B_DEPTH
        for other in (ANALOGIES, VOCAB):
            assert new.profile.item(other) == old.profile.item(other) and new.criterion(other) == old.criterion(other)
        assert (new.problem, new.persona) == (old.problem, old.persona)
        assert new.provenance["session_drift"]["changes"] == [
            {"attribute": DEPTH, "from": "step by step", "to": "just the answer", "donor": "B-P5"}
        ]
    assert [labels.model_dump() for labels in session.labels] == [
        {"recurring": [], "changed": [], "new": [DEPTH, ANALOGIES, VOCAB]},
        {"recurring": [DEPTH, ANALOGIES, VOCAB], "changed": [], "new": []},
        {"recurring": [ANALOGIES, VOCAB], "changed": [DEPTH], "new": []},
        {"recurring": [DEPTH, ANALOGIES, VOCAB], "changed": [], "new": []},  # the new value again
    ]
    assert set(plan.scenarios_with(scenarios)) >= set(session.scenario_ids)


@pytest.mark.parametrize(("share", "flipped", "kept"), [(0.5, 1, 1), (0.3, 1, 0), (0.1, 0, 0)])
def test_the_share_counts_the_recurring_attributes_and_those_that_can_drift_come_first(share, flipped, kept) -> None:
    # 3 recurring attributes: round(0.5 x 3) = 2 chosen, depth (the one that can drift) and one that cannot;
    # round(0.3 x 3) = 1: depth; round(0.1 x 3) = 0
    for seed in range(6):
        plan = plan_sessions(drift_bench(), 4, drift=share, seed=seed)
        assert (plan.header.n_drifted, plan.header.n_cannot_drift) == (flipped, kept), seed
        assert len(plan.sessions[0].derived) == 2 * flipped


def test_a_drifted_criterion_comes_from_a_scenario_of_the_same_problem_when_there_is_one() -> None:
    c = with_depth_criterion(scenario("C", "P1", ("just the answer", *DEFAULT[1:])), "C-P1-DEPTH")
    d = with_depth_criterion(scenario("D", "P2", ("just the answer", *DEFAULT[1:])), "D-P2-DEPTH")
    for seed in range(4):
        plan = plan_sessions([*bench(A=2), c, d], 2, drift=1.0, seed=seed)
        (session,) = plan.sessions
        assert session.drift_from == 2
        (new,) = session.derived
        original = new.provenance["session_drift"]["original"]
        expected = {"A-P1": "C-P1-DEPTH", "A-P2": "D-P2-DEPTH"}[original]
        assert new.criterion(DEPTH).description == expected and new.problem.id == original[-2:]


def test_a_session_set_survives_its_file(tmp_path: Path) -> None:
    plan = plan_sessions(drift_bench(), 4, drift=1.0, seed=3, source="bench")
    write_session_set(tmp_path / "s.jsonl", plan)
    back = read_session_set(tmp_path / "s.jsonl")
    assert back == plan
    assert back.sessions[0].derived[0].problem.answer_spec == plan.sessions[0].derived[0].problem.answer_spec


# --------------------------------------------------------------------------------------------------------------
# the command
# --------------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def app():
    cli._register()
    return cli.app


def test_the_command_refuses_the_shared_example_release(app, tmp_path: Path) -> None:
    out = tmp_path / "sessions.jsonl"
    result = CliRunner().invoke(app, ["sessions", str(RELEASE), "--length", "2", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines() == [
        "error: no persona has 2 problems: the most is 1 (1 persona has 1); sessions need a persona with at least "
        "2; build with --session-length 2"
    ]
    assert not out.exists()


def release_file(folder: Path) -> Path:
    """The example record as a release of two people with three problems each: Okafor's profile the same every
    time, Nowak's workplace analogies another value on each problem."""
    metadata, record = (json.loads(line) for line in RELEASE.read_text(encoding="utf-8").splitlines() if line.strip())
    lines = [metadata]
    nowak = {**record["persona"], "name": "Tomasz Nowak", "id": "nowak_0badcafe"}
    for persona, analogies in ((record["persona"], ["throughout"] * 3), (nowak, ["none", "occasional", "throughout"])):
        for i, value in enumerate(analogies):
            copy = json.loads(json.dumps(record))
            copy["problem_id"] = f"problem_{i}_{persona['id']}"
            copy["persona"] = persona
            copy["persona_preferences"]["Workplace Analogies"]["value"] = value
            lines.append(copy)
    path = folder / "release.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_the_command_groups_a_release_by_its_persona_ids(app, tmp_path: Path) -> None:
    out = tmp_path / "sessions.jsonl"
    result = CliRunner().invoke(app, ["sessions", str(release_file(tmp_path)), "--length", "3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    # position 2 and 3: Okafor 4 of 4 attributes recurring, Nowak 3 of 4 (analogies changed): (1 + 0.75) / 2
    assert result.stdout.strip() == (
        f"wrote {out}: 2 sessions of length 3, 2 personas; recurring attributes by position 0% · 88% · 88%"
    )
    nowak, okafor = read_session_set(out).sessions  # by persona id
    assert (okafor.persona_id, nowak.persona_id) == ("okafor_f334feca", "nowak_0badcafe")
    assert sorted(okafor.scenario_ids) == [f"problem_{i}_okafor_f334feca" for i in range(3)]
    assert sorted(nowak.scenario_ids) == [f"problem_{i}_nowak_0badcafe" for i in range(3)]
    for labels in nowak.labels[1:]:
        assert labels.changed == ["Workplace Analogies"] and len(labels.recurring) == 3
    assert all(len(labels.recurring) == 4 for labels in okafor.labels[1:])


def test_the_command_on_a_built_benchmark_and_its_overwrite_refusal(app, tmp_path: Path) -> None:
    scenarios = drift_bench()
    folder = built(tmp_path / "bench", scenarios)
    out = tmp_path / "sessions.jsonl"
    args = ["sessions", str(folder), "--length", "4", "--drift", "1", "--seed", "3", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    # positions: 0 of 3 recurring, 3 of 3, 2 of 3 (depth changed), 3 of 3
    assert result.stdout.strip() == (
        f"wrote {out}: 1 session of length 4, 1 persona; recurring attributes by position 0% · 100% · 67% · 100%; "
        "drift 1 from position 3: 1 attribute flipped, 2 chosen kept their value (no other value in the benchmark)"
    )
    written = read_session_set(out)
    assert written == plan_sessions(scenarios, 4, drift=1.0, seed=3, source=str(folder))
    before = out.read_bytes()
    again = CliRunner().invoke(app, [*args[:-2], "--count", "1", "--out", str(out)])
    assert again.exit_code == 2
    assert again.stderr.strip() == (
        f"error: --out {out}: holds a session set of 1 session; give --overwrite to replace it, or another --out"
    )
    assert out.read_bytes() == before
    assert CliRunner().invoke(app, [*args, "--overwrite"]).exit_code == 0


@pytest.mark.parametrize(
    ("extra", "expect"),
    [(["--drift", "1.5"], "--drift"), (["--length", "1"], "--length"), (["--count", "0"], "--count")],
)
def test_the_command_refuses_out_of_range_options(app, tmp_path: Path, extra, expect) -> None:
    scenarios = bench(A=2)
    folder = built(tmp_path / "bench", scenarios)
    base = {"--length": "2", "--out": str(tmp_path / "s.jsonl")}
    base.update(dict(zip(extra[::2], extra[1::2], strict=True)))
    result = CliRunner().invoke(app, ["sessions", str(folder), *[x for kv in base.items() for x in kv]])
    assert result.exit_code == 2 and expect in result.stderr
    assert not (tmp_path / "s.jsonl").exists()
