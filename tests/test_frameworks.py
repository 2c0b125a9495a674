"""``govern()`` end to end in every Python MCP framework, each through its own client in its
own venv (tests/frameworks/envs.py): v1 of the billing server locked with ``lock
--from-command``, v2 governed and called the v1 way.

Per framework: the v1-style call gets the service's ``<validation_error>`` with the BREAKING
change in its awareness, then the corrected call succeeds; a call to the renamed tool gets
``UNKNOWN_ACTION`` with the tools the server has and whatever awareness the service gives for
the old name; a raised ``ToolError`` and a returned builder reach the model intact; a crash is
an ``INTERNAL_ERROR`` that leaks nothing. The adapter module also type-checks against the
framework installed there.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.cli import main
from mcp_governance.errors import parse_tool_error
from tests.frameworks.envs import CLIENT_SRC, FRAMEWORKS, Framework, client_env, venv_python
from tests.service_fixtures import RunningService, running_service

pytestmark = pytest.mark.slow

BILLING = Path(__file__).parent / "frameworks" / "billing.py"
DRIVE = Path(__file__).parent / "frameworks" / "drive.py"
ADAPTERS = {"mcp1": "mcp_v1.py", "mcp2": "mcp_v2.py", "fastmcp": "fastmcp_pkg.py"}


@pytest.fixture
def governance_service(tmp_path: Path) -> Iterator[RunningService]:
    with running_service(tmp_path / "lockfiles") as service:
        yield service


def lock_v1(python: Path, framework: Framework, service: RunningService, capsys: pytest.CaptureFixture[str]) -> None:
    """The release pipeline's step: lock v1 straight from the server command."""
    command = f"{python} {BILLING} {framework.id} v1"
    code = main(["lock", "--from-command", command, "--server", "billing", "--url", service.url])
    assert code == 0, capsys.readouterr().err


def drive(python: Path, framework: Framework, service: RunningService) -> dict[str, list[dict[str, Any]]]:
    done = subprocess.run([str(python), str(DRIVE), framework.id, service.url], env=client_env(),
                          capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    calls: dict[str, list[dict[str, Any]]] = {}
    for call in json.loads(done.stdout):
        calls.setdefault(call["tool"], []).append(call)
    return calls


def service_awareness(service: RunningService, tool: str) -> str | None:
    """What the service itself answers for a tool: the section, or None (204 / 404)."""
    answer = httpx.get(f"{service.url}/servers/billing/awareness", params={"tool": tool}, timeout=10)
    return answer.text.strip() if answer.status_code == 200 and answer.text.strip() else None


@pytest.mark.parametrize("framework", FRAMEWORKS, ids=[framework.id for framework in FRAMEWORKS])
def test_govern_end_to_end(framework: Framework, governance_service: RunningService,
                           capsys: pytest.CaptureFixture[str]) -> None:
    python = venv_python(framework.venv)
    lock_v1(python, framework, governance_service, capsys)
    calls = drive(python, framework, governance_service)

    wrong, right = calls["get_invoice"]
    info = parse_tool_error(wrong["text"])
    assert wrong["isError"] is True and info is not None and info.kind == "validation_error", wrong
    assert "currency" in info.fields
    assert info.awareness is not None and info.awareness.max_severity == "BREAKING"
    assert any("currency" in (change.field or "") for change in info.awareness.changes)
    assert right["isError"] is False and right["text"] == "inv_1001: 141.90 USD"

    [renamed] = calls["add"]
    unknown = parse_tool_error(renamed["text"])
    assert renamed["isError"] is True and unknown is not None and unknown.code == "UNKNOWN_ACTION", renamed
    assert set(unknown.available_actions) == {"get_invoice", "get_sum", "refund", "lookup", "audit"}
    assert unknown.details == {"tool": "add"}
    assert unknown.awareness_xml == service_awareness(governance_service, "add")
    # The service knows "add" from the lock and names its replacement; the fix leads the recovery.
    assert unknown.awareness is not None and unknown.awareness.replacement == "get_sum"
    assert unknown.recovery is not None and unknown.recovery.startswith('Call "get_sum" instead of "add".')
    [summed] = calls["get_sum"]
    assert summed["isError"] is False and summed["text"] == "3"

    [refund] = calls["refund"]
    conflict = parse_tool_error(refund["text"])
    assert refund["isError"] is True and conflict is not None
    assert (conflict.code, conflict.message, conflict.details) == (
        "CONFLICT", "Invoice inv_1001 is already refunded", {"invoiceId": "inv_1001"})
    [lookup] = calls["lookup"]
    missing = parse_tool_error(lookup["text"])
    assert lookup["isError"] is True and missing is not None
    assert (missing.code, missing.recovery, missing.available_actions) == (
        "NOT_FOUND", "List invoices first.", ("get_invoice",))
    [audit] = calls["audit"]
    crash = parse_tool_error(audit["text"])
    assert audit["isError"] is True and crash is not None and crash.code == "INTERNAL_ERROR"
    assert "hunter2" not in audit["text"] and "incident" in crash.details


@pytest.mark.parametrize("venv", sorted({framework.venv for framework in FRAMEWORKS}))
def test_the_adapters_type_check_against_the_framework_installed(venv: str) -> None:
    """mypy of the project's venv, reading the framework venv's packages (PEP 561)."""
    python = venv_python(venv)
    family = {"mcp1": ["mcp1", "fastmcp"], "mcp2": ["mcp2", "fastmcp"], "fastmcp2": ["fastmcp"]}[venv]
    modules = [str(CLIENT_SRC / "mcp_governance" / "integrations" / ADAPTERS[name]) for name in family]
    done = subprocess.run(
        # The project's settings, less its override that skips these modules in the project's venv.
        [sys.executable, "-m", "mypy", "--python-executable", str(python), "--config-file", "/dev/null",
         "--python-version", "3.11", "--check-untyped-defs", "--warn-redundant-casts", "--no-incremental",
         # jsonschema's stubs are in the project's venv only: there it is checked as untyped.
         "--follow-imports=silent", "--disable-error-code=import-untyped", *modules],
        cwd=CLIENT_SRC, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:]
