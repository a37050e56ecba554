"""The environment's two fixed roles, the simulated user and the judge, as inspect models.

Each is given once, when the environment is built, as an inspect ``Model`` or a ``provider/name`` string; it is
never the model being trained (that one lives outside the environment and only sends text). A name is resolved
with ``get_model`` under the generation settings ``prefdisco eval`` gives the role by default
(``RunConfig.role_config``: the user at temperature 0.7, the judge — which also grades correctness and audits
the user — at temperature 0.0), overridden by the caller's own settings. A ``Model`` is used as given.
"""

from __future__ import annotations

from typing import Any, Literal

from inspect_ai.model import GenerateConfig, Model, get_model
from pydantic import ValidationError

from prefdisco.errors import UserError, describe_validation_error

Role = Literal["user", "grader"]

ROLE_DEFAULTS: dict[Role, dict[str, Any]] = {"user": {"temperature": 0.7}, "grader": {"temperature": 0.0}}
"""``prefdisco eval``'s default settings of each role (``RunConfig.user_temperature``, ``.grader_temperature``)."""

ModelSpec = Model | str


def role_config(role: Role, settings: GenerateConfig | dict[str, Any] | None, where: str) -> GenerateConfig:
    """The role's default settings overridden by ``settings`` (a ``GenerateConfig`` or its fields)."""
    if isinstance(settings, GenerateConfig):
        settings = settings.model_dump(exclude_none=True)
    if settings is not None and not isinstance(settings, dict):
        raise UserError(f"{where}: expected a mapping of generation settings (temperature, max_tokens, ...)")
    try:
        return GenerateConfig.model_validate({**ROLE_DEFAULTS[role], **(settings or {})})
    except ValidationError as err:
        raise UserError(describe_validation_error(err, where)) from None


def resolve_model(
    spec: ModelSpec | None, role: Role, settings: GenerateConfig | dict[str, Any] | None = None, where: str = ""
) -> Model:
    """The role's model: ``spec`` itself when it is a ``Model``, else ``get_model(spec)`` with the role's
    settings. ``where`` names the argument in errors (default: ``user_model`` / ``judge_model``)."""
    where = where or ("user_model" if role == "user" else "judge_model")
    if isinstance(spec, Model):
        if settings:
            raise UserError(f"{where}: generation settings go with a model name; configure a Model yourself")
        return spec
    if not isinstance(spec, str) or "/" not in spec:
        raise UserError(f"{where}: expected an inspect model or a 'provider/name' string, got {spec!r}")
    config = role_config(role, settings, f"{where} settings")
    try:
        return get_model(spec, config=config)
    except Exception as err:  # inspect raises plain exceptions for unknown providers and missing keys
        raise UserError(f"{where}: cannot load {spec!r}: {err}") from None
