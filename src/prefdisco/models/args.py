"""Model names and ``-M key=value`` model args from the command line, checked before anything runs."""

from __future__ import annotations

import re
from typing import Any

from prefdisco.errors import UserError

PROVIDER_EXTRAS = {"anthropic": ("anthropic", "anthropic"), "google": ("google", "google-genai")}
PROVIDER_EXTRAS |= {p: ("openai", "openai") for p in ("openai", "openai-api", "azureai", "together", "vllm")}
"""A provider prefix → (the extra that installs its SDK, the SDK's package), ``pyproject.toml``'s extras."""


def missing_sdk(name: str, error: Exception) -> str | None:
    """The one line for a model whose provider's SDK is not installed (inspect's ``PrerequisiteError``), naming
    the extra that installs it; None for any other failure."""
    provider = name.split("/", 1)[0]
    if type(error).__name__ != "PrerequisiteError" or provider not in PROVIDER_EXTRAS:
        return None
    said = str(error)  # inspect's prerequisite errors are also a missing key or base URL: those say their own
    if "pip install" not in said and "optional dependencies" not in said and "version" not in said:
        return None
    extra, package = PROVIDER_EXTRAS[provider]
    return (
        f"model {name!r} needs the {package} package (or a newer one): pip install 'prefdisco[{extra}]' "
        "('prefdisco[providers]' installs every provider's SDK)"
    )


def check_model_name(name: str, flag: str = "--model") -> None:
    """Refuse a model name with white space at either end: inspect would take ``"openai/gpt-4.1 "`` as a model of its
    own (another cache, another row label, a leaderboard of one model twice)."""
    if not name.strip():
        raise UserError(f"{flag}: an empty model name; give an inspect model name such as openai/gpt-4.1")
    if name != name.strip():
        raise UserError(f"{flag}: {name!r} has white space at its end; give the model's name as {name.strip()!r}")


def check_models(names: list[str]) -> None:
    """Resolve every model once, so a typo, a missing API key or a missing SDK fails before anything runs."""
    from inspect_ai.model import get_model

    for name in names:
        check_model_name(name)
        try:
            get_model(name)
        except UserError:
            raise
        except Exception as e:  # inspect raises several types here; all mean "this model cannot be used"
            sdk = missing_sdk(name, e)
            if sdk:
                raise UserError(sdk) from e
            raise UserError(f"model {name!r} cannot be used: {one_line(str(e)) or type(e).__name__}") from e


def one_line(message: str) -> str:
    """inspect's error text without rich markup, "ERROR:" prefixes or line breaks."""
    text = re.sub(r"\[/?[a-z ]+\]", "", message)
    parts = [p.strip().removeprefix("ERROR:").strip() for p in text.splitlines()]
    return " — ".join(p for p in parts if p)


def arg_value(text: str) -> Any:
    """A ``-M`` value as ``inspect eval -M`` reads it: a YAML number, boolean, list or mapping (``max_retries=0`` is
    the integer 0, which the provider's client needs), else the text as given."""
    import yaml  # type: ignore[import-untyped]

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return value if isinstance(value, int | float | bool | list | dict) else text


def parse_model_args(pairs: list[str]) -> dict[str, Any]:
    """``-M key=value`` pairs as model args (``arg_value``); a credential is refused (the args are logged)."""
    args: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UserError(f"-M {key or pair!r}: expected key=value")
        if "key" in key.lower() or "token" in key.lower() or "secret" in key.lower():
            raise UserError(
                f"-M {key}: pass credentials through the provider's environment variable, not -M "
                "(model args are written to the logs)"
            )
        args[key.strip()] = arg_value(value.strip())
    return args
