"""Issue 32, part 3: the SDK of every provider a user names is installed by an extra, and a model whose SDK is
missing is one line naming the extra (``google/…`` failed until the user found ``google-genai`` themselves)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from inspect_ai._util.error import PrerequisiteError

from prefdisco.errors import UserError
from prefdisco.models import args

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def test_each_provider_extra_installs_its_sdk_and_providers_installs_them_all():
    extras = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    packages = {
        extra: {r.split(">")[0].split("<")[0] for r in extras[extra]} for extra in ("anthropic", "google", "openai")
    }
    assert packages == {"anthropic": {"anthropic"}, "google": {"google-genai"}, "openai": {"openai"}}
    assert extras["providers"] == ["prefdisco[anthropic,google,openai]"]
    for provider, (extra, package) in args.PROVIDER_EXTRAS.items():
        assert package in packages[extra], provider


def test_a_model_whose_sdk_is_missing_names_the_extra(monkeypatch):
    import inspect_ai.model

    def missing(name, *a, **k):
        raise PrerequisiteError("[bold]ERROR[/bold]: Google API requires optional dependencies. Install with:")

    monkeypatch.setattr(inspect_ai.model, "get_model", missing)
    with pytest.raises(UserError) as err:
        args.check_models(["google/gemini-2.5-pro"])
    assert str(err.value) == (
        "model 'google/gemini-2.5-pro' needs the google-genai package (or a newer one): pip install "
        "'prefdisco[google]' ('prefdisco[providers]' installs every provider's SDK)"
    )
    with pytest.raises(UserError, match=r"^model 'groq/llama' cannot be used: Google API requires"):
        args.check_models(["groq/llama"])  # no extra of ours: inspect's own line

    def no_key(name, *a, **k):
        raise PrerequisiteError("[bold]ERROR[/bold]: Unable to find API key: OPENAI_API_KEY environment variable")

    monkeypatch.setattr(inspect_ai.model, "get_model", no_key)
    with pytest.raises(UserError, match=r"^model 'openai/gpt-4.1' cannot be used: Unable to find API key: OPENAI"):
        args.check_models(["openai/gpt-4.1"])  # a missing key is not a missing SDK


def test_model_args_are_read_as_inspect_reads_them():
    """``-M`` as ``inspect eval -M``: a number, a boolean, a list or a mapping is that value (the openai client
    refuses ``max_retries="0"``), anything else the text as given; a credential is refused."""
    from prefdisco.errors import UserError
    from prefdisco.models.args import parse_model_args

    pairs = ["max_retries=0", "timeout=2.5", "stream=true", "stop=[a, b]", "base_url=http://h:8/v1", "name=007x"]
    assert parse_model_args(pairs) == {
        "max_retries": 0,
        "timeout": 2.5,
        "stream": True,
        "stop": ["a", "b"],
        "base_url": "http://h:8/v1",
        "name": "007x",
    }
    with pytest.raises(UserError, match="-M api_key: pass credentials"):
        parse_model_args(["api_key=sk-1"])
