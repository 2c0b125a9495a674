"""Whatever is digested is what is written (issue 9, item 6): every surface the reader
accepts survives lock write -> read -> verify, in TOML and in the JSON export, including
empty objects (``annotations: {}``, ``_meta: {}``, ``outputSchema: {}``, ``execution: {}``),
null, big and negative numbers and unicode keys; the CLI's ``lock`` then ``check`` passes,
and the service still serves a lock after a restart."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app import load_surface
from app.lockfile import dumps_json, loads_toml, lock_document, read_document, write_surface
from tests.helpers_service import api, lock
from tests.strategies import json_values, names, text, tools_lists

EMPTY_FIELDS = ("annotations", "_meta", "outputSchema", "execution")


def _tool(**fields: object) -> dict[str, object]:
    return {"name": "t", "inputSchema": {"type": "object"}, **fields}


AWKWARD = [
    _tool(annotations={}),
    _tool(_meta={}),
    _tool(outputSchema={}),
    _tool(execution={}),
    _tool(annotations={}, _meta={}, outputSchema={}, execution={}),
    _tool(icons=[]),
    _tool(**{"x-empty": {}, "x-null": None, "x-list": []}),
    _tool(_meta={"big": 2**80, "neg": -(2**70), "tiny": -2.5e-300, "zero": -0.0, "null": None}),
    _tool(_meta={"ключ": {}, "鍵": [], "\u200b": "", "": {}}),
    {"name": "ключ \u200b", "inputSchema": {"type": "object", "properties": {"é": {}, "": {"default": None}}}},
    {"name": "a\nb", "inputSchema": {"type": "object"}},
]


def _round_trips(value: dict[str, object]) -> None:
    surface = load_surface(value, server="rt")
    back = loads_toml(write_surface(surface))
    assert back.integrity_digest == surface.integrity_digest
    assert {name: tool.to_mcp() for name, tool in back.tools.items()} == \
           {name: tool.to_mcp() for name, tool in surface.tools.items()}
    exported = read_document(json.loads(dumps_json(lock_document(surface))))
    assert exported.integrity_digest == surface.integrity_digest


@pytest.mark.parametrize("tool", AWKWARD, ids=lambda tool: ",".join(sorted(tool))[:40])
def test_awkward_tools_survive_write_read_verify(tool: dict[str, object]) -> None:
    _round_trips({"tools": [tool]})


@st.composite
def surfaces(draw: st.DrawFn) -> dict[str, object]:
    value = draw(tools_lists(max_tools=3))
    for tool in value["tools"]:
        for field in EMPTY_FIELDS:
            if draw(st.integers(0, 3)) == 0:
                tool[field] = draw(st.sampled_from([{}, None, {"k": None}]))
        if draw(st.booleans()):
            tool[draw(names.map(lambda name: "x-" + name))] = draw(json_values | st.just({}))
        if draw(st.booleans()):
            tool["_meta"] = draw(st.dictionaries(text, json_values | st.just({}), max_size=3))
    return value


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=surfaces())
def test_any_surface_survives_write_read_verify(value: dict[str, object]) -> None:
    _round_trips(value)


def test_the_cli_locks_then_checks_a_surface_with_empty_objects(tmp_path: Path) -> None:
    source = tmp_path / "tools.json"
    source.write_text(json.dumps({"tools": [AWKWARD[4]]}), encoding="utf-8")
    lockfiles = tmp_path / "lockfiles"
    run = [sys.executable, "-m", "app"]
    locked = subprocess.run([*run, "lock", str(source), "--server", "t", "--lockfiles", str(lockfiles)],
                            capture_output=True, text=True, timeout=120)
    assert locked.returncode == 0, locked.stderr
    checked = subprocess.run([*run, "check", str(source), "--server", "t", "--lockfiles", str(lockfiles)],
                             capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "corrupt" not in checked.stdout + checked.stderr


def test_the_service_serves_a_lock_with_empty_objects_after_a_restart(tmp_path: Path, store_backend: str) -> None:
    value = {"tools": [AWKWARD[4]]}
    with api(tmp_path) as client:
        response = lock(client, value, server="empties")
        assert response.status_code == 201, response.text
        digest = response.json()["integrity_digest"]
    with api(tmp_path) as client:  # a new process's view: read from disk
        response = client.get("/lockfiles/empties", headers={"accept": "application/json"})
        assert response.status_code == 200, response.text
        assert digest in response.text
