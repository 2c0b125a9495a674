"""The falsification net's parts: base schemas (real and generated), one mutation per kind
of change, and values for a schema drawn with hypothesis (independent of the engine's own
sampler), so a grading the values contradict is found.

hypothesis-jsonschema does not run on the hypothesis this project pins (its object
strategy uses an internal API that is gone), so values come from :func:`values_for`, a
small generator for the keywords tool schemas use; every drawn value is validated with
jsonschema before it counts.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from functools import cache
from typing import Any

from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema.validators import validator_for

from app import load_surface
from app.diff import Delta
from app.jsontypes import JSON
from app.schemas import deref
from app.validation import FORMAT_CHECKER
from tests.conftest import CORPUS

SAFE_INTEGER = 2**53 - 1
FORMAT_VALUES = {"date-time": "2024-01-02T03:04:05Z", "date": "2024-01-02", "email": "a@example.com",
                 "uri": "https://example.com/x", "uuid": "123e4567-e89b-12d3-a456-426614174000"}


# --- base schemas -------------------------------------------------------------------------


@cache
def corpus_schemas() -> list[dict[str, JSON]]:
    """Every distinct input and output schema of the real captures in tests/corpus."""
    seen: dict[str, dict[str, JSON]] = {}
    for path in sorted(CORPUS.glob("*/*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        for tool in document.get("tools", []):
            for key in ("inputSchema", "outputSchema"):
                schema = tool.get(key)
                if isinstance(schema, dict):
                    seen.setdefault(json.dumps(schema, sort_keys=True), schema)
    return list(seen.values())


leaf_schemas = st.one_of(
    st.just({"type": "string"}),
    st.builds(lambda n: {"type": "string", "maxLength": n}, st.integers(1, 20)),
    st.builds(lambda n: {"type": "string", "minLength": n}, st.integers(0, 5)),
    st.just({"type": "string", "enum": ["a", "b", "c"]}),
    st.just({"type": "string", "pattern": "^[a-z]+$"}),
    st.just({"type": "string", "format": "date"}),
    st.just({"type": "integer"}),
    st.builds(lambda lo, hi: {"type": "integer", "minimum": lo, "maximum": lo + hi}, st.integers(-5, 5),
              st.integers(0, 20)),
    st.just({"type": "number", "exclusiveMinimum": 0}),
    st.just({"type": "boolean"}),
    st.just({"type": ["string", "null"]}),
    st.just({"type": "array", "items": {"type": "string"}}),
    st.just({"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3}),
    st.just({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
    st.just({"const": "fixed"}),
    st.just({}),
).map(copy.deepcopy)  # every draw its own object: mutations change schemas in place


@st.composite
def object_schemas(draw: st.DrawFn, depth: int = 1) -> dict[str, JSON]:
    names = draw(st.lists(st.sampled_from(["a", "b", "c", "d", "name", "path"]), unique=True, min_size=1,
                          max_size=4))
    properties: dict[str, JSON] = {}
    for name in names:
        nested = depth > 0 and draw(st.integers(0, 4)) == 0
        properties[name] = draw(object_schemas(depth - 1)) if nested else draw(leaf_schemas)
    schema: dict[str, JSON] = {"type": "object", "properties": properties}
    required = draw(st.lists(st.sampled_from(names), unique=True))
    if required:
        schema["required"] = required
    closing = draw(st.sampled_from([None, False, {"type": "string"}]))
    if closing is not None:
        schema["additionalProperties"] = closing
    return schema


base_schemas = st.one_of(object_schemas(), st.sampled_from(corpus_schemas()))


# --- mutations: one per kind of change -------------------------------------------------------

Mutation = Callable[[dict[str, JSON], Any], dict[str, JSON] | None]
"""Changes a copy of a (property or object) schema in place; None when it does not apply."""


def _places(schema: JSON, at: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Paths (through ``properties`` and ``items``) to every subschema that is an object."""
    found: list[tuple[str, ...]] = []
    if isinstance(schema, dict):
        found.append(at)
        for name, sub in (schema.get("properties") or {}).items() if isinstance(schema.get("properties"), dict) \
                else ():
            found.extend(_places(sub, (*at, "properties", name)))
        if isinstance(schema.get("items"), dict):
            found.extend(_places(schema["items"], (*at, "items")))
    return found


def _at(schema: JSON, path: tuple[str, ...]) -> Any:
    for token in path:
        schema = schema[token]  # type: ignore[index]
    return schema


def _object(node: dict[str, JSON]) -> bool:
    return node.get("type") == "object" or "properties" in node


def _props(node: dict[str, JSON]) -> dict[str, JSON]:
    return node.setdefault("properties", {})  # type: ignore[return-value]


MUTATIONS: dict[str, Mutation] = {}


def mutation(name: str) -> Callable[[Mutation], Mutation]:
    def register(function: Mutation) -> Mutation:
        MUTATIONS[name] = function
        return function
    return register


def _set(key: str, value: JSON, when: Callable[[dict[str, JSON]], bool] = lambda n: True) -> Mutation:
    def change(node: dict[str, JSON], draw: Any) -> dict[str, JSON] | None:
        if not when(node):
            return None
        node[key] = value
        return node
    return change


def _drop(key: str) -> Mutation:
    def change(node: dict[str, JSON], draw: Any) -> dict[str, JSON] | None:
        if key not in node:
            return None
        del node[key]
        return node
    return change


def _is(*types: str) -> Callable[[dict[str, JSON]], bool]:
    return lambda node: node.get("type") in types


for _key, _value, _types in [
    ("maxLength", 2, ("string",)), ("minLength", 2, ("string",)), ("minLength", 0, ("string",)),
    ("pattern", "^[a-c]*$", ("string",)), ("format", "date", ("string",)), ("enum", ["a", "fixed"], ("string",)),
    ("const", "a", ("string",)), ("maximum", 3, ("integer", "number")), ("minimum", 1, ("integer", "number")),
    ("maximum", SAFE_INTEGER, ("integer",)), ("minimum", -SAFE_INTEGER, ("integer",)),
    ("exclusiveMaximum", 10, ("integer", "number")), ("multipleOf", 2, ("integer", "number")),
    ("multipleOf", 0.5, ("number",)), ("maxItems", 1, ("array",)), ("minItems", 2, ("array",)),
    ("uniqueItems", True, ("array",)), ("type", "integer", ("number",)), ("type", "number", ("integer",)),
    ("type", "string", ("string", "integer", "boolean")), ("type", ["string", "null"], ("string",)),
    ("type", "integer", ("string",)), ("additionalProperties", False, ("object",)),
    ("additionalProperties", True, ("object",)), ("additionalProperties", {"type": "integer"}, ("object",)),
    ("unevaluatedProperties", False, ("object",)), ("propertyNames", {"pattern": "^[a-c]+$"}, ("object",)),
    ("propertyNames", {"maxLength": 3}, ("object",)), ("not", {"const": "a"}, ("string",)),
    ("not", {"type": "integer"}, ("string",)), ("not", {"required": ["a"]}, ("object",)),
    ("default", "zz", ("string",)), ("description", "changed words", ("string", "object", "integer")),
    ("deprecated", True, ("string", "integer")), ("items", {"type": "integer"}, ("array",)),
    ("items", False, ("array",)), ("unevaluatedItems", False, ("array",)), ("minProperties", 1, ("object",)),
    ("dependentRequired", {"a": ["b"]}, ("object",)),
]:
    MUTATIONS[f"set {_key}={json.dumps(_value)} on {'/'.join(_types)}"] = _set(_key, _value, _is(*_types))

for _key in ("maxLength", "minLength", "pattern", "format", "enum", "const", "maximum", "minimum", "multipleOf",
             "maxItems", "minItems", "uniqueItems", "additionalProperties", "required", "items", "anyOf", "oneOf",
             "not", "default", "type"):
    MUTATIONS[f"drop {_key}"] = _drop(_key)


@mutation("enum value removed")
def _enum_value_removed(node: dict[str, JSON], draw: Any) -> dict[str, JSON] | None:
    values = node.get("enum")
    if not isinstance(values, list) or len(values) < 2:
        return None
    node["enum"] = values[1:]
    return node


@mutation("enum value added")
def _enum_value_added(node: dict[str, JSON], draw: Any) -> dict[str, JSON] | None:
    values = node.get("enum")
    if not isinstance(values, list):
        return None
    node["enum"] = [*values, "zz"]
    return node


@mutation("property added (optional)")
def _property_added(node: dict[str, JSON], draw: Any) -> dict[str, JSON] | None:
    if not _object(node):
        return None
    _props(node)["extra"] = draw(leaf_schemas)
    return node


@mutation("property added (required)")
def _property_added_required(node: dict[str, JSON], draw: Any) -> dict[str, JSON] | None:
    if not _object(node):
        return None
    _props(node)["extra"] = draw(leaf_schemas)
    node["required"] = [*node.get("required", []), "extra"]  # type: ignore[misc]
    return node


@mutation("property removed")
def _property_removed(node: dict[str, JSON], draw: Any) -> dict[str, JSON] | None:
    properties = node.get("properties")
    if not isinstance(properties, dict) or not properties:
        return None
    name = draw(st.sampled_from(sorted(properties)))
    del properties[name]
    if isinstance(node.get("required"), list):
        node["required"] = [n for n in node["required"] if n != name]  # type: ignore[union-attr]
    return node


@mutation("property set to false")
def _property_false(node: dict[str, JSON], draw: Any) -> dict[str, JSON] | None:
    properties = node.get("properties")
    if not isinstance(properties, dict) or not properties:
        return None
    properties[draw(st.sampled_from(sorted(properties)))] = False
    return node


@mutation("required added")
def _required_added(node: dict[str, JSON], draw: Any) -> dict[str, JSON] | None:
    properties = node.get("properties")
    if not isinstance(properties, dict) or not properties:
        return None
    node["required"] = sorted({*node.get("required", []), draw(st.sampled_from(sorted(properties)))})  # type: ignore[misc]
    return node


@mutation("wrapped in anyOf with another shape")
def _any_of(node: dict[str, JSON], draw: Any) -> dict[str, JSON] | None:
    return {"anyOf": [copy.deepcopy(node), {"type": "integer"}]}


@mutation("wrapped in oneOf with an overlapping shape")
def _one_of_overlap(node: dict[str, JSON], draw: Any) -> dict[str, JSON] | None:
    return {"oneOf": [copy.deepcopy(node), draw(leaf_schemas)]}


@mutation("wrapped in oneOf with a branch that accepts anything")
def _one_of_any(node: dict[str, JSON], draw: Any) -> dict[str, JSON] | None:
    return {"oneOf": [copy.deepcopy(node), {"description": "anything"}]}


@mutation("object: oneOf of required branches")
def _one_of_required(node: dict[str, JSON], draw: Any) -> dict[str, JSON] | None:
    properties = node.get("properties")
    if not isinstance(properties, dict) or len(properties) < 2:
        return None
    first, second = sorted(properties)[:2]
    node["oneOf"] = [{"required": [first]}, {"required": [second]}]
    return node


@mutation("object: first anyOf of required branches")
def _any_of_required(node: dict[str, JSON], draw: Any) -> dict[str, JSON] | None:
    properties = node.get("properties")
    if not isinstance(properties, dict) or len(properties) < 2:
        return None
    first, second = sorted(properties)[:2]
    node["anyOf"] = [{"required": [first]}, {"required": [second]}]
    return node


@mutation("allOf branch added")
def _all_of(node: dict[str, JSON], draw: Any) -> dict[str, JSON] | None:
    node["allOf"] = [*node.get("allOf", []), draw(leaf_schemas)]  # type: ignore[misc]
    return node


@mutation("allOf branch repeated")
def _all_of_repeated(node: dict[str, JSON], draw: Any) -> dict[str, JSON] | None:
    if not isinstance(node.get("allOf"), list) or not node["allOf"]:
        node["allOf"] = [{"type": node.get("type", "string")}]
    node["allOf"] = [*node["allOf"], node["allOf"][0]]  # type: ignore[index]
    return node


@mutation("patternProperties added")
def _pattern_properties(node: dict[str, JSON], draw: Any) -> dict[str, JSON] | None:
    if not _object(node):
        return None
    node["patternProperties"] = {"^[a-c]$": draw(leaf_schemas)}
    return node


def mutate(schema: dict[str, JSON], draw: Any, name: str) -> tuple[str, dict[str, JSON]] | None:
    """The mutation ``name`` at a drawn place of a copy of ``schema`` (a place it applies to
    preferred); None when it applies nowhere."""
    new = copy.deepcopy(schema)
    places = _places(new)
    applies = [place for place in places if MUTATIONS[name](copy.deepcopy(_at(new, place)), _first) is not None]
    if not applies:
        return None
    place = draw(st.sampled_from(applies))
    node = _at(new, place)
    changed = MUTATIONS[name](node, draw)
    if changed is None:
        return None
    if changed is not node:
        if not place:
            return name, changed
        parent = _at(new, place[:-1])
        parent[place[-1]] = changed
    return name, new


def _first(strategy: st.SearchStrategy[Any]) -> Any:
    """A stand-in ``draw`` for asking whether a mutation applies (it never chooses)."""
    elements = getattr(strategy, "elements", None)
    return elements[0] if elements else {"type": "string"}


# --- values for a schema --------------------------------------------------------------------

_json_leaves = st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), st.text(max_size=5),
                         st.floats(-1000, 1000, allow_nan=False))
any_values = st.recursive(_json_leaves, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(st.sampled_from(["a", "b", "x", "zz"]), inner, max_size=3), max_leaves=6)


def values_for(schema: JSON, root: JSON, depth: int = 0) -> st.SearchStrategy[JSON]:
    """Values the schema is likely to accept (the test validates each)."""
    schema = deref(root, schema)
    if schema is True or schema == {} or schema is None or depth > 6:
        return any_values
    if schema is False or not isinstance(schema, dict):
        return st.nothing()
    options: list[st.SearchStrategy[JSON]] = []
    if "const" in schema:
        return st.just(schema["const"])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return st.sampled_from(schema["enum"])
    for keyword in ("anyOf", "oneOf"):
        if isinstance(schema.get(keyword), list) and schema[keyword]:
            rest = {k: v for k, v in schema.items() if k != keyword}
            return st.one_of([values_for({**rest, **(deref(root, b) if isinstance(deref(root, b), dict) else {})},
                                         root, depth + 1) for b in schema[keyword]])
    if isinstance(schema.get("allOf"), list) and schema["allOf"]:
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        for branch in schema["allOf"]:
            branch = deref(root, branch)
            if isinstance(branch, dict):
                merged = {**branch, **merged}
        return values_for(merged, root, depth + 1)
    declared = schema.get("type")
    types = [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else []
    if not types:
        types = ["object"] if "properties" in schema else ["string", "integer", "object", "array", "null"]
    for kind in types:
        if kind == "string":
            options.append(_strings(schema))
        elif kind in ("integer", "number"):
            low = schema.get("minimum", schema.get("exclusiveMinimum", -SAFE_INTEGER))
            high = schema.get("maximum", schema.get("exclusiveMaximum", SAFE_INTEGER))
            low, high = max(int(low) - 1, -SAFE_INTEGER), min(int(high) + 1, SAFE_INTEGER)
            ints = st.integers(low, max(low, high))
            options.append(ints if kind == "integer" else ints | st.floats(low, max(low, high), allow_nan=False))
        elif kind == "boolean":
            options.append(st.booleans())
        elif kind == "null":
            options.append(st.none())
        elif kind == "array":
            items = schema.get("items", True)
            item = values_for(items, root, depth + 1) if items is not False else st.nothing()
            if item.is_empty:
                options.append(st.just([]))
            else:
                options.append(st.lists(item, min_size=int(schema.get("minItems", 0)), max_size=min(
                    int(schema.get("maxItems", 4)), 4)))
        elif kind == "object":
            options.append(_objects(schema, root, depth))
    return st.one_of(options) if options else any_values


def _strings(schema: dict[str, JSON]) -> st.SearchStrategy[JSON]:
    if isinstance(schema.get("pattern"), str):
        try:
            return st.from_regex(schema["pattern"])
        except Exception:  # noqa: BLE001 - a regex hypothesis cannot generate from
            return st.text(max_size=8)
    if isinstance(schema.get("format"), str) and schema["format"] in FORMAT_VALUES:
        return st.just(FORMAT_VALUES[schema["format"]]) | st.text(max_size=8)
    low = int(schema.get("minLength", 0))
    return st.text(st.characters(codec="utf-8"), min_size=low, max_size=max(low, int(schema.get("maxLength", 10))))


def _objects(schema: dict[str, JSON], root: JSON, depth: int) -> st.SearchStrategy[JSON]:
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = [n for n in schema.get("required", []) if isinstance(n, str)]  # type: ignore[union-attr]
    strategies = {name: values_for(properties.get(name, True), root, depth + 1) for name in properties}  # type: ignore[union-attr]
    fixed = {name: strategies.get(name, any_values) for name in required}
    optional = {name: s for name, s in strategies.items() if name not in fixed}
    base = st.fixed_dictionaries(fixed, optional=optional)
    extra = schema.get("additionalProperties", True)
    if extra is False:
        return base
    extras = st.dictionaries(st.sampled_from(["x", "zz", "other"]), values_for(extra, root, depth + 1), max_size=2)
    return st.builds(lambda b, e: {**e, **b}, base, extras)


# --- what the contract documents ------------------------------------------------------------


def documented(value: JSON, schema: JSON, root: JSON, depth: int = 0) -> bool:
    """Whether every property of ``value`` is one the schema documents: declared, matched by
    a ``patternProperties`` regex, or covered by an explicit additionalProperties schema.
    RULES.md grades refusing an undocumented argument at most RISKY (closing an object) and
    declaring a new property SAFE, so the net counts documented arguments only."""
    schema = deref(root, schema)
    if depth > 16 or not isinstance(schema, dict):
        return True
    for keyword in ("anyOf", "oneOf"):
        if isinstance(schema.get(keyword), list) and schema[keyword]:
            rest = {k: v for k, v in schema.items() if k != keyword}
            return any(documented(value, {**rest, **b} if isinstance(b := deref(root, branch), dict) else rest,
                                  root, depth + 1) for branch in schema[keyword])
    if isinstance(value, dict):
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        patterns = schema.get("patternProperties") if isinstance(schema.get("patternProperties"), dict) else {}
        extra = schema.get("additionalProperties", schema.get("unevaluatedProperties"))
        for key, item in value.items():
            if key in properties:  # type: ignore[operator]
                if not documented(item, properties[key], root, depth + 1):  # type: ignore[index]
                    return False
            elif any(re.search(pattern, key) for pattern in patterns):  # type: ignore[union-attr]
                continue
            elif isinstance(extra, dict) and extra:
                if not documented(item, extra, root, depth + 1):
                    return False
            else:
                return False
        return True
    if isinstance(value, list):
        items = schema.get("items", True)
        return all(documented(item, items, root, depth + 1) for item in value)
    return True


def lenient_reader(schema: JSON) -> JSON:
    """The schema as a reader that ignores unknown fields reads it (``additionalProperties:
    false`` and ``unevaluatedProperties: false`` dropped at every depth): RULES.md grades a
    new output field SAFE, the MCP convention for results."""
    if isinstance(schema, list):
        return [lenient_reader(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {key: lenient_reader(value) for key, value in schema.items()
            if not (key in ("additionalProperties", "unevaluatedProperties") and value is False)}


# --- the independent judge ------------------------------------------------------------------


def validator(schema: JSON) -> Any:
    """A plain jsonschema validator (not the engine's): the independent judge. Formats are
    asserted as the service asserts them (``FORMAT_CHECKER``: which formats count is the
    service's fact, not the engine's)."""
    return validator_for(schema, default=Draft202012Validator)(schema, format_checker=FORMAT_CHECKER)


def interoperable(value: JSON) -> bool:
    """Numbers within ±(2^53-1) at every depth: bounds past it are COSMETIC by rule."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return True
    if isinstance(value, (int, float)):
        return abs(value) <= SAFE_INTEGER
    if isinstance(value, list):
        return all(interoperable(item) for item in value)
    return all(interoperable(item) for item in value.values())


def surfaces(before: JSON, after: JSON, key: str) -> tuple[Any, Any]:
    def one(schema: JSON) -> Any:
        tool: dict[str, JSON] = {"name": "t", "inputSchema": {"type": "object"}}
        tool[key] = schema
        return load_surface({"tools": [tool]})
    return one(before), one(after)


def check_witness(delta: Delta, before: JSON, after: JSON) -> None:
    """A reported witness must be what it claims, by a validator the engine does not build."""
    witness = delta.witness
    if witness is None or not witness.found:
        return
    source, target = (before, after) if delta.category == "input" else (after, before)
    assert validator(source).is_valid(witness.value), (delta.rule, witness.value, "not accepted by the source side")
    assert not validator(target).is_valid(witness.value), (delta.rule, witness.value, "not refused")
