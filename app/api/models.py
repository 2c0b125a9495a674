"""Request and response models: what the OpenAPI document shows, with examples.

Bodies are parsed strictly by our own JSON reader first (NaN, invalid UTF-8 and absurd
nesting are refused with the place named), then validated against these models.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.store.records import VersionRecord

SURFACE_EXAMPLE: dict[str, Any] = {
    "tools": [
        {
            "name": "get_invoice",
            "description": "Fetch one invoice",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "currency": {"type": "string", "enum": ["EUR", "USD"]},
                },
                "required": ["id", "currency"],
            },
        }
    ]
}

DIFF_EXAMPLE: dict[str, Any] = {
    "server": "billing",
    "maxSeverity": "BREAKING",
    "isBackwardsCompatible": False,
    "summary": {"BREAKING": 1, "RISKY": 0, "SAFE": 0, "COSMETIC": 0},
    "tools": {"added": [], "removed": [], "changed": ["get_invoice"], "unchanged": []},
    "deltas": [
        {
            "id": "3f9c0a1b2c4d",
            "rule": "input.required.added",
            "severity": "BREAKING",
            "category": "input",
            "tool": "get_invoice",
            "action": None,
            "field": "input.currency",
            "path": "/tools/get_invoice/inputSchema/required",
            "description": 'Argument "currency" is now required',
            "before": "optional",
            "after": "required (string, one of: EUR, USD)",
            "hint": 'Pass "currency" with one of: EUR, USD.',
        }
    ],
    "ignored": [],
}


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LockBody(Strict):
    """A known-good surface to lock, in any input format."""

    server: str = Field(description="Server name: ^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$", examples=["billing"])
    surface: Any = Field(description="The surface: a tools/list result, a fastmcp manifest, a Vurb / MCP Fusion "
                                     "lockfile or an mcp-governance lockfile (JSON export).",
                         examples=[SURFACE_EXAMPLE])
    server_version: str | None = Field(None, examples=["2.4.0"])
    commit: str | None = Field(None, examples=["9f1c2ab"])
    reason: str | None = Field(None, examples=["release 2.4.0"])
    approved_by: str | None = Field(None, description="Who accepts BREAKING changes against the previous lock.",
                                    examples=["alice@example.com"])
    input_format: str | None = Field(None, description="Force an input format instead of detecting it.")

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"server": "billing", "surface": SURFACE_EXAMPLE, "server_version": "2.4.0", "commit": "9f1c2ab",
         "reason": "release 2.4.0"}]})


class LockResponse(BaseModel):
    server: str
    version: int
    integrity_digest: str
    previous_digest: str | None
    diff: dict[str, Any] = Field(description="ContractDiff JSON of this lock against the previous one.")

    model_config = ConfigDict(json_schema_extra={"examples": [
        {"server": "billing", "version": 8, "integrity_digest": "sha256:4be1...",
         "previous_digest": "sha256:91ac...", "diff": DIFF_EXAMPLE}]})


VersionInfo = VersionRecord
"""A version's audit record: the store's own dataclass is the response model (one
definition of the fields, in app/store/records.py)."""


class ServerLock(BaseModel):
    server: str
    version: int | None
    integrity_digest: str | None
    locked_at: str | None
    status: Literal["locked", "corrupt", "unlocked"]
    problem: str | None = None


class LockfileView(BaseModel):
    """A lock version as JSON: its audit record and the lockfile's JSON export."""

    record: VersionInfo
    lockfile: dict[str, Any]


class DiffBody(Strict):
    """Two surfaces (``before``, ``after``), or a ``surface`` against ``server``'s current lock."""

    before: Any = None
    after: Any = None
    server: str | None = None
    surface: Any = None

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"server": "billing", "surface": SURFACE_EXAMPLE},
        {"before": {"tools": []}, "after": SURFACE_EXAMPLE}]})


class CheckBody(Strict):
    server: str
    surface: Any

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"server": "billing", "surface": SURFACE_EXAMPLE}]})


class CheckResponse(BaseModel):
    ok: bool = Field(description="True only when the surface's digest equals the current lock's.")
    added: list[str]
    removed: list[str]
    changed: list[str]
    unchanged: list[str]
    maxSeverity: str | None
    deltas: list[dict[str, Any]]


class LiveResponse(BaseModel):
    server: str
    live_digest: str
    reported_at: str
    lock_version: int | None
    lock_digest: str | None
    status: Literal["in-sync", "drifted", "unlocked", "corrupt"]
    maxSeverity: str | None
    summary: dict[str, int]


class Problem(BaseModel):
    """One problem a server already found in a tool call's arguments."""

    path: str = Field(examples=["currency"])
    kind: str = Field(examples=["required"])
    sent: Any = None
    expected: Any = None
    message: str | None = None


class ValidationErrorBody(Strict):
    tool: str = Field(examples=["billing"])
    action: str | None = Field(None, examples=["get_invoice"])
    arguments: Any = Field(None, description="The arguments the model sent; the service validates them against "
                                             "the tool's live input schema.")
    issues: list[Problem] | None = Field(None, min_length=1,
                                         description="Problems the server already found (instead of arguments).")
    max: int = Field(5, ge=1, le=20, description="At most this many contract changes in the awareness section.")

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"tool": "get_invoice", "arguments": {"id": "inv_1"}},
        {"tool": "billing", "action": "get_invoice",
         "issues": [{"path": "currency", "kind": "required", "sent": None, "expected": "string"}]}]})


class ValidationErrorResponse(BaseModel):
    valid: bool
    xml: str = Field(description="The <validation_error> with <contract_awareness> embedded; empty when valid.")


class InstanceStatus(BaseModel):
    instance: str
    reported_at: str
    live_digest: str
    lock_version: int | None = Field(None, description="The lock version the report was diffed against")
    status: Literal["in-sync", "drifted", "unlocked"]
    maxSeverity: str | None
    counts: dict[str, int]


class ServerStatus(BaseModel):
    server: str
    version: int | None
    locked_at: str | None
    lock_digest: str | None
    live_digest: str | None
    status: Literal["in-sync", "drifted", "unreported", "unlocked", "corrupt"]
    maxSeverity: str | None
    counts: dict[str, int]
    last_reported: str | None
    instances: list[InstanceStatus] | None = Field(
        None, description="Each instance that reported with an instance id and has not expired (absent: none did)")
    worstSeverity: str | None = Field(None, description="The worst change of the server's last report and of "
                                                        "every instance's: the fleet's worst")


class Dashboard(BaseModel):
    generated_at: str
    servers: list[ServerStatus]
    next_cursor: str | None = Field(None, description="The cursor of the next page (also in the Link header); "
                                                      "null on the last page")


class ToolStatus(BaseModel):
    tool: str
    status: Literal["unchanged", "changed", "added", "removed"]
    maxSeverity: str | None
    counts: dict[str, int]


class ServerDashboard(BaseModel):
    server: ServerStatus
    history: list[VersionInfo]
    tools: list[ToolStatus]


class Health(BaseModel):
    status: str
