"""The TOML lockfile: lossless, deterministic, readable, and validated on read."""

from __future__ import annotations

import json
import random
import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app import InputError, load_surface
from app.lockfile import dumps_json, dumps_toml, loads_toml, lock_document, read_document, write_surface
from tests.conftest import fixture_path
from tests.strategies import json_values, schemas, shuffled, tools_lists

STAMP = "2026-11-30T00:00:00Z"


def roundtrip(surface):
    return loads_toml(write_surface(surface, STAMP))


def test_header_comment_and_fields(plain_json):
    text = write_surface(load_surface(plain_json), STAMP)
    assert text.startswith("# mcp-governance lockfile: the known-good tool surface of MCP server 'billing'.")
    data = tomllib.loads(text)
    assert data["lockfile_version"] == 1
    assert data["server"] == "billing"
    assert data["server_version"] == "1.4.0"
    assert data["generated_at"] == STAMP
    assert data["integrity_digest"].startswith("sha256:")
    assert set(data["tools"]) == {"get_invoice", "list_invoices"}
    assert json.loads(data["tools"]["get_invoice"]["input_schema"])["required"] == ["id"]


def test_one_json_key_per_line_for_readable_diffs(plain_json):
    text = write_surface(load_surface(plain_json), STAMP)
    assert '    "id": {\n' in text
    assert '      "description": "Invoice id, e.g. inv_2026_0001",\n' in text


def test_every_field_survives_the_round_trip(plain_json):
    surface = load_surface(plain_json)
    back = roundtrip(surface)
    assert back.to_mcp() == surface.to_mcp()
    assert back.integrity_digest == surface.integrity_digest
    assert back.generated_at == STAMP
    assert back.server_info == {"name": "billing", "version": "1.4.0"}


@pytest.mark.parametrize("fixture", ["grouped.json", "vurb.lock", "fastmcp.json", "pages.json"])
def test_fixtures_round_trip(fixture):
    surface = load_surface(fixture_path(fixture), server="s")
    back = roundtrip(surface)
    assert back.to_mcp() == surface.to_mcp()
    assert {n: t.fusion for n, t in back.tools.items()} == {n: t.fusion for n, t in surface.tools.items()}
    assert back.integrity_digest == surface.integrity_digest


def test_grouped_tool_records_its_actions():
    text = write_surface(load_surface(fixture_path("grouped.json"), server="s"), STAMP)
    assert tomllib.loads(text)["tools"]["billing"]["actions"] == ["get_invoice", "list", "listAll"]


@settings(max_examples=120, deadline=None)
@given(schemas(), json_values)
def test_any_json_value_round_trips_losslessly(schema, value):
    schema["default"] = value
    surface = load_surface({"tools": [{"name": "t", "inputSchema": schema, "x-any": value}]}, server="s")
    text = write_surface(surface, STAMP)
    tomllib.loads(text)  # what `python -c "import tomllib"` users will do
    back = loads_toml(text)
    assert back.tools["t"].input_schema == schema
    assert back.tools["t"].extra == {"x-any": value}
    assert json.dumps(back.tools["t"].input_schema, sort_keys=True) == json.dumps(schema, sort_keys=True)


def test_awkward_values_round_trip_exactly():
    schema = {
        "type": "object",
        "default": None,
        "examples": [[[]], {}, 2**100, -(2**70), 1.5, 1e100, 0.1, -0.0, "'''", '"""', "\\", "\x00\x7f\u2028"],
        "properties": {"x": {"const": None, "description": "tab\tnew\nline\r\nend\"\"\"'''"}},
    }
    tool = {"name": "t\u00e9", "description": "multi\nline \"quoted\" \\ end\"", "inputSchema": schema}
    surface = load_surface([tool], server="s")
    back = roundtrip(surface)
    assert back.tools["t\u00e9"].input_schema == schema
    assert back.tools["t\u00e9"].description == surface.tools["t\u00e9"].description
    assert isinstance(back.tools["t\u00e9"].input_schema["examples"][3], int)
    assert isinstance(back.tools["t\u00e9"].input_schema["examples"][5], float)


def test_hidden_characters_are_visible_escapes_in_the_file():
    sneaky = "Reads a file\u200b\U000e0041\u202e"
    surface = load_surface([{"name": "read\u202efile", "description": sneaky,
                             "inputSchema": {"type": "object", "description": sneaky}}], server="s")
    text = write_surface(surface, STAMP)
    for ch in ("\u200b", "\U000e0041", "\u202e"):
        assert ch not in text
    assert "\\u200B" in text and "\\U000E0041" in text and "\\u202E" in text  # TOML escapes
    assert "\\u200b" in text and "\\udb40\\udc41" in text  # JSON escapes inside the schema text
    back = loads_toml(text)
    assert back.tools["read\u202efile"].description == sneaky
    assert back.tools["read\u202efile"].input_schema["description"] == sneaky


@settings(max_examples=60, deadline=None)
@given(tools_lists(), st.randoms(use_true_random=False))
def test_same_surface_same_bytes(result, rng: random.Random):
    # Key and tool order never reach the file; schemas are otherwise kept exactly as given.
    a = write_surface(load_surface(result, server="s"), STAMP)
    b = write_surface(load_surface(shuffled(result, rng, sets=False), server="s"), STAMP)
    assert a == b


def test_json_export_is_canonical_and_reads_back(plain_json):
    surface = load_surface(plain_json)
    document = lock_document(surface, STAMP)
    text = dumps_json(document)
    assert text == json.dumps(json.loads(text), sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    exported = json.loads(text)
    assert exported["tools"]["get_invoice"]["input_schema"] == plain_json["tools"][0]["inputSchema"]
    assert exported["tools"]["get_invoice"]["digest"] == surface.tools["get_invoice"].digest
    assert exported["integrity_digest"] == surface.integrity_digest
    back = load_surface(exported)
    assert back.to_mcp() == surface.to_mcp()
    assert dumps_toml(lock_document(back)) == dumps_toml(document)


def _lock_text(plain_json) -> str:
    return write_surface(load_surface(plain_json), STAMP)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("Fetch one invoice by its id.", "Fetch one invoice."),
         r"tools\.get_invoice\.digest: does not match"),
        (lambda t: t.replace("lockfile_version = 1", "lockfile_version = 2"),
         r"lockfile_version: unsupported lockfile_version 2"),
        (lambda t: t.replace("lockfile_version = 1\n", ""), r"lockfile_version: missing"),
        (lambda t: t.replace('server = "billing"', 'server = "../billing"'),
         r"server: '\.\./billing' is not a valid server name"),
        (lambda t: t.replace('server = "billing"', 'server = 3'), r"server: 3 is not a valid server name"),
        (lambda t: t.replace('[tools.get_invoice]\n', '[tools.get_invoice]\ncolour = "red"\n'),
         r"tools\.get_invoice: unknown field 'colour'"),
        (lambda t: t.replace("input_schema = '''{", "input_schema = '''{{", 1),
         r"tools\.get_invoice\.input_schema: invalid JSON"),
        (lambda t: t.replace("integrity_digest = \"sha256:", "integrity_digest = \"md5:"),
         r"integrity_digest: missing or not a sha256"),
        (lambda t: t + "\n[tools.extra_tool]\ndigest = \"sha256:" + "0" * 64 + "\"\n",
         r"tools\.extra_tool\.inputSchema: missing"),
        (lambda t: t.replace("[tools.get_invoice]", "[tools.get_invoice"), r"invalid TOML"),
    ],
)
def test_reading_validates_and_names_the_problem(plain_json, edit, message):
    with pytest.raises(InputError, match=message):
        loads_toml(edit(_lock_text(plain_json)), "billing.lock.toml")


def test_server_digest_is_verified_on_read(plain_json):
    document = lock_document(load_surface(plain_json), STAMP)
    del document["tools"]["list_invoices"]
    with pytest.raises(InputError, match="integrity_digest: does not match"):
        read_document(document)


def test_no_server_name_is_a_clear_error():
    with pytest.raises(InputError, match="no server name"):
        lock_document(load_surface({"tools": []}))


def test_committed_example_lockfile_is_valid_and_current():
    from pathlib import Path

    from tests.conftest import CORPUS

    example = Path(__file__).parent.parent / "lockfiles" / "time.lock.toml"
    surface = load_surface(example)
    assert surface.server == "time"
    assert surface.integrity_digest == load_surface(CORPUS / "time" / "2026.10.19.json").integrity_digest
