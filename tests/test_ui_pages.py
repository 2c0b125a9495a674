"""The dashboard without a browser (FastAPI TestClient, so JavaScript plays no part): every
view reads with plain HTML, shows what the JSON API says, asks for a token once and keeps
a hardened session cookie, never names a server the token does not cover, refuses forms
from elsewhere, and lets only approvers approve."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.api import create_app
from app.config import Settings
from app.ui.routes import SECURITY_HEADERS
from app.ui.session import COOKIE
from tests.helpers_service import V1, V2_BREAKING, bearer, lock
from tests.helpers_ui import (
    UI_GRANTS,
    UI_TOKENS,
    audit,
    csrf_of,
    populate,
    pre_text,
    sign_in,
    visible_text,
)

# -- fixtures -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def open_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FastAPI, dict[str, str]]]:
    """No tokens configured (the service is open), populated once; read-only tests only."""
    app = create_app(Settings(lockfiles=tmp_path_factory.mktemp("open") / "lockfiles"))
    with TestClient(app) as client:
        yield app, populate(client, auth=False)


@pytest.fixture
def browser(open_app: tuple[FastAPI, dict[str, str]]) -> TestClient:
    return TestClient(open_app[0], follow_redirects=False)


@pytest.fixture(scope="module")
def auth_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FastAPI, dict[str, str]]]:
    app = create_app(Settings(lockfiles=tmp_path_factory.mktemp("auth") / "lockfiles", tokens=UI_GRANTS))
    with TestClient(app) as client:
        yield app, populate(client, auth=True)


@pytest.fixture
def as_token(auth_app: tuple[FastAPI, dict[str, str]]) -> Callable[[str], TestClient]:
    """A fresh browser signed in with one of the test tokens."""

    def make(name: str) -> TestClient:
        client = TestClient(auth_app[0], follow_redirects=False)
        assert sign_in(client, name).status_code == 303
        return client

    return make


def fresh_auth_app(tmp_path: Path) -> tuple[TestClient, dict[str, str]]:
    """A store of its own, for tests that change it."""
    app = create_app(Settings(lockfiles=tmp_path / "lockfiles", tokens=UI_GRANTS))
    client = TestClient(app, follow_redirects=False)
    return client, populate(client, auth=True)


# -- reading, with no JavaScript ------------------------------------------------------------


def test_the_root_and_ui_redirect_to_the_fleet(browser: TestClient):
    for path in ("/", "/ui"):
        response = browser.get(path)
        assert response.status_code == 307 and response.headers["location"] == "/ui/"
    assert browser.get("/dashboard", headers={"Accept": "text/html"}).headers["content-type"].startswith(
        "application/json")  # the JSON endpoint stays JSON


def test_the_fleet_lists_every_server_drifted_breaking_first(browser: TestClient):
    page = browser.get("/ui/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    rows = re.findall(r'<tr class="row-([a-z-]+)[^"]*" data-server="([^"]+)"', page.text)
    assert [server for _, server in rows] == ["billing", "filesystem", "github"]
    assert {server: status for status, server in rows} == {
        "billing": "drifted", "filesystem": "drifted", "github": "unreported"}
    billing_row = page.text.split('data-server="billing"')[1].split("</tr>")[0]
    assert ">BREAKING<" in billing_row and ">drifted<" in billing_row and "v1" in billing_row
    assert "first release" not in billing_row  # the reason is on the server page, not the fleet
    dashboard = {row["server"]: row for row in browser.get("/dashboard").json()["servers"]}
    for server, row in dashboard.items():  # the page shows the JSON dashboard's own status
        assert f'data-server="{server}"' in page.text
        cells = page.text.split(f'data-server="{server}"')[1].split("</tr>")[0]
        assert f'>{row["status"]}<' in cells
        if row["status"] in ("drifted", "in-sync"):
            assert f'>{row["maxSeverity"] or "none"}<' in cells
        else:  # nothing reported, nothing graded: no "none" that reads as "no change"
            assert "no live drift to grade" in cells and "badge sev-" not in cells


@pytest.mark.parametrize(("query", "expected"), [
    ("status=unreported", ["github"]),
    ("severity=BREAKING", ["billing", "filesystem"]),
    ("severity=none", ["github"]),
    ("name=bill", ["billing"]),
    ("name=*sys*", ["filesystem"]),
    ("sort=name&dir=desc", ["github", "filesystem", "billing"]),
    ("status=in-sync", []),
])
def test_the_fleet_filters_and_orders_in_the_url(browser: TestClient, query: str, expected: list[str]):
    page = browser.get(f"/ui/?{query}")
    assert page.status_code == 200
    assert re.findall(r'data-server="([^"]+)"', page.text) == expected
    if not expected:
        assert "No server matches these filters." in page.text


@pytest.mark.parametrize(("query", "field"), [("status=lost", "status"), ("severity=BAD", "severity"),
                                              ("sort=colour", "sort"), ("page=0", "page"), ("dir=up", "dir")])
def test_a_bad_filter_is_a_422_page_naming_the_field(browser: TestClient, query: str, field: str):
    page = browser.get(f"/ui/?{query}")
    assert page.status_code == 422 and page.headers["content-type"].startswith("text/html")
    assert f"{field}:" in page.text and "Traceback" not in page.text


def test_the_fleet_table_refreshes_with_etags(browser: TestClient, open_app: tuple[FastAPI, dict[str, str]]):
    page = browser.get("/ui/")
    etag = re.search(r'data-etag="([^"]+)"', page.text)
    assert etag is not None
    url = re.search(r'data-refresh-url="([^"]+)"', page.text)
    assert url is not None and url.group(1) == "/ui/fleet/rows"
    rows = browser.get("/ui/fleet/rows")
    assert rows.status_code == 200 and rows.headers["etag"] == html.unescape(etag.group(1))
    assert "<html" not in rows.text and 'data-server="billing"' in rows.text
    assert browser.get("/ui/fleet/rows", headers={"If-None-Match": rows.headers["etag"]}).status_code == 304
    filtered = browser.get("/ui/fleet/rows?status=unreported")
    assert filtered.headers["etag"] != rows.headers["etag"]
    assert re.findall(r'data-server="([^"]+)"', filtered.text) == ["github"]


def test_the_fleet_etag_changes_when_a_server_reports(tmp_path: Path):
    with TestClient(create_app(Settings(lockfiles=tmp_path)), follow_redirects=False) as client:
        lock(client, V1)
        first = client.get("/ui/fleet/rows").headers["etag"]
        assert client.get("/ui/fleet/rows", headers={"If-None-Match": first}).status_code == 304
        client.put("/servers/billing/live", json=V2_BREAKING)
        again = client.get("/ui/fleet/rows", headers={"If-None-Match": first})
        assert again.status_code == 200 and again.headers["etag"] != first and ">drifted<" in again.text


def test_the_server_page_has_tools_arguments_history_and_drift(browser: TestClient):
    page = browser.get("/ui/servers/billing")
    assert page.status_code == 200
    text = re.sub(r">\s+<", "><", page.text)
    # the lock's tools with their argument tables (from the input schema)
    assert 'id="tool-get_invoice"' in text and 'id="tool-list_invoices"' in text
    get_invoice = text.split('id="tool-get_invoice"')[1].split("</details>")[0]
    assert "<code>id</code></th><td>string</td><td>required</td>" in get_invoice
    list_invoices = text.split('id="tool-list_invoices"')[1].split("</details>")[0]
    assert "<code>limit</code></th><td>integer</td><td>optional</td><td>≤ 50</td>" in list_invoices
    # history: who, when, reason, commit
    history = text.split('id="history"')[1]
    assert "v1" in history and "first release" in history and "c0ffee1" in history
    # live drift and the way to the diff
    assert ">drifted<" in text and "/ui/servers/billing/diff?from=1&amp;to=live" in text
    # the refused attempt is listed (auth is off: anyone may approve)
    assert "release 2" in text and "badc0de" in text and "/ui/servers/billing/attempts/" in text


def test_the_diff_page_shows_argument_level_deltas_grouped_by_tool(browser: TestClient):
    page = browser.get("/ui/servers/filesystem/diff?from=2&to=live")
    assert page.status_code == 200
    tool = page.text.split("Tool <code>read_multiple_files</code></h3>")[1].split("</section>")[0]
    breaking = tool.split('data-severity="BREAKING"')[1].split("</li>")[0]
    assert '<code class="argument">paths</code>' in breaking
    assert "<dt>Before</dt>" in breaking and "<dt>After</dt>" in breaking and "<dt>Fix</dt>" in breaking
    assert "input.bound.tightened" in breaking
    # the same deltas as the engine's diff of the lock against the live surface
    live = browser.get("/dashboard/servers/filesystem").json()["server"]
    assert live["status"] == "drifted"
    rules = re.findall(r'data-severity="(\w+)" data-rule="([^"]+)"', page.text)
    assert sum(1 for severity, _ in rules if severity == "BREAKING") == live["counts"]["BREAKING"]
    assert len(rules) == sum(live["counts"].values())


def test_the_diff_page_filters_by_severity_and_links_are_pasteable(browser: TestClient):
    page = browser.get("/ui/servers/filesystem/diff?from=2&to=live&severity=BREAKING")
    severities = set(re.findall(r'data-severity="(\w+)"', page.text))
    assert severities == {"BREAKING"}
    assert 'href="/ui/servers/filesystem/diff?from=2&amp;to=live&amp;severity=BREAKING"' in page.text
    versions = browser.get("/ui/servers/filesystem/diff?from=1&to=2")
    assert versions.status_code == 200 and "filesystem: v1 → v2" in versions.text
    default = browser.get("/ui/servers/filesystem/diff")
    assert "filesystem: v2 → live" in default.text


@pytest.mark.parametrize(("query", "status", "words"), [
    ("from=x&to=2", 422, "from: expected a version number or 'live'"),
    ("from=1&to=9", 404, "no version 9"),
    ("from=1&to=2&severity=HUGE", 422, "severity: unknown severity"),
])
def test_diff_refusals_are_pages(browser: TestClient, query: str, status: int, words: str):
    page = browser.get(f"/ui/servers/filesystem/diff?{query}")
    assert page.status_code == status and words in html.unescape(page.text) and "Traceback" not in page.text


def test_the_awareness_preview_is_the_apis_section_byte_for_byte(browser: TestClient):
    for tool in ("get_invoice", "list_invoices"):
        api = browser.get(f"/servers/billing/awareness?tool={tool}&max=3")
        page = browser.get(f"/ui/servers/billing/awareness?tool={tool}&max=3")
        assert page.status_code == 200
        if api.status_code == 204:
            assert pre_text(page.text, "awareness-section") is None and 'id="awareness-empty"' in page.text
        else:
            assert api.status_code == 200
            assert pre_text(page.text, "awareness-section") == api.text
    api = browser.get("/servers/filesystem/awareness?tool=read_multiple_files")
    page = browser.get("/ui/servers/filesystem/awareness?tool=read_multiple_files")
    assert api.status_code == 200 and pre_text(page.text, "awareness-section") == api.text


def test_the_try_a_call_form_shows_the_apis_validation_error(browser: TestClient):
    arguments = '{"paths": []}'
    api = browser.post("/servers/filesystem/validation-error",
                       json={"tool": "read_multiple_files", "arguments": {"paths": []}})
    assert api.status_code == 200 and api.json()["valid"] is False
    page = browser.get(f"/ui/servers/filesystem/awareness?tool=read_multiple_files&arguments={quote(arguments)}")
    assert page.status_code == 200
    assert pre_text(page.text, "validation-error") == api.json()["xml"]
    valid = quote('{"paths": ["a"]}')
    ok = browser.get(f"/ui/servers/filesystem/awareness?tool=read_multiple_files&arguments={valid}")
    assert 'id="validation-ok"' in ok.text
    bad = browser.get("/ui/servers/filesystem/awareness?tool=read_multiple_files&arguments=%7Bnope")
    assert bad.status_code == 422 and "arguments" in pre_or_problem(bad.text)


def pre_or_problem(page: str) -> str:
    match = re.search(r'id="arguments-problem">(.*?)</p>', page, re.S)
    return match.group(1) if match else ""


def test_an_unknown_tool_says_so(browser: TestClient):
    page = browser.get("/ui/servers/billing/awareness?tool=nope")
    assert page.status_code == 404 and "unknown tool" in page.text


def test_hidden_characters_are_shown_not_hidden(tmp_path: Path):
    poisoned = {"tools": [{"name": "fetch", "description": "Fetch\u200b it\u202e now",
                           "inputSchema": {"type": "object"}}]}
    with TestClient(create_app(Settings(lockfiles=tmp_path)), follow_redirects=False) as client:
        assert lock(client, poisoned, server="sneaky", approved_by="alice").status_code == 201
        page = client.get("/ui/servers/sneaky").text
    assert "Fetch[U+200B] it[U+202E] now" in page and "\u200b" not in page and "\u202e" not in page


def test_unknown_pages_and_servers_are_404_pages(browser: TestClient):
    for path in ("/ui/nothing-here", "/ui/servers/nobody", "/ui/servers/bad%20name/diff",
                 "/ui/servers/billing/attempts/0123456789abcdef"):
        page = browser.get(path)
        assert page.status_code == 404, path
        assert page.headers["content-type"].startswith("text/html")


def test_every_page_is_labelled_has_one_h1_and_security_headers(browser: TestClient,
                                                               open_app: tuple[FastAPI, dict[str, str]]):
    attempt = open_app[1]["billing"]
    for path in ("/ui/", "/ui/servers/billing", "/ui/servers/filesystem/diff?from=2&to=live",
                 "/ui/servers/filesystem/awareness?tool=read_multiple_files&arguments=%7B%7D",
                 "/ui/approvals", f"/ui/servers/billing/attempts/{attempt}", "/ui/nothing"):
        page = browser.get(path)
        assert audit(page.text) == [], path
        for header, value in SECURITY_HEADERS.items():
            assert page.headers[header] == value, (path, header)
        assert not re.search(r'(?:src|href|action)="(?:https?:)?//', page.text), path  # nothing from elsewhere


def test_badge_and_text_colours_meet_wcag_aa():
    css = (Path(__file__).parent.parent / "app/ui/static/ui.css").read_text()
    pairs = re.findall(r"\{\s*background:\s*(#[0-9a-f]{6});\s*color:\s*(#[0-9a-f]{6});", css)
    assert len(pairs) >= 11  # every badge

    def luminance(colour: str) -> float:
        channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    for background, colour in pairs:
        light, dark = sorted((luminance(background), luminance(colour)), reverse=True)
        assert (light + 0.05) / (dark + 0.05) >= 4.5, (background, colour)


# -- signing in ---------------------------------------------------------------------------


def test_pages_ask_for_a_token_once_and_keep_a_hardened_session(auth_app: tuple[FastAPI, dict[str, str]]):
    client = TestClient(auth_app[0], follow_redirects=False)
    first = client.get("/ui/servers/billing?x=1")
    assert first.status_code == 303
    assert first.headers["location"] == "/ui/login?next=%2Fui%2Fservers%2Fbilling%3Fx%3D1"
    assert client.get("/ui/fleet/rows", headers={"X-Requested-With": "fetch"}).status_code == 401
    login = client.get("/ui/login?next=/ui/servers/billing")
    assert login.status_code == 200 and 'type="password"' in login.text and audit(login.text) == []
    signed = client.post("/ui/login", data={"csrf": csrf_of(login.text), "token": UI_TOKENS["reader"],
                                            "next": "/ui/servers/billing"})
    assert signed.status_code == 303 and signed.headers["location"] == "/ui/servers/billing"
    cookie = signed.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=")
    for attribute in ("HttpOnly", "SameSite=strict", "Path=/ui", "Max-Age=28800"):
        assert attribute.lower() in cookie.lower(), attribute
    assert UI_TOKENS["reader"] not in cookie
    page = client.get("/ui/servers/billing")
    assert page.status_code == 200 and "Signed in as <strong>reader</strong>" in page.text
    assert client.get("/dashboard").status_code == 401  # the session is for the pages, never for the API


def test_a_wrong_token_or_one_without_read_is_refused(auth_app: tuple[FastAPI, dict[str, str]]):
    client = TestClient(auth_app[0], follow_redirects=False)
    wrong = sign_in(client, "not-a-token-at-all-0000")
    assert wrong.status_code == 401 and "That token is not valid." in wrong.text
    report_only = sign_in(client, "mcp")
    assert report_only.status_code == 403 and "read scope" in report_only.text
    assert client.get("/ui/").status_code == 303


def test_sign_out_clears_the_session(as_token: Callable[[str], TestClient]):
    client = as_token("reader")
    page = client.get("/ui/")
    assert page.status_code == 200
    out = client.post("/ui/logout", data={"csrf": csrf_of(page.text)})
    assert out.status_code == 303 and out.headers["location"] == "/ui/login"
    assert f'{COOKIE}=""' in out.headers["set-cookie"] and "max-age=0" in out.headers["set-cookie"].lower()
    assert client.get("/ui/").status_code == 303


def test_a_forged_or_expired_cookie_is_signed_out(auth_app: tuple[FastAPI, dict[str, str]]):
    app = auth_app[0]
    client = TestClient(app, follow_redirects=False)
    session = app.state.ui.sessions.new(token_sha256=UI_GRANTS[3].sha256)  # reader
    good = app.state.ui.sessions.dumps(session)
    client.cookies.set(COOKIE, good, path="/ui")
    assert client.get("/ui/").status_code == 200
    payload, signature = good.split(".")
    for forged in (payload + "." + signature[:-2] + "AA", "x" + good, "garbage", ""):
        client.cookies.clear()
        client.cookies.set(COOKIE, forged, path="/ui")
        assert client.get("/ui/").status_code == 303, forged
    expired = app.state.ui.sessions.dumps(app.state.ui.sessions.new(UI_GRANTS[3].sha256, now=0))
    client.cookies.clear()
    client.cookies.set(COOKIE, expired, path="/ui")
    assert client.get("/ui/").status_code == 303


# -- server globs: nothing leaks -----------------------------------------------------------


def test_a_billing_token_never_sees_github(as_token: Callable[[str], TestClient],
                                           auth_app: tuple[FastAPI, dict[str, str]]):
    client = as_token("billing-reader")
    attempts = auth_app[1]
    pages = ["/ui/", "/ui/fleet/rows", "/ui/approvals", "/ui/?name=git*", "/ui/servers/billing",
             "/ui/servers/billing/diff?from=1&to=live", "/ui/servers/billing/awareness?tool=get_invoice"]
    for path in pages:
        page = client.get(path)
        assert page.status_code == 200, path
        text = visible_text(page.text).lower()
        assert "github" not in text and "filesystem" not in text and attempts["github"] not in text, path
    unknown = client.get("/ui/servers/nobody")
    for path in ("/ui/servers/github", "/ui/servers/github/diff?from=1&to=1", "/ui/servers/github/awareness",
                 f"/ui/servers/github/attempts/{attempts['github']}"):
        page = client.get(path)
        assert page.status_code == 404, path
        assert page.text.replace("github", "nobody") == unknown.text  # the same as a server that does not exist
    page = client.get("/ui/")
    denied = client.post(f"/ui/servers/github/attempts/{attempts['github']}/approve",
                         data={"csrf": csrf_of(page.text), "reason": "x"})
    assert denied.status_code == 404


# -- approving ------------------------------------------------------------------------------


def test_approve_is_offered_only_to_approvers(as_token: Callable[[str], TestClient],
                                              auth_app: tuple[FastAPI, dict[str, str]]):
    attempt = auth_app[1]["billing"]
    path = f"/ui/servers/billing/attempts/{attempt}"
    reader = as_token("reader")
    page = reader.get(path)
    assert page.status_code == 200 and "badc0de" in page.text
    assert set(re.findall(r'data-severity="(\w+)"', page.text)) <= {"BREAKING", "RISKY"}
    every = reader.get(f"{path}?all=1").text
    assert len(re.findall(r'data-severity="', every)) == sum(
        auth_app[0].state.governance.refused_attempt("billing", attempt).summary.values())
    assert "/approve" not in page.text and "Approve and lock" not in page.text
    assert "Approve and lock" not in reader.get("/ui/servers/billing").text
    refused = reader.post(f"{path}/approve", data={"csrf": csrf_of(page.text), "reason": "sure"})
    assert refused.status_code == 403
    approver = as_token("billing-approver")
    page = approver.get(path)
    assert "Approve and lock" in page.text and 'name="reason"' in page.text and 'name="approved_by"' not in page.text
    assert audit(page.text) == []


def test_an_approver_approves_with_a_reason_and_the_audit_log_says_who(tmp_path: Path):
    client, attempts = fresh_auth_app(tmp_path)
    assert sign_in(client, "billing-approver").status_code == 303
    path = f"/ui/servers/billing/attempts/{attempts['billing']}"
    page = client.get(path)
    empty = client.post(f"{path}/approve", data={"csrf": csrf_of(page.text), "reason": "  "})
    assert empty.status_code == 422 and "an approval needs a reason" in empty.text
    assert 'aria-invalid="true"' in empty.text
    done = client.post(f"{path}/approve", data={"csrf": csrf_of(page.text), "reason": "finance needs currency"})
    assert done.status_code == 303 and done.headers["location"] == "/ui/servers/billing?approved=2"
    assert "Approved: version 2 is now the lock." in client.get(done.headers["location"]).text
    versions = client.get("/lockfiles/billing/versions", headers=bearer("admin")).json()
    assert (versions[-1]["who"], versions[-1]["approved_by"], versions[-1]["reason"], versions[-1]["commit"]) == (
        "ci", "billing-approver", "finance needs currency", "badc0de")
    again = client.post(f"{path}/approve", data={"csrf": csrf_of(page.text), "reason": "twice"})
    assert again.status_code == 412  # the lock moved on: nothing to approve any more


def test_with_auth_off_the_approver_names_themselves(tmp_path: Path):
    with TestClient(create_app(Settings(lockfiles=tmp_path)), follow_redirects=False) as client:
        lock(client, V1)
        attempt = lock(client, V2_BREAKING).json()["attempt"]
        path = f"/ui/servers/billing/attempts/{attempt}"
        page = client.get(path)
        assert 'name="approved_by"' in page.text
        done = client.post(f"{path}/approve", data={"csrf": csrf_of(page.text), "reason": "ok",
                                                    "approved_by": "alice"})
        assert done.status_code == 303
        assert client.get("/lockfiles/billing/versions").json()[-1]["approved_by"] == "alice"


# -- forms from elsewhere ---------------------------------------------------------------------


def test_forms_without_this_sessions_csrf_token_or_from_another_site_are_refused(tmp_path: Path):
    client, attempts = fresh_auth_app(tmp_path)
    assert sign_in(client, "billing-approver").status_code == 303
    path = f"/ui/servers/billing/attempts/{attempts['billing']}/approve"
    csrf = csrf_of(client.get("/ui/").text)
    assert client.post(path, data={"reason": "no token"}).status_code == 403
    assert client.post(path, data={"reason": "wrong", "csrf": "0" * 64}).status_code == 403
    assert client.post(path, data={"reason": "x", "csrf": csrf},
                       headers={"Origin": "https://evil.example"}).status_code == 403
    assert client.post(path, data={"reason": "x", "csrf": csrf},
                       headers={"Sec-Fetch-Site": "cross-site"}).status_code == 403
    assert client.post(path, content=f'{{"reason": "x", "csrf": "{csrf}"}}',
                       headers={"Content-Type": "application/json"}).status_code == 415
    other = TestClient(client.app, follow_redirects=False)
    assert sign_in(other, "billing-approver").status_code == 303
    assert other.post(path, data={"reason": "another session's token", "csrf": csrf}).status_code == 403
    login = TestClient(client.app, follow_redirects=False)
    assert login.post("/ui/login", data={"token": UI_TOKENS["reader"]}).status_code == 403  # login CSRF too
    assert client.get("/lockfiles/billing/versions", headers=bearer("admin")).json()[-1]["version"] == 1


def test_a_form_sent_after_the_session_ended_asks_to_sign_in_again(auth_app: tuple[FastAPI, dict[str, str]]):
    client = TestClient(auth_app[0], follow_redirects=False)
    sent = client.post(f"/ui/servers/billing/attempts/{auth_app[1]['billing']}/approve",
                       data={"csrf": "x", "reason": "late"})
    assert sent.status_code == 303 and sent.headers["location"] == "/ui/login?next=%2Fui%2F"


def test_a_redirect_after_sign_in_stays_on_the_dashboard(auth_app: tuple[FastAPI, dict[str, str]]):
    client = TestClient(auth_app[0], follow_redirects=False)
    for target in ("https://evil.example/", "//evil.example/ui/", "/docs", "/ui/\\evil"):
        login = client.get("/ui/login")
        signed = client.post("/ui/login", data={"csrf": csrf_of(login.text), "token": UI_TOKENS["reader"],
                                                "next": target})
        assert signed.status_code == 303 and signed.headers["location"] == "/ui/", target
        client.cookies.clear()


def test_unlocked_and_corrupt_servers_have_pages_that_say_so(tmp_path: Path):
    with TestClient(create_app(Settings(lockfiles=tmp_path)), follow_redirects=False) as client:
        client.put("/servers/newcomer/live", json=V1)
        lock(client, V1, server="broken")
        path = tmp_path / "broken.lock.toml"
        path.write_text(path.read_text().replace("Fetch one invoice", "Fetch anything"))
        fleet = client.get("/ui/?sort=name").text
        assert re.findall(r'<tr class="row-([a-z-]+)[^"]*" data-server="([^"]+)"', fleet) == [
            ("corrupt", "broken"), ("unlocked", "newcomer")]
        newcomer = client.get("/ui/servers/newcomer")
        assert newcomer.status_code == 200 and ">unlocked<" in newcomer.text and "Never locked." in newcomer.text
        broken = client.get("/ui/servers/broken")
        assert broken.status_code == 200 and ">corrupt<" in broken.text
        assert "The current lockfile is corrupt and is not served." in broken.text
        assert client.get("/ui/servers/broken/diff?from=1&to=1").status_code == 200  # history still reads
        awareness = client.get("/ui/servers/broken/awareness")
        assert awareness.status_code == 200


def test_the_preview_of_a_tool_the_live_surface_lost_is_the_apis_too(tmp_path: Path):
    with TestClient(create_app(Settings(lockfiles=tmp_path)), follow_redirects=False) as client:
        lock(client, V1)
        client.put("/servers/billing/live", json={"tools": [V1["tools"][0]]})  # list_invoices is gone
        api = client.get("/servers/billing/awareness?tool=list_invoices")
        page = client.get("/ui/servers/billing/awareness?tool=list_invoices")
        assert 'value="list_invoices" selected' in page.text  # offered: the lock knows it
        assert api.status_code == 200 and pre_text(page.text, "awareness-section") == api.text


def test_a_deltas_witness_is_shown_when_the_engine_gives_one():
    from app.ui.routes import _environment
    from app.ui.views import group_deltas

    delta = {"id": "1", "rule": "input.required.added", "severity": "BREAKING", "category": "input",
             "tool": "get_invoice", "action": None, "field": "input.currency",
             "path": "/tools/get_invoice/inputSchema/required", "description": 'Argument "currency" is now required',
             "before": "optional", "after": "required", "hint": 'Pass "currency".',
             "witness": {"id": "inv_1", "note": "<b>"}}
    output = {**delta, "id": "2", "category": "output", "field": "output.total", "witness": 10}
    page = _environment().get_template("_deltas.html").render(groups=group_deltas([delta, output]))
    assert "A call that worked before and fails now" in page
    assert "A value the new schema allows and the old reader rejects" in page
    assert html.unescape(pre_text_of_class(page, "witness")[0]) == '{\n  "id": "inv_1",\n  "note": "<b>"\n}'
    plain = _environment().get_template("_deltas.html").render(groups=group_deltas([{**delta, "witness": None}]))
    assert "worked before" not in plain


def pre_text_of_class(page: str, css: str) -> list[str]:
    return re.findall(rf'<pre class="{css}"><code>(.*?)</code></pre>', page, re.S)
