"""Witnesses: every BREAKING input delta of the real corpus has one that a plain jsonschema
validator confirms (or a reason), a wrong witness is caught, reports show them, they are
built only when shown, and building one never fetches a reference nor runs a schema's
regex without a time limit."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from functools import cache
from itertools import pairwise
from typing import Any

import pytest

from app import load_surface, safe_regex
from app.diff import Delta, DiffResult, diff
from app.diff.model import KnownWitness, Witness
from app.diff.reports import render_report
from app.diff.reports.sarif import sarif_log
from app.diff.serialize import result_from_json
from app.model import Surface
from app.problems import InputError
from tests.conftest import CORPUS_SERVERS, corpus_versions
from tests.falsify import check_witness
from tests.loopback import recording_json


@cache
def corpus_results() -> list[tuple[Surface, Surface, DiffResult]]:
    out = []
    for server in CORPUS_SERVERS:
        for before, after in pairwise(corpus_versions(server)):
            b, a = load_surface(before), load_surface(after)
            out.append((b, a, diff(b, a)))
    return out


def schema_of(surface: Surface, delta: Delta, result: DiffResult | None = None) -> Any:
    """The delta's schema on one side (a renamed tool's old schema under its old name)."""
    name = delta.tool
    if name not in surface.tools and result is not None:
        name = next(d.before for d in result.deltas if d.rule == "tool.renamed" and d.tool == delta.tool)
    tool = surface.tools[name]  # type: ignore[index]
    return tool.input_schema if delta.category == "input" else tool.output_schema


def test_every_breaking_input_delta_of_the_corpus_has_a_validated_witness_or_a_reason():
    breaking = 0
    for before, after, result in corpus_results():
        for delta in result.deltas:
            if delta.category not in ("input", "output") or delta.severity.value not in ("BREAKING", "RISKY"):
                continue
            witness = delta.witness
            assert witness is not None, f"{delta.rule} on {delta.tool} carries no witness"
            if witness.found:
                check_witness(delta, schema_of(before, delta, result), schema_of(after, delta))
            else:
                assert witness.reason, delta
            if delta.category == "input" and delta.severity.value == "BREAKING":
                breaking += 1
                assert witness.found, (delta.rule, delta.tool, delta.field, witness.reason)
    assert breaking >= 2  # read_multiple_files.paths minItems, git_add.files minItems


def test_a_wrong_witness_is_caught():
    """The check the corpus and the falsification net run can fail: a value the new schema
    still accepts is no witness."""
    before, after, result = next((b, a, r) for b, a, r in corpus_results()
                                 if any(d.rule == "input.bound.tightened" for d in r.deltas))
    delta = next(d for d in result.deltas if d.rule == "input.bound.tightened")
    still_valid = {"paths": ["a", "b"]}
    wrong = replace(delta, evidence=KnownWitness(Witness(True, still_valid)))
    with pytest.raises(AssertionError, match="not refused"):
        check_witness(wrong, schema_of(before, delta), schema_of(after, delta))


def _one(schema: Any) -> Surface:
    return load_surface({"tools": [{"name": "t", "inputSchema": schema}]})


BEFORE = {"type": "object", "properties": {"limit": {"type": "integer", "maximum": 100}}}
AFTER = {"type": "object", "properties": {"limit": {"type": "integer", "maximum": 50}}}


def test_witnesses_are_built_only_when_shown():
    (delta,) = diff(_one(BEFORE), _one(AFTER)).deltas
    assert delta.evidence is not None and "witness" not in delta.__dict__
    assert diff(_one(BEFORE), _one(AFTER)).to_json(witnesses=False)["deltas"][0]["witness"] is None
    assert delta.witness is not None and delta.witness.found
    assert delta.witness.value == {"limit": 100}


def test_reports_show_the_witness():
    result = diff(_one(BEFORE), _one(AFTER))
    document = json.loads(render_report(result, "json"))
    assert document["deltas"][0]["witness"] == {"found": True, "value": {"limit": 100}}
    sarif = sarif_log(result)["runs"][0]["results"][0]["properties"]
    assert sarif["witness"] == {"limit": 100}
    markdown = render_report(result, "markdown")
    assert 'This call worked before and fails now: {"limit":100}' in markdown
    assert result_from_json(document).deltas[0].witness == Witness(True, {"limit": 100})


def test_a_delta_without_a_witness_says_why():
    before = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}
    after = {"type": "object", "properties": {"b": {"type": "string"}}}
    (delta,) = diff(_one(before), _one(after)).deltas
    assert delta.rule == "input.property.removed" and delta.severity.value == "RISKY"
    assert delta.witness is not None and not delta.witness.found and "ignored" in delta.witness.reason
    sarif = sarif_log(diff(_one(before), _one(after)))["runs"][0]["results"][0]["properties"]
    assert "witness" not in sarif and "ignored" in sarif["witnessReason"]


def test_output_witness_is_a_result_the_old_reader_refuses():
    def out(schema: Any) -> Surface:
        return load_surface({"tools": [{"name": "t", "inputSchema": {"type": "object"}, "outputSchema": schema}]})

    before = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    after = {"type": "object", "properties": {"n": {"type": ["integer", "null"]}}, "required": ["n"]}
    (delta,) = diff(out(before), out(after)).deltas
    assert delta.rule == "output.type.widened"
    assert delta.witness == Witness(True, {"n": None})
    assert "This result is allowed now and the old schema refuses it" in render_report(
        diff(out(before), out(after)), "markdown")


@pytest.fixture
def listener() -> Iterator[tuple[str, list[str]]]:
    with recording_json(json.dumps({"type": "string"})) as served:
        yield served


def _unread(schema: Any) -> Surface:
    """A surface holding ``schema`` as the reader would never let it in (a remote ``$ref``
    is refused at the door): the engine's own wall is under test."""
    surface = _one({"type": "object"})
    tool = replace(surface.tools["t"], input_schema=schema)
    return replace(surface, tools={"t": tool})


def test_building_a_witness_never_fetches_a_reference(listener: tuple[str, list[str]], tmp_path: Any):
    url, requests = listener
    marker = tmp_path / "marker.json"
    marker.write_text(json.dumps({"type": "string", "enum": ["SECRET-MARKER"]}), encoding="utf-8")
    for remote in (f"{url}/schema.json", marker.as_uri()):
        before = {"type": "object", "properties": {"a": {"$ref": remote}, "n": {"type": "integer"}}}
        after = {"type": "object", "properties": {"a": {"$ref": remote}, "n": {"type": "integer", "maximum": 1}}}
        with pytest.raises(InputError, match="not local"):
            _one(before)
        result = diff(_unread(before), _unread(after))
        document = json.dumps(result.to_json())
        assert "SECRET-MARKER" not in document
        for delta in result.deltas:
            witness = delta.witness
            assert witness is not None
            if witness.found:  # the value never reached the remote part
                assert "a" not in witness.value
    assert requests == []


def test_schema_regexes_run_time_limited(monkeypatch: pytest.MonkeyPatch):
    calls: list[str] = []
    real = safe_regex.search

    def counting(pattern: str, text: str, seconds: float = safe_regex.SEARCH_SECONDS) -> bool:
        calls.append(pattern)
        return real(pattern, text, seconds)

    monkeypatch.setattr(safe_regex, "search", counting)
    before = {"type": "object", "properties": {"s": {"type": "string"}}}
    after = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}}
    (delta,) = diff(_one(before), _one(after)).deltas
    assert delta.witness is not None and delta.witness.found
    assert "^(a+)+$" in calls
