"""The one web app every study shares (Starlette): log-in, session cookie, tokens, progress, overview, JSON API.

A study's pages (``app.AnnotationApp``: attribute relevance; ``rating_app.RatingApp``: response ratings;
``play_app.PlayApp``: play the user) are a ``TaskApp`` subclass that says what its pages call things
(``TaskPages``), renders its item page and stores an answer from the HTML form or from the JSON API; its routes
all live under its own path and API path:

* ``GET {path}`` — redirects to the annotator's next open item (or the overview when all are done);
* ``GET {path}/{n}`` — item n; ``POST {path}/{n}`` — the plain HTML form fallback;
* ``POST {api}`` — the JSON answer the page's script sends; answers ``{"saved", "completed", "total", "next"}``.

``StudyServer`` hosts one or more of them behind one shell, once: ``GET /``, ``GET /login``, ``POST /login``
(form: ``name``, plus ``token`` if tokens are set), ``POST /logout``, ``GET /overview`` (each study's items with
this annotator's status), ``/static``; one token set and one cookie signer for every study.

An invalid submission gets a 4xx with a one-line ``detail`` (JSON) or the item page with the error, and changes
nothing. All text is escaped by jinja2's autoescape. The templates ``base``, ``login``, ``overview``, ``error`` and
``item_page`` (which each study's item page extends) are shared; ``TaskPages`` fills in the study's words.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import jinja2
from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from prefdisco.annotate.auth import NAME_RULE, CookieSigner, Tokens, valid_name
from prefdisco.annotate.database import SubmissionError
from prefdisco.annotate.math_text import math_html
from prefdisco.annotate.middleware import BodyLimit, SecurityHeaders
from prefdisco.errors import describe_validation_error

HERE = Path(__file__).parent
COOKIE = "prefdisco_annotator"


@dataclass(frozen=True)
class TaskPages:
    """What the shared pages say and link for one study (the shell's words when it is served alone)."""

    path: str  # the item pages: GET path (next open item), path/{n}
    api: str  # the JSON endpoint the page's script posts to
    question: str  # asked on every item page
    title: str  # the default page title
    brand: str  # the header's name of the task
    styles: tuple[str, ...]  # stylesheets under /static
    script: str  # the page script under /static (after the shared submit.js)
    login_heading: str
    login_intro: str
    back: str  # the error page's link text back to the items
    item_word: str  # the progress line's "{item_word} n of N"
    noun: str  # what the items are called in the overview ("items", "responses")
    done_word: str  # "n of N {noun} {done_word}"
    status: str  # an item's status once done ("{status} — you may change {yours}"; "You {status} all N {noun}")
    yours: str  # what an annotator may change on a done item
    columns: tuple[tuple[str, str], ...]  # the overview's columns after '#': (heading, item field)
    who: str = "Annotator"  # the header's word for the person logged in


class Positioned(Protocol):
    @property
    def position(self) -> int: ...


ItemT = TypeVar("ItemT", bound=Positioned)
SubmissionT = TypeVar("SubmissionT", bound=BaseModel)


class TaskApp(ABC, Generic[ItemT, SubmissionT]):
    """Request handlers for one study's fixed item set (read once: it never changes)."""

    pages: TaskPages
    submission: type[SubmissionT]  # the JSON API's body

    def __init__(self, items: Sequence[ItemT], tokens: Tokens, signer: CookieSigner) -> None:
        self.items = list(items)
        self.tokens = tokens
        self.signer = signer
        self.by_position = {item.position: item for item in self.items}
        self.templates = jinja2.Environment(
            loader=jinja2.FileSystemLoader(HERE / "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
        )
        self.templates.filters["math"] = math_html  # problems and answers with their LaTeX drawn (math_text.py)

    # -- what a study says ---------------------------------------------------------------------------------

    @abstractmethod
    def completed(self, annotator: str) -> Collection[int]:
        """The positions of the items this annotator has answered."""

    @abstractmethod
    def render_item(self, annotator: str, item: ItemT, error: str | None = None, status: int = 200) -> Response:
        """The item page (with ``error`` shown, when given)."""

    @abstractmethod
    def answer_form(self, annotator: str, item: ItemT, form: FormData) -> dict[str, Any]:
        """Store the HTML form's answer for ``item``: ``progress``, or ``SubmissionError``."""

    @abstractmethod
    def answer_json(self, annotator: str, submission: SubmissionT) -> dict[str, Any]:
        """Store the JSON API's answer: ``progress``, or ``SubmissionError``."""

    # -- helpers --------------------------------------------------------------------------------------------

    def render(self, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        page = self.templates.get_template(template)
        html = page.render(kind=self.pages, question=self.pages.question, **context)
        return HTMLResponse(html, status_code=status)

    def annotator(self, request: Request) -> str | None:
        name = self.signer.unsign(request.cookies.get(COOKIE))
        return name if name is not None and self.tokens.permits(name) else None

    def next_url(self, done: Collection[int], after: int = 0) -> str:
        """The first item not in ``done`` after position ``after`` (wrapping around), or the overview."""
        pending = [i.position for i in self.items if i.position not in done]
        if not pending:
            return "/overview"
        later = [p for p in pending if p > after]
        return f"{self.pages.path}/{(later or pending)[0]}"

    def progress(self, annotator: str, saved: int, after: int) -> dict[str, Any]:
        """The API's answer after storing ``saved`` answers for the item at position ``after``."""
        done = self.completed(annotator)
        return {"saved": saved, "completed": len(done), "total": len(self.items), "next": self.next_url(done, after)}

    def login_redirect(self) -> RedirectResponse:
        return RedirectResponse("/login", status_code=303)

    def requested_item(self, request: Request) -> tuple[str, ItemT] | Response:
        """The logged-in annotator and the item ``{position}`` names, or the login redirect or the 404 page."""
        annotator = self.annotator(request)
        if annotator is None:
            return self.login_redirect()
        item = self.by_position.get(request.path_params["position"])
        if item is None:
            return self.render("error.html", status=404, message="No such item.", annotator=annotator)
        return annotator, item

    # -- pages ----------------------------------------------------------------------------------------------

    def next_item(self, request: Request) -> Response:
        annotator = self.annotator(request)
        if annotator is None:
            return self.login_redirect()
        return RedirectResponse(self.next_url(self.completed(annotator)), status_code=303)

    def item_page(self, request: Request) -> Response:
        found = self.requested_item(request)
        return found if isinstance(found, Response) else self.render_item(*found)

    def overview_section(self, annotator: str) -> OverviewSection:
        """This study's part of the overview: every item with this annotator's status."""
        done = self.completed(annotator)
        rows = [(item, item.position in done) for item in self.items]
        return OverviewSection(self.pages, rows, len(done), len(self.items))

    async def submit_form(self, request: Request) -> Response:
        found = self.requested_item(request)
        if isinstance(found, Response):
            return found
        annotator, item = found
        form = await request.form()
        try:
            result = await run_in_threadpool(self.answer_form, annotator, item, form)
        except SubmissionError as e:
            return await run_in_threadpool(self.render_item, annotator, item, str(e), e.status)
        return RedirectResponse(result["next"], status_code=303)

    # -- JSON API -------------------------------------------------------------------------------------------

    async def api_submit(self, request: Request) -> Response:
        annotator = self.annotator(request)
        if annotator is None:
            return problem(401, "not logged in: open /login first")
        if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            return problem(415, "expected Content-Type: application/json")
        try:
            payload = json.loads(await request.body())
        except (json.JSONDecodeError, UnicodeDecodeError):
            return problem(400, "request body is not valid JSON")
        try:
            submission = self.submission.model_validate(payload)
        except ValidationError as e:
            return problem(422, describe_validation_error(e, "request body"))
        try:
            result = await run_in_threadpool(self.answer_json, annotator, submission)
        except SubmissionError as e:
            return problem(e.status, str(e))
        return JSONResponse(result)

    # -- the ASGI app ---------------------------------------------------------------------------------------

    def routes(self) -> list[BaseRoute]:
        """This study's routes, all under its own prefixes: its pages (``pages.path``) and its API (``pages.api``)."""
        item = self.pages.path + "/{position:int}"
        return [
            Route(self.pages.path, self.next_item, methods=["GET"]),
            Route(item, self.item_page, methods=["GET"]),
            Route(item, self.submit_form, methods=["POST"]),
            Route(self.pages.api, self.api_submit, methods=["POST"]),
        ]

    def asgi(self, max_body: int) -> Starlette:
        """This study alone on the shared shell (``StudyServer``)."""
        return StudyServer([self]).asgi(max_body)


@dataclass(frozen=True)
class OverviewSection:
    """One study's rows on the overview: (item, done) in position order, with the counts."""

    pages: TaskPages
    rows: list[tuple[Any, bool]]
    completed: int
    total: int


SHELL_PAGES = TaskPages(
    path="/overview",
    api="",
    question="",
    title="PrefDisco human studies",
    brand="human studies",
    styles=("annotate.css",),
    script="",
    login_heading="Log in",
    login_intro=(
        "This server hosts several studies; after logging in, the overview lists each one's items. You can stop at "
        "any time and come back later with the same name."
    ),
    back="Back to the overview",
    item_word="Item",
    noun="items",
    done_word="done",
    status="done",
    yours="your answers",
    columns=(),
    who="Participant",
)


class StudyServer:
    """The one app: the shared shell (log-in, log-out, overview, static files) and every hosted study's routes,
    each under its own prefix, with one token set and one session cookie for all of them.

    * ``GET /`` — the only study's next item (the overview when several are hosted), or the log-in page;
    * ``GET /login``, ``POST /login`` (form: ``name``, plus ``token`` if tokens are set), ``POST /logout``;
    * ``GET /overview`` — each study's items with this participant's status, one section per study.

    With one study the shell speaks that study's words (``TaskPages``); with several, ``SHELL_PAGES``'s.
    """

    def __init__(self, studies: Sequence[TaskApp[Any, Any]]) -> None:
        if not studies:
            raise ValueError("a StudyServer hosts at least one study")
        first = studies[0]
        self.studies = list(studies)
        self.tokens, self.signer, self.templates = first.tokens, first.signer, first.templates
        prefixes = [p for study in studies for p in (study.pages.path, study.pages.api)]
        clash = sorted({p for p in prefixes if prefixes.count(p) > 1 or p in SHELL_PATHS})
        if clash:
            raise ValueError(f"studies share the path prefix(es) {', '.join(clash)}")
        if any(s.tokens is not self.tokens or s.signer is not self.signer for s in studies):
            raise ValueError("every hosted study must share one token set and one cookie signer")
        self.pages = first.pages if len(studies) == 1 else SHELL_PAGES
        styles = dict.fromkeys(style for study in studies for style in study.pages.styles)
        self.shell_pages = replace(self.pages, styles=tuple(styles)) if len(studies) > 1 else self.pages

    @property
    def landing(self) -> str:
        """Where a logged-in participant starts: the only study's next item, or the overview."""
        return self.studies[0].pages.path if len(self.studies) == 1 else "/overview"

    def render(self, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        page = self.templates.get_template(template)
        html = page.render(kind=self.shell_pages, question=self.pages.question, **context)
        return HTMLResponse(html, status_code=status)

    def annotator(self, request: Request) -> str | None:
        name = self.signer.unsign(request.cookies.get(COOKIE))
        return name if name is not None and self.tokens.permits(name) else None

    def home(self, request: Request) -> Response:
        return RedirectResponse(self.landing if self.annotator(request) else "/login", status_code=303)

    def login_page(self, request: Request) -> Response:
        return self.render("login.html", need_token=bool(self.tokens), error=None, name="")

    async def login(self, request: Request) -> Response:
        form = await request.form()
        name = str(form.get("name") or "").strip()
        token = str(form.get("token") or "")
        if not valid_name(name):
            status, error = 400, f"Please enter a name: {NAME_RULE}."
        elif not self.tokens.allows(name, token):
            status, error = 403, "Unknown annotator or wrong access token."
        else:
            response = RedirectResponse(self.landing, status_code=303)
            response.set_cookie(COOKIE, self.signer.sign(name), httponly=True, samesite="strict", path="/")
            return response
        return self.render("login.html", status=status, need_token=bool(self.tokens), error=error, name=name)

    def logout(self, request: Request) -> Response:
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response

    async def overview(self, request: Request) -> Response:
        annotator = self.annotator(request)
        if annotator is None:
            return RedirectResponse("/login", status_code=303)
        sections = [await run_in_threadpool(study.overview_section, annotator) for study in self.studies]
        return self.render("overview.html", annotator=annotator, sections=sections)

    def routes(self) -> list[BaseRoute]:
        shell: list[BaseRoute] = [
            Route("/", self.home),
            Route("/login", self.login_page, methods=["GET"]),
            Route("/login", self.login, methods=["POST"]),
            Route("/logout", self.logout, methods=["POST"]),
            Route("/overview", self.overview, methods=["GET"]),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        ]
        return shell + [route for study in self.studies for route in study.routes()]

    def asgi(self, max_body: int) -> Starlette:
        """The ASGI app: the shell's and the studies' routes behind the security headers and the request-body cap."""
        middleware = [Middleware(SecurityHeaders), Middleware(BodyLimit, limit=max_body)]
        app = Starlette(routes=self.routes(), middleware=middleware)
        app.state.server = self
        return app


SHELL_PATHS = ("/", "/login", "/logout", "/overview", "/static")


def problem(status: int, detail: str) -> JSONResponse:
    """A JSON error: ``{"detail": ...}`` with ``status``."""
    return JSONResponse({"detail": detail}, status_code=status)
