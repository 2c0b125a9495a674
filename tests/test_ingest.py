"""Readers: every input format is detected and read, unknown fields kept, bad input named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app import InputError, load_surface
from app.ingest.load import detect_format, surface_from_bytes
from tests.conftest import CORPUS_SERVERS, corpus_versions, fixture_path, load_json


def test_plain_tools_list_result_reads_every_field(plain_json):
    surface = load_surface(plain_json)
    assert surface.source_format == "mcp"
    assert (surface.server, surface.server_version, surface.protocol_version) == ("billing", "1.4.0", "2025-06-18")
    assert list(surface.tools) == ["get_invoice", "list_invoices"]
    invoice = surface.tools["get_invoice"]
    assert invoice.title == "Get invoice"
    assert invoice.annotations == {"readOnlyHint": True, "openWorldHint": False}
    assert invoice.output_schema["required"] == ["id", "total"]
    assert invoice.extra == {"x-vendor-flag": {"keep": [1, 2, None]}}
    listing = surface.tools["list_invoices"]
    assert listing.meta == {"example.com/owner": "billing-team"}
    assert listing.execution == {"taskSupport": "optional"}
    assert listing.icons[0]["mimeType"] == "image/png"
    prompt = surface.prompts["summarise_invoice"]
    assert [(a.name, a.required) for a in prompt.arguments] == [("id", True), ("tone", None)]
    assert surface.resources["billing://rates"].mime_type == "application/json"
    assert surface.resource_templates["billing://invoices/{id}"].description == "One invoice"


def test_unknown_fields_survive_back_to_the_wire(plain_json):
    surface = load_surface(plain_json)
    wire = {tool["name"]: tool for tool in surface.to_mcp()["tools"]}
    assert wire["get_invoice"] == plain_json["tools"][0]
    assert wire["list_invoices"] == plain_json["tools"][1]


def test_bare_list_of_tools(plain_json):
    surface = load_surface(plain_json["tools"])
    assert list(surface.tools) == ["get_invoice", "list_invoices"]
    assert surface.server is None


def test_paginated_pages_are_joined_and_jsonrpc_unwrapped():
    surface = load_surface(fixture_path("pages.json"))
    assert surface.source_format == "mcp-pages"
    assert list(surface.tools) == ["a_first", "b_second", "c_third"]


def test_fastmcp_manifest():
    surface = load_surface(fixture_path("fastmcp.json"))
    assert surface.source_format == "fastmcp"
    assert surface.server == "weather" and surface.server_version == "0.3.0"
    assert surface.tools["forecast"].output_schema["x-fastmcp-wrap-result"] is True
    assert surface.tools["forecast"].annotations is None
    assert list(surface.resource_templates) == ["weather://{city}/today"]


def test_fastmcp_native_format_gets_a_hint():
    manifest = {"server": {"name": "w"}, "environment": {"fastmcp": "2"}, "tools": []}
    with pytest.raises(InputError, match="--format mcp"):
        load_surface(manifest)


def test_vurb_lockfile_keeps_parity_sections():
    surface = load_surface(fixture_path("vurb.lock"))
    assert surface.source_format == "vurb"
    assert surface.server == "payments-api"
    tool = surface.tools["invoices"]
    assert tool.input_schema is None
    assert list(tool.actions) == ["create", "list", "void"]
    assert tool.fusion["behavior"]["destructiveActions"] == ["void"]
    assert tool.fusion["tokenEconomics"]["inflationRisk"] == "low"
    assert tool.fusion["entitlements"]["network"] is True
    assert tool.fusion["integrityDigest"] == "sha256:f6e5d4"
    prompt = surface.prompts["billing-summary"]
    assert prompt.extra["argumentsDigest"] == "sha256:d4e5f6"


def test_mcp_fusion_spelling_is_detected():
    lock = load_json(fixture_path("vurb.lock"))
    del lock["vurbVersion"]
    lock["fusionVersion"] = "2.8.1"
    assert load_surface(lock).source_format == "mcp-fusion"


def test_grouped_tool_splits_into_actions():
    tool = load_surface(fixture_path("grouped.json")).tools["billing"]
    assert list(tool.actions) == ["get_invoice", "list", "listAll"]
    get_invoice = tool.actions["get_invoice"]
    assert get_invoice.discriminator == "action"
    assert get_invoice.schema["required"] == ["action", "id"]  # the $ref was resolved
    assert tool.actions["listAll"].index == 2


def test_plain_tool_has_no_actions(plain_json):
    assert load_surface(plain_json).tools["get_invoice"].actions == {}


@pytest.mark.parametrize("server", CORPUS_SERVERS)
def test_every_corpus_capture_reads(server):
    for path in corpus_versions(server):
        raw = load_json(path)
        surface = load_surface(path)
        assert surface.server == server
        assert surface.server_version == raw["version"]
        assert len(surface.tools) == len(raw["tools"])
        assert len(surface.prompts) == len(raw.get("prompts", []))


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        ({"tools": []}, "mcp"),
        ([], "mcp"),
        ([{"name": "a", "inputSchema": {}}], "mcp"),
        ([{"tools": []}, {"tools": []}], "mcp-pages"),
        ({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}, "mcp"),
        ({"environment": {"fastmcp": "2"}, "tools": []}, "fastmcp"),
        ({"lockfileVersion": 1, "capabilities": {"tools": {}}}, "vurb"),
        ({"lockfile_version": 1}, "lockfile-json"),
    ],
)
def test_detect_format(obj, expected):
    assert detect_format(obj) == expected


def test_forced_format_overrides_detection():
    with pytest.raises(InputError, match="lockfileVersion: missing"):
        load_surface({"tools": []}, input_format="vurb")
    assert load_surface([{"tools": []}], input_format="mcp-pages").source_format == "mcp-pages"


BAD_INPUTS = [
    ('{"tools": [{"name": "a"}]}', r"tools\[0\] \(a\)\.inputSchema: missing"),
    ('{"tools": [{"inputSchema": {}}]}', r"tools\[0\]\.name: missing"),
    ('{"tools": [{"name": "", "inputSchema": {}}]}', r"tools\[0\]\.name: must not be empty"),
    ('{"tools": [{"name": "a", "inputSchema": {}}, {"name": "a", "inputSchema": {}}]}',
     r"tools\[1\]: duplicate tool name 'a' \(first at tools\[0\]\)"),
    ('[{"tools": [{"name": "a", "inputSchema": {}}]}, {"tools": [{"name": "a", "inputSchema": {}}]}]',
     r"pages\[1\]\.tools\[0\]: duplicate tool name 'a' \(first at pages\[0\]\.tools\[0\]\)"),
    ('{"tools": [{"name": "a", "inputSchema": []}]}', r"inputSchema: expected a JSON Schema object, got array"),
    ('{"tools": [{"name": "a", "inputSchema": true}]}', r"inputSchema: expected a JSON Schema object, got boolean"),
    ('{"tools": [{"name": "a", "inputSchema": {"type": "string"}}]}',
     r"inputSchema: the schema must describe an object"),
    ('{"tools": [{"name": "a", "inputSchema": {}, "outputSchema": "x"}]}',
     r"outputSchema: expected a JSON Schema object"),
    ('{"tools": [{"name": "a", "inputSchema": {}, "annotations": []}]}',
     r"tools\[0\] \(a\)\.annotations: expected an object"),
    ('{"tools": [{"name": "a", "inputSchema": {}, "description": 7}]}', r"description: expected a string, got number"),
    ('{"tools": {}}', r"tools: expected an array, got object"),
    ('{"lockfileVersion": 2, "capabilities": {"tools": {}}}', r"lockfileVersion: unsupported lockfileVersion 2"),
    ('{"lockfile_version": 9, "server": "a"}', r"lockfile_version: unsupported lockfile_version 9"),
    ('{"tools": [{"name": "a", "inputSchema": {"x": NaN}}]}', r"NaN is not valid JSON"),
    ('{"tools": [', r"invalid JSON at line 1"),
    ('{"nothing": 1}', r"unrecognised input"),
    ('{"tools": [{"name": "a", "inputSchema": {"properties": {"x": {"$ref": "#/$defs/Gone"}}}}]}',
     r"\$ref '#/\$defs/Gone' at /properties/x points nowhere"),
    (('{"tools": [{"name": "a", "inputSchema": {"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}},'
      ' "properties": {"x": {"$ref": "#/$defs/A"}}}}]}'), r"cycle of references that never reaches a schema"),
    ('{"tools": [{"name": "a", "inputSchema": {}, "title": "\\ud800"}]}', r"lone UTF-16 surrogate"),
    ('{"prompts": [{"name": "p"}], "tools": [], "resources": [{"name": "r"}]}', r"resources\[0\]\.uri: missing"),
]


@pytest.mark.parametrize(("text", "message"), BAD_INPUTS)
def test_bad_input_is_one_clear_error(text, message, tmp_path: Path):
    path = tmp_path / "surface.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message) as caught:
        load_surface(path)
    assert str(caught.value).startswith(str(path) + ": ")
    assert "\n" not in str(caught.value)


def test_recursive_schema_is_valid():
    node = {
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            },
        },
    }
    surface = load_surface({"tools": [{"name": "t", "inputSchema": node}]})
    assert surface.tools["t"].input_schema == node


def test_not_utf8_and_deep_nesting_are_refused():
    with pytest.raises(InputError, match="not valid UTF-8"):
        surface_from_bytes(b'{"tools": ["\xff"]}')
    with pytest.raises(InputError, match="nested deeper than"):
        surface_from_bytes("[" * 10000 + "]" * 10000)
    deep = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
    node = deep["tools"][0]["inputSchema"]
    for _ in range(300):
        node["properties"] = {"x": {"type": "object"}}
        node = node["properties"]["x"]
    with pytest.raises(InputError, match="nested deeper than"):
        surface_from_bytes(json.dumps(deep))


def test_server_name_from_input_or_override(plain_json):
    assert load_surface(plain_json, server="payments").server == "payments"
    with pytest.raises(InputError, match="not a valid server name"):
        load_surface(plain_json, server="../etc")
