"""Bearer tokens: 401 without a valid token, 403 without the scope or outside the token's
server patterns, approval needs the approve scope; tokens from a TOML config (sha256
only) or MCP_GOVERNANCE_TOKENS (plain allowed); the loud warning when auth is off; and
no token ever reaches a log line or a response."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.api import create_app
from app.config import TokenGrant, hash_token, load_settings
from app.problems import InputError
from tests.helpers_service import (
    GRANTS,
    TOKENS,
    V1,
    V1_COSMETIC,
    V1_SAFE,
    V2_BREAKING,
    api,
    assert_problem,
    bearer,
    lock,
)

pytestmark = pytest.mark.usefixtures("store_backend")  # each test on both stores (tests/stores.py)

WARNING = "AUTH IS OFF"


@pytest.fixture
def client(tmp_path: Path):
    with api(tmp_path / "lockfiles", GRANTS) as client:
        yield client


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory):
    """billing and payments locked and reported live by the admin; shared by the scope
    matrices below, whose requests change nothing (the same lock again is a 200, the
    same live report again keeps the same result)."""
    with api(tmp_path_factory.mktemp("shared") / "lockfiles", GRANTS) as client:
        for server in ("billing", "payments"):
            assert lock(client, V1, server=server, headers=bearer("admin")).status_code == 201
            assert client.put(f"/servers/{server}/live", json=V1_SAFE, headers=bearer("admin")).status_code == 200
        yield client


@pytest.fixture
def seeded(shared: TestClient) -> TestClient:
    yield shared
    # Nothing a matrix test did may have changed the store.
    assert [v["version"] for v in shared.get("/lockfiles/billing/versions", headers=bearer("admin")).json()] == [1]


def routes(server: str) -> list[tuple[str, str, dict]]:
    """(method, path, request kwargs) for every route that needs a token, on ``server``."""
    return [
        ("POST", "/lock", {"json": {"server": server, "surface": V1}}),
        ("GET", "/lockfiles", {}),
        ("GET", f"/lockfiles/{server}", {}),
        ("GET", f"/lockfiles/{server}/versions", {}),
        ("GET", f"/lockfiles/{server}/versions/1", {}),
        ("POST", "/diff", {"json": {"server": server, "surface": V1}}),
        ("POST", "/check", {"json": {"server": server, "surface": V1}}),
        ("PUT", f"/servers/{server}/live", {"json": V1_SAFE}),
        ("GET", f"/servers/{server}/awareness", {"params": {"tool": "get_invoice"}}),
        ("POST", f"/servers/{server}/validation-error", {"json": {"tool": "get_invoice", "arguments": {}}}),
        ("GET", "/dashboard", {}),
        ("GET", f"/dashboard/servers/{server}", {}),
        ("GET", "/metrics", {}),
    ]


ROUTE_IDS = [f"{method} {path}" for method, path, _ in routes("billing")]


@pytest.mark.parametrize("index", range(len(ROUTE_IDS)), ids=ROUTE_IDS)
@pytest.mark.parametrize("headers", [
    {}, {"Authorization": "Bearer"}, {"Authorization": "Bearer "}, {"Authorization": f"Basic {TOKENS['admin']}"},
    {"Authorization": "Bearer not-a-known-token-at-all"}, {"Authorization": f"Bearer {TOKENS['admin']}x"},
    {"Authorization": TOKENS["admin"]},
], ids=["none", "empty", "blank", "basic", "unknown", "suffixed", "no-scheme"])
def test_every_route_is_401_without_a_valid_bearer_token(seeded: TestClient, index: int, headers: dict):
    method, path, kwargs = routes("billing")[index]
    response = seeded.request(method, path, headers=headers, **kwargs)
    assert_problem(response, 401, "unauthorized")
    assert response.headers["www-authenticate"].startswith("Bearer")


# Which token may do what: the expected status of every route for every grant in GRANTS.
ALLOWED = {
    "admin": set(ROUTE_IDS),
    "approver": {r for r in ROUTE_IDS if not r.startswith("PUT")},  # read, lock, approve; no report
    "reader": {r for r in ROUTE_IDS if not r.startswith(("PUT", "POST /lock"))},
    "mcp": {"PUT /servers/billing/live", "GET /servers/billing/awareness",
            "POST /servers/billing/validation-error", "GET /metrics"},  # report only
}


@pytest.mark.parametrize("index", range(len(ROUTE_IDS)), ids=ROUTE_IDS)
@pytest.mark.parametrize("who", sorted(ALLOWED))
def test_a_token_without_the_scope_is_403_and_with_it_passes(seeded: TestClient, who: str, index: int):
    method, path, kwargs = routes("billing")[index]
    response = seeded.request(method, path, headers=bearer(who), **kwargs)
    if ROUTE_IDS[index] in ALLOWED[who]:
        assert response.status_code in (200, 201, 204), (who, ROUTE_IDS[index], response.text[:300])
    else:
        assert_problem(response, 403, "forbidden_scope")


PER_SERVER = [r for r in ROUTE_IDS if r not in ("GET /lockfiles", "GET /dashboard", "GET /metrics")]


@pytest.mark.parametrize("route", PER_SERVER)
def test_a_token_limited_to_server_patterns_is_403_on_other_servers(seeded: TestClient, route: str):
    """The ci token (read and lock on ``bill*``): refused on payments, allowed on billing;
    reporting a live surface needs the report scope it lacks, whatever the server."""
    index = ROUTE_IDS.index(route)
    lacks_scope = route.startswith("PUT /servers")
    method, path, kwargs = routes("payments")[index]
    other = seeded.request(method, path, headers=bearer("ci"), **kwargs)
    assert_problem(other, 403, "forbidden_scope" if lacks_scope else "forbidden_server")
    method, path, kwargs = routes("billing")[index]
    own = seeded.request(method, path, headers=bearer("ci"), **kwargs)
    if lacks_scope:
        assert_problem(own, 403, "forbidden_scope")
    else:
        assert own.status_code in (200, 201, 204), own.text[:300]


def test_pattern_limited_tokens_see_only_their_servers_in_lists(client: TestClient):
    seeded = client
    for server in ("billing", "payments", "billing-eu"):
        lock(seeded, V1, server=server, headers=bearer("admin"))
    assert [row["server"] for row in seeded.get("/lockfiles", headers=bearer("ci")).json()] == [
        "billing", "billing-eu"]
    assert [row["server"] for row in seeded.get("/dashboard", headers=bearer("ci")).json()["servers"]] == [
        "billing", "billing-eu"]
    assert [row["server"] for row in seeded.get("/lockfiles", headers=bearer("reader")).json()] == [
        "billing", "billing-eu", "payments"]
    # A TOML body names its server itself: the pattern applies to it too.
    text = seeded.get("/lockfiles/payments", headers={**bearer("admin"), "Accept": "application/toml"}).content
    assert_problem(seeded.post("/lock", content=text, headers={**bearer("ci"), "content-type": "application/toml"}),
                   403, "forbidden_server")
    # The mcp token reports for billing only, never for billing-eu.
    assert_problem(seeded.put("/servers/billing-eu/live", json=V1, headers=bearer("mcp")), 403, "forbidden_server")


def test_approving_a_breaking_lock_needs_the_approve_scope(client: TestClient):
    assert lock(client, V1, headers=bearer("ci")).status_code == 201
    # A lock-only token cannot approve, even by naming someone: naming one is refused outright.
    refused = assert_problem(lock(client, V2_BREAKING, headers=bearer("ci"), approved_by="ci-bot"), 403,
                             "forbidden_scope")
    assert "approve scope" in refused["detail"]
    refused = assert_problem(lock(client, V2_BREAKING, headers=bearer("ci")), 409, "approval_required")
    assert refused["deltas"]
    # A token with approve: approved by its name, or by the person it names.
    accepted = lock(client, V2_BREAKING, headers=bearer("approver"))
    assert accepted.status_code == 201
    lock(client, V1, headers=bearer("admin"), approved_by="alice@example.com")
    history = client.get("/lockfiles/billing/versions", headers=bearer("reader")).json()
    assert [(h["who"], h["approved_by"]) for h in history] == [
        ("ci", None), ("approver", "approver"), ("admin", "alice@example.com")]


@pytest.mark.parametrize("as_toml", [False, True])
def test_approved_by_from_a_token_without_approve_is_refused_on_any_lock(client: TestClient, as_toml: bool):
    """Not only on a BREAKING lock: a lock-only token could write any approver into the audit
    log of a non-breaking one (issue 9, item 3)."""
    assert lock(client, V1, headers=bearer("ci")).status_code == 201
    if as_toml:  # the very same lock again, which would change nothing but the audit log
        text = client.get("/lockfiles/billing", headers={**bearer("ci"), "Accept": "application/toml"}).content
        response = client.post("/lock?approved_by=the-ceo", content=text,
                               headers={**bearer("ci"), "content-type": "application/toml"})
    else:
        response = lock(client, V1_COSMETIC, headers=bearer("ci"), approved_by="the-ceo")
    body = assert_problem(response, 403, "forbidden_scope")
    assert "approve scope" in body["detail"]
    history = client.get("/lockfiles/billing/versions", headers=bearer("reader")).json()
    assert [h["approved_by"] for h in history] == [None]
    assert "the-ceo" not in client.get("/lockfiles/billing/versions", headers=bearer("reader")).text
    # Without approved_by, the same lock is fine; with the approve scope, the name is kept.
    assert lock(client, V1_COSMETIC, headers=bearer("ci")).status_code == 201
    assert lock(client, V1, headers=bearer("approver"), approved_by="the-ceo").status_code == 201
    history = client.get("/lockfiles/billing/versions", headers=bearer("reader")).json()
    assert [h["approved_by"] for h in history] == [None, None, "the-ceo"]


def test_health_and_readiness_need_no_token(client: TestClient):
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code == 200
    assert client.get("/openapi.json").status_code == 200


# -- configuration ----------------------------------------------------------------------


def test_tokens_from_a_toml_config_file_hold_only_their_sha256(tmp_path: Path):
    token = "pipeline-token-0123456789"
    config = tmp_path / "mcp-governance.toml"
    config.write_text(f'[[tokens]]\nname = "pipeline"\nsha256 = "{hash_token(token).upper()}"\n'
                      f'scopes = ["read", "lock"]\nservers = ["billing"]\n', encoding="utf-8")
    settings = load_settings(lockfiles=tmp_path / "lockfiles", config=config, environ={})
    assert settings.auth_enabled
    assert settings.tokens == (TokenGrant("pipeline", hash_token(token), frozenset({"read", "lock"}), ("billing",)),)
    assert token not in repr(settings)
    with TestClient(create_app(settings)) as client:
        assert lock(client, V1, headers=bearer(token)).status_code == 201
        assert_problem(lock(client, V1, server="payments", headers=bearer(token)), 403, "forbidden_server")
        assert_problem(lock(client, V1, headers=bearer(hash_token(token))), 401)  # the hash is no token


def test_tokens_from_the_environment_may_be_plain(tmp_path: Path):
    plain = "environment-token-0123456789"
    environ = {"MCP_GOVERNANCE_TOKENS": json.dumps([
        {"name": "env", "token": plain, "scopes": ["report"]},
        {"name": "hashed", "sha256": hash_token("another-token-0123456789"), "scopes": ["read"]}]),
        "MCP_GOVERNANCE_LOCKFILES": str(tmp_path / "lockfiles")}
    settings = load_settings(environ=environ)
    assert settings.lockfiles == tmp_path / "lockfiles"
    assert [grant.name for grant in settings.tokens] == ["env", "hashed"]
    assert plain not in repr(settings)
    with TestClient(create_app(settings)) as client:
        assert client.put("/servers/billing/live", json=V1, headers=bearer(plain)).status_code == 200
        assert_problem(client.get("/lockfiles", headers=bearer(plain)), 403, "forbidden_scope")
        assert client.get("/lockfiles", headers=bearer("another-token-0123456789")).status_code == 200


@pytest.mark.parametrize("config, environ, where", [
    ('[[tokens]]\nname = "x"\ntoken = "plain-token-0123456789"\nscopes = ["read"]\n', {}, "tokens[0].token"),
    ('[[tokens]]\nname = "x"\nsha256 = "abc"\nscopes = ["read"]\n', {}, "tokens[0].sha256"),
    ('[[tokens]]\nname = "x"\nsha256 = "' + "a" * 64 + '"\nscopes = ["write"]\n', {}, "tokens[0].scopes"),
    ('[[tokens]]\nname = "x"\nsha256 = "' + "a" * 64 + '"\nscopes = []\n', {}, "tokens[0].scopes"),
    ('[[tokens]]\nname = "x"\nsha256 = "' + "a" * 64 + '"\nscopes = ["read"]\nservers = []\n', {},
     "tokens[0].servers"),
    ("tokens = [\n", {}, "mcp-governance.toml"),
    ("", {"MCP_GOVERNANCE_TOKENS": "not json"}, "MCP_GOVERNANCE_TOKENS"),
    ("", {"MCP_GOVERNANCE_TOKENS": '{"name": "x"}'}, "MCP_GOVERNANCE_TOKENS"),
    ("", {"MCP_GOVERNANCE_TOKENS": '[{"name": "x", "token": "short", "scopes": ["read"]}]'},
     "MCP_GOVERNANCE_TOKENS[0].token"),
])
def test_a_bad_token_configuration_stops_the_start_naming_the_place(tmp_path: Path, config: str, environ: dict,
                                                                     where: str):
    path = tmp_path / "mcp-governance.toml"
    path.write_text(config, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_settings(config=path, environ=environ)
    assert where in str(caught.value)
    assert "plain-token-0123456789" not in str(caught.value)


# -- logging ----------------------------------------------------------------------------


def test_no_tokens_means_open_and_a_warning_at_start(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.WARNING, logger="mcp_governance")
    app = create_app(load_settings(lockfiles=tmp_path / "lockfiles", environ={}))
    assert WARNING not in caplog.text  # said at start, not at import
    with TestClient(app) as client:
        warnings = [r for r in caplog.records if WARNING in r.getMessage()]
        assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
        assert warnings[0].name == "mcp_governance"
        assert lock(client, V1).status_code == 201  # open: no token needed
        assert client.get("/lockfiles").status_code == 200


def test_with_tokens_there_is_no_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG)
    with api(tmp_path / "lockfiles", GRANTS) as client:
        assert client.get("/healthz").status_code == 200
    assert WARNING not in caplog.text


def test_tokens_never_reach_a_log_line_or_a_response(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                    monkeypatch: pytest.MonkeyPatch):
    caplog.set_level(logging.DEBUG)
    stranger = "stranger-token-0123456789abcdef"
    seen: list[str] = []
    with api(tmp_path / "lockfiles", GRANTS) as client:
        for name in TOKENS:
            for method, path, kwargs in routes("billing") + routes("payments"):
                seen.append(client.request(method, path, headers=bearer(name), **kwargs).text)
        seen.append(client.get("/lockfiles", headers=bearer(stranger)).text)
        seen.append(lock(client, V2_BREAKING, headers=bearer("ci")).text)
        seen.append(client.post("/lock", content=b"{", headers={**bearer("ci"), "content-type": "application/json"}
                                ).text)

        def explode(*args, **kwargs):
            raise RuntimeError("boom")

        monkeypatch.setattr(client.app.state.governance, "lock", explode)
        failed = lock(client, V1, headers=bearer("admin"))
        assert failed.status_code == 500
        seen.append(failed.text)
    assert "unhandled error" in caplog.text  # the 500 was logged ...
    secrets = [*TOKENS.values(), stranger]
    for secret in secrets:  # ... and no token, in any log line or response
        assert secret not in caplog.text
        assert all(secret not in text for text in seen)
