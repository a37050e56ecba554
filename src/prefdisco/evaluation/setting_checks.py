"""Settings of a run that no provider or condition can use, refused before any call (``RunConfig.validate``: the
run, the dry run, a config file and Python alike)."""

from __future__ import annotations

from typing import Any

from prefdisco.dialogue.distractors import DEFAULT_DISTRACTORS
from prefdisco.errors import UserError

MAX_TEMPERATURE = 2.0
"""The highest temperature a provider takes (OpenAI's 2; Anthropic's is 1, which its API refuses above)."""


def check_usable(config: Any) -> None:
    """What no provider or condition can use, refused before any call: a token limit under 1, a temperature
    outside the providers' 0..2, a model given twice (its plan and calls doubled), and --distractors without
    the one condition that reads it."""
    for flag, tokens in (
        ("--max-tokens", config.max_tokens),
        ("--user-max-tokens", config.user_max_tokens),
        ("--judge-max-tokens", config.grader_max_tokens),
    ):
        if tokens is not None and tokens < 1:
            raise UserError(f"{flag}: expected at least 1 token, got {tokens}")
    for flag, value in (
        ("--temperature", config.temperature),
        ("--user-temperature", config.user_temperature),
        ("--judge-temperature", config.grader_temperature),
    ):
        if value is not None and not 0 <= value <= MAX_TEMPERATURE:
            raise UserError(f"{flag}: expected 0 to {MAX_TEMPERATURE:g} (the providers' range), got {value:g}")
    twice = sorted({m for m in config.models if config.models.count(m) > 1})
    if twice:
        raise UserError(
            f"--model: {', '.join(twice)} given more than once; each model is evaluated once (--epochs N for "
            "more trials)"
        )
    if config.distractors != DEFAULT_DISTRACTORS and "oracle_distractor" not in config.modes:
        raise UserError(
            f"--distractors {config.distractors}: only oracle_distractor reads it; add oracle_distractor to --modes "
            "or drop --distractors"
        )
