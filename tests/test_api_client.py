"""The Python client against a real service (uvicorn on a loopback port): pipeline calls
raise with the problem's code; MCP-server calls never raise and fall back to nothing
when the service refuses, is slow or is down."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from mcp_governance.client import GovernanceClient, GovernanceError
from tests.helpers_service import GRANTS, TOKENS, V1, V1_SAFE, V2_BREAKING, make_app, uvicorn_thread
from tests.loopback import refused_url


@pytest.fixture
def url(tmp_path: Path):
    with uvicorn_thread(make_app(tmp_path / "lockfiles", GRANTS)) as url:
        yield url


def test_pipeline_calls_lock_check_and_diff(url: str):
    with GovernanceClient(url, TOKENS["approver"]) as client:
        first = client.lock("billing", V1, server_version="1.0.0", commit="abc", reason="release")
        assert first.created and first.status == 201 and first.body["version"] == 1
        again = client.lock("billing", V1)
        assert not again.created and again.body["version"] == 1
        assert client.check("billing", V1)["ok"] is True
        assert client.check("billing", V2_BREAKING)["maxSeverity"] == "BREAKING"
        report, failed = client.diff("billing", V2_BREAKING)
        assert failed and "currency" in report
        assert client.diff("billing", V1_SAFE, fail_on="BREAKING")[1] is False
        stale = first.body["integrity_digest"]
        client.lock("billing", V1_SAFE, if_match=stale)
        with pytest.raises(GovernanceError) as caught:
            client.lock("billing", V1, if_match=stale)
        assert (caught.value.status, caught.value.code) == (412, "precondition_failed")


def test_a_breaking_lock_raises_with_the_deltas_unless_approved(url: str):
    with GovernanceClient(url, TOKENS["admin"]) as admin:
        admin.lock("billing", V1)
    with GovernanceClient(url, TOKENS["ci"]) as ci:
        with pytest.raises(GovernanceError) as caught:
            ci.lock("billing", V2_BREAKING)
        assert (caught.value.status, caught.value.code) == (409, "approval_required")
        assert caught.value.problem["deltas"] and "409 approval_required" in str(caught.value)
        with pytest.raises(GovernanceError) as forbidden:
            ci.lock("payments", V1)
        assert (forbidden.value.status, forbidden.value.code) == (403, "forbidden_server")
    with GovernanceClient(url, "not-a-token-0123456789") as stranger:
        with pytest.raises(GovernanceError) as unauthorized:
            stranger.check("billing", V1)
        assert unauthorized.value.status == 401
    with GovernanceClient(url, TOKENS["approver"]) as approver:
        assert approver.lock("billing", V2_BREAKING).created


def test_mcp_server_calls_report_fetch_awareness_and_render_validation_errors(url: str):
    with GovernanceClient(url, TOKENS["admin"]) as admin:
        admin.lock("billing", V1)
    with GovernanceClient(url, TOKENS["mcp"], hot_timeout=5.0) as mcp:
        live = mcp.report_live("billing", V2_BREAKING)
        assert live is not None and live["status"] == "drifted"
        section = mcp.awareness("billing", "get_invoice")
        assert ET.fromstring(section).tag == "contract_awareness"
        assert mcp.awareness("billing", "list_invoices") == ""
        assert mcp.awareness("billing", "no_such_tool") == ""
        reply = mcp.validation_error("billing", "get_invoice", arguments={"id": "inv_1"})
        assert reply is not None and reply["valid"] is False
        assert [f.get("name") for f in ET.fromstring(reply["xml"]).findall("field")] == ["currency"]
        issues = mcp.validation_error("billing", "get_invoice", issues=[{"path": "id", "kind": "type"}])
        assert issues is not None and "<contract_awareness>" in issues["xml"]
        # Refused (outside the token's servers): nothing, and no exception.
        assert mcp.report_live("payments", V1) is None
        assert mcp.awareness("payments", "get_invoice") == ""
        assert mcp.validation_error("payments", "get_invoice", arguments={}) is None


def test_mcp_server_calls_never_raise_when_the_service_is_down():
    down = refused_url()
    with GovernanceClient(down, TOKENS["mcp"], hot_timeout=0.5, timeout=0.5) as client:
        assert client.report_live("billing", V1) is None
        assert client.awareness("billing", "get_invoice") == ""
        assert client.validation_error("billing", "get_invoice", arguments={}) is None
        with pytest.raises(GovernanceError, match="cannot reach"):
            client.lock("billing", V1)
