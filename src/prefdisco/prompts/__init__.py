"""Prompt templates: one ``.txt`` file per prompt, with ``string.Template`` placeholders (``$name``)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
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


def templates_hash(names: Iterable[str]) -> str:
    """sha256 over the named templates' names and texts, in name order: a run records the hash of the templates
    it uses, so an edited prompt of the run is seen while a prompt added or edited elsewhere leaves it resumable."""
    digest = hashlib.sha256()
    for name in sorted(set(names)):
        digest.update(name.encode() + b"\0" + load(name).template.encode() + b"\0")
    return digest.hexdigest()[:16]
