"""The free-form fields of a scenario in Parquet: ``problem.metadata`` (the source row's own fields and the loader's
notes), ``persona.extra`` (the builder's blueprint, or the paper's persona object) and ``provenance`` hold whatever
their writer put there, so no one Arrow type is known for them in advance.

Each is published as the nested Arrow type pyarrow infers from the values of its config (a struct of every key the
rows hold; a key a row lacks reads as null, and is dropped again on reading) when every value comes back from it
exactly: the same keys in the same order, the same JSON types. That fails where a key holds a number in one row and
text in another, where a value holds a null of its own (it would be dropped), or where an object is empty (Parquet
has no struct without fields), or where Croissant's reader could not read it nested (``tables``, ``fields``); such a
field is published as JSON text in that config instead, and the card says so.
Either way reading gives back the value as written (:func:`value_of`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

BAGS: tuple[tuple[str, ...], ...] = (("problem", "metadata"), ("persona", "extra"), ("provenance",))
"""Where the free-form fields are in a row (the path of keys)."""

JSON_TEXT = pa.string()
"""The type of a free-form field published as JSON text."""


def bag_name(path: Sequence[str]) -> str:
    return ".".join(path)


def _strip_absent(value: Any) -> Any:
    """A value read from a struct with the keys its row did not have (null) dropped, at every depth."""
    if isinstance(value, dict):
        return {k: _strip_absent(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_strip_absent(v) for v in value]
    return value


def _writable(kind: pa.DataType) -> bool:
    """Whether Parquet can hold ``kind``: no struct without fields, at any depth."""
    if pa.types.is_struct(kind):
        return kind.num_fields > 0 and all(_writable(kind.field(i).type) for i in range(kind.num_fields))
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _writable(kind.value_type)
    return True


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON text: the same keys in the same order, and 1 is not 1.0."""
    return json.dumps(a, ensure_ascii=False) == json.dumps(b, ensure_ascii=False)


def nested_type(values: list[dict[str, Any]]) -> pa.DataType | None:
    """The nested Arrow type every one of ``values`` comes back from exactly, or None (publish them as JSON text)."""
    try:
        array = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    if not pa.types.is_struct(array.type) or not _writable(array.type):
        return None
    back = array.to_pylist()
    if all(_same(_strip_absent(b), v) for b, v in zip(back, values, strict=True)):
        return array.type
    return None


def choose_type(values: list[dict[str, Any]]) -> pa.DataType:
    """The type a free-form field is published as in one config: nested when exact, else JSON text."""
    return nested_type(values) or JSON_TEXT


def as_cell(value: dict[str, Any], kind: pa.DataType) -> Any:
    """A free-form value as its cell of type ``kind``."""
    if kind == JSON_TEXT:
        return json.dumps(value, ensure_ascii=False)
    return value


def value_of(cell: Any) -> Any:
    """The free-form value a cell holds (JSON text, or a struct read back with absent keys as null)."""
    return json.loads(cell) if isinstance(cell, str) else _strip_absent(cell)
