"""The play-the-user study's pages (``--study play``) on the shared ``task_app.TaskApp``.

Routes (the shared ones — log-in, overview, error pages — are described in ``task_app``):

* ``GET /play`` — redirects to the participant's next unfinished dialogue (or the overview when all are done);
* ``GET /play/{n}`` — dialogue n: the persona card, the profile (values and reasons, in the persona's voice), the
  problem, the dialogue so far and, while a question waits, a reply box; the first visit starts the dialogue and
  every visit lets the model go as far as it can without the participant (``play_session.PlayStudy.view``), so a
  reload or a return after closing the page shows exactly where the dialogue is;
* ``POST /play/{n}`` — plain HTML form fallback (field ``reply``);
* ``POST /api/play`` — JSON ``{"position": int, "reply": str}``, used by the page's script; answers
  ``{"saved", "completed", "total", "next"}`` with ``next`` the same dialogue's page (its next question, or its
  end).

The pages never show the judge's score, the rubric, the model's name or any key: the model under test and the
judge are called server-side only. The handlers the shared base runs in a worker thread (``render_item``,
``answer_form``, ``answer_json``) step the dialogue on the server's event loop (``anyio.from_thread.run``), so
every step of one dialogue goes through the study's one lock for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from anyio import from_thread
from inspect_ai.model import Model
from pydantic import BaseModel, ConfigDict, Field, StrictInt
from starlette.applications import Starlette
from starlette.datastructures import FormData
from starlette.responses import Response

from prefdisco.annotate.auth import CookieSigner, Tokens
from prefdisco.annotate.database import SubmissionError
from prefdisco.annotate.middleware import MAX_BODY_BYTES
from prefdisco.annotate.play_session import PlaySettings, PlayStudy, PlayView
from prefdisco.annotate.play_store import PlayItem, PlayStore
from prefdisco.annotate.task_app import TaskApp, TaskPages

MAX_REPLY_CHARS = 4000
WEIGHT_WORDS = ((0.4, "matters a lot to you"), (0.2, "matters to you"), (0.0, "matters a little to you"))
PAGES = TaskPages(
    path="/play",
    api="/api/play",
    question="The assistant asks you:",
    title="PrefDisco · play the user",
    brand="play the user",
    styles=("annotate.css", "play.css"),
    script="play.js",
    login_heading="Log in to play the user",
    login_intro=(
        "You will take the part of a person who brought a problem to an AI assistant. Each dialogue shows who you "
        "are and what you care about for this problem. The assistant may ask you a few questions before it "
        "answers: reply as that person would, in your own words. You can stop at any time and come back later with "
        "the same name; your dialogues wait where you left them."
    ),
    back="Back to your dialogues",
    item_word="Dialogue",
    noun="dialogues",
    done_word="finished",
    status="finished",
    yours="nothing: the dialogue is over",
    columns=(("Task", "task"), ("You are", "person")),
    who="Participant",
)


class PlayReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    position: StrictInt
    reply: str = Field(min_length=1, max_length=MAX_REPLY_CHARS)


def importance(weight: float) -> str:
    """A preference's weight in words, as the participant reads it."""
    return next(words for floor, words in WEIGHT_WORDS if weight >= floor)


class PlayApp(TaskApp[PlayItem, PlayReply]):
    """One live dialogue per participant and scenario, the participant as the user."""

    pages = PAGES
    submission = PlayReply

    def __init__(self, study: PlayStudy, tokens: Tokens, signer: CookieSigner) -> None:
        super().__init__(study.items, tokens, signer)
        self.study = study

    def completed(self, annotator: str) -> set[int]:
        return self.study.store.scored(annotator)

    def render_item(self, annotator: str, item: PlayItem, error: str | None = None, status: int = 200) -> Response:
        view = from_thread.run(self.study.view, annotator, item.position)
        return self.render_view(annotator, view, error, status)

    def render_view(self, annotator: str, view: PlayView, error: str | None = None, status: int = 200) -> Response:
        done = self.completed(annotator)
        scenario = view.item.scenario
        preferences = sorted(scenario.profile.items, key=lambda p: -p.weight)
        turns = view.state.turns
        shown_turns = turns[:-1] if view.pending is not None else turns  # the waiting question has its own box
        return self.render(
            "play.html",
            status=status,
            annotator=annotator,
            item=view.item,
            persona=scenario.persona,
            preferences=[(p, importance(p.weight)) for p in preferences],
            problem=scenario.problem.prompt_text(),
            turns=[t for t in shown_turns if t.kind in ("question", "reply")],
            pending=view.pending,
            finished=view.done,
            final=view.state.final,
            failed=view.status == "error",
            asked=view.state.asked,
            budget=view.state.rules.limit,
            forced=view.state.rules.forced,
            total=len(self.items),
            completed=len(done),
            is_done=view.item.position in done,
            max_reply=MAX_REPLY_CHARS,
            next_url=self.next_url(done, view.item.position),
            error=error,
        )

    def save(self, annotator: str, position: int, text: str) -> dict[str, Any]:
        if not text.strip():
            raise SubmissionError("Please write a reply.")
        if len(text) > MAX_REPLY_CHARS:
            raise SubmissionError(f"Please keep your reply under {MAX_REPLY_CHARS} characters.")
        if position not in self.by_position:
            raise SubmissionError(f"unknown dialogue {position}", status=404)
        try:
            from_thread.run(self.study.reply, annotator, position, text.strip())
        except LookupError as e:
            raise SubmissionError(f"{e} (reload the page)", status=409) from None
        done = self.completed(annotator)
        return {"saved": 1, "completed": len(done), "total": len(self.items), "next": f"{self.pages.path}/{position}"}

    def answer_form(self, annotator: str, item: PlayItem, form: FormData) -> dict[str, Any]:
        return self.save(annotator, item.position, str(form.get("reply") or ""))

    def answer_json(self, annotator: str, submission: PlayReply) -> dict[str, Any]:
        return self.save(annotator, submission.position, submission.reply)


def create_play_app(
    db: Path,
    model: Model,
    judge_model: Model,
    tokens: Tokens | None = None,
    max_body: int = MAX_BODY_BYTES,
) -> Starlette:
    """This study alone on the shared shell, for a database holding a play study (see ``play_service.prepare_play``)."""
    store = PlayStore(db)
    store.require_play_items()
    study = PlayStudy(store, model, judge_model, PlaySettings.from_meta(store.play_meta()))
    return PlayApp(study, tokens or Tokens(), CookieSigner()).asgi(max_body)
