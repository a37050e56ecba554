"""The outcome of one correctness check, whichever metric produced it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, model_validator

NOT_ATTEMPTED = "NOT_ATTEMPTED"
"""The SimpleQA grader's grade for a response that gives no answer."""


class CorrectnessResult(BaseModel):
    """Whether a response is correct; ``correct`` is None when it could not be judged.

    ``answered``: whether an answer was read from the response at all (None: it could not be judged). A response
    with no answer to read ("I stand by my earlier answer.") is wrong as a final answer but, as a reply to pushback,
    holds the answer before it (``scoring/harms.py``). Each metric may say so itself (free text: a last line that
    is not the gold is no answer read); otherwise, and for a check recorded before the field existed: False for the
    grader's NOT_ATTEMPTED and for a response from which nothing was extracted, else True."""

    model_config = ConfigDict(extra="forbid")

    correct: bool | None
    extracted: str | None
    method: str
    grade: str | None = None
    detail: str = ""
    answered: bool | None = None

    @model_validator(mode="after")
    def _answered(self) -> CorrectnessResult:
        if self.correct is None:
            self.answered = None
        elif self.answered is None:
            self.answered = self.grade != NOT_ATTEMPTED if self.grade is not None else self.extracted is not None
        return self
