"""The one exception type the CLI turns into a one-line message and a non-zero exit.

Raise ``UserError`` for anything the user can fix (a bad file, field, argument or setting). Its message is a
single line that names the file/field and says what was expected. Never put a secret in it.
"""

from __future__ import annotations

from pydantic import ValidationError
from rich.console import Console
from rich.text import Text


class UserError(Exception):
    """Bad input from the user: printed as ``error: <message>`` with exit code 2."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))


def print_error(error: UserError) -> None:
    """``error`` as the CLI shows it: one ``error: …`` line on stderr (a Text, so brackets are never rich markup)."""
    Console(stderr=True).print(Text.assemble(("error: ", "bold red"), str(error)), highlight=False, soft_wrap=True)


def validation_messages(err: ValidationError) -> list[str]:
    """pydantic's own errors, one line per (error type, location): ``field.path: message``.

    Groups keep pydantic's order; a group's distinct messages are joined with "; ". A ``value_error`` (one of our
    validators) shows the validator's own message (``ctx["error"]``), never pydantic's wording around it; a
    model-level error's location is "(record)".
    """
    groups: dict[tuple[str, tuple[int | str, ...]], list[str]] = {}
    for e in err.errors(include_url=False):
        reason = e.get("ctx", {}).get("error")
        text = str(reason) if e["type"] == "value_error" and reason is not None else e["msg"]
        texts = groups.setdefault((e["type"], tuple(e["loc"])), [])
        if text not in texts:
            texts.append(text)
    return [
        " ".join(f"{'.'.join(str(p) for p in loc) or '(record)'}: {'; '.join(texts)}".split())
        for (_, loc), texts in groups.items()
    ]


def validation_message(err: ValidationError) -> str:
    """The first of :func:`validation_messages`, with how many more there are."""
    messages = validation_messages(err)
    more = f" (+{len(messages) - 1} more)" if len(messages) > 1 else ""
    return messages[0] + more


def describe_validation_error(err: ValidationError, where: str) -> str:
    """One line for a pydantic error: ``<where>: <field.path>: <message>`` for the first problem (+N more)."""
    return f"{where}: {validation_message(err)}"
