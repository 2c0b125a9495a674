"""The schema-compatibility dataset (tests/data/compat) is right about JSON Schema.

Every pair's answer is checked with ``jsonschema``, independently of ContractDiff:

* a ``breaking`` pair's witness is accepted by the old schema and refused by the new one
  (``output_witness``: accepted by the new one and refused by the old one);
* a ``compatible`` pair (and an ``output: compatible`` one, the other way round) is sampled: no
  plausible value (built from the literals of the two schemas, nested in lists and objects) may be
  accepted by the old schema and refused by the new one.

Schemas are read in the dialect they name (``$schema``), 2020-12 by default, as MCP does.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for

JSON = Any
DATA = Path(__file__).parent / "data" / "compat"
FIELDS = {"id", "source", "derived", "category", "wrapped", "before", "after", "input", "witness",
          "witness_undeclared", "why", "output", "output_witness", "output_why", "source_verdict", "note"}
ANSWERS = {"breaking", "compatible"}


def load() -> list[dict[str, JSON]]:
    pairs = []
    for path in sorted(DATA.glob("pairs-*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        pairs.extend({**pair, "file": path.name} for pair in doc["pairs"])
    return pairs


PAIRS = load()


@cache
def _meta_validator(cls: type[Validator]) -> Validator:
    return validator_for(cls.META_SCHEMA)(cls.META_SCHEMA)


@cache
def _checked(text: str) -> Validator:
    schema = json.loads(text)
    cls = validator_for(schema, default=Draft202012Validator)
    errors = list(_meta_validator(cls).iter_errors(schema))
    assert not errors, errors[0].message
    return cls(schema)


@cache
def validator(index: int, side: str) -> Validator:
    """The pair's schema, checked against its dialect's metaschema (each distinct schema once)."""
    return _checked(json.dumps(PAIRS[index][side], sort_keys=True))


def accepts(index: int, side: str, value: JSON) -> bool:
    return validator(index, side).is_valid(value)


def test_dataset_is_large_and_varied() -> None:
    assert len(PAIRS) >= 300
    answers = {answer: sum(pair["input"] == answer for pair in PAIRS) for answer in ANSWERS}
    assert min(answers.values()) >= 100, answers
    assert len({pair["category"] for pair in PAIRS}) >= 25
    assert len({pair["source"]["repo"] for pair in PAIRS}) >= 3


def test_pairs_are_well_formed() -> None:
    problems = []
    ids = [pair["id"] for pair in PAIRS]
    problems += [f"duplicate id {i}" for i in sorted({i for i in ids if ids.count(i) > 1})]
    for pair in PAIRS:
        where = f"{pair['file']}: {pair['id']}"
        if unknown := set(pair) - FIELDS - {"file"}:
            problems.append(f"{where}: unknown fields {sorted(unknown)}")
        if not {"repo", "file"} <= set(pair["source"]):
            problems.append(f"{where}: source needs repo and file")
        if pair["input"] not in ANSWERS or pair.get("output", "compatible") not in ANSWERS:
            problems.append(f"{where}: answers are breaking or compatible")
        if (pair["input"] == "breaking") != ("witness" in pair) or (pair["input"] == "compatible") != ("why" in pair):
            problems.append(f"{where}: a breaking pair has a witness, a compatible one a why")
        if "output" in pair and (pair["output"] == "breaking") != ("output_witness" in pair):
            problems.append(f"{where}: an output-breaking pair has an output_witness")
        if "output" in pair and (pair["output"] == "compatible") != ("output_why" in pair):
            problems.append(f"{where}: an output-compatible pair has an output_why")
        for side in ("before", "after"):
            schema = pair[side]
            # what an MCP client accepts as a tool's inputSchema: an object schema
            if not isinstance(schema, dict) or schema.get("type") != "object":
                problems.append(f"{where}: {side} is not an object schema")
            elif pair["wrapped"] and (schema.get("required") != ["value"] or "value" not in schema["properties"]):
                problems.append(f"{where}: {side} is not wrapped as the required property `value`")
        if pair["wrapped"]:
            for key in ("witness", "output_witness"):
                if key in pair and set(pair[key]) != {"value"}:
                    problems.append(f"{where}: the {key} of a wrapped pair is {{\"value\": ...}}")
    assert not problems, "\n".join(problems)


def test_schemas_are_valid_for_their_dialect() -> None:
    for index in range(len(PAIRS)):
        validator(index, "before")
        validator(index, "after")


def test_witnesses() -> None:
    wrong = []
    for index, pair in enumerate(PAIRS):
        if "witness" in pair:
            if not accepts(index, "before", pair["witness"]):
                wrong.append(f"{pair['id']}: the old schema refuses the witness {pair['witness']!r}")
            if accepts(index, "after", pair["witness"]):
                wrong.append(f"{pair['id']}: the new schema accepts the witness {pair['witness']!r}")
        if "output_witness" in pair:
            if not accepts(index, "after", pair["output_witness"]):
                wrong.append(f"{pair['id']}: the new schema refuses the output witness {pair['output_witness']!r}")
            if accepts(index, "before", pair["output_witness"]):
                wrong.append(f"{pair['id']}: the old schema accepts the output witness {pair['output_witness']!r}")
    assert not wrong, "\n".join(wrong)


# --- compatible pairs, sampled ----------------------------------------------------------------

# (pair index, the side whose values must all be accepted by the other side)
CLAIMS = [(index, "before") for index, pair in enumerate(PAIRS) if pair["input"] == "compatible"] + [
    (index, "after") for index, pair in enumerate(PAIRS) if pair.get("output") == "compatible"
]


def _literals(node: JSON, out: set[JSON]) -> None:
    """Every scalar and every property name in a schema, and the numbers next to its numbers."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("properties", "patternProperties", "dependentRequired", "dependentSchemas", "dependencies"):
                out.update(value)
            _literals(value, out)
    elif isinstance(node, list):
        for value in node:
            _literals(value, out)
    elif isinstance(node, bool) or node is None:
        return
    elif isinstance(node, (int, float)):
        out.update({node, node + 1, node - 1, node + 0.5, node - 0.5, node * 2, -node})
    elif isinstance(node, str) and len(node) < 40:
        out.update({node, node[:-1], node + "x", "a" * len(node), "a" * (len(node) + 1)})


@cache
def values_for(index: int) -> st.SearchStrategy[JSON]:
    pair = PAIRS[index]
    literals: set[JSON] = set()
    _literals(pair["before"], literals)
    _literals(pair["after"], literals)
    ordered = sorted(literals, key=lambda v: (type(v).__name__, str(v)))
    keys = sorted({v for v in ordered if isinstance(v, str)} | {"a", "zz"})
    scalars = (
        st.none() | st.booleans() | st.integers(-3, 12) | st.sampled_from([0.5, 1.0, -2.5, 1e9])
        | st.text(alphabet="ab1_ \n", max_size=5) | st.sampled_from(ordered or [0])
    )
    values = st.recursive(
        scalars,
        lambda children: st.lists(children, max_size=4) | st.dictionaries(st.sampled_from(keys), children, max_size=4),
        max_leaves=6,
    )
    if pair["wrapped"]:
        return st.builds(lambda v: {"value": v}, values)
    return st.dictionaries(st.sampled_from(keys), values, max_size=5)


@settings(max_examples=400, derandomize=True, deadline=None, phases=[Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_compatible_pairs_hold_on_samples(data: st.DataObject) -> None:
    index, wider_from = data.draw(st.sampled_from(CLAIMS), label="claim")
    other = "after" if wider_from == "before" else "before"
    value = data.draw(values_for(index), label="value")
    if accepts(index, wider_from, value):
        assert accepts(index, other, value), (
            f"{PAIRS[index]['id']}: {value!r} is accepted by the {wider_from} schema and refused by the {other} one"
        )


def test_compatible_pairs_hold_on_their_literals() -> None:
    """A deterministic check of every claim: the pair's literals alone, and as the values of the
    property names the pair mentions."""
    wrong = []
    for index, wider_from in CLAIMS:
        other = "after" if wider_from == "before" else "before"
        literals: set[JSON] = set()
        _literals(PAIRS[index]["before"], literals)
        _literals(PAIRS[index]["after"], literals)
        scalars = [None, True, False, [], {}, *sorted(literals, key=lambda v: (type(v).__name__, str(v)))[:40]]
        keys = [v for v in scalars if isinstance(v, str)][:8]
        if PAIRS[index]["wrapped"]:
            candidates = [{"value": v} for v in scalars] + [{"value": {k: v}} for k in keys for v in scalars[:10]]
        else:
            candidates = [{}] + [{k: v} for k in keys for v in scalars[:16]]
        for value in candidates:
            if accepts(index, wider_from, value) and not accepts(index, other, value):
                wrong.append(f"{PAIRS[index]['id']}: {value!r} accepted by {wider_from}, refused by {other}")
                break
    assert not wrong, "\n".join(wrong)
