"""A scenario as one row of a published Parquet table, and back: the one mapping both ways.

Every field of :class:`~prefdisco.schema.Scenario` is a column of its own type, nested as the model is (the problem,
the persona and the profile structs, the rubric a list of structs), never JSON text, with three changes a table
needs: a mapping whose keys are data becomes a list of key/value structs (``persona.expertise``: ``[{domain, level}]``;
a trait's ``facets``: ``[{facet, score}]``), the Big Five a struct of the five traits, and a rubric criterion's
``levels`` a struct of ``"1"`` … ``"5"``. The free-form fields are typed per config (:mod:`prefdisco.publish.bags`).
``line`` is the scenario's line in the build's ``scenarios.jsonl`` (1-based), so the folder gives back the build in
its order, byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from prefdisco.publish.bags import BAGS, as_cell, value_of
from prefdisco.schema import BIG_FIVE, SCORE_LEVELS, Scenario

LINE = "line"
"""The column of a scenario's line in the build's ``scenarios.jsonl``."""

_TEXT = pa.string()
_TRAIT = pa.struct(
    [
        ("level", _TEXT),
        ("score", pa.float64()),
        ("facets", pa.list_(pa.struct([("facet", _TEXT), ("score", pa.float64())]))),
    ]
)
_ITEM = pa.struct(
    [
        ("attribute", _TEXT),
        ("value", _TEXT),
        ("weight", pa.float64()),
        ("justification", _TEXT),
        ("description", _TEXT),
        ("category", _TEXT),
    ]
)
_CRITERION = pa.struct(
    [
        ("attribute", _TEXT),
        ("preferred_value", _TEXT),
        ("description", _TEXT),
        ("levels", pa.struct([(str(level), _TEXT) for level in SCORE_LEVELS])),
    ]
)


def row_schema(bag_types: Mapping[str, pa.DataType]) -> pa.Schema:
    """The table's schema, the free-form fields typed as ``bag_types`` says (``problem.metadata``, ...)."""
    problem = pa.struct(
        [
            ("id", _TEXT),
            ("benchmark", _TEXT),
            ("domain", _TEXT),
            ("question", _TEXT),
            ("choices", pa.list_(_TEXT)),
            ("answer", _TEXT),
            ("answer_type", _TEXT),
            ("solution", _TEXT),
            ("metadata", bag_types["problem.metadata"]),
        ]
    )
    persona = pa.struct(
        [
            ("id", _TEXT),
            ("name", _TEXT),
            ("age", pa.int64()),
            ("occupation", _TEXT),
            ("location", _TEXT),
            ("education", _TEXT),
            ("summary", _TEXT),
            ("big_five", pa.struct([(trait, _TRAIT) for trait in BIG_FIVE])),
            ("expertise", pa.list_(pa.struct([("domain", _TEXT), ("level", _TEXT)]))),
            ("backstory", _TEXT),
            ("extra", bag_types["persona.extra"]),
        ]
    )
    return pa.schema(
        [
            ("id", _TEXT),
            ("problem", problem),
            ("persona", persona),
            ("profile", pa.struct([("items", pa.list_(_ITEM))])),
            ("rubric", pa.list_(_CRITERION)),
            ("relevant_attributes", pa.list_(_TEXT)),
            ("provenance", bag_types["provenance"]),
            (LINE, pa.int64()),
        ]
    )


def _bag(data: dict[str, Any], path: tuple[str, ...]) -> Any:
    for key in path:
        data = data[key]
    return data


def bag_values(scenario: Scenario) -> dict[str, Any]:
    """The free-form fields of ``scenario`` as JSON values, by name (``problem.metadata``, ...)."""
    data = scenario.model_dump(mode="json")
    return {".".join(path): _bag(data, path) for path in BAGS}


def to_row(scenario: Scenario, line: int, bag_types: Mapping[str, pa.DataType]) -> dict[str, Any]:
    """``scenario`` as a row of the table of ``row_schema(bag_types)``."""
    data = scenario.model_dump(mode="json")
    problem, persona = data["problem"], data["persona"]
    problem["metadata"] = as_cell(problem["metadata"], bag_types["problem.metadata"])
    persona["big_five"] = {
        trait: {**score, "facets": [{"facet": f, "score": s} for f, s in score["facets"].items()]}
        for trait, score in persona["big_five"].items()
    }
    persona["expertise"] = [{"domain": d, "level": lvl} for d, lvl in persona["expertise"].items()]
    persona["extra"] = as_cell(persona["extra"], bag_types["persona.extra"])
    data["provenance"] = as_cell(data["provenance"], bag_types["provenance"])
    data[LINE] = line
    return data


def from_row(row: Mapping[str, Any]) -> Scenario:
    """The scenario a row holds (a row of a published table, as pyarrow or ``datasets`` reads it)."""
    problem = {**row["problem"], "metadata": value_of(row["problem"]["metadata"])}
    persona = dict(row["persona"])
    persona["big_five"] = {
        trait: {**score, "facets": {f["facet"]: f["score"] for f in score["facets"]}}
        for trait, score in persona["big_five"].items()
    }
    persona["expertise"] = {e["domain"]: e["level"] for e in persona["expertise"]}
    persona["extra"] = value_of(persona["extra"])
    data = {key: value for key, value in row.items() if key != LINE}
    data |= {"problem": problem, "persona": persona, "provenance": value_of(row["provenance"])}
    return Scenario.model_validate(data)
