"""The dashboard in a real browser: Debian's chromium driven by Playwright (never a
downloaded browser) against a real ``mcp-governance serve`` (two workers, tokens on).

Two versions of a corpus server are locked, a drifted live surface is reported, a BREAKING
lock is refused; then, as a person would: the fleet lists the server as drifted BREAKING,
the diff shows the argument-level deltas, the awareness preview equals the API's section
byte for byte, approve works with an approve token and is absent with a read token, a
``billing*`` token never sees ``github``, sign-out works, the fleet refreshes itself, the
pages read with JavaScript off and work from the keyboard, and no page asks any other host
(the browser's network log). Screenshots of every view go to .ci/artifacts/ui/.

Skipped, with the reason printed, when chromium or Playwright is missing.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.conftest import corpus_versions
from tests.helpers_service import V1, clean_env, serve_process
from tests.helpers_ui import UI_GRANTS, UI_TOKENS

CHROMIUM = os.environ.get("MCP_GOVERNANCE_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parent.parent / ".ci" / "artifacts" / "ui"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
LAPTOP = {"width": 1366, "height": 900}
WALL = {"width": 2560, "height": 1440}

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.environ.get("MCP_GOVERNANCE_TEST_PROFILE") != "ci",
                       reason="slow browser test: runs in the ci profile (MCP_GOVERNANCE_TEST_PROFILE=ci, .ci/run)"),
]


def _browser_missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (pip install -e '.[test]')"
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        return f"no chromium at {CHROMIUM} (apt-get install -y chromium chromium-driver; .ci/run does)"
    return None


def corpus(server: str, index: int) -> Any:
    return json.loads(corpus_versions(server)[index].read_text(encoding="utf-8"))


@dataclass
class Service:
    url: str
    attempt: str
    """The refused filesystem lock."""

    def api(self, token: str = "admin") -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {UI_TOKENS[token]}"}, timeout=30)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    missing = _browser_missing()
    if missing:
        pytest.skip(missing)
    root = tmp_path_factory.mktemp("browser")
    tokens = [{"name": grant.name, "token": UI_TOKENS[grant.name], "scopes": sorted(grant.scopes),
               "servers": list(grant.servers)} for grant in UI_GRANTS]
    env = clean_env(MCP_GOVERNANCE_TOKENS=json.dumps(tokens))
    with serve_process(root / "lockfiles", root / "serve.log", workers=2, env=env) as url:
        admin = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {UI_TOKENS['admin']}"}, timeout=60)
        releaser = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {UI_TOKENS['releaser']}"},
                                timeout=60)
        for index, reason in ((1, "first"), (2, "second")):  # two versions of a corpus server
            response = admin.post("/lock", json={"server": "filesystem", "surface": corpus("filesystem", index),
                                                 "reason": reason, "commit": f"c{index}"})
            assert response.status_code == 201, response.text
        drifted = admin.put("/servers/filesystem/live", json=corpus("filesystem", 3))
        assert drifted.status_code == 200 and drifted.json()["maxSeverity"] == "BREAKING"
        refused = releaser.post("/lock", json={"server": "filesystem", "surface": corpus("filesystem", 3),
                                               "reason": "release 2025.11.25", "commit": "feedbee"})
        assert refused.status_code == 409, refused.text
        assert admin.post("/lock", json={"server": "github", "surface": corpus("github", 0)}).status_code == 201
        assert admin.post("/lock", json={"server": "billing", "surface": V1}).status_code == 201
        yield Service(url, refused.json()["attempt"])


@pytest.fixture(scope="module")
def browser(service: Service) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@dataclass
class Visitor:
    """One browser context (its own cookies) that records every request it makes."""

    context: Any
    page: Any
    base: str
    requests: list[str] = field(default_factory=list)

    def go(self, path: str) -> Any:
        return self.page.goto(self.base + path)

    def shot(self, name: str) -> None:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)

    def foreign_requests(self) -> list[str]:
        own = urlsplit(self.base).netloc
        return [url for url in self.requests
                if not url.startswith(("data:", "blob:")) and urlsplit(url).netloc != own]


@pytest.fixture
def visit(browser: Any, service: Service) -> Iterator[Any]:
    visitors: list[Visitor] = []

    def make(token: str | None = None, viewport: dict[str, int] = LAPTOP, javascript: bool = True) -> Visitor:
        context = browser.new_context(viewport=viewport, java_script_enabled=javascript)
        visitor = Visitor(context, context.new_page(), service.url)
        context.on("request", lambda request: visitor.requests.append(request.url))
        visitors.append(visitor)
        if token is not None:
            visitor.go("/ui/")
            assert "/ui/login" in visitor.page.url
            visitor.page.get_by_label("Bearer token").fill(UI_TOKENS[token])
            visitor.page.get_by_role("button", name="Sign in").click()
            visitor.page.wait_for_url(f"{service.url}/ui/")
        return visitor

    yield make
    for visitor in visitors:
        try:
            assert visitor.foreign_requests() == [], "a page asked another host"
            assert visitor.requests, "the network log recorded nothing"
        finally:
            visitor.context.close()


def test_the_fleet_lists_the_drifted_server_as_breaking_first(visit: Any):
    reader = visit("reader")
    first = reader.page.locator("table.fleet tbody tr").first
    assert first.get_attribute("data-server") == "filesystem"
    assert first.locator("td").nth(0).inner_text() == "drifted"
    assert first.locator("td").nth(1).inner_text() == "BREAKING"
    servers = reader.page.locator("table.fleet tbody tr").evaluate_all("rows => rows.map(r => r.dataset.server)")
    assert sorted(servers) == ["billing", "filesystem", "github"]
    reader.shot("fleet-laptop")
    wall = visit("reader", viewport=WALL)
    assert wall.page.evaluate("parseFloat(getComputedStyle(document.documentElement).fontSize)") > 16
    wall.shot("fleet-wall-screen")


def test_the_diff_view_shows_argument_level_deltas(visit: Any):
    reader = visit("reader")
    reader.go("/ui/servers/filesystem/diff?from=2&to=live")
    breaking = reader.page.locator('li.delta[data-severity="BREAKING"]').first
    assert breaking.locator("code.argument").inner_text() == "paths"
    assert breaking.locator("dd.before").inner_text() == "no limit"
    assert breaking.locator("dd.after").inner_text() == "at least 1 item"
    assert "paths" in breaking.locator("dd.fix").inner_text()
    reader.shot("diff")
    for severity in ("RISKY", "SAFE", "COSMETIC"):
        reader.page.get_by_role("checkbox", name=severity).uncheck()
    reader.page.get_by_role("button", name="Compare").click()
    reader.page.wait_for_url("**severity=BREAKING**")
    severities = reader.page.locator("li.delta").evaluate_all("items => items.map(i => i.dataset.severity)")
    assert severities and set(severities) == {"BREAKING"}


def test_the_awareness_preview_equals_the_apis_section_byte_for_byte(visit: Any, service: Service):
    reader = visit("reader")
    reader.go("/ui/servers/filesystem/awareness")
    reader.page.get_by_label("Tool or tool.action").select_option("read_multiple_files")
    reader.page.get_by_role("button", name="Show").click()
    reader.page.wait_for_url("**tool=read_multiple_files**")
    shown = reader.page.locator("#awareness-section").text_content()
    with service.api("reader") as api:
        section = api.get("/servers/filesystem/awareness", params={"tool": "read_multiple_files"})
        assert section.status_code == 200
        assert shown == section.text
        reader.page.get_by_label("Arguments (JSON)").fill('{"paths": []}')
        reader.page.get_by_role("button", name="Validate").click()
        reader.page.wait_for_url("**arguments=**")
        error = api.post("/servers/filesystem/validation-error",
                         json={"tool": "read_multiple_files", "arguments": {"paths": []}}).json()
    assert reader.page.locator("#validation-error").text_content() == error["xml"]
    reader.shot("awareness")


def test_the_server_view(visit: Any):
    reader = visit("reader")
    reader.go("/ui/servers/filesystem")
    assert reader.page.get_by_role("heading", name="Version history").is_visible()
    history = reader.page.locator("table.history tbody tr")
    assert history.count() == 2 and "second" in history.first.inner_text() and "c2" in history.first.inner_text()
    assert reader.page.locator("table.args").count() > 0
    assert reader.page.get_by_role("button", name="Approve and lock").count() == 0
    reader.shot("server")


def test_approve_is_absent_for_a_read_token_and_works_for_an_approve_token(visit: Any, service: Service):
    reader = visit("reader")
    reader.go(f"/ui/servers/filesystem/attempts/{service.attempt}")
    assert "feedbee" in reader.page.content()
    assert reader.page.get_by_role("button", name="Approve and lock").count() == 0
    assert reader.page.get_by_label("Reason (kept in the audit log)").count() == 0

    approver = visit("approver")
    approver.page.get_by_role("link", name="Refused locks").click()
    approver.shot("refused-locks")
    approver.page.get_by_role("link", name="Review and approve").first.click()
    approver.page.get_by_label("Reason (kept in the audit log)").fill("paths may no longer be empty: agreed")
    approver.shot("approve")
    approver.page.get_by_role("button", name="Approve and lock").click()
    approver.page.wait_for_url("**/ui/servers/filesystem?approved=3")
    assert "Approved: version 3 is now the lock." in approver.page.content()
    with service.api("admin") as api:
        last = api.get("/lockfiles/filesystem/versions").json()[-1]
    assert (last["version"], last["approved_by"], last["who"], last["commit"], last["reason"]) == (
        3, "approver", "releaser", "feedbee", "paths may no longer be empty: agreed")


def test_a_billing_token_never_sees_github(visit: Any):
    billing = visit("billing-reader")
    for path in ("/ui/", "/ui/approvals", "/ui/servers/billing", "/ui/?name=git"):
        billing.go(path)
        assert "github" not in billing.page.content().lower(), path
    response = billing.go("/ui/servers/github")
    assert response.status == 404 and "github" not in billing.page.locator("main").inner_text().replace(
        "There is no server 'github' you may read.", "")
    billing.shot("billing-token-fleet")


def test_sign_out(visit: Any, service: Service):
    reader = visit("reader")
    reader.page.get_by_role("button", name="Sign out").click()
    reader.page.wait_for_url("**/ui/login")
    reader.go("/ui/servers/filesystem")
    assert "/ui/login" in reader.page.url
    assert not [c for c in reader.context.cookies() if c["name"] == "mcpg_session" and c["value"] and
                "token" in c["value"]]
    reader.shot("signed-out")


def test_the_fleet_refreshes_itself_without_a_reload(visit: Any, service: Service):
    reader = visit("reader")
    reader.go("/ui/?refresh=2")
    reader.page.evaluate("window.__stillTheSamePage = true")
    row = reader.page.locator('tr[data-server="github"] td').first
    assert row.inner_text() == "unreported"
    with service.api("admin") as api:
        assert api.put("/servers/github/live", json=corpus("github", 0)).status_code == 200
    from playwright.sync_api import expect

    expect(row).to_have_text("in-sync", timeout=30_000)
    assert reader.page.evaluate("window.__stillTheSamePage") is True
    assert "Updated" in reader.page.locator("#fleet-updated").inner_text()


def test_reading_works_with_javascript_off(visit: Any):
    reader = visit("reader", javascript=False)
    rows = reader.page.locator("table.fleet tbody tr")
    assert rows.count() == 3
    assert reader.page.locator("[data-refresh-controls]").is_hidden()
    reader.go("/ui/servers/filesystem/diff?from=1&to=2")
    assert reader.page.locator("li.delta").count() > 0
    reader.shot("diff-without-javascript")


def test_the_keyboard_reaches_the_content_and_the_filters(visit: Any):
    reader = visit("reader")
    reader.page.keyboard.press("Tab")
    assert reader.page.evaluate("document.activeElement.textContent") == "Skip to content"
    reader.page.keyboard.press("Enter")
    assert reader.page.evaluate("document.activeElement.id") == "main"
    reader.page.get_by_label("Status").focus()
    reader.page.keyboard.press("Tab")
    assert reader.page.evaluate("document.activeElement.id") == "f-severity"
    outline = reader.page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"


def test_the_api_docs_work_offline(visit: Any):
    visitor = visit()
    visitor.go("/docs")
    visitor.page.get_by_role("button", name="Authorize").wait_for(timeout=30_000)
    visitor.shot("docs-swagger-ui")
    visitor.go("/redoc")
    visitor.page.get_by_role("heading", name="Record a server's known-good surface").wait_for(timeout=30_000)
    visitor.shot("docs-redoc")
