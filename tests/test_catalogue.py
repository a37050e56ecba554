"""The attribute catalogue Θ and the deterministic dedup of proposed attribute names."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from prefdisco.builder.catalogue import load_catalogue
from prefdisco.builder.dedup import DEFAULT_THRESHOLD, explain, name_similarity, normalize_tokens, normalized_key
from prefdisco.errors import UserError
from prefdisco.schema import ATTRIBUTE_CATEGORIES


@pytest.fixture(scope="module")
def catalogue():
    return load_catalogue()


# ---------------------------------------------------------------------------------------------------------
# catalogue
# ---------------------------------------------------------------------------------------------------------


def test_packaged_catalogue_covers_all_six_categories(catalogue):
    assert len(catalogue) >= 30
    by_category = {c: [a for a in catalogue if a.category == c] for c in ATTRIBUTE_CATEGORIES}
    assert all(len(attrs) >= 4 for attrs in by_category.values()), {c: len(v) for c, v in by_category.items()}
    for attr in catalogue:
        assert len(attr.description) > 20, attr.name
        assert len(attr.value_space) >= 2, attr.name
        assert len(attr.aliases) >= 2, attr.name
    names = [a.name for a in catalogue]
    assert len(set(names)) == len(names)
    # the Chrysafiadi & Virvou features and the communication-style features named in the design
    for expected in (
        "Domain knowledge level",
        "Misconception correction",
        "Working memory load",
        "Subject anxiety",
        "Self-confidence",
        "Motivation source",
        "Self-check prompts",
        "Verbosity",
        "Formality",
        "Use of examples",
        "Use of analogies",
        "Notation density",
        "Structured formatting",
    ):
        assert expected in names


def _write(tmp_path: Path, entries) -> Path:
    path = tmp_path / "attrs.json"
    path.write_text(json.dumps(entries, indent=2), encoding="utf-8")
    return path


GOOD = {
    "name": "Pace",
    "category": "cognitive",
    "description": "How fast to go.",
    "value_space": ["slow", "fast"],
}


def test_user_catalogue_loads(tmp_path):
    path = _write(tmp_path, [GOOD, {**GOOD, "name": "Humor", "aliases": ["jokes"], "category": "communication"}])
    attrs = load_catalogue(path)
    assert [a.name for a in attrs] == ["Pace", "Humor"]
    assert attrs[1].aliases == ["jokes"]


def test_bad_entry_names_file_index_and_field(tmp_path):
    path = _write(tmp_path, [GOOD, {**GOOD, "name": "Other", "value_space": ["only one"]}])
    with pytest.raises(UserError) as e:
        load_catalogue(path)
    msg = str(e.value)
    assert str(path) in msg and "entry 1" in msg and "value_space" in msg

    path = _write(tmp_path, [{**GOOD, "category": "mood"}])
    with pytest.raises(UserError, match=r"entry 0: category"):
        load_catalogue(path)


def test_duplicate_names_and_alias_collisions_are_rejected(tmp_path):
    with pytest.raises(UserError, match=r"entry 1: field name: 'pace' duplicates entry 0"):
        load_catalogue(_write(tmp_path, [GOOD, {**GOOD, "name": "pace"}]))
    other = {**GOOD, "name": "Speed of explanation", "aliases": ["Level of pace"]}
    with pytest.raises(UserError, match=r"entry 1: field aliases: 'Level of pace' collides with 'Pace'"):
        load_catalogue(_write(tmp_path, [GOOD, other]))


def test_unreadable_catalogue_files(tmp_path):
    with pytest.raises(UserError, match="not found"):
        load_catalogue(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text('[\n  {"name": "x",\n  oops\n]', encoding="utf-8")
    with pytest.raises(UserError, match=r"bad\.json:3: invalid JSON"):
        load_catalogue(bad)
    with pytest.raises(UserError, match="JSON list of attributes"):
        load_catalogue(_write(tmp_path, {"name": "x"}))


# ---------------------------------------------------------------------------------------------------------
# dedup
# ---------------------------------------------------------------------------------------------------------


def test_normalization_drops_filler_and_plurals():
    assert normalize_tokens("Level of Formality") == ("formality",)
    assert normalize_tokens("Preference for worked Examples") == ("worked", "example")
    assert normalize_tokens("Use of analogies & metaphors") == ("analogy", "metaphor")
    assert normalized_key("Degree of math anxiety") == normalized_key("anxiety about maths")


@pytest.mark.parametrize(
    ("proposed", "canonical", "kind"),
    [
        ("Verbosity", "Verbosity", "exact"),
        ("  level of FORMALITY ", "Formality", "exact"),  # filler words, case, whitespace
        ("Preferred response length", "Verbosity", "exact"),  # alias
        ("Anxiety about math", "Subject anxiety", "exact"),  # alias
        ("Preference for diagrams", "Visual representation", "exact"),  # alias + filler
        ("Use of Analogy", "Use of analogies", "exact"),  # singular vs plural
        ("Selfconfidence", "Self-confidence", "exact"),  # compact form
        ("Formallity", "Formality", "similar"),  # typo
        ("Mathematical notation density", "Notation density", "similar"),
        ("Step-by-step explanation depth", "Explanation depth", "similar"),
    ],
)
def test_catalogue_matches(catalogue, proposed, canonical, kind):
    (match,) = explain([proposed], catalogue)
    assert (match.canonical, match.kind) == (canonical, kind)
    assert match.score >= 0.6


def canonicalize(names, catalogue, threshold=DEFAULT_THRESHOLD):
    """Each proposed name's canonical name under ``explain``."""
    return {m.proposed: m.canonical for m in explain(names, catalogue, threshold)}


def test_non_matches_stay_distinct(catalogue):
    names = [
        "Anxiety about math",
        "Use of examples",
        "Heat transfer",  # shares only a generic word with an alias ("transfer")
        "Understanding of concentration in solutions",  # "concentration" is an alias of Attention span
        "Comfort with Multi-Digit Multiplication",
        "Workplace Analogies",
    ]
    mapping = canonicalize(names, catalogue)
    assert mapping["Anxiety about math"] == "Subject anxiety"
    assert mapping["Use of examples"] == "Use of examples"
    assert mapping["Anxiety about math"] != mapping["Use of examples"]
    for name in names[2:]:
        assert mapping[name] == name  # new, kept as its own canonical name
    assert len(set(mapping.values())) == len(names)


def test_new_proposals_cluster_with_a_documented_canonical(catalogue):
    names = ["Workplace analogy", "workplace analogies", "Workplace Analogies ", "Kitchen vocabulary"]
    matches = {m.proposed: m for m in explain(names, catalogue)}
    # smallest (key, cleaned name): all share key "analogy workplace"; "Workplace Analogies" sorts first
    assert {matches[n].canonical for n in names[:3]} == {"Workplace Analogies"}
    assert matches["Workplace Analogies "].kind == "new"
    assert matches["Workplace analogy"].kind == "cluster"
    assert matches["Kitchen vocabulary"].canonical == "Kitchen vocabulary"


def test_canonical_names_are_never_arbitrary(catalogue):
    names = [
        "Level of",
        "Tone of voice",
        "Verbosity",
        "Pitfall warnings",
        "Sourdough timing",
        "Sourdough timings",
    ]
    mapping = canonicalize(names, catalogue)
    allowed = {a.name for a in catalogue} | {" ".join(n.split()) for n in names}
    assert set(mapping) == set(names)
    assert set(mapping.values()) <= allowed
    assert mapping["Level of"] == "Level of"  # only filler words: never matched
    assert mapping["Sourdough timings"] == mapping["Sourdough timing"]


def test_dedup_is_deterministic_under_permutation(catalogue):
    names = [
        "Workplace Analogies",
        "workplace analogy",
        "Anxiety about math",
        "Math anxiety level",
        "Explanation detail level",
        "Formallity",
        "Heat transfer",
        "Transfer of heat",
        "Kitchen vocabulary",
        "Use of real-world examples",
        "Real world examples use",
        "Need for encouragement and reassurance",
    ]
    expected = canonicalize(names, catalogue)
    rng = random.Random(1234)
    for _ in range(40):
        shuffled = names[:]
        rng.shuffle(shuffled)
        assert canonicalize(shuffled, catalogue) == expected
        assert canonicalize(shuffled + shuffled[:3], catalogue) == expected  # repeats change nothing
    assert expected["Heat transfer"] == expected["Transfer of heat"] == "Heat transfer"
    assert expected["Real world examples use"] == expected["Use of real-world examples"]


def test_threshold_is_checked_and_applied(catalogue):
    with pytest.raises(ValueError):
        canonicalize(["x"], catalogue, threshold=0)
    assert canonicalize(["Formallity"], catalogue, threshold=1.0) == {"Formallity": "Formallity"}


def test_candidate_pruning_never_changes_the_mapping(catalogue, monkeypatch):
    import prefdisco.builder.dedup as dedup

    rng = random.Random(7)
    words = "visual diagram step detail anxiety math formal tone kitchen analogy analogies example examples"
    words = (words + " workplace symbol notation pace confidence formallity").split()
    names = sorted({" ".join(rng.choice(words) for _ in range(rng.randint(1, 3))) for _ in range(120)})
    pruned = canonicalize(names, catalogue)
    monkeypatch.setattr(dedup._Index, "candidates", lambda self, name: list(range(len(self.names))))
    assert canonicalize(names, catalogue) == pruned


def test_name_similarity_is_symmetric_and_exact_on_equal_forms():
    assert name_similarity("Selfconfidence", "Self-confidence") == 1.0  # compact forms agree
    assert name_similarity("Level of formality", "formality") == 1.0  # keys agree
    pairs = [("Preference for analogical explanations", "Use of analogies"), ("Heat transfer", "transfer")]
    for a, b in pairs:
        assert name_similarity(a, b) == name_similarity(b, a)
        assert 0.0 < name_similarity(a, b) < 0.6  # below the lexical threshold: left to the semantic pass
    assert name_similarity("Level of", "Formality") == 0.0  # only filler words
