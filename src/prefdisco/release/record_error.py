"""The error of a release record whose converted model fails validation."""

from __future__ import annotations

from pydantic import ValidationError

from prefdisco.errors import UserError, describe_validation_error


class RecordModelError(UserError):
    """A model built from a release record (Problem, Persona, preference items, Scenario) failed validation.

    The message is the usual one-line ``<where>: <part>: <field.path>: <message> (+N more)``; ``part`` names the
    record part the model came from ("" for the whole scenario) and ``error`` keeps pydantic's errors, so that
    ``prefdisco validate`` can report every one of them.
    """

    def __init__(self, where: str, part: str, error: ValidationError) -> None:
        super().__init__(describe_validation_error(error, f"{where}: {part}" if part else where))
        self.part = part
        self.error = error
