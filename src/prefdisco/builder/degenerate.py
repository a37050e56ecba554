"""Text a person was meant to read that is no text: what a small model writes into a rubric or a persona.

A grammar-constrained small model fills every string it must, whatever it holds: SmolLM2 wrote rubric levels such
as ``") }, {"`` (the JSON around the string, written into it) and the same anchor for several levels. The rules
are few and conservative, so that a real rubric or persona never trips them:

* **no text**: a string with no letter and no digit at all (punctuation, brackets, quotes, markup);
* **a JSON fragment**: a string holding a JSON key boundary, a quote, a comma or brace and a quoted key with its
  colon (``", "description": "``, ``{"level": ``), which prose does not;
* **repeated levels**: two score levels of one rubric criterion that say the same once case, spacing and
  punctuation are set aside (a judge cannot tell a 2 from a 4 that read alike).

The builder re-asks a reply that breaks one (``rubrics.Levels``, the persona reply), and ``prefdisco validate``
refuses a benchmark that holds one (``release/bench_checks.py``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_JSON_KEY = re.compile(r"""["']\s*[,{]\s*["'][^"'\n]{1,40}["']\s*:""")
"""A quoted key with its colon after a quote and a comma or an opening brace: ``", "key":`` or ``{"key":``."""


def no_text(text: str) -> str | None:
    """Why ``text`` is no text (see the module docstring), or None. A blank string is not judged here: whether a
    field may be empty is the data model's rule."""
    stripped = text.strip()
    if not stripped:
        return None
    if not any(c.isalnum() for c in stripped):
        return "it has no letter or digit"
    if _JSON_KEY.search(stripped):
        return "it holds a fragment of JSON"
    return None


def _normal(text: str) -> str:
    return " ".join("".join(c if c.isalnum() else " " for c in text.casefold()).split())


def repeated_levels(levels: Mapping[int, str]) -> str | None:
    """Which score levels of one criterion say the same (after case, spacing and punctuation), or None."""
    seen: dict[str, int] = {}
    same: list[str] = []
    for level, text in sorted(levels.items()):
        key = _normal(text)
        if not key:
            continue
        if key in seen:
            same.append(f"{seen[key]} and {level}")
        else:
            seen[key] = level
    return f"levels {', '.join(same)} say the same" if same else None


def level_problems(levels: Mapping[int, str]) -> list[str]:
    """Every degenerate level of one criterion and any repeat among them, one line each."""
    out = [f"level {level} {text!r}: {why}" for level, text in sorted(levels.items()) if (why := no_text(text))]
    repeat = repeated_levels(levels)
    return [*out, *([repeat] if repeat else [])]


PERSONA_TEXT = ("name", "occupation", "location", "education", "summary", "backstory")
"""The persona fields a person reads (and a simulated user plays) as prose."""


def persona_problems(fields: Mapping[str, object]) -> list[str]:
    """Every persona field of ``PERSONA_TEXT`` (and expertise level) that is no text, one line each."""
    out = []
    for name in PERSONA_TEXT:
        value = fields.get(name)
        if isinstance(value, str) and (why := no_text(value)):
            out.append(f"{name} {value!r}: {why}")
    expertise = fields.get("expertise")
    for domain, level in expertise.items() if isinstance(expertise, Mapping) else []:
        if isinstance(level, str) and (why := no_text(level)):
            out.append(f"expertise {domain} {level!r}: {why}")
    return out
