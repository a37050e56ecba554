"""The Croissant fields of a published record set: every column of its Parquet, nested as the Parquet is.

A struct is a ``cr:Field`` with a ``subField`` per member; a list is ``isArray: true`` (Croissant 1.1's term;
``repeated`` is the deprecated 1.0 one), a list of structs a field with ``isArray`` and a ``subField`` per member;
every leaf has its ``dataType`` (``sc:Text``, ``sc:Integer``, ``sc:Float``, ``sc:Boolean``) and a short
description. A leaf's source is its column and a ``jsonPath`` transform from the column's value to the leaf
(``big_five.openness.level``); where a list of structs lies below the top of its column (``profile.items``,
``persona.expertise``, a trait's ``facets``) the leaf has two: the path to the list, then the path within each
element, since ``mlcroissant`` applies a transform to each element of a list and keeps only the first match of a
path through one (``items[*].attribute``).

What ``mlcroissant`` 1.1.1 reads back, found by trying it (``tests/test_publish.py`` proves every value): every
leaf of every column, equal to the Parquet's. It renders a sub-field only inside its direct parent, so a struct
below another (``persona.big_five.openness``) comes back as a key of its own at the top of the record, named by
its ``@id``, and a struct inside a list of structs (a rubric criterion's ``levels``) as one struct of lists, a value
per element. Two transforms are applied in the order written (JSON-LD does not order them; ``mlcroissant`` 1.1.1
keeps the order of the file). A list of lists of values is one field, ``arrayShape`` ``-1,-1``. It cannot read a list
of structs inside a list (its ``ReadFields`` fails: a ``jsonPath`` applied to an array, an ``IndexError``); such a
free-form field is published as JSON text (:func:`readable`), which Croissant describes as ``sc:Text``. A member
name that is no plain name is quoted in the path (``levels.'1'``).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import pyarrow as pa

from prefdisco.publish.bags import BAGS, bag_name

_TYPES = (
    (pa.types.is_string, "sc:Text"),
    (pa.types.is_boolean, "sc:Boolean"),
    (pa.types.is_integer, "sc:Integer"),
    (pa.types.is_floating, "sc:Float"),
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TRAIT = "<trait>"

DESCRIPTIONS = {
    "id": "the scenario's id: its problem's and its persona's",
    "line": "the scenario's line in the build's scenarios.jsonl (1-based)",
    "problem": "the problem the model answers",
    "problem.id": "the problem's id",
    "problem.benchmark": "the problem's source benchmark",
    "problem.domain": "the problem's domain",
    "problem.question": "the problem as posed",
    "problem.choices": "the options' texts in letter order A, B, ... (none for an open answer)",
    "problem.answer": "the gold answer as written (an option letter for multiple choice)",
    "problem.answer_type": "how the answer is scored",
    "problem.solution": "the source's worked solution, where it has one",
    "problem.metadata": "the source row's own fields and the loader's notes (free-form)",
    "persona": "the simulated person who asks",
    "persona.id": "the persona's id",
    "persona.name": "the persona's (fictional) name",
    "persona.age": "the persona's age in years",
    "persona.occupation": "the persona's occupation",
    "persona.location": "where the persona lives",
    "persona.education": "the persona's education",
    "persona.summary": "who the persona is, in a sentence or two",
    "persona.big_five": "the persona's Big Five personality traits",
    f"persona.big_five.{_TRAIT}": "the persona's {trait}: level, score and facets",
    f"persona.big_five.{_TRAIT}.level": "the {trait} level (low, medium, high)",
    f"persona.big_five.{_TRAIT}.score": "the {trait} score on a 1-5 scale",
    f"persona.big_five.{_TRAIT}.facets": "the {trait} facets' scores, where given",
    f"persona.big_five.{_TRAIT}.facets.facet": "the facet",
    f"persona.big_five.{_TRAIT}.facets.score": "the facet's score on a 1-5 scale",
    "persona.expertise": "the persona's expertise: a level per domain",
    "persona.expertise.domain": "the domain",
    "persona.expertise.level": "the persona's level in it (novice ... expert)",
    "persona.backstory": "the persona's backstory",
    "persona.extra": "what the builder noted of the persona (free-form)",
    "profile": "the persona's sparse weighted preference profile",
    "profile.items": "the preferences, one per attribute",
    "profile.items.attribute": "the attribute",
    "profile.items.value": "the value the persona prefers",
    "profile.items.weight": "the preference's weight (the weights sum to 1)",
    "profile.items.justification": "why the persona prefers it",
    "profile.items.description": "what the attribute means",
    "profile.items.category": "the attribute's category",
    "rubric": "the judge's rubric: a criterion per preference",
    "rubric.attribute": "the attribute the criterion scores",
    "rubric.preferred_value": "the value the persona prefers",
    "rubric.description": "what the judge checks for on this problem",
    "rubric.levels": "what each score from 1 to 5 means",
    "relevant_attributes": "the attributes judged relevant to the problem",
    "provenance": "which builder model wrote each part, the seed and the token usage (free-form)",
}
"""A short description per column and member, by dotted path (``<trait>`` stands for each Big Five trait)."""


def _data_type(kind: pa.DataType) -> str:
    return next(name for test, name in _TYPES if test(kind))


def _step(name: str) -> str:
    """``name`` as one step of a ``jsonPath``: as it is where it is a plain name, else quoted (``'1'``, ``'a b'``);
    ``where`` is the one word ``mlcroissant``'s ``jsonPath`` parser reserves."""
    if _IDENTIFIER.fullmatch(name) and name != "where":
        return name
    return "'" + name.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _describe(path: tuple[str, ...]) -> str:
    if len(path) >= 3 and path[:2] == ("persona", "big_five"):
        key = ".".join(("persona", "big_five", _TRAIT, *path[3:]))
        return DESCRIPTIONS[key].format(trait=path[2])
    if len(path) == 3 and path[0] == "rubric" and path[1] == "levels":
        return f"what a score of {path[2]} means"
    if ".".join(path) in DESCRIPTIONS:
        return DESCRIPTIONS[".".join(path)]
    bag = next(b for b in BAGS if path[: len(b)] == b)
    return f"{'.'.join(path[len(bag) :])} of {bag_name(bag)}, as its writer put it"


def _is_list(kind: pa.DataType) -> bool:
    return pa.types.is_list(kind) or pa.types.is_large_list(kind)


def readable(kind: pa.DataType, in_list: bool = False) -> bool:
    """Whether ``mlcroissant`` 1.1.1 reads every value of ``kind`` back as fields: no list of structs inside a list
    (``in_list``: ``kind`` is within one)."""
    if pa.types.is_struct(kind):
        return all(readable(f.type, in_list) for f in kind)
    if _is_list(kind):
        inner = kind.value_type
        if pa.types.is_struct(inner):
            return not in_list and readable(inner, True)
        return readable(inner, True)
    return True


class _Describer:
    def __init__(self, record_set: str) -> None:
        self.record_set = record_set
        self.files = {"@id": f"{record_set}/files"}

    def field(self, path: tuple[str, ...], kind: pa.DataType, prior: tuple[str, ...], at: tuple[str, ...]) -> Any:
        """The field of the member at ``path``: ``prior`` the transforms to the list element it lies in (if any),
        ``at`` its steps from there (or from the column)."""
        out: dict[str, Any] = {
            "@type": "cr:Field",
            "@id": "/".join((self.record_set, *(quote(p, safe="") for p in path))),
            "name": path[-1],
            "description": _describe(path),
        }
        if _is_list(kind):
            depth = 0
            while _is_list(kind):  # a list of lists of values: an array of as many dimensions
                kind, depth = kind.value_type, depth + 1
            out |= {"isArray": True, "arrayShape": ",".join(["-1"] * depth)}
            if pa.types.is_struct(kind):
                inner = (*prior, ".".join(at)) if at else prior
                out["subField"] = [self.field((*path, f.name), f.type, inner, (_step(f.name),)) for f in kind]
                return out
        if pa.types.is_struct(kind):
            out["subField"] = [self.field((*path, f.name), f.type, prior, (*at, _step(f.name))) for f in kind]
            return out
        steps = (*prior, ".".join(at)) if at else prior
        source: dict[str, Any] = {"fileSet": self.files, "extract": {"column": path[0]}}
        if len(steps) == 1:
            source["transform"] = {"jsonPath": steps[0]}
        elif steps:
            source["transform"] = [{"jsonPath": step} for step in steps]
        return out | {"dataType": _data_type(kind), "source": source}


def record_fields(record_set: str, schema: pa.Schema) -> list[dict[str, Any]]:
    """A field per column of ``schema`` for the record set ``record_set`` (read from ``<record_set>/files``)."""
    describer = _Describer(record_set)
    return [describer.field((column.name,), column.type, (), ()) for column in schema]
