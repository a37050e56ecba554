"""Elicitation policies: the split by problem, the fitted priors (checked against hand counts), the choice math
(checklist, information gain, the inferred profile, P@K/R@K — the entropy arithmetic written out), the guard
against evaluating on training problems, and ``prefdisco policy fit``."""

from __future__ import annotations

import hashlib
import json
import math
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

import prefdisco.cli as cli
from prefdisco.benchio import read_bench, write_bench
from prefdisco.errors import UserError
from prefdisco.policies.choice import (
    beliefs,
    binary_entropy,
    checklist,
    conditional,
    expected_reduction,
    inferred_profile,
    infogain_next,
    precision_recall_at_k,
)
from prefdisco.policies.fit import fit_policy, fit_source
from prefdisco.policies.guard import check_not_trained_on
from prefdisco.policies.model import (
    POOLED,
    AttributePrior,
    FamilyPrior,
    Policy,
    ProblemRef,
    SplitRecord,
    ValueFrequency,
    read_policy,
)
from prefdisco.policies.split import train_problems
from prefdisco.schema import Attribute, PreferenceItem, PreferenceProfile, Problem, RubricCriterion, Scenario
from scripted import make_persona

# ---- a hand-built benchmark ---------------------------------------------------------------------------------


def scenario(sid: str, problem: str, profile: dict[str, str], benchmark: str = "alpha") -> Scenario:
    """A scenario whose profile holds ``profile`` (attribute → value), equal weights."""
    weights = [1 / len(profile)] * len(profile)
    items = [PreferenceItem(attribute=a, value=v, weight=w) for (a, v), w in zip(profile.items(), weights, strict=True)]
    rubric = [
        RubricCriterion(attribute=a, preferred_value=v, description=f"{a}?", levels={i: f"L{i}" for i in range(1, 6)})
        for a, v in profile.items()
    ]
    return Scenario(
        id=sid,
        problem=Problem(
            id=problem, benchmark=benchmark, question=f"question {problem}?", answer="7", answer_type="integer"
        ),
        persona=make_persona(),
        profile=PreferenceProfile.normalized(items),
        rubric=rubric,
    )


def attribute(name: str) -> Attribute:
    return Attribute(name=name, category="communication", description=f"{name} means", value_space=["lo", "hi"])


def write(folder: Path, scenarios: list[Scenario]) -> Path:
    names = sorted({i.attribute for s in scenarios for i in s.profile.items})
    write_bench(folder, scenarios, [make_persona()], [attribute(n) for n in names])
    return folder


# family alpha: 4 scenarios over 2 problems; family beta: 1 scenario
HAND = [
    scenario("s1", "p1", {"A": "x", "B": "y"}),
    scenario("s2", "p1", {"A": "x", "C": "z"}),
    scenario("s3", "p2", {"A": "w", "B": "y"}),
    scenario("s4", "p2", {"B": "v", "C": "z"}),
    scenario("s5", "p3", {"D": "q"}, benchmark="beta"),
]


def test_fit_counts_presence_pairs_and_values_per_family(tmp_path):
    bench = write(tmp_path / "bench", HAND)
    policy = fit_source(bench, fraction=1.0, seed=0)
    alpha = policy.families["alpha"]
    assert alpha.n_scenarios == 4
    # A in s1, s2, s3; B in s1, s3, s4; C in s2, s4 — of 4 scenarios
    assert {a: (p.count, p.p) for a, p in alpha.attributes.items()} == {"A": (3, 0.75), "B": (3, 0.75), "C": (2, 0.5)}
    # A&B in s1, s3; A&C in s2; B&C in s4 — stored once per pair, first name < second
    assert alpha.cooccurrence == {"A": {"B": 0.5, "C": 0.25}, "B": {"C": 0.25}}
    assert alpha.joint("C", "B") == 0.25 and alpha.joint("A", "D") == 0.0
    # A's values: x twice, w once (of 3); most frequent first
    assert [(v.value, v.count, v.frequency) for v in alpha.attributes["A"].values] == [("x", 2, 2 / 3), ("w", 1, 1 / 3)]
    assert [(v.value, v.count, v.frequency) for v in alpha.attributes["C"].values] == [("z", 2, 1.0)]
    beta = policy.families["beta"]
    assert beta.n_scenarios == 1 and beta.attributes["D"].p == 1.0 and beta.cooccurrence == {}
    # the split record: everything on the training side, the source and its manifest content hash
    split = policy.split
    assert (split.train_fraction, split.seed, split.n_problems, split.n_scenarios) == (1.0, 0, 3, 5)
    assert [p.key for p in split.train_problems] == [("alpha", "p1"), ("alpha", "p2"), ("beta", "p3")]
    assert split.source == str(bench) and split.source_hash == read_bench(bench).manifest["content_hash"]


def test_the_pooled_prior_counts_every_family_as_one(tmp_path):
    policy = fit_source(write(tmp_path / "bench", HAND), fraction=1.0, seed=0)
    pooled = policy.family(POOLED)
    # 5 scenarios: A in 3, B in 3, C in 2, D in 1; pairs A&B 2, A&C 1, B&C 1, nothing with D
    assert pooled.n_scenarios == 5
    assert {a: (p.count, p.p) for a, p in pooled.attributes.items()} == {
        "A": (3, 0.6),
        "B": (3, 0.6),
        "C": (2, 0.4),
        "D": (1, 0.2),
    }
    assert pooled.cooccurrence == {"A": {"B": 0.4, "C": 0.2}, "B": {"C": 0.2}}
    assert [(v.value, v.count) for v in pooled.attributes["B"].values] == [("y", 2), ("v", 1)]
    # the same as one family fitted on every scenario
    relabelled = [s.model_copy(update={"problem": s.problem.model_copy(update={"benchmark": "all"})}) for s in HAND]
    assert pooled == fit_source(write(tmp_path / "one", relabelled), fraction=1.0, seed=0).families["all"]


def many_problems() -> list[Scenario]:
    out = []
    for i in range(10):
        for j in range(2):
            out.append(scenario(f"a{i}-{j}", f"q{i}", {"A": "x", f"E{j}": "y"}))
    for i in range(3):
        out.append(scenario(f"b{i}", f"r{i}", {"D": "q"}, benchmark="beta"))
    return out


def hand_rank(seed: int, benchmark: str, problem: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}\x1f{benchmark}\x1f{problem}".encode()).digest()[:8], "big")


def test_the_split_is_by_problem_seeded_and_independent_of_order():
    scenarios = many_problems()
    train = train_problems(scenarios, 0.7, seed=3)
    # within each family the problems with the smallest sha256 ranks: floor(0.7 * 10) = 7, floor(0.7 * 3) = 2
    alpha = sorted((f"q{i}" for i in range(10)), key=lambda p: hand_rank(3, "alpha", p))[:7]
    beta = sorted((f"r{i}" for i in range(3)), key=lambda p: hand_rank(3, "beta", p))[:2]
    assert {p.key for p in train} == {("alpha", p) for p in alpha} | {("beta", p) for p in beta}
    shuffled = list(scenarios)
    random.Random(1).shuffle(shuffled)
    assert train_problems(shuffled, 0.7, seed=3) == train
    assert train_problems(scenarios, 0.7, seed=4) != train
    policy = fit_policy(scenarios, fraction=0.7, seed=3, source="x", hash_="sha256:0")
    keys = policy.train_keys()
    for s in scenarios:  # both scenarios of a problem on one side
        siblings = [t for t in scenarios if t.problem.id == s.problem.id]
        assert len({(t.problem.benchmark, t.problem.id) in keys for t in siblings}) == 1
    assert policy.split.n_train_scenarios == 7 * 2 + 2
    assert policy.families["alpha"].n_scenarios == 14 and policy.families["alpha"].attributes["A"].p == 1.0
    assert len(train_problems(scenarios, 0.05, seed=0)) == 2  # at least one problem per family
    assert len(train_problems(scenarios, 1.0, seed=0)) == 13


# ---- the choice math on hand priors -------------------------------------------------------------------------


def prior_policy(p: dict[str, float], pairs: dict[tuple[str, str], float], values: dict[str, str] | None = None):
    """A policy with one family ``f`` whose prior is given directly (counts out of 100)."""
    values = values or {}
    attributes = {
        a: AttributePrior(
            count=max(1, round(100 * pa)),
            p=pa,
            values=[ValueFrequency(value=values.get(a, f"{a}-v"), count=1, frequency=1.0)],
        )
        for a, pa in p.items()
    }
    cooccurrence: dict[str, dict[str, float]] = {}
    for (a, b), pab in pairs.items():
        cooccurrence.setdefault(min(a, b), {})[max(a, b)] = pab
    split = SplitRecord(
        train_fraction=1.0,
        seed=0,
        source="hand",
        source_hash="sha256:0",
        n_problems=1,
        n_scenarios=1,
        n_train_scenarios=1,
        train_problems=[ProblemRef(benchmark="f", id="p")],
    )
    family = FamilyPrior(n_scenarios=100, attributes=attributes, cooccurrence=cooccurrence)
    return Policy(split=split, families={"f": family})


# A is likely but independent of B and C (P(A,B) = 0.9 · 0.5); B and C always come together
CORRELATED = prior_policy({"A": 0.9, "B": 0.5, "C": 0.5}, {("A", "B"): 0.45, ("A", "C"): 0.45, ("B", "C"): 0.5})


def test_checklist_takes_the_k_most_likely_with_ties_by_name(tmp_path):
    assert checklist(CORRELATED, "f", 1) == ["A"]
    assert checklist(CORRELATED, "f", 2) == ["A", "B"]  # B and C tie at 0.5: by name
    fitted = fit_source(write(tmp_path / "bench", HAND), fraction=1.0)
    assert checklist(fitted, "alpha", 3) == ["A", "B", "C"]  # A and B tie at 0.75
    assert checklist(fitted, "alpha", 0) == [] and checklist(fitted, "beta", 5) == ["D"]
    with pytest.raises(UserError, match="no task family 'gamma'"):
        checklist(fitted, "gamma", 1)


def test_infogain_asks_the_question_that_settles_the_most_entropy():
    prior = CORRELATED.families["f"]
    h09 = -(0.9 * math.log2(0.9) + 0.1 * math.log2(0.1))  # 0.4690 bits
    assert binary_entropy(0.9) == pytest.approx(h09) and binary_entropy(0.5) == 1.0 and binary_entropy(1.0) == 0.0
    now = h09 + 1 + 1  # H(A) + H(B) + H(C) before any answer
    # ask A: q(A) = 0.9; P(B | A) = 0.45 / 0.9 = 0.5 and P(B | not A) = (0.5 - 0.45) / 0.1 = 0.5, C likewise:
    # after either answer H = 1 + 1, so the expected reduction is only A's own entropy
    assert conditional(prior, "B", "A", True) == pytest.approx(0.5)
    assert conditional(prior, "B", "A", False) == pytest.approx(0.5)
    assert expected_reduction(prior, {}, "A") == pytest.approx(now - (0.9 * 2 + 0.1 * 2))
    # ask B: q(B) = 0.5; present: P(A | B) = 0.45 / 0.5 = 0.9, P(C | B) = 0.5 / 0.5 = 1 → H = 0.469;
    # absent: P(A | not B) = (0.9 - 0.45) / 0.5 = 0.9, P(C | not B) = 0 → H = 0.469; reduction 2.469 - 0.469 = 2
    assert expected_reduction(prior, {}, "B") == pytest.approx(now - (0.5 * h09 + 0.5 * h09)) == pytest.approx(2.0)
    assert expected_reduction(prior, {}, "C") == pytest.approx(2.0)
    assert infogain_next(CORRELATED, "f", {}) == "B"  # 2 bits beats 0.469; B and C tie, by name
    # once B is known present, C is settled (P(C | B) = 1): asking it gains 0, asking A gains H(A)
    assert beliefs(prior, {"B": True}) == pytest.approx({"A": 0.9, "C": 1.0})
    assert expected_reduction(prior, {"B": True}, "C") == 0.0
    assert expected_reduction(prior, {"B": True}, "A") == pytest.approx(h09)
    assert infogain_next(CORRELATED, "f", {"B": True}) == "A"
    assert infogain_next(CORRELATED, "f", {"A": True, "B": True, "C": True}) is None
    # the checklist asks A first; the information-gain policy never would
    assert checklist(CORRELATED, "f", 1) != [infogain_next(CORRELATED, "f", {})]


def test_several_answers_multiply_the_odds_in_turn():
    policy = prior_policy({"a": 0.5, "b": 0.5, "c": 0.5}, {("a", "c"): 0.4, ("b", "c"): 0.4, ("a", "b"): 0.25})
    prior = policy.families["f"]
    # one answer: the pairwise conditional itself, P(c | a) = 0.4 / 0.5 = 0.8
    assert beliefs(prior, {"a": True})["c"] == pytest.approx(0.8)
    # two: odds(c) = 1, a present multiplies by odds(0.8) / odds(0.5) = 4, b present by 4 → odds 16 → 16 / 17
    assert beliefs(prior, {"a": True, "b": True})["c"] == pytest.approx(16 / 17)
    # b absent: P(c | not b) = (0.5 - 0.4) / 0.5 = 0.2 → factor 0.25; 4 · 0.25 = 1 → back to 0.5
    assert beliefs(prior, {"a": True, "b": False})["c"] == pytest.approx(0.5)
    assert beliefs(prior, {"b": False, "a": True})["c"] == pytest.approx(0.5)  # order does not matter
    # an answer about an attribute the prior never saw changes nothing
    assert beliefs(prior, {"zzz": True}) == {"a": 0.5, "b": 0.5, "c": 0.5}
    # an inconsistent prior (P(a or b) = 0.8 + 0.8 - 0.5 > 1) is clipped: P(b | not a) = 0.3 / 0.2 → 1
    bad = prior_policy({"a": 0.8, "b": 0.8}, {("a", "b"): 0.5}).families["f"]
    assert conditional(bad, "b", "a", False) == 1.0


def test_inferred_profile_and_precision_recall_by_hand():
    policy = prior_policy(
        {"A": 0.9, "B": 0.5, "C": 0.5},
        {("A", "B"): 0.45, ("A", "C"): 0.45, ("B", "C"): 0.5},
        values={"A": "short", "B": "visual", "C": "formal"},
    )
    # B answered present: B itself (1.0), C settled at 1.0, A at 0.9 ≥ 0.5
    inferred = inferred_profile(policy, "f", {"B": True})
    assert [(i.attribute, i.value, i.probability) for i in inferred] == [
        ("B", "visual", 1.0),
        ("C", "formal", 1.0),
        ("A", "short", pytest.approx(0.9)),
    ]
    # B answered absent: C settled at 0, A stays 0.9 → only A
    assert [i.attribute for i in inferred_profile(policy, "f", {"B": False})] == ["A"]
    # an attribute answered present that the prior never saw is inferred, with no value
    assert ("Z", None) in [(i.attribute, i.value) for i in inferred_profile(policy, "f", {"Z": True})]
    # P@K = |{B, C, A} ∩ {B, C, D, E}| / 3 = 2/3; R@K = 2 / 4
    assert precision_recall_at_k(inferred, ["B", "C", "D", "E"]) == pytest.approx((2 / 3, 0.5))
    assert precision_recall_at_k(["A"], ["A"]) == (1.0, 1.0)
    assert precision_recall_at_k([], ["A", "B"]) == (0.0, 0.0)
    with pytest.raises(ValueError, match="no attributes"):
        precision_recall_at_k(["A"], [])


# ---- the guard, the file, the command -----------------------------------------------------------------------


def test_a_policy_refuses_its_own_training_problems():
    scenarios = many_problems()
    policy = fit_policy(scenarios, fraction=0.7, seed=3, source="bench-x", hash_="sha256:0")
    keys = policy.train_keys()
    held_out = [s for s in scenarios if (s.problem.benchmark, s.problem.id) not in keys]
    trained = [s for s in scenarios if (s.problem.benchmark, s.problem.id) in keys]
    assert len(held_out) == 3 * 2 + 1 and held_out
    check_not_trained_on(policy, held_out)  # no error
    with pytest.raises(UserError) as e:
        check_not_trained_on(policy, [*held_out, *trained])
    first = trained[0]
    message = str(e.value)
    assert f"scenario {first.id} (problem {first.problem.benchmark}/{first.problem.id})" in message
    assert f"and {len(trained) - 1} more" in message and "bench-x" in message and "\n" not in message
    everything = fit_policy(scenarios, fraction=1.0, seed=0, source="b", hash_="sha256:0")
    with pytest.raises(UserError, match=f"scenario {held_out[0].id} "):
        check_not_trained_on(everything, held_out)


@pytest.fixture(scope="module")
def app():
    cli._register()
    return cli.app


def test_policy_fit_command_writes_a_versioned_file_that_reads_back(app, tmp_path):
    bench = write(tmp_path / "bench", HAND)
    out = tmp_path / "out" / "policy.json"
    result = CliRunner().invoke(app, ["policy", "fit", str(bench), "--out", str(out), "--train-split", "1.0"])
    assert result.exit_code == 0, result.output
    assert "Fitted 2 families on 3/3 problems (5/5 scenarios)" in result.output
    data = json.loads(out.read_text())
    assert data["format"] == "prefdisco-policy/1"
    assert data["families"]["alpha"]["attributes"]["B"]["p"] == 0.75
    assert data["split"]["train_fraction"] == 1.0 and data["split"]["seed"] == 0
    assert read_policy(out) == fit_source(bench, fraction=1.0, seed=0)
    assert not list(out.parent.glob(".*.tmp"))  # written atomically: no temp file left

    # the default split holds some problems out: 0.9 of alpha's 2 problems is 1, of beta's 1 is 1
    result = CliRunner().invoke(app, ["policy", "fit", str(bench), "--out", str(out), "--seed", "5"])
    assert result.exit_code == 0, result.output
    held = read_policy(out)
    assert held.split.train_fraction == 0.9 and held.split.seed == 5 and len(held.split.train_problems) == 2


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--train-split", "0"], "--train-split: expected a fraction in (0, 1], got 0.0"),
        (["--train-split", "1.5"], "--train-split: expected a fraction in (0, 1], got 1.5"),
    ],
)
def test_policy_fit_bad_options_are_one_line_errors(app, tmp_path, args, expected):
    bench = write(tmp_path / "bench", HAND)
    result = CliRunner().invoke(app, ["policy", "fit", str(bench), "--out", str(tmp_path / "p.json"), *args])
    assert result.exit_code == 2
    assert expected in result.output and len(result.output.strip().splitlines()) == 1


def test_a_bad_policy_file_is_a_one_line_error_naming_the_field(app, tmp_path):
    bench = write(tmp_path / "bench", HAND)
    missing = CliRunner().invoke(app, ["policy", "fit", str(tmp_path / "nope"), "--out", str(tmp_path / "p.json")])
    assert missing.exit_code == 2 and "nope" in missing.output
    path = tmp_path / "policy.json"
    CliRunner().invoke(app, ["policy", "fit", str(bench), "--out", str(path), "--train-split", "1.0"])
    data = json.loads(path.read_text())
    data["families"]["alpha"]["cooccurrence"]["A"]["B"] = 0.9  # more likely than A itself (0.75)
    path.write_text(json.dumps(data))
    with pytest.raises(UserError, match=r"families\.alpha: cooccurrence 'A'/'B': 0\.9 exceeds P") as e:
        read_policy(path)
    assert "\n" not in str(e.value)
    path.write_text(json.dumps({**data, "format": "prefdisco-policy/0"}))
    with pytest.raises(UserError, match="field format: expected 'prefdisco-policy/1'"):
        read_policy(path)
    path.write_text("{not json")
    with pytest.raises(UserError, match=r"policy\.json:1: invalid JSON"):
        read_policy(path)
    with pytest.raises(UserError, match="no such policy file"):
        read_policy(tmp_path / "absent.json")
