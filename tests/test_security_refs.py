"""No code path ever retrieves a ``$ref`` (issue 9, item 1): a surface with a non-local
reference is refused at the door (422 naming the tool and field) in every path (lock, live,
diff, check, capture's reader, lockfile), and a validator built over such a schema anyway
(a stored surface, the diff's witnesses) refuses to fetch it. Proven with a loopback HTTP
listener that records every request and a ``file://`` reference to a file holding a marker.
Also: keywords beside a local ``$ref`` apply together with its target (2020-12)."""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from app import load_surface
from app.diff import diff
from app.diff.schema.instances import Validators
from app.problems import InputError
from app.schemas import deref
from app.validation import validate_arguments
from tests.helpers_service import TOKENS, api, assert_problem, bearer, lock, surface, tool
from tests.loopback import recording_json

MARKER = "MARKER-5b7e1c0d"
SCHEMA_WITH_MARKER = json.dumps({"type": "string", "enum": [MARKER]})


@dataclass
class Listener:
    """A loopback HTTP server that answers a schema holding the marker and records requests."""

    url: str
    requests: list[str]


@pytest.fixture
def listener() -> Iterator[Listener]:
    with recording_json(SCHEMA_WITH_MARKER) as (base, requests):
        yield Listener(f"{base}/schema.json", requests)


@pytest.fixture
def marker_file(tmp_path: Path) -> str:
    path = tmp_path / "secret.json"
    path.write_text(SCHEMA_WITH_MARKER, encoding="utf-8")
    return path.as_uri()


def remote_tool(ref: str, name: str = "get_invoice") -> dict[str, object]:
    return tool(name, properties={"id": {"type": "string"}, "note": {"$ref": ref}})


def refs(listener: Listener, marker_file: str) -> list[str]:
    return [listener.url, marker_file, listener.url + "#/defs/a", "other.json", "urn:x:y"]


def test_every_api_path_refuses_a_non_local_ref_and_fetches_nothing(
        tmp_path: Path, listener: Listener, marker_file: str) -> None:
    with api(tmp_path / "store") as client:
        for ref in refs(listener, marker_file):
            bad = surface(remote_tool(ref))
            good = surface(tool())
            answers = [
                lock(client, bad),
                client.put("/servers/billing/live", json=bad),
                client.post("/diff", json={"before": good, "after": bad}),
                client.post("/diff", json={"before": bad, "after": good}),
            ]
            assert lock(client, good).status_code in (200, 201)
            answers += [
                client.post("/check", json={"server": "billing", "surface": bad}),
                client.post("/diff", json={"server": "billing", "surface": bad}),
            ]
            for response in answers:
                body = assert_problem(response, 422)
                assert "$ref" in body["detail"] and "get_invoice" in body["detail"], body
                assert "inputSchema" in body["detail"], body
                assert "\n" not in body["detail"]
                assert MARKER not in response.text
    assert listener.requests == []


def test_the_reader_refuses_a_non_local_ref_in_an_output_schema(listener: Listener) -> None:
    value = surface(tool(outputSchema={"type": "object", "properties": {"a": {"$ref": listener.url}}}))
    with pytest.raises(InputError, match=r"outputSchema.*\$ref"):
        load_surface(value)
    assert listener.requests == []


def test_validation_never_fetches_a_reference(listener: Listener, marker_file: str) -> None:
    for ref in refs(listener, marker_file):
        schema = {"type": "object", "properties": {"note": {"$ref": ref}}}
        problems = validate_arguments(schema, {"note": "anything"})
        assert problems, ref  # an unknown reference cannot be checked: said, never fetched
        assert all(MARKER not in str(problem) for problem in problems)
        assert validate_arguments(schema, {"other": 1}) == []  # the reference is never reached
    assert listener.requests == []


def test_the_diffs_validators_never_fetch_a_reference(listener: Listener, marker_file: str) -> None:
    for ref in refs(listener, marker_file):
        schema = {"type": "object", "properties": {"note": {"$ref": ref}}}
        with contextlib.suppress(Exception):  # refusing is the point; fetching is the failure
            Validators(schema).valid({"note": "x"})
    assert listener.requests == []


def test_a_validation_error_request_fetches_nothing(tmp_path: Path, listener: Listener) -> None:
    """Even a stored surface with a remote reference (written before the door refused them)
    is never fetched by POST /servers/{s}/validation-error."""
    with api(tmp_path / "store") as client:
        assert lock(client, surface(tool())).status_code == 201
        gov = client.app.state.governance  # type: ignore[attr-defined]
        stored = gov.current("billing").surface
        schema = copy.deepcopy(stored.tools["get_invoice"].input_schema)
        schema["properties"]["id"] = {"$ref": listener.url}
        object.__setattr__(stored.tools["get_invoice"], "input_schema", schema)
        response = client.post("/servers/billing/validation-error",
                               json={"tool": "get_invoice", "arguments": {"id": "x"}},
                               headers=bearer(TOKENS["admin"]))
        assert response.status_code < 500, response.text
        assert MARKER not in response.text
    assert listener.requests == []


# --------------------------------------------------------------------------- siblings


def test_deref_applies_keywords_beside_a_ref_together_with_its_target() -> None:
    root = {"$defs": {"s": {"type": "string", "maxLength": 5}}}
    merged = deref(root, {"$ref": "#/$defs/s", "type": "integer"})
    # both apply: a value must be a string and an integer (nothing is), never just an integer
    assert validate_arguments({"type": "object", "properties": {"a": merged}, "$defs": root["$defs"]},
                              {"a": 3}) != []
    same = deref(root, {"$ref": "#/$defs/s", "minLength": 2})
    assert validate_arguments({"type": "object", "properties": {"a": same}}, {"a": "abcdefg"}) != []
    assert validate_arguments({"type": "object", "properties": {"a": same}}, {"a": "x"}) != []
    assert validate_arguments({"type": "object", "properties": {"a": same}}, {"a": "abc"}) == []


def test_a_ref_beside_a_contradicting_type_accepts_nothing_in_the_diff() -> None:
    defs = {"bom": {"type": "string"}}
    before = {"type": "object", "definitions": defs,
              "properties": {"foo": {"$ref": "#/definitions/bom", "type": "integer"}}}
    after = {"type": "object", "properties": {"foo": {"type": "string"}}}
    result = diff(load_surface(surface({"name": "t", "inputSchema": before})),
                  load_surface(surface({"name": "t", "inputSchema": after})))
    assert result.summary["BREAKING"] == 0, result.deltas


def test_the_sdk_integrations_never_fetch_a_reference(listener: Listener, marker_file: str) -> None:
    from mcp_governance.integrations._core import input_problem

    for ref in refs(listener, marker_file):
        schema = {"type": "object", "properties": {"note": {"$ref": ref}, "n": {"type": "integer"}}}
        assert input_problem(schema, {"n": "not a number"})  # the rest is still checked
        input_problem(schema, {"note": "x"})
    assert listener.requests == []
