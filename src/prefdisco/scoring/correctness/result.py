"""The outcome of one correctness check, whichever metric produced it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class CorrectnessResult(BaseModel):
    """Whether a response is correct; ``correct`` is None when it could not be judged."""

    model_config = ConfigDict(extra="forbid")

    correct: bool | None
    extracted: str | None
    method: str
    grade: str | None = None
    detail: str = ""
