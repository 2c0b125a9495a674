"""GET /dashboard and GET /lockfiles a page at a time (on both stores): a cursor and a limit,
the next page named in the body (dashboard), the Link and X-Next-Cursor headers; every server
exactly once across the pages, whatever the page size; a caller's globs respected."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.config import TokenGrant, hash_token
from app.service import DEFAULT_PAGE
from tests.helpers_service import api, assert_problem, lock, numbered

pytestmark = pytest.mark.usefixtures("store_backend")


def walk(client, path: str, limit: int | None, headers: dict[str, str] | None = None) -> list[list[str]]:  # type: ignore[no-untyped-def]
    """Every page's server names, following the Link header (and, for the dashboard, next_cursor)."""
    pages: list[list[str]] = []
    url = path + (f"?limit={limit}" if limit else "")
    while url:
        response = client.get(url, headers=headers)
        assert response.status_code == 200, response.text
        body = response.json()
        rows = body["servers"] if path == "/dashboard" else body
        pages.append([row["server"] for row in rows])
        link = response.headers.get("link")
        if path == "/dashboard":
            assert (body["next_cursor"] is None) == (link is None)
            assert body["next_cursor"] == response.headers.get("x-next-cursor")
        url = link.split(">", 1)[0].lstrip("<") if link else ""
        assert len(pages) < 100
    return pages


@pytest.fixture(scope="module")
def names() -> list[str]:
    return [f"server-{i:03d}" for i in range(23)]


def test_pages_cover_every_server_once_in_order(tmp_path: Path, names: list[str]):
    with api(tmp_path) as client:
        for name in reversed(names):
            assert lock(client, numbered(1), server=name).status_code == 201
        client.put("/servers/unlocked-one/live", json=numbered(2))
        everyone = sorted([*names, "unlocked-one"])
        for path in ("/dashboard", "/lockfiles"):
            assert [s for page in walk(client, path, None) for s in page] == everyone  # default: one page
            pages = walk(client, path, 5)
            assert [len(page) for page in pages] == [5, 5, 5, 5, 4]
            assert [s for page in pages for s in page] == everyone


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(limit=st.integers(1, 30), added=st.integers(0, 5))
def test_a_server_added_between_pages_never_makes_one_repeat_or_vanish(tmp_path_factory: pytest.TempPathFactory,
                                                                      limit: int, added: int):
    root = tmp_path_factory.mktemp("store")
    with api(root) as client:
        for i in range(12):
            lock(client, numbered(1), server=f"s-{i:02d}")
        first = client.get("/lockfiles", params={"limit": limit})
        for i in range(added):
            lock(client, numbered(1), server=f"s-{i:02d}-new")
        seen = [row["server"] for row in first.json()]
        link = first.headers.get("link")
        while link:
            page = client.get(link.split(">", 1)[0].lstrip("<"))
            seen += [row["server"] for row in page.json()]
            link = page.headers.get("link")
        assert len(seen) == len(set(seen))
        assert {f"s-{i:02d}" for i in range(12)} <= set(seen)


def test_the_default_page_size_and_bad_parameters(tmp_path: Path):
    with api(tmp_path) as client:
        assert DEFAULT_PAGE == 100
        assert_problem(client.get("/dashboard", params={"limit": 0}), 422)
        assert_problem(client.get("/lockfiles", params={"limit": 100_000}), 422)
        body = assert_problem(client.get("/dashboard", params={"cursor": "../not-a-name"}), 422)
        assert "cursor" in body["detail"]


def test_a_callers_globs_fill_its_pages(tmp_path: Path):
    token = "pay-reader-token-0123456789"
    grant = TokenGrant("pay-reader", hash_token(token), frozenset({"read", "lock"}), ("pay-*",))
    admin = TokenGrant("admin", hash_token("admin-token-0123456789abcdef"), frozenset({"admin"}))
    with api(tmp_path, (grant, admin)) as client:
        for name in ("alpha", "pay-a", "beta", "pay-b", "pay-c", "zeta"):
            lock(client, numbered(1), server=name, headers={"Authorization": "Bearer admin-token-0123456789abcdef"})
        pages = walk(client, "/dashboard", 2, headers={"Authorization": f"Bearer {token}"})
        assert pages == [["pay-a", "pay-b"], ["pay-c"]]
