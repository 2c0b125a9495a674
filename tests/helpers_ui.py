"""Helpers for the dashboard tests: a store with a drifted, a refused and an unrelated
server, tokens for every role, and small HTML readers (no browser)."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser

import httpx
from fastapi.testclient import TestClient

from app.config import TokenGrant, hash_token
from app.jsontypes import JSON
from tests.conftest import corpus_versions
from tests.helpers_service import GRANTS, TOKENS, V1, V2_BREAKING, bearer, lock

UI_TOKENS = {
    **TOKENS,
    "billing-reader": "billing-reader-token-0123456789",
    "billing-approver": "billing-approver-token-0123456789",
    "releaser": "releaser-token-0123456789abcdef",
}
UI_GRANTS = (
    *GRANTS,
    TokenGrant("billing-reader", hash_token(UI_TOKENS["billing-reader"]), frozenset({"read"}), ("billing*",)),
    TokenGrant("billing-approver", hash_token(UI_TOKENS["billing-approver"]), frozenset({"read", "approve"}),
               ("billing*",)),
    TokenGrant("releaser", hash_token(UI_TOKENS["releaser"]), frozenset({"read", "lock"})),
)


def corpus(server: str, index: int) -> JSON:
    return json.loads(corpus_versions(server)[index].read_text(encoding="utf-8"))


def populate(client: TestClient, auth: bool) -> dict[str, str]:
    """billing: v1, a refused BREAKING lock, a drifted live report; github: one version (a
    server a ``billing*`` token must never see), with a refused attempt of its own;
    filesystem: two corpus versions and a drifted live surface. Returns the attempt ids."""
    admin = bearer("admin") if auth else None
    ci = bearer("ci") if auth else None
    assert lock(client, V1, headers=admin, commit="c0ffee1", reason="first release").status_code == 201
    refused = lock(client, V2_BREAKING, headers=ci, commit="badc0de", reason="release 2")
    assert refused.status_code == 409, refused.text
    assert client.put("/servers/billing/live", json=V2_BREAKING, headers=admin).status_code == 200
    assert lock(client, corpus("github", 0), server="github", headers=admin).status_code == 201
    releaser = bearer(UI_TOKENS["releaser"]) if auth else None
    github_refused = lock(client, {"tools": []}, server="github", headers=releaser)
    assert github_refused.status_code == 409, github_refused.text
    for index in (1, 2):
        assert lock(client, corpus("filesystem", index), server="filesystem", headers=admin).status_code == 201
    assert client.put("/servers/filesystem/live", json=corpus("filesystem", 3), headers=admin).status_code == 200
    return {"billing": refused.json()["attempt"], "github": github_refused.json()["attempt"]}


def sign_in(client: TestClient, name: str) -> httpx.Response:
    page = client.get("/ui/login")
    assert page.status_code == 200, page.text
    return client.post("/ui/login", data={"csrf": csrf_of(page.text), "token": UI_TOKENS.get(name, name),
                                          "next": "/ui/"}, follow_redirects=False)


def csrf_of(page: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', page)
    assert match, "no CSRF field on the page"
    return match.group(1)


def pre_text(page: str, element_id: str) -> str | None:
    """The text of ``<pre id=element_id>`` as a browser reads it (entities decoded)."""
    match = re.search(rf'<pre[^>]* id="{element_id}"[^>]*>(.*?)</pre>', page, re.S)
    return html.unescape(match.group(1)) if match else None


def visible_text(page: str) -> str:
    """Everything a reader sees: text and attribute values (a leak hides in either)."""
    return html.unescape(re.sub(r"\s+", " ", page))


class FormAudit(HTMLParser):
    """What an accessibility review checks without a browser: every form control has a
    label (``<label for>``, or ``aria-label``), the page has a language and one h1, table
    headers have a scope or sit in a thead."""

    CONTROLS = ("input", "select", "textarea")

    def __init__(self) -> None:
        super().__init__()
        self.labels: set[str] = set()
        self.controls: list[dict[str, str | None]] = []
        self.h1 = 0
        self.lang: str | None = None
        self.in_thead = False
        self.bare_th = 0
        self.images_without_alt = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "html":
            self.lang = found.get("lang")
        elif tag == "h1":
            self.h1 += 1
        elif tag == "label" and found.get("for"):
            self.labels.add(str(found["for"]))
        elif tag in self.CONTROLS and found.get("type") != "hidden":
            self.controls.append(found)
        elif tag == "thead":
            self.in_thead = True
        elif tag == "th" and not self.in_thead and "scope" not in found:
            self.bare_th += 1
        elif tag == "img" and "alt" not in found:
            self.images_without_alt += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "thead":
            self.in_thead = False

    def problems(self) -> list[str]:
        out = []
        for control in self.controls:
            if control.get("aria-label"):
                continue
            if not control.get("id") or control["id"] not in self.labels:
                out.append(f"unlabelled control {control}")
        if self.lang != "en":
            out.append("no lang")
        if self.h1 != 1:
            out.append(f"{self.h1} h1 elements")
        if self.bare_th:
            out.append(f"{self.bare_th} row headers without scope")
        if self.images_without_alt:
            out.append(f"{self.images_without_alt} images without alt")
        return out


def audit(page: str) -> list[str]:
    parser = FormAudit()
    parser.feed(page)
    return parser.problems()

