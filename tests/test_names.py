"""Names match whole everywhere (issue 9, item 4): a server name with a final newline is
refused (422) on every path, a token's ``billing*`` glob never covers ``billing\\n``, and the
awareness hot path decodes a request path exactly once, like the router: both answer alike."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.api.hotpath import ANSWERED_BY, AwarenessHotPath
from app.config import TokenGrant, hash_token
from app.names import full_match, is_server_name
from app.tomltext import key_item
from tests.helpers_service import V1, V2_BREAKING, api, assert_problem, lock, make_app, uvicorn_thread

NEWLINE_NAMES = ["nl-demo\n", "time\n", "billing\n", "a\nb", "\ntime", "time\r", "time\x00"]


@pytest.mark.parametrize("name", NEWLINE_NAMES)
def test_a_name_with_a_line_break_is_no_server_name(name: str) -> None:
    assert not is_server_name(name)
    assert is_server_name(name.replace("\n", "").replace("\r", "").replace("\x00", ""))


def test_a_glob_covers_only_whole_server_names() -> None:
    grant = TokenGrant("ci", hash_token("x" * 16), frozenset({"lock"}), ("billing*",))
    assert grant.covers("billing") and grant.covers("billing-eu")
    assert not grant.covers("billing\n")
    assert not grant.covers("billing/../x")


def test_a_toml_key_with_a_final_newline_is_quoted() -> None:
    assert not isinstance(key_item("a\n"), str)  # a quoted key, never the bare text
    assert key_item("plain_key") == "plain_key"


def test_full_match_never_accepts_a_prefix_or_a_final_newline() -> None:
    import re
    pattern = re.compile(r"[a-z]+")
    assert full_match(pattern, "abc") and not full_match(pattern, "abc\n") and not full_match(pattern, "abc1")
    assert not full_match(pattern, None)


@pytest.mark.parametrize("name", ["nl-demo\n", "time\n"])
def test_every_path_refuses_a_server_name_with_a_newline(tmp_path: Path, name: str) -> None:
    with api(tmp_path) as client:
        assert_problem(lock(client, V1, server=name), 422)
        quoted = name.replace("\n", "%0A")
        assert_problem(client.put(f"/servers/{quoted}/live", json=V1), 422)
        assert_problem(client.get(f"/servers/{quoted}/awareness", params={"tool": "get_invoice"}), 422)
        assert name.strip() not in client.get("/lockfiles").text
        assert not any(path.name.startswith(name.strip()) for path in tmp_path.iterdir())


# --------------------------------------------------------------------------- hot path


def _plain_app(root: Path) -> FastAPI:
    """The same app without the hot path: every request goes through the router."""
    app = make_app(root)
    app.user_middleware = [m for m in app.user_middleware if m.cls is not AwarenessHotPath]
    return app


@pytest.fixture(scope="module")
def clients(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    """Real uvicorn servers (TestClient decodes a path twice; uvicorn, like any server, once):
    one app with the hot path, one without, over the same store."""
    root = tmp_path_factory.mktemp("names-store")
    with uvicorn_thread(make_app(root)) as hot_url, uvicorn_thread(_plain_app(root)) as plain_url, \
            httpx.Client(base_url=hot_url) as hot, httpx.Client(base_url=plain_url) as plain:
        lock(hot, V1, server="time")
        hot.put("/servers/time/live", json=V2_BREAKING)
        yield hot, plain


def _ask(client: httpx.Client, segment: str) -> tuple[int, str, str | None]:
    response = client.get(f"/servers/{segment}/awareness?tool=get_invoice")
    return response.status_code, response.text, response.headers.get("content-type")


def test_the_hot_path_answers_a_primed_request_and_says_so(clients: tuple[httpx.Client, httpx.Client]) -> None:
    hot, _ = clients
    hot.get("/servers/time/awareness?tool=get_invoice")  # primes the live report in memory
    response = hot.get("/servers/time/awareness?tool=get_invoice")
    assert response.status_code == 200 and response.headers[ANSWERED_BY] == "hot"


def test_a_double_encoded_name_is_the_same_in_both_paths(clients: tuple[httpx.Client, httpx.Client]) -> None:
    hot, plain = clients
    _ask(hot, "time")
    first, second = _ask(hot, "tim%2565"), _ask(hot, "tim%2565")
    assert first == second == _ask(plain, "tim%2565")
    assert first[0] == 422  # the router's server is "tim%65": not a name
    assert hot.get("/servers/tim%2565/awareness?tool=get_invoice").headers.get(ANSWERED_BY) != "hot"


PIECES = st.sampled_from(["t", "i", "m", "e", "%25", "%65", "%2565", "%0A", "%0a", "%20", ".", "-", "_", "%2E",
                          "%2F", "%", "x", "%E2%80%8B", "%C3%A9"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(segment=st.lists(PIECES, min_size=1, max_size=8).map("".join))
def test_the_hot_path_and_the_router_agree(clients: tuple[httpx.Client, httpx.Client], segment: str) -> None:
    hot, plain = clients
    _ask(hot, segment)  # a first request may prime the hot path's memory
    assert _ask(hot, segment) == _ask(plain, segment)
