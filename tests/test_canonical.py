"""Digests: pinned to literal values, and blind to key order, tool order, set-like list
order and timestamps."""

from __future__ import annotations

import hashlib
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from app import load_surface
from app.canonical import digest_of, surface_lines
from app.jsonio import canonical_json
from app.model import Surface
from tests.strategies import shuffled, tools_lists

SMALL = {
    "tools": [
        {
            "name": "get_invoice",
            "description": "Fetch one invoice",
            "inputSchema": {
                "type": "object",
                "properties": {"id": {"type": "string"}, "currency": {"type": ["string", "null"]}},
                "required": ["id", "currency"],
            },
        },
        {"name": "ping", "inputSchema": {"type": "object"}},
    ]
}


def test_empty_surface_digest_is_the_digest_of_no_lines():
    empty = load_surface({"tools": []})
    assert empty.integrity_digest == "sha256:" + hashlib.sha256(b"").hexdigest()
    assert empty.integrity_digest == "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_pinned_digests_never_drift():
    # Cross-checked with `printf ... | sha256sum` over the canonical forms DESIGN.md defines.
    surface = load_surface(SMALL)
    assert surface.tools["ping"].digest == (
        "sha256:50f729fba0aa51f78cf94c1ca23fd07f217375133d9c20b0764d808d56c61db9"
    )
    assert surface.tools["get_invoice"].digest == (
        "sha256:acea00672155803ff47cb667c1a9a8b4fee726c15267e113dd999284f2cfcecf"
    )
    assert surface.integrity_digest == (
        "sha256:b6038ef0e5bc1216d4e31ba2507cf1c306ae15a6e97cb460b710ab1d00c72365"
    )


def test_tool_digest_is_sha256_of_canonical_normalised_json():
    tool = load_surface(SMALL).tools["get_invoice"]
    form = {
        "name": "get_invoice",
        "description": "Fetch one invoice",
        "inputSchema": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "currency": {"type": ["null", "string"]}},
            "required": ["currency", "id"],
        },
    }
    expected = "sha256:" + hashlib.sha256(canonical_json(form).encode("utf-8")).hexdigest()
    assert tool.digest == expected == digest_of(form)


def test_server_digest_is_over_sorted_name_digest_lines():
    surface = load_surface(SMALL)
    lines = surface_lines(surface)
    assert lines == sorted(f"{name}:{tool.digest}" for name, tool in surface.tools.items())
    payload = "".join(line + "\n" for line in lines).encode("utf-8")
    assert surface.integrity_digest == "sha256:" + hashlib.sha256(payload).hexdigest()


def test_prompts_and_resources_count_in_the_server_digest():
    base = load_surface(SMALL)
    with_prompt = load_surface({**SMALL, "prompts": [{"name": "p"}]})
    with_resource = load_surface({**SMALL, "resources": [{"uri": "x://y"}]})
    assert len({base.integrity_digest, with_prompt.integrity_digest, with_resource.integrity_digest}) == 3


def test_timestamps_versions_and_format_are_not_digested():
    a = load_surface({**SMALL, "serverInfo": {"name": "a", "version": "1"}, "protocolVersion": "2024-11-05"})
    b = load_surface({**SMALL, "serverInfo": {"name": "b", "version": "2"}, "protocolVersion": "2025-06-18"})
    assert a.integrity_digest == b.integrity_digest
    stamped = Surface(tools=a.tools, generated_at="2026-01-01T00:00:00Z", source_format="lockfile")
    assert stamped.integrity_digest == a.integrity_digest


def test_required_list_inside_a_default_value_is_not_a_set():
    a = {"name": "t", "inputSchema": {"type": "object", "default": {"required": ["a", "b"]}}}
    b = {"name": "t", "inputSchema": {"type": "object", "default": {"required": ["b", "a"]}}}
    assert load_surface([a]).integrity_digest != load_surface([b]).integrity_digest


def test_any_content_change_changes_the_digest():
    changed = {"tools": [dict(SMALL["tools"][0], description="Fetch an invoice"), SMALL["tools"][1]]}
    assert load_surface(changed).integrity_digest != load_surface(SMALL).integrity_digest


@settings(max_examples=150, deadline=None)
@given(tools_lists(), st.randoms(use_true_random=False))
def test_digests_ignore_key_tool_and_set_order(result, rng: random.Random):
    original = load_surface(result)
    reordered = load_surface(shuffled(result, rng))
    assert reordered.integrity_digest == original.integrity_digest
    assert {n: t.digest for n, t in reordered.tools.items()} == {n: t.digest for n, t in original.tools.items()}


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                    | st.text(), lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(), c, max_size=4),
                    max_leaves=25))
def test_pretty_json_is_the_standard_librarys_text(value):
    import json

    from app.jsonio import pretty_json

    assert pretty_json(value) == json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
