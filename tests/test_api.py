"""The HTTP API route by route: every status code of POST /lock (201, 200, 409, 412, 413,
415, 422), the stored locks (JSON, exact TOML bytes, ETag), /diff in every report format,
/check, live reports and what is served from them (awareness, validation errors), the
dashboards, health, readiness and metrics, and the problem+json shape of every error."""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import app.service
from app.diff.reports import FORMATS
from tests.conftest import fixture_path, load_json
from tests.helpers_service import (
    LIST_TOOL,
    V1,
    V1_COSMETIC,
    V1_SAFE,
    V2_BREAKING,
    api,
    assert_healthy,
    assert_problem,
    digest_of,
    lock,
    metric,
    surface,
    tool,
)
from tests.stores import backend, corrupt

pytestmark = pytest.mark.usefixtures("store_backend")  # each test on both stores (tests/stores.py)


@pytest.fixture
def client(tmp_path: Path):
    with api(tmp_path / "lockfiles") as client:
        yield client


def versions(client: TestClient, server: str = "billing") -> list[dict]:
    response = client.get(f"/lockfiles/{server}/versions")
    return response.json() if response.status_code == 200 else []


# -- POST /lock -------------------------------------------------------------------------


def test_first_lock_is_201_with_its_version_digest_and_diff(client: TestClient, tmp_path: Path):
    response = lock(client, V1, server_version="2.4.0", commit="9f1c2ab", reason="release 2.4.0")
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"server", "version", "integrity_digest", "previous_digest", "diff"}
    assert body["server"] == "billing" and body["version"] == 1 and body["previous_digest"] is None
    assert body["integrity_digest"] == digest_of(V1)
    assert sorted(body["diff"]["tools"]["added"]) == ["get_invoice", "list_invoices"]
    assert response.headers["etag"] == f'"{body["integrity_digest"]}"'
    assert response.headers["location"] == "/lockfiles/billing/versions/1"
    if backend() == "dir":
        assert (tmp_path / "lockfiles" / "billing.lock.toml").is_file()
    [record] = versions(client)
    assert (record["server_version"], record["commit"], record["reason"]) == ("2.4.0", "9f1c2ab", "release 2.4.0")


def test_the_same_surface_again_is_200_with_the_existing_version_and_writes_nothing(client: TestClient):
    first = lock(client, V1).json()
    # Same contract, other key and tool order, other metadata: still the same lock.
    reordered = {"tools": [copy.deepcopy(LIST_TOOL), dict(reversed(list(copy.deepcopy(V1["tools"][0]).items())))]}
    for again in (lock(client, V1), lock(client, reordered, reason="re-run of the pipeline")):
        assert again.status_code == 200
        body = again.json()
        assert (body["version"], body["integrity_digest"]) == (1, first["integrity_digest"])
        assert body["diff"]["deltas"] == [] and body["diff"]["maxSeverity"] is None
    assert len(versions(client)) == 1


def test_breaking_change_without_approval_is_409_with_the_breaking_deltas(client: TestClient):
    lock(client, V1)
    refused = lock(client, V2_BREAKING)
    problem = assert_problem(refused, 409, "approval_required")
    assert problem["deltas"], problem
    assert {d["severity"] for d in problem["deltas"]} == {"BREAKING"}
    assert any(d["tool"] == "get_invoice" and d["field"] == "input.currency" for d in problem["deltas"])
    assert len(versions(client)) == 1
    assert client.get("/lockfiles/billing").json()["record"]["version"] == 1


def test_approved_by_accepts_the_breaking_change_and_the_audit_log_says_who(client: TestClient):
    v1 = lock(client, V1).json()
    accepted = lock(client, V2_BREAKING, approved_by="alice@example.com", reason="currency is required now")
    assert accepted.status_code == 201
    body = accepted.json()
    assert body["version"] == 2 and body["previous_digest"] == v1["integrity_digest"]
    assert body["diff"]["maxSeverity"] == "BREAKING" and body["diff"]["summary"]["BREAKING"] >= 1
    record = versions(client)[1]
    assert record["approved_by"] == "alice@example.com"
    assert record["max_severity"] == "BREAKING" and record["summary"]["BREAKING"] >= 1


def test_a_change_that_breaks_nothing_needs_no_approval(client: TestClient):
    lock(client, V1)
    for version, changed in ((2, V1_SAFE), (3, V1_COSMETIC)):
        response = lock(client, changed)
        assert response.status_code == 201, response.text
        assert response.json()["version"] == version


def test_if_match_must_name_the_current_digest_or_it_is_412(client: TestClient):
    assert_problem(lock(client, V1, headers={"If-Match": '"sha256:0000"'}), 412, "precondition_failed")
    assert versions(client) == []
    v1 = lock(client, V1).json()["integrity_digest"]
    stale = assert_problem(lock(client, V1_SAFE, headers={"If-Match": "sha256:not-the-current"}), 412,
                           "precondition_failed")
    assert stale["current"] == v1
    assert len(versions(client)) == 1
    # The ETag as served (quoted) and the bare digest both name it.
    assert lock(client, V1_SAFE, headers={"If-Match": f'"{v1}"'}).status_code == 201
    v2 = client.get("/lockfiles/billing").headers["etag"].strip('"')
    assert lock(client, V1_COSMETIC, headers={"If-Match": v2}).status_code == 201
    assert_problem(lock(client, V1, headers={"If-Match": v1}), 412, "precondition_failed")


def test_a_toml_lockfile_body_is_locked_with_its_metadata_in_the_query(client: TestClient):
    lock(client, V1, server="staging")
    lock(client, V2_BREAKING, server="staging", approved_by="ci")
    toml_v1 = client.get("/lockfiles/staging/versions/1", headers={"Accept": "application/toml"}).content
    toml_v2 = client.get("/lockfiles/staging/versions/2", headers={"Accept": "application/toml"}).content
    as_billing = {"content-type": "application/toml"}
    first = client.post("/lock", content=toml_v1.replace(b'"staging"', b'"billing"').replace(
        b"'staging'", b"'billing'"), headers=as_billing)
    assert first.status_code == 201, first.text
    assert first.json()["integrity_digest"] == digest_of(V1)
    # The exact bytes of the current lock back again: idempotent.
    current = client.get("/lockfiles/billing", headers={"Accept": "application/toml"}).content
    assert client.post("/lock", content=current, headers=as_billing).status_code == 200
    breaking = toml_v2.replace(b'"staging"', b'"billing"').replace(b"'staging'", b"'billing'")
    assert_problem(client.post("/lock", content=breaking, headers=as_billing), 409, "approval_required")
    ok = client.post("/lock?approved_by=bob&reason=ship&commit=abc123", content=breaking, headers=as_billing)
    assert ok.status_code == 201
    record = versions(client)[-1]
    assert (record["approved_by"], record["reason"], record["commit"]) == ("bob", "ship", "abc123")


def test_a_body_over_the_limit_is_413_and_the_service_stays_up(tmp_path: Path):
    with api(tmp_path / "default") as client:  # default limit: 16 MiB
        big = b'{"server": "billing", "surface": {"tools": []}, "reason": "' + b"x" * (20 * 1024 * 1024) + b'"}'
        assert_problem(client.post("/lock", content=big, headers={"content-type": "application/json"}), 413,
                       "payload_too_large")
        assert_healthy(client)
    with api(tmp_path / "small", max_body_bytes=4096) as client:
        # Streamed without a Content-Length: stopped while it streams in.
        def chunks():
            for _ in range(64):
                yield b" " * 1024

        assert_problem(client.post("/lock", content=chunks(), headers={"content-type": "application/json"}), 413,
                       "payload_too_large")
        assert lock(client, V1).status_code == 201  # under the limit


def test_an_unsupported_media_type_is_415(client: TestClient):
    assert_problem(client.post("/lock", content=b"tools: []", headers={"content-type": "text/yaml"}), 415,
                   "unsupported_media_type")


@pytest.mark.parametrize("body, where", [
    ({"surface": V1}, "body.server"),
    ({"server": "billing"}, "body.surface"),
    ({"server": "billing", "surface": V1, "aproved_by": "typo"}, "body.aproved_by"),
    ({"server": "billing", "surface": {"tools": "get_invoice"}}, "body.surface"),
    ({"server": "billing", "surface": V1, "input_format": "yaml"}, "body.surface"),
    ({"server": 42, "surface": V1}, "body.server"),
])
def test_a_lock_body_that_cannot_be_used_is_422_naming_the_field(client: TestClient, body, where):
    problem = assert_problem(client.post("/lock", json=body), 422)
    assert problem["detail"].startswith(where), problem["detail"]
    assert versions(client) == []


# -- the stored locks -------------------------------------------------------------------


def test_lockfiles_lists_every_server_with_version_digest_and_locked_at(client: TestClient):
    assert client.get("/lockfiles").json() == []
    lock(client, V1, server="payments")
    lock(client, V1)
    lock(client, V1_SAFE)
    rows = client.get("/lockfiles").json()
    assert [row["server"] for row in rows] == ["billing", "payments"]
    billing = rows[0]
    assert (billing["version"], billing["integrity_digest"], billing["status"]) == (2, digest_of(V1_SAFE), "locked")
    assert billing["locked_at"].endswith("Z")


def test_a_lock_is_served_as_json_or_as_the_exact_stored_toml_with_the_digest_as_etag(client: TestClient,
                                                                                      tmp_path: Path):
    digest = lock(client, V1).json()["integrity_digest"]
    as_json = client.get("/lockfiles/billing")
    assert as_json.status_code == 200 and as_json.headers["content-type"].startswith("application/json")
    assert as_json.headers["etag"] == f'"{digest}"'
    view = as_json.json()
    assert view["record"]["version"] == 1 and view["record"]["integrity_digest"] == digest
    assert view["lockfile"]["integrity_digest"] == digest
    assert sorted(view["lockfile"]["tools"]) == ["get_invoice", "list_invoices"]
    as_toml = client.get("/lockfiles/billing", headers={"Accept": "application/toml"})
    assert as_toml.headers["content-type"].startswith("application/toml")
    assert as_toml.headers["etag"] == f'"{digest}"'
    if backend() == "dir":
        assert as_toml.content == (tmp_path / "lockfiles" / "billing.lock.toml").read_bytes()
    not_modified = client.get("/lockfiles/billing", headers={"If-None-Match": f'"{digest}"'})
    assert not_modified.status_code == 304 and not not_modified.content


def test_versions_list_the_audit_log_and_each_version_keeps_its_bytes(client: TestClient, tmp_path: Path):
    one = lock(client, V1, reason="first").json()["integrity_digest"]
    two = lock(client, V2_BREAKING, approved_by="alice").json()["integrity_digest"]
    history = versions(client)
    assert [(r["version"], r["integrity_digest"], r["previous_digest"]) for r in history] == [
        (1, one, None), (2, two, one)]
    first = client.get("/lockfiles/billing/versions/1", headers={"Accept": "application/toml"})
    assert first.status_code == 200 and first.headers["etag"] == f'"{one}"'
    assert one in first.text  # the canonical TOML records its own digest
    if backend() == "dir":
        stored = tmp_path / "lockfiles" / ".store" / "billing" / "versions" / "000001.lock.toml"
        assert first.content == stored.read_bytes()
    as_json = client.get("/lockfiles/billing/versions/1").json()
    assert as_json["record"]["reason"] == "first" and as_json["lockfile"]["integrity_digest"] == one
    assert client.get("/lockfiles/billing/versions/2").json()["record"]["approved_by"] == "alice"


def test_unknown_servers_and_versions_are_404_and_bad_numbers_422(client: TestClient):
    assert_problem(client.get("/lockfiles/nobody"), 404, "not_found")
    assert_problem(client.get("/lockfiles/nobody/versions"), 404, "not_found")
    lock(client, V1)
    assert_problem(client.get("/lockfiles/billing/versions/2"), 404, "not_found")
    assert_problem(client.get("/lockfiles/billing/versions/0"), 404, "not_found")
    assert_problem(client.get("/lockfiles/billing/versions/one"), 422)
    assert_problem(client.get("/lockfiles/bad%20name"), 422, "invalid_input")


# -- POST /diff and POST /check ---------------------------------------------------------


def test_diff_of_two_surfaces_and_the_gate_header(client: TestClient):
    response = client.post("/diff", json={"before": V1, "after": V2_BREAKING})
    assert response.status_code == 200 and response.headers["content-type"].startswith("application/json")
    assert response.headers["x-contractdiff-gate"] == "fail"
    report = response.json()
    assert report["maxSeverity"] == "BREAKING" and report["tools"]["changed"] == ["get_invoice"]
    assert any(d["rule"].startswith("input.") and d["field"] == "input.currency" for d in report["deltas"])
    assert client.post("/diff?fail_on=never", json={"before": V1, "after": V2_BREAKING}).headers[
        "x-contractdiff-gate"] == "pass"
    safe = {"before": V1, "after": V1_SAFE}
    assert client.post("/diff", json=safe).headers["x-contractdiff-gate"] == "pass"
    assert client.post("/diff?fail_on=SAFE", json=safe).headers["x-contractdiff-gate"] == "fail"
    assert client.post("/diff?fail_on=risky", json=safe).headers["x-contractdiff-gate"] == "pass"


@pytest.mark.parametrize("fmt", FORMATS)
def test_diff_against_the_current_lock_in_every_report_format(client: TestClient, fmt: str):
    lock(client, V1)
    response = client.post(f"/diff?format={fmt}", json={"server": "billing", "surface": V2_BREAKING})
    assert response.status_code == 200, response.text
    assert response.headers["x-contractdiff-gate"] == "fail"
    text = response.text
    assert "currency" in text
    if fmt == "json":
        assert json.loads(text)["maxSeverity"] == "BREAKING"
    elif fmt == "sarif":
        assert json.loads(text)["version"] == "2.1.0"
    elif fmt == "junit":
        assert ET.fromstring(text).tag in ("testsuites", "testsuite")


def test_diff_refusals(client: TestClient):
    assert_problem(client.post("/diff", json={"server": "nobody", "surface": V1}), 404, "not_found")
    assert_problem(client.post("/diff", json={"before": V1}), 422, "invalid_input")
    assert_problem(client.post("/diff?format=pdf", json={"before": V1, "after": V1}), 422, "invalid_input")
    assert_problem(client.post("/diff?fail_on=sometimes", json={"before": V1, "after": V1}), 422, "invalid_input")
    assert_problem(client.post("/diff", json={"before": V1, "after": {"tools": 1}}), 422, "invalid_input")


def test_check_is_ok_only_when_the_digest_equals_the_lock(client: TestClient):
    lock(client, V1)
    same = client.post("/check", json={"server": "billing", "surface": {"tools": list(reversed(V1["tools"]))}})
    assert same.json() == {"ok": True, "added": [], "removed": [], "changed": [],
                           "unchanged": ["get_invoice", "list_invoices"], "maxSeverity": None, "deltas": []}
    cosmetic = client.post("/check", json={"server": "billing", "surface": V1_COSMETIC}).json()
    assert cosmetic["ok"] is False and cosmetic["maxSeverity"] == "COSMETIC"
    assert cosmetic["changed"] == ["get_invoice"] and cosmetic["deltas"]
    grown = surface(*V1["tools"], tool("refund", required=()))
    shrunk = surface(V1["tools"][0])
    assert client.post("/check", json={"server": "billing", "surface": grown}).json()["added"] == ["refund"]
    removed = client.post("/check", json={"server": "billing", "surface": shrunk}).json()
    assert removed["removed"] == ["list_invoices"] and removed["maxSeverity"] == "BREAKING"
    assert_problem(client.post("/check", json={"server": "nobody", "surface": V1}), 404, "not_found")
    assert_problem(client.post("/check", json={"server": "billing"}), 422, "invalid_input")


# -- live surfaces, awareness, validation errors ----------------------------------------


def test_a_live_report_is_diffed_against_the_lock_and_awareness_is_served_from_it(client: TestClient):
    lock(client, V1)
    live = client.put("/servers/billing/live", json=V2_BREAKING)
    assert live.status_code == 200
    body = live.json()
    assert body["status"] == "drifted" and body["lock_version"] == 1 and body["maxSeverity"] == "BREAKING"
    assert body["live_digest"] == digest_of(V2_BREAKING) and body["summary"]["BREAKING"] >= 1
    section = client.get("/servers/billing/awareness", params={"tool": "get_invoice"})
    assert section.status_code == 200 and section.headers["content-type"].startswith("application/xml")
    root = ET.fromstring(section.text)
    assert root.tag == "contract_awareness" and root.findtext("max_severity") == "BREAKING"
    fields = [change.get("field") for change in root.iter("change")]
    assert "input.currency" in fields
    # Nothing relevant for the unchanged tool; unknown tool or server: 404.
    assert client.get("/servers/billing/awareness", params={"tool": "list_invoices"}).status_code == 204
    assert_problem(client.get("/servers/billing/awareness", params={"tool": "nope"}), 404, "not_found")
    assert_problem(client.get("/servers/nobody/awareness", params={"tool": "get_invoice"}), 404, "not_found")
    assert_problem(client.get("/servers/billing/awareness"), 422)
    for bad_max in ("0", "21", "many"):
        assert_problem(client.get("/servers/billing/awareness", params={"tool": "get_invoice", "max": bad_max}), 422)


def test_awareness_max_caps_the_changes_and_counts_the_rest(client: TestClient):
    lock(client, V1)
    worse = surface(tool(properties={"id": {"type": "integer"}, "currency": {"type": "string"},
                                     "year": {"type": "integer"}}, required=("id", "currency", "year")), LIST_TOOL)
    client.put("/servers/billing/live", json=worse)
    full = ET.fromstring(client.get("/servers/billing/awareness", params={"tool": "get_invoice"}).text)
    capped = ET.fromstring(client.get("/servers/billing/awareness", params={"tool": "get_invoice", "max": 1}).text)
    total = int(full.findtext("change_count")) + int(full.findtext("omitted_count"))
    assert total >= 3
    assert int(capped.findtext("change_count")) == 1 == len(list(capped.iter("change")))
    assert int(capped.findtext("omitted_count")) == total - 1


def test_awareness_and_validation_errors_never_diff(client: TestClient, monkeypatch: pytest.MonkeyPatch):
    calls = []
    real = app.service.diff
    monkeypatch.setattr(app.service, "diff", lambda *a, **k: calls.append(1) or real(*a, **k))
    lock(client, V1)
    calls.clear()
    client.put("/servers/billing/live", json=V2_BREAKING)
    assert len(calls) == 1  # the live report is diffed once

    def refuse(*args, **kwargs):
        raise AssertionError("the awareness path must not diff")

    monkeypatch.setattr(app.service, "diff", refuse)
    for _ in range(3):
        assert client.get("/servers/billing/awareness", params={"tool": "get_invoice"}).status_code == 200
        assert client.get("/servers/billing/awareness", params={"tool": "list_invoices"}).status_code == 204
        reply = client.post("/servers/billing/validation-error", json={"tool": "get_invoice", "arguments": {}})
        assert reply.status_code == 200 and "<contract_awareness>" in reply.json()["xml"]


def test_a_new_lock_recomputes_the_live_result(client: TestClient):
    lock(client, V1)
    client.put("/servers/billing/live", json=V2_BREAKING)
    assert client.get("/servers/billing/awareness", params={"tool": "get_invoice"}).status_code == 200
    lock(client, V2_BREAKING, approved_by="alice")
    assert client.get("/servers/billing/awareness", params={"tool": "get_invoice"}).status_code == 204
    row = client.get("/dashboard/servers/billing").json()["server"]
    assert (row["status"], row["version"], row["maxSeverity"]) == ("in-sync", 2, None)
    # And back: a lock the live surface no longer matches drifts again.
    lock(client, V1, approved_by="alice")
    row = client.get("/dashboard/servers/billing").json()["server"]
    assert (row["status"], row["version"], row["maxSeverity"]) == ("drifted", 3, "BREAKING")


def test_a_live_report_before_any_lock(client: TestClient):
    response = client.put("/servers/newcomer/live", json=V1)
    assert response.status_code == 200
    assert (response.json()["status"], response.json()["lock_version"]) == ("unlocked", None)
    assert client.get("/servers/newcomer/awareness", params={"tool": "get_invoice"}).status_code == 204
    assert_problem(client.get("/servers/newcomer/awareness", params={"tool": "nope"}), 404)
    lock(client, V1_SAFE, server="newcomer")  # the lock recomputes the live diff
    live = client.get("/dashboard/servers/newcomer").json()["server"]
    assert live["status"] == "drifted" and live["maxSeverity"] is not None


def test_a_live_report_may_be_toml_and_names_its_server_by_the_path(client: TestClient):
    lock(client, V1, server="staging")
    text = client.get("/lockfiles/staging", headers={"Accept": "application/toml"}).content
    lock(client, V1)
    response = client.put("/servers/billing/live", content=text, headers={"content-type": "application/toml"})
    assert response.status_code == 200 and response.json()["status"] == "in-sync"


def test_a_grouped_tool_is_scoped_by_action(client: TestClient):
    grouped = load_json(fixture_path("grouped.json"))
    changed = copy.deepcopy(grouped)
    get_invoice = changed["tools"][0]["inputSchema"]["$defs"]["GetInvoice"]
    get_invoice["properties"]["currency"] = {"type": "string", "enum": ["EUR", "USD"]}
    get_invoice["required"].append("currency")
    lock(client, grouped, server="acme")
    client.put("/servers/acme/live", json=changed)
    for params in ({"tool": "billing", "action": "get_invoice"}, {"tool": "billing.get_invoice"}):
        section = ET.fromstring(client.get("/servers/acme/awareness", params=params).text)
        assert section.findtext("action") == "get_invoice"
    assert client.get("/servers/acme/awareness", params={"tool": "billing", "action": "list"}).status_code == 204
    # The discriminator picks the action's branch of the live schema.
    reply = client.post("/servers/acme/validation-error",
                        json={"tool": "billing", "arguments": {"action": "get_invoice", "id": "inv_1"}}).json()
    root = ET.fromstring(reply["xml"])
    assert root.get("action") == "billing.get_invoice"
    assert [f.get("name") for f in root.findall("field")] == ["currency"]
    assert client.post("/servers/acme/validation-error", json={
        "tool": "billing", "arguments": {"action": "list", "limit": 5}}).json() == {"valid": True, "xml": ""}
    over = client.post("/servers/acme/validation-error", json={
        "tool": "billing", "action": "list", "arguments": {"action": "list", "limit": 500}}).json()
    assert [f.get("name") for f in ET.fromstring(over["xml"]).findall("field")] == ["limit"]


def test_validation_error_checks_arguments_against_the_live_input_schema(client: TestClient):
    lock(client, V1)
    live = surface(tool(properties={
        "id": {"type": "string", "format": "email"},
        "currency": {"type": "string", "enum": ["EUR", "USD"]},
        "lines": {"type": "array", "items": {"type": "object", "properties": {"qty": {"type": "integer"}},
                                             "required": ["qty"]}},
    }, required=("id", "currency")), LIST_TOOL)
    client.put("/servers/billing/live", json=live)
    reply = client.post("/servers/billing/validation-error", json={
        "tool": "get_invoice", "arguments": {"id": "not-an-email", "lines": [{"qty": 1}, {"qty": "two"}, {}]}})
    assert reply.status_code == 200
    body = reply.json()
    assert body["valid"] is False
    root = ET.fromstring(body["xml"])
    assert root.tag == "validation_error" and root.get("action") == "get_invoice"
    fields = {f.get("name"): f.text for f in root.findall("field")}
    # One field per problem, named by the path of the argument; a missing one by its own name.
    assert set(fields) == {"id", "currency", "lines[1].qty", "lines[2].qty"}, fields
    assert "(missing)" in fields["currency"] and "'not-an-email'" in fields["id"]
    assert root.find("recovery") is not None and root.find("contract_awareness") is not None
    valid = client.post("/servers/billing/validation-error", json={
        "tool": "get_invoice", "arguments": {"id": "a@example.com", "currency": "EUR"}})
    assert valid.json() == {"valid": True, "xml": ""}


def test_validation_error_takes_the_servers_own_issues(client: TestClient):
    lock(client, V1)
    reply = client.post("/servers/billing/validation-error", json={
        "tool": "get_invoice", "issues": [{"path": "id", "kind": "type", "sent": 42, "expected": "string"}]})
    root = ET.fromstring(reply.json()["xml"])
    assert [f.get("name") for f in root.findall("field")] == ["id"]
    assert reply.json()["valid"] is False
    # Before any live report the lock's schema is used (no awareness: nothing drifted).
    assert root.find("contract_awareness") is None


def test_validation_error_refusals(client: TestClient):
    assert_problem(client.post("/servers/billing/validation-error", json={"tool": "get_invoice", "arguments": {}}),
                   404, "not_found")
    lock(client, V1)
    assert_problem(client.post("/servers/billing/validation-error", json={"tool": "nope", "arguments": {}}),
                   404, "not_found")
    assert_problem(client.post("/servers/billing/validation-error", json={"arguments": {}}), 422)
    # Arguments and issues at once, or no issue at all, would render a contradiction.
    both = {"tool": "get_invoice", "arguments": {"id": 1}, "issues": [{"path": "id", "kind": "type"}]}
    assert_problem(client.post("/servers/billing/validation-error", json=both), 422, "invalid_input")
    assert_problem(client.post("/servers/billing/validation-error", json={"tool": "get_invoice", "issues": []}),
                   422, "invalid_input")


# -- dashboards -------------------------------------------------------------------------


def test_the_dashboard_shows_every_server_and_its_drift(client: TestClient, tmp_path: Path):
    lock(client, V1, server="in-sync")
    client.put("/servers/in-sync/live", json=V1)
    lock(client, V1, server="drifted")
    client.put("/servers/drifted/live", json=V2_BREAKING)
    lock(client, V1, server="quiet")
    client.put("/servers/unlocked/live", json=V1)
    lock(client, V1, server="broken")
    corrupt(tmp_path / "lockfiles", "broken", "Fetch one invoice", "Fetch anything")
    rows = {row["server"]: row for row in client.get("/dashboard").json()["servers"]}
    assert {name: row["status"] for name, row in rows.items()} == {
        "broken": "corrupt", "drifted": "drifted", "in-sync": "in-sync", "quiet": "unreported",
        "unlocked": "unlocked"}
    drifted = rows["drifted"]
    assert drifted["version"] == 1 and drifted["locked_at"] and drifted["last_reported"]
    assert drifted["lock_digest"] == digest_of(V1) and drifted["live_digest"] == digest_of(V2_BREAKING)
    assert drifted["maxSeverity"] == "BREAKING" and drifted["counts"]["BREAKING"] >= 1
    assert set(drifted["counts"]) == {"BREAKING", "RISKY", "SAFE", "COSMETIC"}
    assert rows["in-sync"]["maxSeverity"] is None and not any(rows["in-sync"]["counts"].values())
    assert rows["quiet"]["last_reported"] is None and rows["quiet"]["live_digest"] is None
    assert rows["unlocked"]["version"] is None and rows["unlocked"]["live_digest"] == digest_of(V1)


def test_one_servers_dashboard_has_its_history_and_tool_statuses(client: TestClient):
    lock(client, V1)
    lock(client, V2_BREAKING, approved_by="alice")
    live = surface(V2_BREAKING["tools"][0], tool("refund", required=()))
    client.put("/servers/billing/live", json=live)
    board = client.get("/dashboard/servers/billing").json()
    assert board["server"]["status"] == "drifted"
    history = board["history"]
    assert [h["version"] for h in history] == [1, 2]
    assert history[0]["summary"] == {} and history[0]["max_severity"] is None
    assert history[1]["summary"]["BREAKING"] >= 1 and history[1]["max_severity"] == "BREAKING"
    assert history[1]["approved_by"] == "alice"
    tools = {row["tool"]: row for row in board["tools"]}
    assert {name: row["status"] for name, row in tools.items()} == {
        "get_invoice": "unchanged", "list_invoices": "removed", "refund": "added"}
    assert tools["list_invoices"]["maxSeverity"] == "BREAKING" and tools["list_invoices"]["counts"]["BREAKING"] == 1
    assert_problem(client.get("/dashboard/servers/nobody"), 404, "not_found")


# -- operations -------------------------------------------------------------------------


@pytest.mark.directory_store
def test_health_and_readiness(client: TestClient, tmp_path: Path):
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").json() == {"status": "ready"}
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the store should be")
    with api(blocker / "lockfiles") as broken:
        assert broken.get("/healthz").status_code == 200
        assert_problem(broken.get("/readyz"), 503, "store_unavailable")


def test_metrics_count_requests_by_route_and_status_latency_locks_and_awareness(client: TestClient):
    before = client.get("/metrics").text
    lock(client, V1)
    lock(client, V1)
    lock(client, V2_BREAKING)
    lock(client, V1_SAFE, headers={"If-Match": "sha256:stale"})
    client.put("/servers/billing/live", json=V2_BREAKING)
    client.get("/servers/billing/awareness", params={"tool": "get_invoice"})
    client.get("/servers/billing/awareness", params={"tool": "list_invoices"})
    client.get("/servers/billing/awareness", params={"tool": "list_invoices"})
    client.get("/no/such/route")
    after = client.get("/metrics")
    assert after.headers["content-type"].startswith("text/plain")

    def grew(name: str, **labels: str) -> float:
        return metric(after.text, name, **labels) - metric(before, name, **labels)

    requests = "mcp_governance_requests_total"
    assert grew(requests, route="/lock", method="POST", status="201") == 1
    assert grew(requests, route="/lock", method="POST", status="200") == 1
    assert grew(requests, route="/lock", method="POST", status="409") == 1
    assert grew(requests, route="/lock", method="POST", status="412") == 1
    assert grew(requests, route="/servers/{server}/awareness", status="204") == 2
    assert grew(requests, route="unmatched", status="404") == 1
    assert "/servers/billing/awareness" not in after.text  # route templates, never raw paths
    assert grew("mcp_governance_request_duration_seconds_count", route="/lock") == 4
    assert grew("mcp_governance_request_duration_seconds_bucket", route="/lock", le="+Inf") == 4
    for outcome, count in (("created", 1), ("unchanged", 1), ("needs_approval", 1), ("precondition_failed", 1)):
        assert grew("mcp_governance_locks_total", outcome=outcome) == count, outcome
    assert grew("mcp_governance_awareness_total", outcome="hit") == 1
    assert grew("mcp_governance_awareness_total", outcome="empty") == 2


def test_every_error_is_problem_json_and_an_unexpected_one_is_a_bare_500(client: TestClient,
                                                                       monkeypatch: pytest.MonkeyPatch):
    assert_problem(client.get("/no/such/route"), 404, "not_found")
    assert_problem(client.delete("/lockfiles"), 405, "method_not_allowed")

    def explode(*args, **kwargs):
        raise RuntimeError("secret internals /etc/shadow")

    monkeypatch.setattr(client.app.state.governance, "lock", explode)
    problem = assert_problem(lock(client, V1), 500, "internal_error")
    assert "secret" not in problem["detail"] and "RuntimeError" not in json.dumps(problem)
    monkeypatch.undo()
    assert_healthy(client)


def test_the_openapi_document_lists_every_route(client: TestClient):
    paths = client.get("/openapi.json").json()["paths"]
    expected = {
        "/lock": {"post"}, "/lockfiles": {"get"}, "/lockfiles/{server}": {"get"},
        "/lockfiles/{server}/versions": {"get"}, "/lockfiles/{server}/versions/{number}": {"get"},
        "/diff": {"post"}, "/check": {"post"}, "/servers/{server}/live": {"put"},
        "/servers/{server}/awareness": {"get"}, "/servers/{server}/validation-error": {"post"},
        "/dashboard": {"get"}, "/dashboard/servers/{server}": {"get"}, "/healthz": {"get"}, "/readyz": {"get"},
        "/metrics": {"get"},
    }
    assert {path: set(ops) for path, ops in paths.items()} == expected
