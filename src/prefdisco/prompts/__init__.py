"""Prompt templates: one ``.txt`` file per prompt, with ``string.Template`` placeholders (``$name``)."""

from __future__ import annotations

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
