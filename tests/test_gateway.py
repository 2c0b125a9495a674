"""``mcp-governance gateway`` in front of the example billing server (v1 locked, v1 or v2
running), driven by the official SDK client over stdio, in each mode."""

from __future__ import annotations

import json
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_governance.errors import parse_tool_error
from tests.gateway_fixtures import SERVERS, env, gateway_client, gateway_params, lock_from_command, names, text_of

BILLING = [sys.executable, str(SERVERS / "recording_billing.py")]
V1_CALL = {"id": "inv_1001"}
V2_CALL = {"id": "inv_1001", "currency": "EUR"}


@pytest.fixture(scope="module")
def lockfiles(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """billing v1, locked as the release pipeline would."""
    directory = tmp_path_factory.mktemp("lockfiles")
    lock_from_command(directory, "billing", BILLING, BILLING_VERSION="v1")
    return directory


def calls(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def session(lockfiles: Path, tmp_path: Path, version: str, mode: str, script: Any, **options: Any) -> Any:
    """Run ``script(client)`` against the gateway in front of billing ``version``."""
    params = gateway_params("billing", BILLING, mode=mode, lockfiles=lockfiles, BILLING_VERSION=version,
                            CALL_LOG=str(tmp_path / "calls.jsonl"), **options)

    async def scenario() -> Any:
        with tempfile.TemporaryFile("w+") as log:
            async with gateway_client(params, log) as client:
                return await script(client)

    return anyio.run(scenario)


async def listed_and_called(client: Any) -> tuple[Any, Any, Any, Any]:
    listing = await client.list_tools()
    valid = await client.call_tool("get_invoice", V2_CALL)
    invalid = await client.call_tool("get_invoice", V1_CALL)
    old_name = await client.call_tool("list_invoices", {"customer": "cus_7"})
    return listing, valid, invalid, old_name


def test_observe_passes_everything_and_answers_an_invalid_call_itself(lockfiles, tmp_path):
    listing, valid, invalid, _ = session(lockfiles, tmp_path, "v2", "observe", listed_and_called)
    assert names(listing) == ["get_invoice", "list_invoices"]
    assert valid.is_error is False and text_of(valid) == "inv_1001: 129.00 EUR"
    assert invalid.is_error is True
    root = ET.fromstring(text_of(invalid))
    assert root.tag == "validation_error"
    assert root.find("contract_awareness") is not None
    assert "currency" in text_of(invalid)
    reached = [call["arguments"] for call in calls(tmp_path / "calls.jsonl") if call["tool"] == "get_invoice"]
    assert reached == [V2_CALL]  # the invalid call never reached the server


def test_the_validation_error_is_the_one_the_sdk_integration_gives(lockfiles, tmp_path):
    """Same service function, same lock, same live surface: the same text."""
    from app.capture import capture_from_command
    from app.ingest.mcp import read_result
    from app.service import Governance
    from app.store import FileStore

    async def script(client: Any) -> Any:
        return await client.call_tool("get_invoice", V1_CALL)

    invalid = session(lockfiles, tmp_path, "v2", "observe", script)
    live = read_result(capture_from_command(BILLING, env=env(BILLING_VERSION="v2")), "live")
    gov = Governance(FileStore(tmp_path / "copy"))
    (tmp_path / "copy").mkdir()
    (tmp_path / "copy" / "billing.lock.toml").write_bytes((lockfiles / "billing.lock.toml").read_bytes())
    gov.report_live("billing", live)
    valid, xml = gov.validation_error("billing", "get_invoice", None, arguments=V1_CALL)
    assert not valid
    assert text_of(invalid) == xml


def test_enforce_hides_the_tools_whose_change_is_breaking(lockfiles, tmp_path):
    async def script(client: Any) -> tuple[Any, Any, Any]:
        listing = await client.list_tools()
        blocked = await client.call_tool("get_invoice", V2_CALL)
        renamed = await client.call_tool("list_invoices", {"customer_id": "cus_7"})
        return listing, blocked, renamed

    listing, blocked, renamed = session(lockfiles, tmp_path, "v2", "enforce", script)
    assert names(listing) == []  # both tools changed in a BREAKING way since v1
    for result in (blocked, renamed):
        info = parse_tool_error(text_of(result))
        assert result.is_error is True and info is not None and info.code == "FORBIDDEN"
        assert "BREAKING" in info.message and "not approved in the lock of billing" in info.message
    assert calls(tmp_path / "calls.jsonl") == []


@pytest.mark.slow  # a variation of the sessions kept in the dev profile: ci profile only
def test_enforce_serves_an_unchanged_server_untouched(lockfiles, tmp_path):
    async def script(client: Any) -> tuple[Any, Any]:
        return await client.list_tools(), await client.call_tool("get_invoice", V1_CALL)

    listing, valid = session(lockfiles, tmp_path, "v1", "enforce", script)
    assert names(listing) == ["get_invoice", "list_invoices"]
    assert valid.is_error is False and text_of(valid) == "inv_1001: 129.00 EUR"


@pytest.mark.slow  # a variation of the sessions kept in the dev profile: ci profile only
def test_an_unknown_tool_gets_unknown_action_with_the_tools_there_are(lockfiles, tmp_path):
    async def script(client: Any) -> Any:
        return await client.call_tool("delete_invoice", {"id": "inv_1001"})

    result = session(lockfiles, tmp_path, "v1", "pin", script)
    info = parse_tool_error(text_of(result))
    assert info is not None and info.code == "UNKNOWN_ACTION"
    assert sorted(info.available_actions) == ["get_invoice", "list_invoices"]
    assert calls(tmp_path / "calls.jsonl") == []


def test_the_cli_refuses_a_gateway_without_a_server_to_front(capsys):
    from app.cli import main

    assert main(["gateway", "--server", "billing"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a command after `--`, or --upstream-url" in err


@pytest.mark.parametrize("value", ["-1", "0.01", "90000", "nan"])
def test_the_cli_refuses_a_lock_refresh_it_cannot_use(capsys, value):
    from app.cli import main

    assert main(["gateway", "--server", "billing", "--lock-refresh", value, "--", "true"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--lock-refresh: 0 (never) or between 0.1 and 86400 seconds" in err


@pytest.mark.slow  # a variation of the sessions kept in the dev profile: ci profile only
def test_a_2026_client_over_stdio_gets_the_same_governance(lockfiles, tmp_path):
    """The SDK client's default negotiation (``mode="auto"``: the 2026-07-28 protocol when the
    server speaks it); the server behind the gateway still speaks the handshake era."""
    params = gateway_params("billing", BILLING, mode="enforce", lockfiles=lockfiles, BILLING_VERSION="v1",
                            CALL_LOG=str(tmp_path / "calls.jsonl"))

    async def scenario() -> tuple[Any, Any, Any, str]:
        with tempfile.TemporaryFile("w+") as log:
            async with gateway_client(params, log, mode="auto") as client:
                return (await client.list_tools(), await client.call_tool("get_invoice", V1_CALL),
                        await client.call_tool("get_invoice", {"ident": "inv_1001"}), client.protocol_version)

    listing, valid, invalid, version = anyio.run(scenario)
    assert version >= "2026"
    assert names(listing) == ["get_invoice", "list_invoices"]
    assert text_of(valid) == "inv_1001: 129.00 EUR"
    assert text_of(invalid).startswith("<validation_error")
    assert [call["arguments"] for call in calls(tmp_path / "calls.jsonl")] == [V1_CALL]
