"""The attribute-relevance study's pages (``--study relevance``) on the shared ``task_app.TaskApp``.

Routes (the shared ones are described in ``task_app``):

* ``GET /annotate`` — redirects to the annotator's next unanswered item (or the overview when all are done);
* ``GET /annotate/{n}`` — item n: the task text and its candidate attributes, each with Yes/No;
* ``POST /annotate/{n}`` — plain HTML form fallback (fields ``label:<attribute>`` = ``1``/``0``);
* ``POST /api/annotations`` — JSON ``{"scenario_id": str, "labels": {attribute: true|false}}``, used by the
  page's script; answers ``{"saved", "completed", "total", "next"}``;
* ``GET /login``, ``POST /login``, ``POST /logout``, ``GET /overview`` — as in ``task_app``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool
from starlette.applications import Starlette
from starlette.datastructures import FormData
from starlette.responses import Response

from prefdisco.annotate.auth import CookieSigner, Tokens
from prefdisco.annotate.middleware import MAX_BODY_BYTES
from prefdisco.annotate.sampling import DEFAULT_PER_SIDE, Item, annotator_order
from prefdisco.annotate.store import Store, SubmissionError
from prefdisco.annotate.task_app import TaskApp, TaskPages

LABEL_PREFIX = "label:"
PAGES = TaskPages(
    path="/annotate",
    api="/api/annotations",
    question="Is this attribute relevant for personalizing a response to this specific task?",
    title="PrefDisco annotation",
    brand="attribute relevance annotation",
    styles=("annotate.css",),
    script="annotate.js",
    login_heading="Log in to annotate",
    login_intro=(
        "You will see a series of tasks. For each, mark which of the listed user attributes matter for "
        "personalizing a response to that task. You can stop at any time and come back later with the same name."
    ),
    back="Back to annotating",
    item_word="Scenario",
    noun="items",
    done_word="completed",
    status="answered",
    yours="your answers",
    columns=(("Task", "task"),),
)


class Submission(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scenario_id: str = Field(min_length=1, max_length=1000)
    labels: dict[str, StrictBool] = Field(min_length=1)


class AnnotationApp(TaskApp[Item, Submission]):
    """Yes/No relevance labels for every candidate attribute of an item, all submitted at once."""

    pages = PAGES
    submission = Submission

    def __init__(self, store: Store, tokens: Tokens, signer: CookieSigner) -> None:
        super().__init__(store.items(), tokens, signer)
        self.store = store
        self.by_id = {item.scenario_id: item for item in self.items}
        self.per_side = int(store.meta().get("per_side", DEFAULT_PER_SIDE))

    def completed(self, annotator: str) -> set[int]:
        return {self.by_id[sid].position for sid in self.store.completed(annotator)}

    def save(self, annotator: str, item_id: str, labels: dict[str, bool]) -> dict[str, Any]:
        saved = self.store.submit(annotator, item_id, labels)
        return self.progress(annotator, saved, after=self.by_id[item_id].position)

    def render_item(self, annotator: str, item: Item, error: str | None = None, status: int = 200) -> Response:
        done = self.completed(annotator)
        return self.render(
            "item.html",
            status=status,
            annotator=annotator,
            item=item,
            candidates=annotator_order(item, annotator),
            answers=self.store.answers(annotator, item.scenario_id),
            total=len(self.items),
            completed=len(done),
            is_done=item.position in done,
            short=len(item.candidates) < 2 * self.per_side,
            full=2 * self.per_side,
            label_prefix=LABEL_PREFIX,
            error=error,
        )

    def answer_form(self, annotator: str, item: Item, form: FormData) -> dict[str, Any]:
        labels: dict[str, bool] = {}
        for key, value in form.multi_items():
            if not key.startswith(LABEL_PREFIX):
                continue
            attribute = key.removeprefix(LABEL_PREFIX)
            if value not in ("0", "1") or attribute in labels:
                raise SubmissionError(f"Invalid answer for {attribute!r}.")
            labels[attribute] = value == "1"
        return self.save(annotator, item.scenario_id, labels)

    def answer_json(self, annotator: str, submission: Submission) -> dict[str, Any]:
        return self.save(annotator, submission.scenario_id, submission.labels)


def create_app(db: Path, tokens: Tokens | None = None, max_body: int = MAX_BODY_BYTES) -> Starlette:
    """This study alone on the shared shell, for an initialized annotation database (see ``service.prepare``)."""
    store = Store(db)
    store.require_items()
    return AnnotationApp(store, tokens or Tokens(), CookieSigner()).asgi(max_body)
