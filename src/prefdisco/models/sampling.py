"""Which models take no temperature: inspect's clients drop it for them (a warning in the log, nothing sent).

A protocol that fixes a temperature (``--preset paper``: user 0.4, judge 0.1, the model under test 0.7) cannot be
run on such a model: its calls would go out without it. ``drops_temperature`` says so before any call, from inspect's
own rules: its Anthropic client sends no temperature, top-p or top-k to any model (Anthropic's current API takes
none), and its OpenAI client none to a model that always reasons (o-series, gpt-5.0: inspect's
``always_reasons_model``). Every other provider is read after the run from what was really sent
(``results/sent_settings.py``).
"""

from __future__ import annotations

import re


def _always_reasons(model: str) -> bool:
    try:
        from inspect_ai.model._openai import always_reasons_model
    except ImportError:  # an inspect without it: the o-series, as inspect names them
        return bool(re.match(r"^o\d", model.lower()))
    return bool(always_reasons_model(model))


def drops_temperature(name: str) -> str | None:
    """Why the model ``name`` (``provider/model``) is sent no temperature, or None when it is (or may be)."""
    provider, _, model = name.partition("/")
    if provider == "anthropic" or (provider in ("bedrock", "vertex") and "anthropic" in model):
        return "inspect's Anthropic client sends no temperature (Anthropic's current API takes none)"
    if provider in ("openai", "azureai") and _always_reasons(model.rsplit("/", 1)[-1]):
        return f"OpenAI's reasoning model {model} takes no temperature"
    return None
