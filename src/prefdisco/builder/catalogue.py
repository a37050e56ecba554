"""The attribute universe Θ: a curated catalogue of preference attributes, shipped as a data file.

``src/prefdisco/data/attributes.json`` holds a JSON list of :class:`prefdisco.schema.Attribute` objects in six
categories (knowledge, misconceptions, cognitive, affective, meta-cognitive, communication), following the
student-modelling features of Chrysafiadi & Virvou (2015) plus communication-style features. A user may pass
their own file in the same format.

A catalogue is rejected (``UserError``) when an entry is not a valid Attribute, when two attributes share a
name, or when a name/alias of one attribute has the same normalized key (see :mod:`prefdisco.builder.dedup`)
as a name/alias of another — such a collision would make matching ambiguous.
"""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path

from prefdisco.benchio import parse_attributes
from prefdisco.builder.dedup import clean, compact_form, normalized_key
from prefdisco.errors import UserError
from prefdisco.schema import Attribute

PACKAGED_NAME = "attributes.json"
_TWO_LETTERS = re.compile(r"[^\W\d_]{2}")


def not_words(name: str) -> str | None:
    """Why an attribute name is not made of words, or None when it is. A small model writes names such as
    ``Moloch 253.506`` or ``Cabbage 11.21.2018``: a name needs a word (two letters in a row), and no part of it may
    be mostly digits (``3D`` and ``COVID-19`` are words; ``253.506`` is a number)."""
    if not _TWO_LETTERS.search(name):
        return "it has no word"
    for token in name.split():
        digits = sum(c.isdigit() for c in token)
        if digits and digits > sum(c.isalpha() for c in token):
            return f"{token!r} is a number"
    return None


def _read_text(path: Path | None) -> tuple[str, str]:
    """(text, label used in error messages)."""
    if path is None:
        resource = files("prefdisco") / "data" / PACKAGED_NAME
        return resource.read_text(encoding="utf-8"), f"prefdisco/data/{PACKAGED_NAME}"
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: attribute catalogue not found (expected a JSON list of attributes)")
    try:
        return path.read_text(encoding="utf-8"), str(path)
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"{path}: cannot read attribute catalogue ({e})") from e


def parse_catalogue(text: str, label: str) -> list[Attribute]:
    """Parse and check catalogue JSON text (``label`` names the source in error messages): the attribute list
    of a benchmark folder (:func:`prefdisco.benchio.parse_attributes`), with no name/alias collisions."""
    attributes = parse_attributes(text, label)
    if not attributes:
        raise UserError(f"{label}: expected a non-empty JSON list of attributes")
    check_catalogue(attributes, label)
    return attributes


def check_catalogue(attributes: list[Attribute], label: str = "catalogue") -> None:
    """Reject duplicate names and name/alias collisions between attributes."""
    seen_names: dict[str, int] = {}
    seen_keys: dict[str, tuple[int, str]] = {}
    for index, attr in enumerate(attributes):
        folded = clean(attr.name).casefold()
        if folded in seen_names:
            raise UserError(f"{label}: entry {index}: field name: {attr.name!r} duplicates entry {seen_names[folded]}")
        seen_names[folded] = index
        for form in (attr.name, *attr.aliases):
            field = "name" if form == attr.name else "aliases"
            key = normalized_key(form)
            if not key:
                raise UserError(
                    f"{label}: entry {index}: field {field}: {form!r} has no content words once filler "
                    "words are removed"
                )
            for k in (f"key:{key}", f"compact:{compact_form(form)}"):
                other = seen_keys.get(k)
                if other is not None and other[0] != index:
                    raise UserError(
                        f"{label}: entry {index}: field {field}: {form!r} collides with {other[1]!r} of "
                        f"entry {other[0]} ({attributes[other[0]].name!r}) after normalization"
                    )
                seen_keys.setdefault(k, (index, form))


def load_catalogue(path: Path | None = None) -> list[Attribute]:
    """Load Θ: the packaged catalogue by default, or a user file in the same format."""
    text, label = _read_text(path)
    return parse_catalogue(text, label)
