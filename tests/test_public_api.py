"""What a user imports from ``app``: the engine entry points and the error wire contract."""

from __future__ import annotations

import app
from tests.conftest import CORPUS


def test_every_public_name_is_importable():
    for name in app.__all__:
        assert getattr(app, name) is not None, name


def test_load_diff_and_render_from_the_package():
    before = app.load_surface(CORPUS / "git" / "2025.9.25.json")
    after = app.load_surface({"tools": [t.to_mcp() for t in app.load_surface(CORPUS / "git" / "2026.10.19.json")
                                        .tools.values()]}, server="git")
    result = app.diff(before, after)
    assert result.max_severity is app.Severity.BREAKING
    section = app.render_awareness(result, "git_add")
    assert section.startswith("<contract_awareness>") and 'rule="input.bound.tightened"' in section
    assert app.parse_tool_error(app.render_validation_error("git_add", None, [], section)).awareness is not None


def test_the_error_wire_contract_is_exported():
    result = app.tool_error(app.ErrorCode.NOT_FOUND, "No invoice with that ID", retry_after=30)
    info = app.parse_tool_error(result["content"][0]["text"])
    assert (info.code, info.retry_after, result["isError"]) == ("NOT_FOUND", 30, True)
    assert issubclass(app.ToolError, Exception) and issubclass(app.GovernanceToolError, Exception)
