"""The one exception type the CLI turns into a one-line message and a non-zero exit.

Raise ``UserError`` for anything the user can fix (a bad file, field, argument or setting). Its message is a
single line that names the file/field and says what was expected. Never put a secret in it.
"""

from __future__ import annotations

from pydantic import ValidationError


class UserError(Exception):
    """Bad input from the user: printed as ``error: <message>`` with exit code 2."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))


def validation_message(err: ValidationError) -> str:
    """One line for a pydantic error: ``<field.path>: <message>`` of the first problem (+N more)."""
    problems = err.errors(include_url=False)
    first = problems[0]
    loc = ".".join(str(p) for p in first.get("loc", ()))
    msg = str(first.get("msg", "invalid")).removeprefix("Value error, ")
    more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
    return " ".join(f"{loc or '(record)'}: {msg}{more}".split())


def describe_validation_error(err: ValidationError, where: str) -> str:
    """One line for a pydantic error: ``<where>: <field.path>: <message>`` for the first problem (+N more)."""
    return f"{where}: {validation_message(err)}"
