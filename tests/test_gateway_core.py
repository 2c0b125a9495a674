"""The gateway's governance without the wire: a lockfile directory, a live listing, and what
``tools/list`` and ``tools/call`` get (app/gateway/core.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from app.gateway.core import GatewayCore, Settings
from app.gateway.locks import LockfilesSource
from app.gateway.policy import Mode
from app.ingest.load import surface_from_json
from app.lockfile import write_surface
from mcp_governance.errors import parse_tool_error

ZWSP = "\u200b"
SCHEMA = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
V2_SCHEMA = {"type": "object", "properties": {"id": {"type": "string"}, "currency": {"type": "string"}},
             "required": ["id", "currency"]}


def listing(*tools: dict[str, Any]) -> dict[str, Any]:
    return {"serverInfo": {"name": "billing", "version": "1"}, "tools": list(tools)}


def core_for(tmp_path: Path, locked: dict[str, Any], live: dict[str, Any], mode: Mode) -> GatewayCore:
    (tmp_path / "billing.lock.toml").write_text(write_surface(surface_from_json(locked, "mcp", "lock")))
    core = GatewayCore(Settings("billing", mode), LockfilesSource(tmp_path))
    core.check(live, surface_from_json(live, "mcp", "live"))
    return core


def test_hidden_characters_are_removed_from_what_is_served_and_reported(tmp_path):
    tool = {"name": "get_invoice", "description": f"Get{ZWSP} one invoice.", "inputSchema": SCHEMA}
    core = core_for(tmp_path, listing(tool), listing(tool), Mode.ENFORCE)
    assert core.served_tools()[0]["description"] == "Get one invoice."
    assert core.state.report.hidden_removed == {"get_invoice": 1}
    observed = core_for(tmp_path, listing(tool), listing(tool), Mode.OBSERVE)
    assert observed.served_tools()[0]["description"] == f"Get{ZWSP} one invoice."


def test_a_server_error_that_is_no_envelope_gets_the_tools_awareness(tmp_path):
    before = {"name": "get_invoice", "description": "Get one invoice.", "inputSchema": SCHEMA}
    after = {**before, "inputSchema": V2_SCHEMA}
    core = core_for(tmp_path, listing(before), listing(after), Mode.OBSERVE)
    plain = {"content": [{"type": "text", "text": "Error executing tool get_invoice: bad"}], "isError": True}
    answered = core.with_awareness("get_invoice", plain)
    assert len(answered["content"]) == 2 and answered["content"][1]["text"].startswith("<contract_awareness")
    envelope = {"content": [{"type": "text", "text": '<tool_error code="NOT_FOUND" severity="error">'
                             "<message>No invoice</message></tool_error>"}], "isError": True}
    assert core.with_awareness("get_invoice", envelope) == envelope
    success = {"content": [{"type": "text", "text": "fine"}], "isError": False}
    assert core.with_awareness("get_invoice", success) == success


def test_a_removed_tool_gets_unknown_action_with_what_happened(tmp_path):
    kept = {"name": "list_invoices", "description": "List invoices.", "inputSchema": SCHEMA}
    gone = {"name": "void_invoice", "description": "Void an invoice.", "inputSchema": SCHEMA}
    core = core_for(tmp_path, listing(kept, gone), listing(kept), Mode.ENFORCE)
    answer = core.refusal("void_invoice")
    assert answer is not None
    info = parse_tool_error(answer["content"][0]["text"])
    assert info is not None and info.code == "UNKNOWN_ACTION" and info.awareness is not None
    assert info.available_actions == ("list_invoices",)


def test_an_invalid_call_is_answered_locally_and_a_valid_one_is_not(tmp_path):
    before = {"name": "get_invoice", "description": "Get one invoice.", "inputSchema": SCHEMA}
    after = {**before, "inputSchema": V2_SCHEMA}
    core = core_for(tmp_path, listing(before), listing(after), Mode.OBSERVE)

    async def both() -> tuple[Any, Any]:
        return (await core.validation_error("get_invoice", {"id": "inv_1"}),
                await core.validation_error("get_invoice", {"id": "inv_1", "currency": "EUR"}))

    invalid, valid = anyio.run(both)
    assert valid is None
    text = invalid["content"][0]["text"]
    assert invalid["isError"] is True and text.startswith("<validation_error") and "currency" in text
