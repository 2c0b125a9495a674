"""The falsification net: ContractDiff's verdicts against values.

Real (tests/corpus) and generated schemas are mutated with every kind of change
(``tests/falsify.py``); values valid under the old schema are drawn (hypothesis, plus the
engine's own bounded samples) and validated under the new one with jsonschema. When the
engine calls an input change SAFE or COSMETIC, no old-valid value may be refused; when
it calls an output change SAFE or COSMETIC, no new-valid result may be one the old
schema refuses. Every witness the engine reports is checked again here, independently.

The net counts what RULES.md makes part of the contract: documented arguments (declared
properties; refusing an undocumented extra argument is at most RISKY by rule) and, for
results, a reader that ignores unknown fields (a new output field is SAFE by rule).
Numbers stay within ±(2^53-1) (bounds past it are COSMETIC by rule).

Budget: ``MCP_GOVERNANCE_FALSIFY`` = ``default`` (bounded, for every run), ``ci`` (more)
or ``long`` (much more).
"""

from __future__ import annotations

import contextlib
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.diff import diff
from app.diff.schema.instances import Sampler, Undecidable
from app.jsontypes import JSON
from tests.falsify import (
    MUTATIONS,
    base_schemas,
    check_witness,
    documented,
    interoperable,
    lenient_reader,
    mutate,
    surfaces,
    validator,
    values_for,
)

BUDGETS = {"default": 3, "ci": 20, "long": 150}
"""Examples per kind of change (there are about a hundred kinds)."""
PROFILE = os.environ.get("MCP_GOVERNANCE_FALSIFY", "default")
EXAMPLES = BUDGETS.get(PROFILE, BUDGETS["default"])
DERANDOMIZE = PROFILE not in ("ci", "long")
"""The default run is repeatable; the larger budgets explore new examples each run."""
GATING = ("BREAKING", "RISKY")


def samples(data: st.DataObject, schema: JSON) -> list[JSON]:
    """Values the schema accepts and documents, within the interoperable number range."""
    strategy = values_for(schema, schema)
    drawn = [] if strategy.is_empty else data.draw(st.lists(strategy, max_size=6), label="values")
    with contextlib.suppress(Undecidable):
        drawn += Sampler(schema).samples(schema)
    judge = validator(schema)
    return [value for value in drawn
            if interoperable(value) and documented(value, schema, schema) and judge.is_valid(value)]


def check_input(name: str, before: dict[str, JSON], after: dict[str, JSON], data: st.DataObject) -> None:
    old_surface, new_surface = surfaces(before, after, "inputSchema")
    # the schemas as the engine read them (reading may complete a root, e.g. its object type)
    before, after = old_surface.tools["t"].input_schema, new_surface.tools["t"].input_schema
    result = diff(old_surface, new_surface)
    schema_deltas = [d for d in result.deltas if d.category == "input"]
    for delta in schema_deltas:
        check_witness(delta, before, after)
    if any(d.severity.value in GATING for d in schema_deltas):
        return
    new = validator(after)
    for value in samples(data, before):
        assert new.is_valid(value), (
            f"{name}: graded {[(d.rule, d.severity.value) for d in schema_deltas] or 'no change'}, "
            f"yet {value!r} was accepted before and is refused now")


def check_output(name: str, before: dict[str, JSON], after: dict[str, JSON], data: st.DataObject) -> None:
    old_surface, new_surface = surfaces(before, after, "outputSchema")
    before, after = old_surface.tools["t"].output_schema, new_surface.tools["t"].output_schema
    result = diff(old_surface, new_surface)
    schema_deltas = [d for d in result.deltas if d.category == "output"]
    for delta in schema_deltas:
        check_witness(delta, before, after)
    if any(d.severity.value in GATING for d in schema_deltas):
        return
    old = validator(lenient_reader(before))
    for value in samples(data, after):
        assert old.is_valid(value), (
            f"{name}: graded {[(d.rule, d.severity.value) for d in schema_deltas] or 'no change'}, "
            f"yet the new result {value!r} is refused by the old reader")


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
@settings(max_examples=EXAMPLES, deadline=None, derandomize=DERANDOMIZE,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(data=st.data(), before=base_schemas)
def test_no_safe_verdict_is_contradicted_by_a_value(mutation: str, data: st.DataObject,
                                                    before: dict[str, JSON]) -> None:
    """Every kind of change, on real and generated schemas, as an input and as an output."""
    mutated = mutate(before, data.draw, mutation)
    if mutated is None:
        return
    name, after = mutated
    check_input(name, before, after, data)
    check_output(name, before, after, data)
