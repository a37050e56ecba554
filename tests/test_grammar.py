"""The embedded provider's JSON-schema grammar: bounded strings, bounded integers, lists without repeats."""

from __future__ import annotations

import itertools
import re

import pytest

from prefdisco.builder.relevance import relevance_schema
from prefdisco.builder.rubrics import rubric_schema
from prefdisco.models.grammar import schema_to_gbnf


def rules(grammar: str) -> dict[str, str]:
    return dict(line.split(" ::= ", 1) for line in grammar.splitlines())


def test_free_strings_are_capped_and_schema_limits_kept():
    schema = {
        "type": "object",
        "properties": {
            "free": {"type": "string"},
            "short": {"type": "string", "minLength": 3, "maxLength": 10},
            "long": {"type": "string", "minLength": 2, "maxLength": 5000},
        },
        "required": ["free", "short", "long"],
    }
    r = rules(schema_to_gbnf(schema, max_string_chars=50))
    assert r["free"] == '"\\"" char{0,50} "\\"" space'
    assert r["short"] == '"\\"" char{3,10} "\\"" space'
    assert r["long"] == '"\\"" char{2,50} "\\"" space'
    assert "?)?)?" not in "\n".join(r.values())  # no nested-optional expansion of a length limit


def test_strings_cannot_hold_raw_control_characters():
    """JSON forbids a raw line break inside a string; the stock rule allowed it and SmolLM2 wrote one."""
    r = rules(schema_to_gbnf({"type": "string"}))
    assert r["char"].startswith(r'[^"\\\x7F\x00-\x1F]'), r["char"]
    assert r'"\\" (["\\/bfnrt]' in r["char"]  # escapes such as \n stay allowed


def test_a_minimum_longer_than_the_cap_wins():
    schema = {"type": "object", "properties": {"s": {"type": "string", "minLength": 80}}, "required": ["s"]}
    assert rules(schema_to_gbnf(schema, max_string_chars=50))["s"] == '"\\"" char{80,80} "\\"" space'


def test_small_integer_ranges_are_enumerated():
    schema = {
        "type": "object",
        "properties": {"age": {"type": "integer", "minimum": 13, "maximum": 15}, "n": {"type": "integer"}},
        "required": ["age", "n"],
    }
    r = rules(schema_to_gbnf(schema))
    assert r["age"] == '("13" | "14" | "15") space'
    assert r["n-kv"].endswith("integer")  # unbounded integers keep the stock rule


def _expand(r: dict[str, str], symbol: str, items: dict[str, int]) -> list[tuple[int, ...]]:
    """Every item sequence a ``…-seq-i-c`` rule derives (separators dropped)."""
    out: list[tuple[int, ...]] = []
    for alternative in r[symbol].split(" | "):
        tokens = [t for t in alternative.replace('"," space', "").split() if t != '""']
        partial: list[tuple[int, ...]] = [()]
        for token in tokens:
            if token in items:
                partial = [(*p, items[token]) for p in partial]
            else:
                partial = [p + q for p in partial for q in _expand(r, token, items)]
        out.extend(partial)
    return out


@pytest.mark.parametrize(("n", "lo", "hi"), [(4, 2, 3), (5, 0, 2), (6, 6, 6), (7, 1, 7), (5, 3, 10)])
def test_unique_lists_derive_exactly_the_ordered_subsets_of_allowed_size(n, lo, hi):
    names = [f"a{i}" for i in range(n)]
    schema = {
        "type": "object",
        "properties": {
            "r": {"type": "array", "uniqueItems": True, "minItems": lo, "maxItems": hi, "items": {"enum": names}}
        },
        "required": ["r"],
    }
    r = rules(schema_to_gbnf(schema))
    items = {f"r-item{i}": i for i in range(n)}
    assert r["r-item0"] == '"\\"a0\\""'
    body = re.fullmatch(r'"\[" space (\S*) ?"\]" space', r["r"])
    assert body is not None
    derived = _expand(r, body.group(1), items) if body.group(1) else [()]
    expected = [c for k in range(lo, min(hi, n) + 1) for c in itertools.combinations(range(n), k)]
    assert sorted(derived) == sorted(expected)
    assert len(derived) == len(set(derived))  # unambiguous: each list has one derivation


def test_builder_schemas_reach_the_grammar_with_their_list_bounds():
    names = tuple(f"attr {i}" for i in range(12))
    relevance = rules(schema_to_gbnf(relevance_schema(names, 8, 10, 0).model_json_schema(), 100))
    # 8 of 12 needed: from name 4 on, all 8 remaining must be taken; a state that cannot reach 8 has no rule
    assert relevance["relevant-seq-4-0"] == "relevant-item4 relevant-seq-5-1"
    assert "relevant-seq-5-0" not in relevance
    assert "relevant-seq-0-0" in relevance and "relevant-seq-11-10" not in relevance  # never past max 10
    rubric = rules(schema_to_gbnf(rubric_schema(("A", "B", "C")).model_json_schema(), 100))
    assert rubric["criteria-seq-0-0"] == "criteria-item0 criteria-seq-1-1"  # all three, in order, once
    assert rubric["Levels-1"] == '"\\"" char{3,100} "\\"" space'


def test_a_bad_cap_is_refused():
    with pytest.raises(ValueError, match="max_string_chars"):
        schema_to_gbnf({"type": "string"}, max_string_chars=0)
