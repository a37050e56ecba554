"""Settings of a run that no provider or condition can use, refused before any call (``RunConfig.validate``: the
run, the dry run, a config file and Python alike)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prefdisco.dialogue.distractors import DEFAULT_DISTRACTORS
from prefdisco.errors import UserError
from prefdisco.models.args import check_model_name
from prefdisco.models.sampling import drops_temperature

MAX_TEMPERATURE = 2.0
"""The highest temperature a provider takes (OpenAI's 2; Anthropic's is 1, which its API refuses above)."""


FIXED_TEMPERATURES = {"temperature": "the model under test", "user_temperature": "the simulated user",
                      "grader_temperature": "the judge"}  # fmt: skip


def check_fixed_temperatures(config: Any, fixed: Mapping[str, Any]) -> None:
    """A preset that fixes a role's temperature (``fixed``: its settings) on a model its provider sends no temperature
    (``models/sampling.py``): that run could not be the preset's protocol, so it is refused in one line."""
    models = {
        "temperature": list(config.models),
        "user_temperature": [config.user_model],
        "grader_temperature": list(config.judge_models()),
    }
    for key, role in FIXED_TEMPERATURES.items():
        if key not in fixed:
            continue
        for model in models[key]:
            why = drops_temperature(model) if model else None
            if why:
                raise UserError(
                    f"--preset {config.preset} fixes the temperature of {role} to {fixed[key]:g}, but {model} is "
                    f"sent none ({why}): its calls would not follow the preset; choose another model for {role}, "
                    "or --preset default (the run's protocol.json then records the temperature as not sent)"
                )


def check_usable(config: Any) -> None:
    """What no provider or condition can use, refused before any call: a token limit under 1, a temperature
    outside the providers' 0..2, a model name with white space at its end, a model, condition or K given twice
    (its plan and calls doubled; inspect refuses two tasks of one name only after writing to the folder), and
    --distractors without the one condition that reads it."""
    for flag, tokens in (
        ("--max-tokens", config.max_tokens),
        ("--user-max-tokens", config.user_max_tokens),
        ("--judge-max-tokens", config.grader_max_tokens),
        ("--reasoning-tokens", config.reasoning_tokens),
        ("--user-reasoning-tokens", config.user_reasoning_tokens),
        ("--judge-reasoning-tokens", config.grader_reasoning_tokens),
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
    named = [("--model", m) for m in config.models] + [("--user-model", config.user_model)]
    for flag, name in [*named, *(("--judge-model", j) for j in config.judge_models())]:
        check_model_name(name, flag)
    for flag, given in (("--modes", list(config.modes)), ("--fixed-k", list(config.fixed_k))):
        repeated = sorted({str(v) for v in given if given.count(v) > 1})
        if repeated:
            raise UserError(
                f"{flag}: {', '.join(repeated)} given more than once; each condition runs once (--epochs N for more "
                "trials)"
            )
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
