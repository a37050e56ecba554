"""The response-rating study's pages (``--study rating``) on the shared ``task_app.TaskApp``.

Routes (the shared ones are described in ``task_app``):

* ``GET /rate`` — redirects to the annotator's next unrated item (or the overview when all are rated);
* ``GET /rate/{n}`` — item n: the problem, the response, one criterion with its five level anchors, a 1–5 choice;
* ``POST /rate/{n}`` — plain HTML form fallback (field ``score`` = ``1`` … ``5``);
* ``POST /api/ratings`` — JSON ``{"position": int, "score": int}``, used by the page's script; answers
  ``{"saved", "completed", "total", "next"}``;
* ``GET /login``, ``POST /login``, ``POST /logout``, ``GET /overview`` — as in ``task_app``.

The pages are blind: they show neither the judge's score (the store does not hold it) nor the model or the
condition that wrote the response.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictInt
from starlette.applications import Starlette
from starlette.datastructures import FormData
from starlette.responses import Response

from prefdisco.annotate.auth import CookieSigner, Tokens
from prefdisco.annotate.database import SubmissionError
from prefdisco.annotate.middleware import MAX_BODY_BYTES
from prefdisco.annotate.rating_items import RatingItem
from prefdisco.annotate.rating_store import RatingStore
from prefdisco.annotate.task_app import TaskApp, TaskPages

SCORES = ("1", "2", "3", "4", "5")
PAGES = TaskPages(
    path="/rate",
    api="/api/ratings",
    question="How well does the response meet this criterion, for this user?",
    title="PrefDisco response rating",
    brand="response rating",
    styles=("annotate.css", "rate.css"),
    script="rate.js",
    login_heading="Log in to rate responses",
    login_intro=(
        "You will see a series of responses to tasks. For each, read the task, the response and one criterion, "
        "and score how well the response meets the criterion on its 1–5 scale. You can stop at any time and come "
        "back later with the same name."
    ),
    back="Back to rating",
    item_word="Response",
    noun="responses",
    done_word="rated",
    status="rated",
    yours="your score",
    columns=(("Task", "task"), ("Criterion", "attribute")),
)


class RatingSubmission(BaseModel):
    model_config = ConfigDict(extra="forbid")

    position: StrictInt
    score: StrictInt


class RatingApp(TaskApp[RatingItem, RatingSubmission]):
    """One score 1–5 for one criterion of one response."""

    pages = PAGES
    submission = RatingSubmission

    def __init__(self, store: RatingStore, tokens: Tokens, signer: CookieSigner) -> None:
        super().__init__(store.rating_items(), tokens, signer)
        self.store = store

    def completed(self, annotator: str) -> dict[int, int]:
        """Position -> score of every item this annotator has rated."""
        return self.store.rated(annotator)

    def save(self, annotator: str, position: int, score: int) -> dict[str, Any]:
        self.store.rate(annotator, position, score)
        return self.progress(annotator, 1, after=position)

    def render_item(self, annotator: str, item: RatingItem, error: str | None = None, status: int = 200) -> Response:
        rated = self.completed(annotator)
        return self.render(
            "rate.html",
            status=status,
            annotator=annotator,
            item=item,
            levels=list(enumerate(item.levels, start=1)),
            current=rated.get(item.position),
            is_done=item.position in rated,
            total=len(self.items),
            completed=len(rated),
            error=error,
        )

    def answer_form(self, annotator: str, item: RatingItem, form: FormData) -> dict[str, Any]:
        value = str(form.get("score") or "")
        if value not in SCORES:
            raise SubmissionError("Please choose a score from 1 to 5.")
        return self.save(annotator, item.position, int(value))

    def answer_json(self, annotator: str, submission: RatingSubmission) -> dict[str, Any]:
        return self.save(annotator, submission.position, submission.score)


def create_rating_app(db: Path, tokens: Tokens | None = None, max_body: int = MAX_BODY_BYTES) -> Starlette:
    """This study alone on the shared shell, for a database of rating items (``rating_service.prepare_ratings``)."""
    store = RatingStore(db)
    store.require_rating_items()
    return RatingApp(store, tokens or Tokens(), CookieSigner()).asgi(max_body)
