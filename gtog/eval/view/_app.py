"""`gtog eval view`'s web app: the runs under some folders, each run's questions, live.

A Starlette app, read-only. Pages are rendered with the report's own Jinja2 environment and
partials (gtog.eval.report._html: the score table, the answer with its judge reasons,
assertions, ToG tree and context, the diff table), so the viewer shows a run exactly as its
report does. Every handler that reads files is a plain function, which Starlette runs in its
thread pool: the event loop never waits on the disk.

What it serves and to whom:
- a run is found by its name in the catalog (gtog.eval.view._catalog), never by joining a
  URL to a path, so no `../`, encoded or symlinked path reaches outside the folders given;
  only the pages below and the packaged assets are served (no run file, no log);
- bound to another address than loopback, every request needs the random token of the
  printed URL (then kept in a same-site cookie); the Host header must name this server;
- every page goes out with a Content-Security-Policy that allows this origin's own style and
  script only (no CDN, no web fonts), and with the values of the environment's secrets
  (gtog._redact.environment_secrets: `*_KEY`, `*_TOKEN`, ...) masked.
"""

from __future__ import annotations

import hmac
import os
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import quote

from jinja2 import ChoiceLoader, PackageLoader
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from gtog._errors import InputError
from gtog._redact import Redactor, environment_secrets
from gtog.eval.report._html import ENVIRONMENT, _charts
from gtog.eval.report._page import _baseline
from gtog.eval.results._diff import diff_runs
from gtog.eval.results._labels import answer_hash
from gtog.eval.results._log import read_log
from gtog.eval.view._catalog import RunRef, find_runs
from gtog.eval.view._labelling import LabelRefused, label_page, post_label
from gtog.eval.view._rows import PAGE_ROWS, Filters, Row, filter_rows, rows_of
from gtog.eval.view._runs import Loaded, RunStore

__all__ = ["TOKEN_COOKIE", "ViewConfig", "allowed_hosts", "make_app", "new_token"]

TOKEN_COOKIE = "gtog_view_token"
_ASSETS = {
    "report.css": ("gtog.eval.report", "text/css"),
    "view.css": ("gtog.eval.view", "text/css"),
    "view.js": ("gtog.eval.view", "text/javascript"),
}
_CSP = (
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)

_ENV = ENVIRONMENT.overlay(
    loader=ChoiceLoader(
        [
            PackageLoader("gtog.eval.view", "templates"),
            PackageLoader("gtog.eval.report", "templates"),
        ]
    )
)


@dataclass(frozen=True)
class ViewConfig:
    """What the app serves and how it is reached."""

    roots: tuple[Path, ...]
    hosts: tuple[str, ...] = ("127.0.0.1", "localhost")
    token: str | None = None
    """Required on every request when set (bound to a non-loopback address)."""
    poll_ms: int = 2000
    """How often a running run's page asks whether it changed."""


def _env_secrets() -> Redactor:
    return Redactor(environment_secrets(os.environ))


class _TokenGate:
    """Lets a request through with the right token (query `token`, or the cookie it sets)."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app, self.token = app, token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.token is None or scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        given = request.query_params.get("token") or request.cookies.get(TOKEN_COOKIE) or ""
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            await Response("a token is needed: use the URL gtog eval view printed", 403)(
                scope, receive, send
            )
            return
        if request.query_params.get("token"):

            async def with_cookie(message: Any) -> None:
                if message["type"] == "http.response.start":
                    cookie = f"{TOKEN_COOKIE}={self.token}; Path=/; HttpOnly; SameSite=Strict"
                    message.setdefault("headers", []).append((b"set-cookie", cookie.encode()))
                await send(message)

            await self.app(scope, receive, with_cookie)
            return
        await self.app(scope, receive, send)


class _Viewer:
    """The handlers, over one catalog of runs and one store of loaded runs."""

    def __init__(self, config: ViewConfig) -> None:
        self.config = config
        self.store = RunStore()
        self.redact = _env_secrets()

    # -- helpers -------------------------------------------------------------------------
    def runs(self) -> dict[str, RunRef]:
        return find_runs(self.config.roots)

    def run(self, name: str) -> RunRef:
        ref = self.runs().get(name)
        if ref is None:
            raise _NotFound(f"no run named {name!r} under the folders given")
        return ref

    def page(self, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = _ENV.get_template(template).render(poll_ms=self.config.poll_ms, **context)
        return HTMLResponse(self.redact(html), status, headers=_HEADERS)

    def loaded(self, name: str) -> tuple[RunRef, Loaded]:
        ref = self.run(name)
        try:
            return ref, self.store.page(ref)
        except InputError as exc:
            raise _NotFound(str(exc)) from None

    # -- pages ---------------------------------------------------------------------------
    def index(self, request: Request) -> Response:
        runs = self.runs()
        cards = [self.store.card(ref) for ref in runs.values()]
        return self.page("runs.html", cards=cards, roots=[str(r) for r in self.config.roots])

    def run_page(self, request: Request) -> Response:
        name = request.path_params["name"]
        _, loaded = self.loaded(name)
        f, every = self._every_row(loaded, request)
        shown, total = _page_of(filter_rows(every, f), f)
        return self.page(
            "run.html",
            name=name,
            run=loaded,
            data=loaded.data,
            h=loaded.data.header,
            charts=_charts(loaded.data),
            f=f,
            filtered=replace(f, page=1) != Filters(metric=f.metric),
            rows=shown,
            total=total,
            pages=_pages(total),
            options=_options(loaded, every),
            others=[n for n in self.runs() if n != name],
        )

    def rows_fragment(self, request: Request) -> Response:
        name = request.path_params["name"]
        _, loaded = self.loaded(name)
        f, every = self._every_row(loaded, request)
        shown, total = _page_of(filter_rows(every, f), f)
        return self.page(
            "rows.html", name=name, run=loaded, f=f, rows=shown, total=total, pages=_pages(total)
        )

    def progress(self, request: Request) -> Response:
        _, loaded = self.loaded(request.path_params["name"])
        h = loaded.data.header
        body = {
            "version": loaded.version,
            "status": loaded.status,
            "stop_reason": loaded.stop_reason,
            "answers": h.answers,
            "done": loaded.done,
            "total": loaded.total,
            "search_failed": h.search_failed,
            "judge_failed": h.judge_failed,
            "spend": h.spend,
            "eta_s": loaded.eta_s,
        }
        return JSONResponse(body, headers=_HEADERS)

    def question(self, request: Request) -> Response:
        name = request.path_params["name"]
        _, loaded = self.loaded(name)
        qid = request.query_params.get("id", "")
        q = next((q for q in loaded.data.questions if q.qid == qid), None)
        if q is None:
            raise _NotFound(f"run {name!r} has no question {qid!r}")
        back = request.query_params.get("back", "")
        return self.page(
            "question.html", name=name, q=q, data=loaded.data, h=loaded.data.header, back=back
        )

    def compare(self, request: Request) -> Response:
        names = list(self.runs())
        a, b = request.query_params.get("a", ""), request.query_params.get("b", "")
        diff = None
        if a and b:
            ref_a, ref_b = self.run(a), self.run(b)
            try:
                diff = diff_runs(read_log(ref_a.path), read_log(ref_b.path))
            except InputError as exc:
                raise _NotFound(str(exc)) from None
        baseline = _baseline(diff, a) if diff is not None else None
        return self.page(
            "compare.html",
            names=names,
            a=a,
            b=b,
            data=SimpleNamespace(baseline=baseline),
            q_href=lambda qid: f"/question/{quote(b)}?id={quote(str(qid))}",
        )

    def label(self, request: Request) -> Response:
        name = request.path_params["name"]
        ref = self.run(name)
        try:
            page = label_page(ref, request)
        except InputError as exc:
            raise _NotFound(str(exc)) from None
        return self.page("label.html", name=name, p=page, hash_of=answer_hash)

    async def post_label(self, request: Request) -> Response:
        name = request.path_params["name"]
        body = await request.body()
        ref = self.run(name)
        headers = {k.lower(): v for k, v in request.headers.items()}
        host = request.headers.get("host", "")
        try:  # reads and appends a file: off the event loop
            line = await run_in_threadpool(post_label, ref, headers, host, body)
        except LabelRefused as exc:
            return JSONResponse({"ok": False, "error": str(exc)}, exc.status, headers=_HEADERS)
        return JSONResponse({"ok": True, "label": line.as_json()}, headers=_HEADERS)

    def asset(self, request: Request) -> Response:
        name = request.path_params["asset"]
        if name not in _ASSETS:
            raise _NotFound(f"no asset {name!r}")
        package, media = _ASSETS[name]
        folder = "assets"
        text = (resources.files(package) / folder / name).read_text(encoding="utf-8")
        return Response(text, media_type=media, headers=_HEADERS)

    def _every_row(self, loaded: Loaded, request: Request) -> tuple[Filters, list[Row]]:
        """The address's filters, and every (question, method) row on their metric."""
        f = Filters.from_query(request.query_params, loaded.data.primary)
        return f, rows_of(loaded.data.questions, loaded.detailed, f.metric)


_HEADERS = {
    "Content-Security-Policy": _CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class _NotFound(Exception):
    pass


def _pages(total: int) -> int:
    return max((total + PAGE_ROWS - 1) // PAGE_ROWS, 1)


def _page_of(rows: list[Row], f: Filters) -> tuple[list[Row], int]:
    """The rows of `f`'s page, and how many rows there are in all."""
    start = (f.page - 1) * PAGE_ROWS
    return rows[start : start + PAGE_ROWS], len(rows)


def _options(loaded: Loaded, rows: list[Row]) -> dict[str, list[str]]:
    """The values the filter form offers: methods, metrics, indexes, failure kinds (of
    `rows`, the run's every row)."""
    data = loaded.data
    return {
        "methods": list(data.header.methods),
        "metrics": list(data.header.metrics),
        "indexes": sorted({q.index_key for q in data.questions}),
        "errors": sorted({r.error for r in rows if r.error}),
        "groups": {g.field: list(g.values) for g in data.groups},  # type: ignore[dict-item]
    }


def make_app(config: ViewConfig) -> Starlette:
    """The viewer over `config.roots` (each an existing folder)."""
    viewer = _Viewer(config)

    def not_found(request: Request, exc: Exception) -> Response:
        return viewer.page("error.html", 404, message=str(exc))

    hosts = list(config.hosts)
    return Starlette(
        routes=[
            Route("/", viewer.index),
            Route("/favicon.ico", lambda request: Response(status_code=204)),
            Route("/assets/{asset}", viewer.asset),
            Route("/compare", viewer.compare),
            Route("/rows/{name:path}", viewer.rows_fragment),
            Route("/progress/{name:path}", viewer.progress),
            Route("/question/{name:path}", viewer.question),
            Route("/run/{name:path}", viewer.run_page),
            Route("/label/{name:path}", viewer.label),
            Route("/labels/{name:path}", viewer.post_label, methods=["POST"]),
        ],
        middleware=[
            Middleware(TrustedHostMiddleware, allowed_hosts=hosts),
            Middleware(_TokenGate, token=config.token),
        ],
        exception_handlers={_NotFound: not_found, 404: not_found},
    )


def new_token() -> str:
    """A random token for a viewer bound to a non-loopback address."""
    return secrets.token_urlsafe(18)


def allowed_hosts(host: str, extra: Iterable[str] = ()) -> tuple[str, ...]:
    """The names a request's Host header may carry (its port aside): loopback's and the
    address the viewer is bound to (a page that another name resolves here is refused)."""
    return tuple(sorted({"127.0.0.1", "localhost", host, *extra}))
