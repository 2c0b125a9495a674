"""The awareness hot path (answered before the router) says exactly what the route says,
never serves a stale live report, and steps aside for anything unusual."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.api.hotpath import ANSWERED_BY
from tests.helpers_service import GRANTS, V1, V1_SAFE, V2_BREAKING, api, assert_problem, bearer, lock

pytestmark = pytest.mark.usefixtures("store_backend")  # each test on both stores (tests/stores.py)

URL = "/servers/billing/awareness"


def _views(client) -> dict:
    return client.app.state.governance._views


def test_the_hot_path_answers_what_the_route_answers(tmp_path: Path):
    with api(tmp_path) as client:
        lock(client, V1)
        client.put("/servers/billing/live", json=V2_BREAKING)
        first = client.get(URL, params={"tool": "get_invoice"})  # the route: loads the live report
        assert ("billing", None) in _views(client)
        second = client.get(URL, params={"tool": "get_invoice"})  # in memory now: the hot path
        assert (first.status_code, first.headers["content-type"]) == (200, "application/xml")
        assert (second.status_code, second.text, second.headers["content-type"]) == \
               (first.status_code, first.text, first.headers["content-type"])
        # Which path answered: the route first (it loads the live report), the hot path after.
        assert (first.headers[ANSWERED_BY], second.headers[ANSWERED_BY]) == ("route", "hot")
        assert 'rule="input.property.added-required"' in second.text
        empty = client.get(URL, params={"tool": "list_invoices"})
        assert (empty.status_code, empty.headers[ANSWERED_BY]) == (204, "hot")
        assert client.get(URL, params={"tool": "get_invoice", "max": "1"}).text.count("<change ") == 1


def test_a_newer_live_report_is_never_answered_from_the_old_one(tmp_path: Path):
    with api(tmp_path) as client:
        lock(client, V1)
        client.put("/servers/billing/live", json=V2_BREAKING)
        client.get(URL, params={"tool": "get_invoice"})
        assert client.get(URL, params={"tool": "get_invoice"}).status_code == 200
        client.put("/servers/billing/live", json=V1_SAFE)
        assert client.get(URL, params={"tool": "get_invoice"}).status_code == 204


def test_anything_unusual_goes_to_the_route(tmp_path: Path):
    with api(tmp_path, GRANTS) as client:
        lock(client, V1, headers=bearer("admin"))
        client.put("/servers/billing/live", json=V2_BREAKING, headers=bearer("admin"))
        client.get(URL, params={"tool": "get_invoice"}, headers=bearer("mcp"))
        assert client.get(URL, params={"tool": "get_invoice"}, headers=bearer("mcp")).status_code == 200
        assert_problem(client.get(URL, params={"tool": "get_invoice"}), 401, "unauthorized")
        lock(client, V1, server="payments", headers=bearer("admin"))
        client.put("/servers/payments/live", json=V2_BREAKING, headers=bearer("admin"))
        other = "/servers/payments/awareness"
        client.get(other, params={"tool": "get_invoice"}, headers=bearer("admin"))  # in memory now
        assert_problem(client.get(other, params={"tool": "get_invoice"}, headers=bearer("mcp")), 403,
                       "forbidden_server")
        assert_problem(client.get(URL, params={"tool": "get_invoice", "max": "99"}, headers=bearer("mcp")), 422)
        assert_problem(client.get(URL, params={"tool": "nope"}, headers=bearer("mcp")), 404, "not_found")
        assert_problem(client.get("/servers/..%2Fx/awareness", params={"tool": "t"}, headers=bearer("admin")), 404)
        assert_problem(client.get("/servers/a%20b/awareness", params={"tool": "t"}, headers=bearer("admin")), 422)
