"""Hypothesis strategies for schema-like JSON values and surfaces, and a shuffler that
changes only what must not matter (key order, set-like list order, tool order)."""

from __future__ import annotations

import random

from hypothesis import strategies as st

from app.jsontypes import JSON
from app.schemas import SCHEMA_KEYWORDS, SCHEMA_LIST_KEYWORDS, SCHEMA_MAP_KEYWORDS, SET_KEYWORDS

# Text with everything JSON can carry: unicode, controls, invisible characters; no lone surrogates.
text = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
names = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=8)
scalars = st.none() | st.booleans() | st.integers(min_value=-(2**80), max_value=2**80) | st.floats(
    allow_nan=False, allow_infinity=False
) | st.sampled_from([1.5, 1e100, -0.0, 2.5e-300]) | text

json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(text, children, max_size=4),
    max_leaves=20,
)

TYPES = ["string", "integer", "number", "boolean", "array", "object", "null"]


@st.composite
def schemas(draw: st.DrawFn, depth: int = 2) -> dict[str, JSON]:
    """An object schema with properties, required/type sets, constraints and arbitrary
    JSON in value positions (default, const, enum, examples, unknown keywords)."""
    schema: dict[str, JSON] = {"type": "object"}
    prop_names = draw(st.lists(names, unique=True, max_size=4))
    properties: dict[str, JSON] = {}
    for name in prop_names:
        prop: dict[str, JSON] = {}
        kind = draw(st.sampled_from(["single", "list", "nested", "values"]))
        if kind == "single":
            prop["type"] = draw(st.sampled_from(TYPES))
        elif kind == "list":
            prop["type"] = draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True))
        elif kind == "nested" and depth > 0:
            prop = draw(schemas(depth=depth - 1))
        else:
            prop["enum"] = draw(st.lists(json_values, min_size=1, max_size=3))
        if draw(st.booleans()):
            prop["default"] = draw(json_values)
        if draw(st.booleans()):
            prop["description"] = draw(text)
        if draw(st.booleans()):
            prop["maximum"] = draw(st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False))
        properties[name] = prop
    if properties:
        schema["properties"] = properties
        required = draw(st.lists(st.sampled_from(prop_names), unique=True))
        if required:
            schema["required"] = required
    if draw(st.booleans()):
        schema["additionalProperties"] = draw(st.booleans())
    if draw(st.booleans()):
        schema["x-extension"] = draw(json_values)
    if draw(st.booleans()):
        schema["examples"] = draw(st.lists(json_values, max_size=2))
    return schema


@st.composite
def tool_dicts(draw: st.DrawFn, name: str) -> dict[str, JSON]:
    tool: dict[str, JSON] = {"name": name, "inputSchema": draw(schemas())}
    if draw(st.booleans()):
        tool["description"] = draw(text)
    if draw(st.booleans()):
        tool["title"] = draw(text)
    if draw(st.booleans()):
        tool["annotations"] = draw(
            st.fixed_dictionaries({}, optional={"readOnlyHint": st.booleans(), "destructiveHint": st.booleans(),
                                                "title": text})
        )
    if draw(st.booleans()):
        tool["outputSchema"] = draw(schemas(depth=1))
    if draw(st.booleans()):
        tool["_meta"] = draw(st.dictionaries(text, json_values, max_size=2))
    if draw(st.booleans()):
        tool["x-unknown"] = draw(json_values)
    return tool


@st.composite
def tools_lists(draw: st.DrawFn, max_tools: int = 4) -> dict[str, JSON]:
    tool_names = draw(st.lists(names, unique=True, max_size=max_tools))
    return {"tools": [draw(tool_dicts(name)) for name in tool_names]}


def shuffled(value: JSON, rng: random.Random, sets: bool = True) -> JSON:
    """A copy of a tools/list result with every object's keys and the tool list reordered,
    and (with ``sets``) the set-like ``required``/``type`` lists of the tools' schemas.
    Only the places that are a tool list or a schema are treated as such: a key named
    "tools" or "required" inside a default value or an extension is plain data."""
    out = _reordered_keys(value, rng)
    if isinstance(out, dict) and isinstance(out.get("tools"), list):
        tools = []
        for tool in out["tools"]:
            tool = _reordered_keys(tool, rng)
            for key in ("inputSchema", "outputSchema"):
                if isinstance(tool.get(key), dict):
                    tool[key] = _shuffled_schema(tool[key], rng, sets)
            tools.append(tool)
        rng.shuffle(tools)
        out["tools"] = tools
    return out


def _reordered_keys(value: JSON, rng: random.Random) -> JSON:
    """Same value, every object's keys in a random order; list order untouched."""
    if isinstance(value, dict):
        return {key: _reordered_keys(child, rng) for key, child in _shuffled_items(value, rng)}
    if isinstance(value, list):
        return [_reordered_keys(item, rng) for item in value]
    return value


def _shuffled_schema(schema: JSON, rng: random.Random, sets: bool) -> JSON:
    if not isinstance(schema, dict):
        return schema
    out: dict[str, JSON] = {}
    for key, child in _shuffled_items(schema, rng):
        if sets and key in SET_KEYWORDS and isinstance(child, list):
            child = list(child)
            rng.shuffle(child)
            out[key] = child
        elif key in SCHEMA_MAP_KEYWORDS and isinstance(child, dict):
            out[key] = {name: _shuffled_schema(sub, rng, sets) for name, sub in _shuffled_items(child, rng)}
        elif key in SCHEMA_KEYWORDS or key in SCHEMA_LIST_KEYWORDS:
            out[key] = ([_shuffled_schema(sub, rng, sets) for sub in child] if isinstance(child, list)
                        else _shuffled_schema(child, rng, sets))
        else:
            out[key] = _reordered_keys(child, rng)
    return out


def _shuffled_items(mapping: dict[str, JSON], rng: random.Random) -> list[tuple[str, JSON]]:
    items = list(mapping.items())
    rng.shuffle(items)
    return items
