"""The dashboard's pages: fleet, server, diff, what the model sees, approvals, sign-in.

Every page reads through :mod:`app.service` (the functions the JSON endpoints use) and
checks the caller with :class:`app.api.security.Caller` (the API's scopes and server
globs). A server the caller may not read is answered exactly like an unknown one, so no
page, fragment or error tells it exists.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlencode

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.concurrency import run_in_threadpool

from app.api.problems import ApiError
from app.api.security import Caller, caller_for, grant_for_sha256, permit
from app.config import Settings, hash_token
from app.diff import DiffResult
from app.jsonio import parse_json, pretty_json
from app.lockfile import utc_now
from app.names import is_server_name
from app.problems import InputError
from app.service import (
    LIVE,
    Governance,
    ServiceError,
    fleet_status,
    input_schema_for,
    server_detail,
)
from app.store import CorruptLockfile, RefusedAttempt, UnknownVersion
from app.text import reveal
from app.ui import views
from app.ui.session import COOKIE, PATH, Session, Sessions

STATIC = Path(__file__).parent / "static"
FORM = "application/x-www-form-urlencoded"
MAX_FORM_BYTES = 64 * 1024
REFRESH_SECONDS = 10
SECURITY_HEADERS = {
    # Nothing from another host, no inline script: the page is what this package ships.
    "Content-Security-Policy": ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; "
                                "object-src 'none'"),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}

router = APIRouter(include_in_schema=False)


# -- state, callers and errors ------------------------------------------------------------


@dataclass
class UiState:
    templates: Environment
    sessions: Sessions


def _environment() -> Environment:
    env = Environment(loader=PackageLoader("app.ui", "templates"), autoescape=select_autoescape(["html"]),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["reveal"] = lambda text: reveal(text) if isinstance(text, str) else text
    env.filters["pretty"] = pretty_json
    env.filters["seg"] = lambda text: quote(str(text), safe="")
    env.globals.update(SEVERITIES=views.SEVERITIES, STATUSES=views.STATUSES, argument_of=views.argument_of,
                       instance_summary=views.instance_summary,
                       annotation_labels=views.annotation_labels, severity_rank=views.severity_rank,
                       urlencode=urlencode, LIVE=LIVE)
    return env


class SignIn(Exception):
    """The page needs a signed-in caller: answered with a redirect to the sign-in page."""


class PageProblem(Exception):
    """A refusal shown as a page (never problem+json: a person reads it)."""

    def __init__(self, status: int, title: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.title, self.detail = status, title, detail


@dataclass
class Visit:
    """One request to the dashboard: its session (made when missing) and its caller."""

    request: Request
    ui: UiState
    session: Session
    fresh: bool
    """The session is new: the response sets the cookie."""
    caller: Caller | None
    """None when tokens are configured and nobody is signed in."""

    @property
    def settings(self) -> Settings:
        return self.request.app.state.settings

    @property
    def gov(self) -> Governance:
        return self.request.app.state.governance

    def reader(self) -> Caller:
        """The caller, who must hold the read scope."""
        if self.caller is None:
            raise SignIn()
        try:
            return permit(self.caller, ("read",), None)
        except ApiError as exc:
            raise PageProblem(403, "Not allowed", exc.detail) from None

    def server(self, server: str) -> Caller:
        """A reader who may read ``server``; an unknown name, a bad name and a server the
        token does not cover all read as 'no such server'."""
        caller = self.reader()
        if not is_server_name(server) or not caller.covers(server) or server not in self.gov.store.servers():
            raise PageProblem(404, "No such server", f"There is no server {server!r} you may read.")
        return caller

    def may_approve(self, server: str | None = None) -> bool:
        caller = self.caller
        return caller is not None and caller.allows("approve") and (server is None or caller.covers(server))


def _visit(request: Request) -> Visit:
    ui: UiState = request.app.state.ui
    session = ui.sessions.loads(request.cookies.get(COOKIE))
    fresh = session is None
    if session is None:
        session = ui.sessions.new()
    settings: Settings = request.app.state.settings
    caller: Caller | None
    if not settings.auth_enabled:
        caller = Caller(None)
    else:
        grant = grant_for_sha256(settings.tokens, session.token_sha256) if session.token_sha256 else None
        caller = Caller(grant) if grant is not None else None
    return Visit(request, ui, session, fresh, caller)


@contextmanager
def _as_page() -> Iterator[None]:
    """Service refusals become pages with the same status and the same words."""
    try:
        yield
    except ServiceError as exc:
        raise PageProblem(exc.status, _title(exc.status), exc.detail) from None
    except InputError as exc:
        raise PageProblem(422, "Cannot use that", str(exc)) from None
    except UnknownVersion as exc:
        raise PageProblem(404, "Not found", str(exc)) from None
    except CorruptLockfile as exc:
        raise PageProblem(409, "Corrupt lockfile", str(exc)) from None


def _title(status: int) -> str:
    return {404: "Not found", 409: "Conflict", 412: "Out of date", 422: "Cannot use that"}.get(status, "Refused")


def _set_cookie(response: Response, visit: Visit, session: Session | None) -> None:
    secure = visit.request.url.scheme == "https"
    if session is None:
        response.delete_cookie(COOKIE, path=PATH, secure=secure, httponly=True, samesite="strict")
        return
    response.set_cookie(COOKIE, visit.ui.sessions.dumps(session), max_age=visit.ui.sessions.seconds, path=PATH,
                        secure=secure, httponly=True, samesite="strict")


def _finish(response: Response, visit: Visit) -> Response:
    response.headers.update(SECURITY_HEADERS)
    response.headers["Vary"] = "Cookie"
    if visit.fresh:
        _set_cookie(response, visit, visit.session)
    return response


def _render(visit: Visit, template: str, code: int = 200, **context: Any) -> Response:
    caller = visit.caller
    base = {
        "auth_enabled": visit.settings.auth_enabled,
        "caller": caller.name if caller is not None else None,
        "signed_in": caller is not None and caller.grant is not None,
        "csrf": visit.ui.sessions.csrf(visit.session),
        "path": visit.request.url.path,
        "may_approve_any": visit.may_approve(),
    }
    html = visit.ui.templates.get_template(template).render(**base, **context)
    return _finish(HTMLResponse(html, status_code=code), visit)


def _redirect(visit: Visit, url: str) -> Response:
    return _finish(RedirectResponse(url, status_code=303), visit)


def install_pages(app: FastAPI) -> None:
    settings: Settings = app.state.settings
    app.state.ui = UiState(_environment(), Sessions(settings.session_secret or secrets.token_urlsafe(48),
                                                    settings.session_seconds))
    app.mount("/ui/static", StaticFiles(directory=STATIC), name="ui-static")  # before the router's /ui/{rest}
    app.include_router(router)

    @app.exception_handler(SignIn)
    async def sign_in(request: Request, exc: SignIn) -> Response:
        visit = _visit(request)
        # Back to the page after signing in; a form sent with an expired session goes to the fleet.
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        if request.method != "GET":
            target = "/ui/"
        if request.headers.get("x-requested-with") == "fetch":
            return _finish(Response(status_code=401), visit)
        return _redirect(visit, f"/ui/login?{urlencode({'next': target})}")

    @app.exception_handler(PageProblem)
    async def page_problem(request: Request, exc: PageProblem) -> Response:
        return _render(_visit(request), "error.html", exc.status, title=exc.title, detail=exc.detail)


# -- forms ----------------------------------------------------------------------------------


async def _form(visit: Visit) -> dict[str, str]:
    """A posted form, refused unless it comes from one of our own pages: same origin (when
    the browser says), and the CSRF token of this session."""
    request = visit.request
    origin = request.headers.get("origin")
    own = f"{request.url.scheme}://{request.url.netloc}"
    if (origin is not None and origin != own) or request.headers.get("sec-fetch-site") == "cross-site":
        raise PageProblem(403, "Refused", "This form was sent from another site.")
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != FORM:
        raise PageProblem(415, "Refused", f"Forms are sent as {FORM}.")
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        raise PageProblem(413, "Refused", "This form is too large.")
    try:
        fields = parse_qs(body.decode("utf-8"), keep_blank_values=True, max_num_fields=20, strict_parsing=False)
    except (UnicodeDecodeError, ValueError):
        raise PageProblem(400, "Refused", "This form could not be read.") from None
    form = {key: values[0] for key, values in fields.items()}
    if visit.fresh or not visit.ui.sessions.csrf_ok(visit.session, form.get("csrf")):
        raise PageProblem(403, "Refused", "This form has expired or was not sent from this dashboard. "
                                          "Reload the page and send it again.")
    return form


def _local(target: str | None) -> str:
    """A redirect target that stays on the dashboard."""
    if not target or not target.startswith("/ui/") or target.startswith("//") or "\\" in target:
        return "/ui/"
    return target


# -- sign-in --------------------------------------------------------------------------------


@router.get("/")
def root() -> Response:
    return RedirectResponse("/ui/", status_code=307)


@router.get("/ui")
def ui_root() -> Response:
    return RedirectResponse("/ui/", status_code=307)


@router.get("/ui/login")
def login_page(visit: Visit = Depends(_visit), next: str = "/ui/") -> Response:
    if not visit.settings.auth_enabled:
        return _redirect(visit, _local(next))
    return _render(visit, "login.html", next=_local(next), error=None)


@router.post("/ui/login")
async def login(visit: Visit = Depends(_visit)) -> Response:
    if not visit.settings.auth_enabled:
        return _redirect(visit, "/ui/")
    form = await _form(visit)
    target = _local(form.get("next"))
    token = form.get("token", "").strip()
    try:
        caller = caller_for(visit.settings.tokens, f"Bearer {token}")
        permit(caller, ("read",), None)
    except ApiError as exc:
        error = ("That token is not valid." if exc.status == 401
                 else "That token may not read the dashboard (it needs the read scope).")
        return _render(visit, "login.html", 401 if exc.status == 401 else 403, next=target, error=error)
    # A new session id at sign-in: a session id known before it is worth nothing after.
    session = visit.ui.sessions.new(hash_token(token))
    response = RedirectResponse(target, status_code=303)
    response.headers.update(SECURITY_HEADERS)
    _set_cookie(response, visit, session)
    return response


@router.post("/ui/logout")
async def logout(visit: Visit = Depends(_visit)) -> Response:
    await _form(visit)
    response = RedirectResponse("/ui/login" if visit.settings.auth_enabled else "/ui/", status_code=303)
    response.headers.update(SECURITY_HEADERS)
    _set_cookie(response, visit, None)
    return response


# -- the fleet ------------------------------------------------------------------------------


def _fleet(visit: Visit) -> tuple[views.FleetQuery, views.FleetPage, str]:
    caller = visit.reader()
    with _as_page():
        query = views.FleetQuery.parse(visit.request.query_params)
    rows = fleet_status(visit.gov, caller.covers)
    page = views.fleet_page(rows, query)
    state = json.dumps([caller.name, query.params(), page.rows, page.total, page.matching, page.by_status],
                       sort_keys=True, default=str)
    etag = f'"{hashlib.sha256(state.encode("utf-8")).hexdigest()[:32]}"'
    return query, page, etag


@router.get("/ui/")
def fleet_page(visit: Visit = Depends(_visit), refresh: str = str(REFRESH_SECONDS)) -> Response:
    """The fleet; ``refresh`` (seconds, 2-3600) sets how often the table updates itself."""
    query, page, etag = _fleet(visit)
    if not refresh.isdigit() or not 2 <= int(refresh) <= 3600:
        raise PageProblem(422, "Cannot use that", "refresh: expected a number of seconds from 2 to 3600")
    return _render(visit, "fleet.html", query=query, page=page, etag=etag, refresh_seconds=int(refresh),
                   rows_url=query.url("/ui/fleet/rows"), generated_at=utc_now())


@router.get("/ui/fleet/rows")
def fleet_rows(visit: Visit = Depends(_visit)) -> Response:
    """The fleet table alone, for the page's refresh: 304 while nothing changed."""
    query, page, etag = _fleet(visit)
    if visit.request.headers.get("if-none-match") == etag:
        return _finish(Response(status_code=304, headers={"ETag": etag}), visit)
    response = _render(visit, "_fleet_table.html", query=query, page=page, generated_at=utc_now())
    response.headers["ETag"] = etag
    return response


# -- one server -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolView:
    name: str
    title: str | None
    description: str | None
    annotations: list[str]
    arguments: list[tuple[str | None, list[views.ArgumentRow]]]
    """(action, rows) per action of a grouped tool; one (None, rows) for a plain tool."""
    live: Mapping[str, Any] | None


def _tool_views(visit: Visit, server: str, statuses: list[dict[str, Any]]) -> list[ToolView]:
    with _as_page():
        current = visit.gov.current(server)
    if current is None:
        return []
    live = {row["tool"]: row for row in statuses}
    out = []
    for name, tool in sorted(current.surface.tools.items()):
        arguments: list[tuple[str | None, list[views.ArgumentRow]]]
        if tool.actions:
            arguments = [(action, views.argument_rows(input_schema_for(tool, action))) for action in tool.actions]
        else:
            arguments = [(None, views.argument_rows(tool.input_schema))]
        title = tool.title or (tool.annotations or {}).get("title")
        out.append(ToolView(name, title if isinstance(title, str) else None, tool.description,
                            views.annotation_labels(tool.annotations), arguments, live.get(name)))
    return out


@router.get("/ui/servers/{server}")
def server_page(server: str, visit: Visit = Depends(_visit), approved: int | None = None) -> Response:
    visit.server(server)
    with _as_page():
        detail = server_detail(visit.gov, server)
        attempts = visit.gov.refused_attempts(server)
    tools = _tool_views(visit, server, detail.tools) if detail.status["status"] != "corrupt" else []
    live_only = [row for row in detail.tools if row["status"] == "added"]
    return _render(visit, "server.html", server=server, status=detail.status, history=list(reversed(detail.history)),
                   tools=tools, tool_rows=detail.tools, live_only=live_only, attempts=attempts,
                   may_approve=visit.may_approve(server), approved=approved)


def _ref(value: str | None, name: str) -> int | str | None:
    if value is None or value == "":
        return None
    if value == LIVE:
        return LIVE
    if value.isdigit() and int(value) >= 1:
        return int(value)
    raise PageProblem(422, "Cannot use that", f"{name}: expected a version number or 'live', not {value!r}")


@router.get("/ui/servers/{server}/diff")
def diff_page(server: str, visit: Visit = Depends(_visit)) -> Response:
    visit.server(server)
    params = visit.request.query_params
    before, after = _ref(params.get("from"), "from"), _ref(params.get("to"), "to")
    severities = [value for value in params.getlist("severity") if value]
    unknown = [value for value in severities if value not in views.SEVERITIES]
    if unknown:
        raise PageProblem(422, "Cannot use that", f"severity: unknown severity {unknown[0]!r} "
                                                  f"(one of: {', '.join(views.SEVERITIES)})")
    with _as_page():
        history = visit.gov.history(server)
        live = visit.gov.live_view(server)
        current = history[-1].version if history else None
        if before is None and after is None:
            if live is not None and live.record.lock_version is not None:
                before, after = live.record.lock_version, LIVE
            elif len(history) >= 2:
                before, after = history[-2].version, history[-1].version
            elif history:
                before, after = history[-1].version, history[-1].version
        if before is None or after is None:
            raise PageProblem(404, "Nothing to compare", f"{server!r} has no version to compare yet: give from and to.")
        result: DiffResult = visit.gov.compare(server, before, after)
    shown = severities or list(views.SEVERITIES)
    data = result.to_json()
    share = [("from", before), ("to", after), *(("severity", s) for s in severities)]
    return _render(visit, "diff.html", server=server, before=before, after=after, versions=history,
                   share_url=f"/ui/servers/{server}/diff?{urlencode(share)}",
                   has_live=live is not None, current=current, result=data, shown=shown,
                   groups=views.group_deltas(data["deltas"], shown))


@router.get("/ui/servers/{server}/awareness")
def awareness_page(server: str, visit: Visit = Depends(_visit)) -> Response:
    """What a model is told: the <contract_awareness> the API returns for a tool now, and
    the <validation_error> for arguments typed into the form."""
    visit.server(server)
    params = visit.request.query_params
    tool = params.get("tool", "")
    raw_max = params.get("max", "5") or "5"
    if not raw_max.isdigit() or not 1 <= int(raw_max) <= 20:
        raise PageProblem(422, "Cannot use that", "max: expected a number from 1 to 20")
    limit = int(raw_max)
    arguments_text = params.get("arguments")
    gov = visit.gov
    with _as_page():
        names: dict[str, list[str]] = {}
        sources = [gov.live_surface(server)]
        try:
            current = gov.current(server)
        except ServiceError:
            current = None
        sources.append(current.surface if current else None)
        for surface in sources:
            for name, spec in (surface.tools.items() if surface else ()):
                names.setdefault(name, list(spec.actions))
        options: list[tuple[str, str | None]] = [(name, None) for name in sorted(names)]
        options = sorted(options + [(f"{name}.{action}", name) for name in names for action in names[name]])
    section: str | None = None
    problem: str | None = None
    valid: bool | None = None
    error_xml = ""
    arguments_problem: str | None = None
    if tool:
        try:
            section = gov.awareness(server, tool, None, limit)
        except ServiceError as exc:
            problem = exc.detail
        if arguments_text is not None and problem is None:
            try:
                arguments = parse_json(arguments_text.encode("utf-8"), "arguments")
                valid, error_xml = gov.validation_error(server, tool, None, arguments=arguments, max_changes=limit)
            except InputError as exc:
                arguments_problem = str(exc)
            except ServiceError as exc:
                arguments_problem = exc.detail
    status = 404 if problem else (422 if arguments_problem else 200)
    return _render(visit, "awareness.html", status, server=server, tool=tool, limit=limit, options=options,
                   section=section, problem=problem, arguments=arguments_text, valid=valid, error_xml=error_xml,
                   arguments_problem=arguments_problem)


# -- approvals ------------------------------------------------------------------------------


@router.get("/ui/approvals")
def approvals_page(visit: Visit = Depends(_visit)) -> Response:
    caller = visit.reader()
    found: list[RefusedAttempt] = []
    for server in visit.gov.store.servers():
        if caller.covers(server):
            try:
                found.extend(visit.gov.refused_attempts(server))
            except ServiceError:
                continue  # a corrupt server has nothing approvable; its own page says why
    found.sort(key=lambda a: a.attempted_at, reverse=True)
    return _render(visit, "approvals.html", attempts=found)


ATTEMPT_SEVERITIES = ("BREAKING", "RISKY")
"""What a reviewer sees of a refused lock unless they ask for every change."""


def _attempt_page(visit: Visit, server: str, attempt_id: str, status: int = 200, **extra: Any) -> Response:
    with _as_page():
        attempt = visit.gov.refused_attempt(server, attempt_id)
        data = visit.gov.refused_diff(attempt).to_json()
    every = visit.request.query_params.get("all") == "1"
    shown = views.SEVERITIES if every else ATTEMPT_SEVERITIES
    context = {"reason": "", "approved_by": "", "error": None, **extra}
    return _render(visit, "attempt.html", status, server=server, attempt=attempt, result=data, every=every,
                   shown_count=sum(1 for d in data["deltas"] if d["severity"] in shown),
                   groups=views.group_deltas(data["deltas"], shown),
                   may_approve=visit.may_approve(server), **context)


@router.get("/ui/servers/{server}/attempts/{attempt_id}")
def attempt_page(server: str, attempt_id: str, visit: Visit = Depends(_visit)) -> Response:
    visit.server(server)
    return _attempt_page(visit, server, attempt_id)


@router.post("/ui/servers/{server}/attempts/{attempt_id}/approve")
async def approve(server: str, attempt_id: str, visit: Visit = Depends(_visit)) -> Response:
    caller = await run_in_threadpool(visit.server, server)
    if not visit.may_approve(server):
        raise PageProblem(403, "Not allowed", "Approving needs a token with the approve scope.")
    form = await _form(visit)
    reason = form.get("reason", "")
    approver = caller.name if caller.grant is not None else form.get("approved_by", "")
    try:
        outcome = await run_in_threadpool(visit.gov.approve_refused, server, attempt_id, approver or "", reason)
    except (InputError, ServiceError) as exc:
        status = exc.status if isinstance(exc, ServiceError) else 422
        detail = exc.detail if isinstance(exc, ServiceError) else str(exc)
        if status in (404, 412):
            raise PageProblem(status, _title(status), detail) from None
        return await run_in_threadpool(_attempt_page, visit, server, attempt_id, status, reason=reason,
                                       approved_by=form.get("approved_by", ""), error=detail)
    return _redirect(visit, f"/ui/servers/{server}?{urlencode({'approved': outcome.record.version})}")


@router.get("/ui/{rest:path}")
def not_found(rest: str, visit: Visit = Depends(_visit)) -> Response:
    visit.reader()
    raise PageProblem(404, "Not found", "There is no such page.")
