"""No input yields a 5xx (issue 9, item 5): a lone surrogate (or any other unicode) in an
object key or a value, anywhere in the body of every body endpoint, is answered 4xx at worst,
with what the message quotes escaped (a problem+json body is always valid UTF-8)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers_service import api, lock, surface, tool

SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}}


def bodies(key: str, value: str) -> list[tuple[str, str, object]]:
    """(method, path, body) for every body endpoint, the key and value placed where each reads."""
    hostile_tool = {"name": "t", "inputSchema": {"type": "object", "properties": {key: {"type": "string"}}}, key: value}
    hostile_surface = {"tools": [hostile_tool], key: value}
    plain = surface(tool("t"))
    return [
        ("POST", "/lock", {"server": "billing", "surface": hostile_surface}),
        ("POST", "/lock", {"server": "billing", "surface": plain, key: value}),
        ("POST", "/lock", {"server": "billing", "surface": plain, "reason": value, "approved_by": value}),
        ("PUT", "/servers/billing/live", hostile_surface),
        ("PUT", "/servers/billing/live", {"tools": [{"name": value, "inputSchema": SCHEMA}]}),
        ("POST", "/diff", {"before": plain, "after": hostile_surface}),
        ("POST", "/diff", {"before": plain, "after": plain, key: value}),
        ("POST", "/diff", {"server": "billing", "surface": hostile_surface}),
        ("POST", "/check", {"server": "billing", "surface": hostile_surface}),
        ("POST", "/servers/billing/validation-error", {"tool": "get_invoice", "arguments": {key: value}}),
        ("POST", "/servers/billing/validation-error", {"tool": "get_invoice", key: {key: value}}),
        ("POST", "/servers/billing/validation-error", {"tool": value, "arguments": {"id": value}}),
        ("POST", "/servers/billing/validation-error",
         {"tool": "get_invoice", "issues": [{"path": key, "message": value}]}),
    ]


def check_all(client: TestClient, key: str, value: str) -> None:
    for method, path, body in bodies(key, value):
        raw = json.dumps(body, ensure_ascii=True).encode("ascii")  # a lone surrogate travels as \ud800
        response = client.request(method, path, content=raw, headers={"content-type": "application/json"})
        assert response.status_code < 500, (method, path, key, response.text[:300])
        response.content.decode("utf-8")  # always valid UTF-8
        if response.status_code >= 400:
            problem = response.json()
            assert "\n" not in problem["detail"], problem


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with api(tmp_path_factory.mktemp("unicode")) as client:
        assert lock(client, surface(tool())).status_code == 201
        yield client


@pytest.mark.parametrize("key", ["\ud800", "\udfff", "a\udc00b", "\ud83d", "é\ud800"])
def test_a_lone_surrogate_in_a_key_is_never_a_500(client: TestClient, key: str) -> None:
    check_all(client, key, "x")
    check_all(client, "k", key)


def test_the_quoted_key_is_escaped_in_the_problem(client: TestClient) -> None:
    raw = b'{"server": "billing", "surface": {"tools": [], "\\ud800": 1}}'
    response = client.post("/lock", content=raw, headers={"content-type": "application/json"})
    assert response.status_code == 422, response.text
    assert "\\ud800" in response.json()["detail"]


SURROGATES = st.integers(0xD800, 0xDFFF).map(chr)
UNICODE = st.lists(st.one_of(st.characters(), SURROGATES), max_size=6).map("".join)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=UNICODE, value=UNICODE)
def test_any_unicode_key_or_value_on_any_body_endpoint_is_never_a_5xx(client: TestClient, key: str,
                                                                      value: str) -> None:
    check_all(client, key, value)
