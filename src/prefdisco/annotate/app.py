"""The annotation web app (Starlette, server-rendered pages plus one small vanilla-JS script).

Routes:

* ``GET /login``, ``POST /login`` (form: ``name``, plus ``token`` if tokens are set), ``POST /logout``;
* ``GET /annotate`` — redirects to the annotator's next unanswered item (or the overview when all are done);
* ``GET /annotate/{n}`` — item n: the task text and its candidate attributes, each with Yes/No;
* ``POST /annotate/{n}`` — plain HTML form fallback (fields ``label:<attribute>`` = ``1``/``0``);
* ``POST /api/annotations`` — JSON ``{"scenario_id": str, "labels": {attribute: true|false}}``, used by the
  page's script; answers ``{"saved", "completed", "total", "next"}``;
* ``GET /overview`` — every item with this annotator's status.

An invalid submission gets a 4xx with a one-line ``detail`` and changes nothing. All text is escaped by
jinja2's autoescape.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jinja2
from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from prefdisco.annotate.auth import NAME_RULE, CookieSigner, Tokens, valid_name
from prefdisco.annotate.middleware import MAX_BODY_BYTES, BodyLimit, SecurityHeaders
from prefdisco.annotate.sampling import DEFAULT_PER_SIDE, Item, annotator_order
from prefdisco.annotate.store import Store, SubmissionError
from prefdisco.errors import describe_validation_error

HERE = Path(__file__).parent
COOKIE = "prefdisco_annotator"
QUESTION = "Is this attribute relevant for personalizing a response to this specific task?"
LABEL_PREFIX = "label:"


class Submission(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scenario_id: str = Field(min_length=1, max_length=1000)
    labels: dict[str, StrictBool] = Field(min_length=1)


class AnnotationApp:
    """Request handlers bound to one store; the item set is read once (it never changes)."""

    def __init__(self, store: Store, tokens: Tokens, signer: CookieSigner) -> None:
        self.store = store
        self.tokens = tokens
        self.signer = signer
        self.items = store.items()
        self.by_position = {item.position: item for item in self.items}
        self.by_id = {item.scenario_id: item for item in self.items}
        self.per_side = int(store.meta().get("per_side", DEFAULT_PER_SIDE))
        self.templates = jinja2.Environment(
            loader=jinja2.FileSystemLoader(HERE / "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
        )

    # -- helpers --------------------------------------------------------------------------------------------

    def render(self, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = self.templates.get_template(template).render(question=QUESTION, **context)
        return HTMLResponse(html, status_code=status)

    def annotator(self, request: Request) -> str | None:
        name = self.signer.unsign(request.cookies.get(COOKIE))
        return name if name is not None and self.tokens.permits(name) else None

    def next_url(self, done: set[str], after: int = 0) -> str:
        """The first item not in ``done`` after position ``after`` (wrapping around), or the overview."""
        pending = [i.position for i in self.items if i.scenario_id not in done]
        if not pending:
            return "/overview"
        later = [p for p in pending if p > after]
        return f"/annotate/{(later or pending)[0]}"

    def save(self, annotator: str, item_id: str, labels: dict[str, bool]) -> dict[str, Any]:
        saved = self.store.submit(annotator, item_id, labels)
        done = self.store.completed(annotator)
        return {
            "saved": saved,
            "completed": len(done),
            "total": len(self.items),
            "next": self.next_url(done, after=self.by_id[item_id].position),
        }

    def login_redirect(self) -> RedirectResponse:
        return RedirectResponse("/login", status_code=303)

    # -- pages ----------------------------------------------------------------------------------------------

    def home(self, request: Request) -> Response:
        return RedirectResponse("/annotate" if self.annotator(request) else "/login", status_code=303)

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
            status, error = 303, None
        if error:
            return self.render("login.html", status=status, need_token=bool(self.tokens), error=error, name=name)
        response = RedirectResponse("/annotate", status_code=303)
        response.set_cookie(COOKIE, self.signer.sign(name), httponly=True, samesite="strict", path="/")
        return response

    def logout(self, request: Request) -> Response:
        response = self.login_redirect()
        response.delete_cookie(COOKIE, path="/")
        return response

    def annotate_next(self, request: Request) -> Response:
        annotator = self.annotator(request)
        if annotator is None:
            return self.login_redirect()
        return RedirectResponse(self.next_url(self.store.completed(annotator)), status_code=303)

    def item_page(self, request: Request) -> Response:
        annotator = self.annotator(request)
        if annotator is None:
            return self.login_redirect()
        item = self.by_position.get(request.path_params["position"])
        if item is None:
            return self.render("error.html", status=404, message="No such item.", annotator=annotator)
        return self.render_item(annotator, item)

    def render_item(self, annotator: str, item: Item, error: str | None = None, status: int = 200) -> Response:
        done = self.store.completed(annotator)
        return self.render(
            "item.html",
            status=status,
            annotator=annotator,
            item=item,
            candidates=annotator_order(item, annotator),
            answers=self.store.answers(annotator, item.scenario_id),
            total=len(self.items),
            completed=len(done),
            is_done=item.scenario_id in done,
            short=len(item.candidates) < 2 * self.per_side,
            full=2 * self.per_side,
            label_prefix=LABEL_PREFIX,
            error=error,
        )

    def overview(self, request: Request) -> Response:
        annotator = self.annotator(request)
        if annotator is None:
            return self.login_redirect()
        done = self.store.completed(annotator)
        return self.render(
            "overview.html",
            annotator=annotator,
            rows=[(item, item.scenario_id in done) for item in self.items],
            completed=len(done),
            total=len(self.items),
        )

    async def submit_form(self, request: Request) -> Response:
        annotator = self.annotator(request)
        if annotator is None:
            return self.login_redirect()
        item = self.by_position.get(request.path_params["position"])
        if item is None:
            return self.render("error.html", status=404, message="No such item.", annotator=annotator)
        form = await request.form()
        labels: dict[str, bool] = {}
        for key, value in form.multi_items():
            if not key.startswith(LABEL_PREFIX):
                continue
            attribute = key.removeprefix(LABEL_PREFIX)
            if value not in ("0", "1") or attribute in labels:
                message = f"Invalid answer for {attribute!r}."
                return await run_in_threadpool(self.render_item, annotator, item, message, 422)
            labels[attribute] = value == "1"
        try:
            result = await run_in_threadpool(self.save, annotator, item.scenario_id, labels)
        except SubmissionError as e:
            return await run_in_threadpool(self.render_item, annotator, item, str(e), e.status)
        return RedirectResponse(result["next"], status_code=303)

    # -- JSON API -------------------------------------------------------------------------------------------

    async def api_submit(self, request: Request) -> Response:
        annotator = self.annotator(request)
        if annotator is None:
            return _problem(401, "not logged in: open /login first")
        if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            return _problem(415, "expected Content-Type: application/json")
        body = await request.body()
        try:
            payload = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _problem(400, "request body is not valid JSON")
        try:
            submission = Submission.model_validate(payload)
        except ValidationError as e:
            return _problem(422, describe_validation_error(e, "request body"))
        try:
            result = await run_in_threadpool(self.save, annotator, submission.scenario_id, submission.labels)
        except SubmissionError as e:
            return _problem(e.status, str(e))
        return JSONResponse(result)


def _problem(status: int, detail: str) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status)


def create_app(db: Path, tokens: Tokens | None = None, max_body: int = MAX_BODY_BYTES) -> Starlette:
    """The ASGI app for an initialized annotation database (see ``service.prepare``)."""
    store = Store(db)
    store.require_items()
    handlers = AnnotationApp(store, tokens or Tokens(), CookieSigner())
    routes = [
        Route("/", handlers.home),
        Route("/login", handlers.login_page, methods=["GET"]),
        Route("/login", handlers.login, methods=["POST"]),
        Route("/logout", handlers.logout, methods=["POST"]),
        Route("/annotate", handlers.annotate_next, methods=["GET"]),
        Route("/annotate/{position:int}", handlers.item_page, methods=["GET"]),
        Route("/annotate/{position:int}", handlers.submit_form, methods=["POST"]),
        Route("/overview", handlers.overview, methods=["GET"]),
        Route("/api/annotations", handlers.api_submit, methods=["POST"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    middleware = [Middleware(SecurityHeaders), Middleware(BodyLimit, limit=max_body)]
    app = Starlette(routes=routes, middleware=middleware)
    app.state.handlers = handlers
    return app
