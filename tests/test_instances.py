"""Per-instance live surfaces (on both stores): during a rollout old and new instances of one
server report side by side; the dashboard shows each instance's drift and the worst of them;
awareness uses the calling instance's own report (hot path included); an instance not heard
from for ``instance_seconds`` expires."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.helpers_service import V1, V1_SAFE, V2_BREAKING, api, assert_problem, lock, make_app, uvicorn_thread

pytestmark = pytest.mark.usefixtures("store_backend")
AWARENESS = "/servers/billing/awareness"
TTL = 60
"""instance_seconds in the expiry tests, which move the service's clock past it (never sleep)."""


def advance(client, seconds: float) -> None:  # type: ignore[no-untyped-def]
    """Move the service's clock ``seconds`` ahead of real time (stamps, expiry, pruning)."""
    governance = client.app.state.governance
    real = governance.clock
    governance.clock = lambda: real() + seconds


def row(client, server: str = "billing") -> dict:  # type: ignore[no-untyped-def, type-arg]
    rows = {r["server"]: r for r in client.get("/dashboard").json()["servers"]}
    return rows[server]


def test_each_instance_keeps_its_own_surface_and_the_dashboard_shows_the_worst(tmp_path: Path):
    with api(tmp_path) as client:
        assert lock(client, V1).status_code == 201
        assert client.put("/servers/billing/live", json=V1, headers={"X-Instance-Id": "old-1"}).status_code == 200
        assert client.put("/servers/billing/live?instance=new-1", json=V2_BREAKING).status_code == 200
        assert client.put("/servers/billing/live", json=V1_SAFE, headers={"X-Instance-Id": "old-2"}).status_code == 200
        billing = row(client)
        instances = {i["instance"]: i for i in billing["instances"]}
        assert sorted(instances) == ["new-1", "old-1", "old-2"]
        assert (instances["old-1"]["status"], instances["old-1"]["maxSeverity"]) == ("in-sync", None)
        assert (instances["new-1"]["status"], instances["new-1"]["maxSeverity"]) == ("drifted", "BREAKING")
        assert instances["old-2"]["maxSeverity"] == "SAFE"
        assert billing["worstSeverity"] == "BREAKING"
        assert billing["maxSeverity"] == "SAFE"  # the server's last report was old-2's
        page = client.get("/ui/servers/billing").text  # the dashboard's instances table
        assert "Instances (3)" in page and "new-1" in page and "old-2" in page
        assert '<th scope="col">Instances</th>' in client.get("/").text  # the fleet table's column
        # A lock of the new surface: every instance is diffed again against it.
        assert lock(client, V2_BREAKING, approved_by="alice").status_code == 201
        instances = {i["instance"]: i for i in row(client)["instances"]}
        assert instances["new-1"]["status"] == "in-sync" and instances["old-1"]["status"] == "drifted"


def test_awareness_answers_for_the_calling_instance(tmp_path: Path):
    with uvicorn_thread(make_app(tmp_path)) as url, httpx.Client(base_url=url, timeout=5) as http:
        assert lock(http, V1).status_code == 201
        assert http.put("/servers/billing/live", json=V2_BREAKING, headers={"X-Instance-Id": "new"}).status_code == 200
        assert http.put("/servers/billing/live", json=V1, headers={"X-Instance-Id": "old"}).status_code == 200
        for _ in range(2):  # the second round comes from memory
            old = http.get(AWARENESS, params={"tool": "get_invoice"}, headers={"X-Instance-Id": "old"})
            new = http.get(AWARENESS, params={"tool": "get_invoice", "instance": "new"})
            latest = http.get(AWARENESS, params={"tool": "get_invoice"})
            assert old.status_code == 204
            assert new.status_code == 200 and "currency" in new.text
            assert latest.status_code == 204  # no instance named: the server's last report (old's)
        assert {r.headers["x-awareness-path"] for r in (old, new, latest)} == {"hot"}
        unknown = http.get(AWARENESS, params={"tool": "get_invoice", "instance": "never-reported"})
        assert unknown.status_code == 204  # an instance without a report: the server's last one


def test_an_instance_not_heard_from_expires(tmp_path: Path):
    with api(tmp_path, instance_seconds=TTL) as client:
        assert lock(client, V1).status_code == 201
        new = client.put("/servers/billing/live", json=V2_BREAKING, headers={"X-Instance-Id": "new"})
        assert new.status_code == 200
        assert client.put("/servers/billing/live", json=V1).status_code == 200
        assert client.get(AWARENESS, params={"tool": "get_invoice", "instance": "new"}).status_code == 200
        assert [i["instance"] for i in row(client)["instances"]] == ["new"]
        advance(client, TTL + 1)
        assert "instances" not in row(client) or row(client)["instances"] is None
        assert client.get(AWARENESS, params={"tool": "get_invoice", "instance": "new"}).status_code == 204


@pytest.mark.parametrize("bad", ["../x", "a b", "x" * 200])
def test_an_instance_id_that_is_no_name_is_422(tmp_path: Path, bad: str):
    with api(tmp_path) as client:
        lock(client, V1)
        body = assert_problem(client.put("/servers/billing/live", params={"instance": bad}, json=V1), 422)
        assert "instance" in body["detail"]
        assert_problem(client.get(AWARENESS, params={"tool": "get_invoice", "instance": bad}), 422)


@pytest.mark.directory_store
def test_the_client_and_the_cli_name_the_instance(tmp_path: Path):
    import json
    import subprocess
    import sys

    from mcp_governance.client import GovernanceClient
    from tests.helpers_service import clean_env

    with uvicorn_thread(make_app(tmp_path / "lockfiles")) as url:
        with GovernanceClient(url) as client:
            client.lock("billing", V1)
            assert client.report_live("billing", V1_SAFE, instance="canary") is not None
        surface = tmp_path / "live.json"
        surface.write_text(json.dumps(V2_BREAKING))
        done = subprocess.run([sys.executable, "-m", "app", "live", str(surface), "--server", "billing", "--url", url,
                               "--instance", "blue-7"], capture_output=True, text=True, timeout=60, env=clean_env(),
                              check=False)
        assert done.returncode == 0, done.stderr
        rows = httpx.get(f"{url}/dashboard", timeout=5).json()["servers"]
        assert sorted(i["instance"] for i in rows[0]["instances"]) == ["blue-7", "canary"]


def test_a_client_named_for_its_instance_gets_its_own_awareness_and_validation_error(tmp_path: Path):
    """A client built with ``instance=`` names itself on every call, not only on its live
    report: during a rollout the new instance's model is told about the new instance's drift
    even when an old instance reported last (the fleet's last report is in sync)."""
    from mcp_governance.client import GovernanceClient

    with (uvicorn_thread(make_app(tmp_path)) as url,
          GovernanceClient(url, hot_timeout=5.0, instance="new") as new,
          GovernanceClient(url, hot_timeout=5.0, instance="old") as old,
          GovernanceClient(url, hot_timeout=5.0) as fleet):
        fleet.lock("billing", V1)
        assert new.report_live("billing", V2_BREAKING) is not None
        assert old.report_live("billing", V1) is not None  # the server's last report: in sync
        assert sorted(i["instance"] for i in httpx.get(f"{url}/dashboard", timeout=5).json()["servers"][0]
                      ["instances"]) == ["new", "old"]
        assert "currency" in new.awareness("billing", "get_invoice")
        assert old.awareness("billing", "get_invoice") == ""
        assert fleet.awareness("billing", "get_invoice") == ""
        arguments = {"id": "inv_1"}  # valid for the old surface, lacks the new one's currency
        answer = new.validation_error("billing", "get_invoice", arguments=arguments)
        assert answer is not None and answer["valid"] is False
        assert "currency" in str(answer["xml"]) and "<contract_awareness" in str(answer["xml"])
        assert old.validation_error("billing", "get_invoice", arguments=arguments) == {"valid": True, "xml": ""}
        assert fleet.validation_error("billing", "get_invoice", arguments=arguments) == {"valid": True, "xml": ""}
        # An explicit instance on a live report still wins over the client's own.
        assert new.report_live("billing", V1_SAFE, instance="canary") is not None
        rows = httpx.get(f"{url}/dashboard", timeout=5).json()["servers"][0]["instances"]
        assert sorted(i["instance"] for i in rows) == ["canary", "new", "old"]


def test_a_tool_one_instance_removed_is_unknown_to_that_instance_alone(tmp_path: Path):
    """During a rollout the new instance dropped a tool: the service tells that instance's
    model the tool was removed, while the old instance still serves it."""
    without_list = {"tools": [t for t in V1["tools"] if t["name"] != "list_invoices"]}  # type: ignore[union-attr]
    with api(tmp_path, instance_seconds=TTL) as client:
        assert lock(client, V1).status_code == 201
        assert client.put("/servers/billing/live?instance=new", json=without_list).status_code == 200
        assert client.put("/servers/billing/live?instance=old", json=V1).status_code == 200
        governance = client.app.state.governance
        new = governance.unknown_tool("billing", "list_invoices", instance="new")
        assert new.removed and new.available == ("get_invoice",) and "list_invoices" in new.xml
        old = governance.unknown_tool("billing", "list_invoices", instance="old")
        assert not old.removed and old.available == ("get_invoice", "list_invoices") and old.xml == ""
        fleet = governance.unknown_tool("billing", "list_invoices")  # the server's last report: old's
        assert not fleet.removed
        advance(client, TTL + 1)  # an expired instance falls back to the server's last report
        assert not governance.unknown_tool("billing", "list_invoices", instance="new").removed


def test_an_expired_instance_is_deleted_from_the_store_by_the_next_live_report(tmp_path: Path):
    from tests.stores import opened

    with api(tmp_path, instance_seconds=TTL) as client:
        assert lock(client, V1).status_code == 201
        assert client.put("/servers/billing/live?instance=gone", json=V2_BREAKING).status_code == 200
        assert client.put("/servers/billing/live?instance=stays", json=V1).status_code == 200
        with opened(tmp_path) as store:  # a fresh reader of the storage, not the service's memory
            assert sorted(r.instance for r in store.live_reports("billing")) == ["gone", "stays"]
        advance(client, TTL + 1)
        with opened(tmp_path) as store:  # expired but not yet pruned: still stored (only hidden)
            assert store.live("billing", "gone") is not None
        assert client.put("/servers/billing/live", json=V1, headers={"X-Instance-Id": "stays"}).status_code == 200
        with opened(tmp_path) as store:
            assert store.live("billing", "gone") is None
            assert [r.instance for r in store.live_reports("billing")] == ["stays"]
            assert store.live("billing", "stays") is not None
        assert [i["instance"] for i in row(client)["instances"]] == ["stays"]
        assert client.app.state.governance.store.live("billing", "gone") is None  # the service's store agrees
