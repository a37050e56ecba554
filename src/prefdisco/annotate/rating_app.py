"""The response-rating web app (Starlette): the same login, cookie, tokens and middleware as the attribute app.

Routes:

* ``GET /login``, ``POST /login`` (form: ``name``, plus ``token`` if tokens are set), ``POST /logout``;
* ``GET /rate`` — redirects to the annotator's next unrated item (or the overview when all are rated);
* ``GET /rate/{n}`` — item n: the problem, the response, one criterion with its five level anchors, a 1–5 choice;
* ``POST /rate/{n}`` — plain HTML form fallback (field ``score`` = ``1`` … ``5``);
* ``POST /api/ratings`` — JSON ``{"position": int, "score": int}``, used by the page's script; answers
  ``{"saved", "completed", "total", "next"}``;
* ``GET /overview`` — every item with this annotator's status.

The pages are blind: they show neither the judge's score (the store does not hold it) nor the model or the
condition that wrote the response. An invalid submission gets a 4xx with a one-line ``detail`` and changes
nothing. All text is escaped by jinja2's autoescape.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jinja2
from pydantic import BaseModel, ConfigDict, StrictInt, ValidationError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from prefdisco.annotate.app import COOKIE
from prefdisco.annotate.auth import NAME_RULE, CookieSigner, Tokens, valid_name
from prefdisco.annotate.middleware import MAX_BODY_BYTES, BodyLimit, SecurityHeaders
from prefdisco.annotate.rating_items import RatingItem
from prefdisco.annotate.rating_store import RatingStore
from prefdisco.annotate.store import SubmissionError
from prefdisco.errors import describe_validation_error

HERE = Path(__file__).parent
QUESTION = "How well does the response meet this criterion, for this user?"


class RatingSubmission(BaseModel):
    model_config = ConfigDict(extra="forbid")

    position: StrictInt
    score: StrictInt


class RatingApp:
    """Request handlers bound to one store; the item set is read once (it never changes)."""

    def __init__(self, store: RatingStore, tokens: Tokens, signer: CookieSigner) -> None:
        self.store = store
        self.tokens = tokens
        self.signer = signer
        self.items = store.rating_items()
        self.by_position = {item.position: item for item in self.items}
        self.templates = jinja2.Environment(
            loader=jinja2.FileSystemLoader(HERE / "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
        )

    def render(self, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = self.templates.get_template(template).render(question=QUESTION, **context)
        return HTMLResponse(html, status_code=status)

    def annotator(self, request: Request) -> str | None:
        name = self.signer.unsign(request.cookies.get(COOKIE))
        return name if name is not None and self.tokens.permits(name) else None

    def next_url(self, done: set[int], after: int = 0) -> str:
        """The first unrated item after position ``after`` (wrapping around), or the overview."""
        pending = [i.position for i in self.items if i.position not in done]
        if not pending:
            return "/overview"
        later = [p for p in pending if p > after]
        return f"/rate/{(later or pending)[0]}"

    def save(self, annotator: str, position: int, score: int) -> dict[str, Any]:
        self.store.rate(annotator, position, score)
        done = set(self.store.rated(annotator))
        return {"saved": 1, "completed": len(done), "total": len(self.items), "next": self.next_url(done, position)}

    def login_redirect(self) -> RedirectResponse:
        return RedirectResponse("/login", status_code=303)

    # -- pages ----------------------------------------------------------------------------------------------

    def home(self, request: Request) -> Response:
        return RedirectResponse("/rate" if self.annotator(request) else "/login", status_code=303)

    def login_page(self, request: Request) -> Response:
        return self.render("rate_login.html", need_token=bool(self.tokens), error=None, name="")

    async def login(self, request: Request) -> Response:
        form = await request.form()
        name = str(form.get("name") or "").strip()
        token = str(form.get("token") or "")
        if not valid_name(name):
            status, error = 400, f"Please enter a name: {NAME_RULE}."
        elif not self.tokens.allows(name, token):
            status, error = 403, "Unknown annotator or wrong access token."
        else:
            response = RedirectResponse("/rate", status_code=303)
            response.set_cookie(COOKIE, self.signer.sign(name), httponly=True, samesite="strict", path="/")
            return response
        return self.render("rate_login.html", status=status, need_token=bool(self.tokens), error=error, name=name)

    def logout(self, request: Request) -> Response:
        response = self.login_redirect()
        response.delete_cookie(COOKIE, path="/")
        return response

    def rate_next(self, request: Request) -> Response:
        annotator = self.annotator(request)
        if annotator is None:
            return self.login_redirect()
        return RedirectResponse(self.next_url(set(self.store.rated(annotator))), status_code=303)

    def item_page(self, request: Request) -> Response:
        annotator = self.annotator(request)
        if annotator is None:
            return self.login_redirect()
        item = self.by_position.get(request.path_params["position"])
        if item is None:
            return self.render("rate_error.html", status=404, message="No such item.", annotator=annotator)
        return self.render_item(annotator, item)

    def render_item(self, annotator: str, item: RatingItem, error: str | None = None, status: int = 200) -> Response:
        rated = self.store.rated(annotator)
        return self.render(
            "rate.html",
            status=status,
            annotator=annotator,
            item=item,
            levels=list(enumerate(item.levels, start=1)),
            current=rated.get(item.position),
            total=len(self.items),
            completed=len(rated),
            error=error,
        )

    def overview(self, request: Request) -> Response:
        annotator = self.annotator(request)
        if annotator is None:
            return self.login_redirect()
        rated = self.store.rated(annotator)
        return self.render(
            "rate_overview.html",
            annotator=annotator,
            rows=[(item, item.position in rated) for item in self.items],
            completed=len(rated),
            total=len(self.items),
        )

    async def submit_form(self, request: Request) -> Response:
        annotator = self.annotator(request)
        if annotator is None:
            return self.login_redirect()
        item = self.by_position.get(request.path_params["position"])
        if item is None:
            return self.render("rate_error.html", status=404, message="No such item.", annotator=annotator)
        value = str((await request.form()).get("score") or "")
        if value not in ("1", "2", "3", "4", "5"):
            message = "Please choose a score from 1 to 5."
            return await run_in_threadpool(self.render_item, annotator, item, message, 422)
        result = await run_in_threadpool(self.save, annotator, item.position, int(value))
        return RedirectResponse(result["next"], status_code=303)

    # -- JSON API -------------------------------------------------------------------------------------------

    async def api_submit(self, request: Request) -> Response:
        annotator = self.annotator(request)
        if annotator is None:
            return _problem(401, "not logged in: open /login first")
        if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            return _problem(415, "expected Content-Type: application/json")
        try:
            payload = json.loads(await request.body())
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _problem(400, "request body is not valid JSON")
        try:
            submission = RatingSubmission.model_validate(payload)
        except ValidationError as e:
            return _problem(422, describe_validation_error(e, "request body"))
        try:
            result = await run_in_threadpool(self.save, annotator, submission.position, submission.score)
        except SubmissionError as e:
            return _problem(e.status, str(e))
        return JSONResponse(result)


def _problem(status: int, detail: str) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status)


def create_rating_app(db: Path, tokens: Tokens | None = None, max_body: int = MAX_BODY_BYTES) -> Starlette:
    """The ASGI app for a database holding response-rating items (see ``rating_service.prepare_ratings``)."""
    store = RatingStore(db)
    store.require_rating_items()
    handlers = RatingApp(store, tokens or Tokens(), CookieSigner())
    routes = [
        Route("/", handlers.home),
        Route("/login", handlers.login_page, methods=["GET"]),
        Route("/login", handlers.login, methods=["POST"]),
        Route("/logout", handlers.logout, methods=["POST"]),
        Route("/rate", handlers.rate_next, methods=["GET"]),
        Route("/rate/{position:int}", handlers.item_page, methods=["GET"]),
        Route("/rate/{position:int}", handlers.submit_form, methods=["POST"]),
        Route("/overview", handlers.overview, methods=["GET"]),
        Route("/api/ratings", handlers.api_submit, methods=["POST"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    middleware = [Middleware(SecurityHeaders), Middleware(BodyLimit, limit=max_body)]
    app = Starlette(routes=routes, middleware=middleware)
    app.state.handlers = handlers
    return app
