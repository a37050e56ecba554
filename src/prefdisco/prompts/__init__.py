"""Prompt templates: one ``.txt`` file per prompt, with ``string.Template`` placeholders (``$name``)."""

from __future__ import annotations

import hashlib
from functools import cache
from importlib.resources import files
from string import Template


@cache
def load(name: str) -> Template:
    """Load ``prompts/<name>.txt`` as a Template (cached)."""
    text = files(__package__).joinpath(f"{name}.txt").read_text(encoding="utf-8")
    return Template(text)


def render(name: str, **values: object) -> str:
    """Fill a template; every placeholder must be given (a missing one raises KeyError)."""
    return load(name).substitute({k: str(v) for k, v in values.items()})


@cache
def templates_hash() -> str:
    """sha256 over every template's name and text, in name order: a run records it, so a changed prompt is seen."""
    digest = hashlib.sha256()
    for path in sorted(files(__package__).iterdir(), key=lambda p: p.name):
        if path.name.endswith(".txt"):
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]
