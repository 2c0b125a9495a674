"""Effective schemas: what a schema admits, not how it is spelled (RULES.md principle 2).

Before two schemas are compared, each node is resolved (``$ref`` chains followed, draft-07
spellings read as 2020-12) and simplified: a one-branch ``anyOf`` is its branch, a union
of bare types is a type list, ``anyOf: [X, {type: null}]`` is X with null added. The
comparison then reads effective values: type sets, value sets (``const`` is a one-value
``enum``), and bounds (for integers ``exclusiveMinimum: 0`` is ``minimum: 1``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from fractions import Fraction
from urllib.parse import unquote

from app.jsontypes import JSON
from app.schemas import deref, escape_pointer_token, resolve_local_ref

ANNOTATION_KEYWORDS = (
    "title",
    "description",
    "examples",
    "$comment",
    "$schema",
    "$id",
    "readOnly",
    "writeOnly",
)
"""Keywords that describe but never constrain (a change is COSMETIC)."""
IGNORED_KEYWORDS = ("$ref", "$defs", "definitions", "$anchor", "$dynamicAnchor", "$vocabulary")
"""Structure, compared through what references resolve to, never directly."""
STRUCTURAL_KEYWORDS = (*IGNORED_KEYWORDS, "$schema", "$id")
UNION_KEYWORDS = ("anyOf", "oneOf")
ALL_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})


Spelling = dict[str, tuple[str, ...]]
"""Where an effective keyword is written in the raw schema, relative to its node: draft-07
tuple ``items`` is read as ``prefixItems`` but lives at ``items``; the keywords of a collapsed
one-branch ``anyOf`` live at ``anyOf/0/...``. Keywords not listed are written as they are."""


@dataclass(frozen=True)
class Node:
    """One side of a compared place: its effective schema and where it lives."""

    schema: dict[str, JSON]
    root: JSON
    pointer: str
    """Logical JSON pointer in the surface (through references, as the model sees it)."""
    location: str | None = None
    """Where the schema really is inside ``root`` (a ``$ref`` target, or the place of the raw
    schema): two walks that meet the same pair of locations again have gone round a
    recursive schema (the recursion guard). None when unknown."""
    lifted: bool = False
    """The node's own constraints were wrapped as a one-branch union to meet a union."""
    spelling: Spelling = field(default_factory=dict)

    def at(self, keyword: str, *tokens: str) -> str:
        """The JSON pointer of an effective keyword (and tokens below it), as it is written."""
        return self.pointer + _tokens(self.spelling.get(keyword, (keyword,)) + tokens)

    def child(self, raw: JSON, keyword: str, *tokens: str) -> Node:
        raw_tokens = self.spelling.get(keyword, (keyword,)) + tokens
        location = None if self.location is None else self.location + _tokens(raw_tokens)
        return make_node(raw, self.root, self.pointer + _tokens(raw_tokens), location)


def _tokens(tokens: tuple[str, ...]) -> str:
    return "".join("/" + escape_pointer_token(t) for t in tokens)


def make_node(raw: JSON, root: JSON, pointer: str, location: str | None = None) -> Node:
    """The effective node of ``raw`` (a schema inside ``root``). ``location`` is where
    ``raw`` sits in ``root``; the document root itself is at ``""``."""
    if raw is root:
        location = ""
    if isinstance(raw, dict) and isinstance(raw.get("$ref"), str) and raw["$ref"].startswith("#"):
        target = _ref_location(root, raw)
        if target is not None:
            location = target
    schema, spelling, ref = resolve(deref(root, raw), root)
    return Node(schema, root, pointer, ref if ref is not None else location, spelling=spelling)


def _ref_location(root: JSON, raw: dict[str, JSON]) -> str | None:
    """For a bare ``$ref`` (a chain of them), the pointer of the schema it leads to; with
    sibling keywords that constrain or describe, the merged schema is the referencing
    node's own, so None (``$defs`` and the like beside a root ``$ref`` change nothing)."""
    seen: set[str] = set()
    node: JSON = raw
    target = None
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"] not in seen:
        if any(key not in STRUCTURAL_KEYWORDS for key in node):
            return None
        ref = node["$ref"]
        seen.add(ref)
        target = unquote(ref[1:]) if ref.startswith("#") else None
        if target is None or (target and not target.startswith("/")):
            return None  # a remote reference or a plain-name anchor: no stable location
        node = resolve_local_ref(root, ref)
    return target


def as_object(schema: JSON) -> dict[str, JSON]:
    """Boolean schemas as objects: ``true`` is ``{}``, ``false`` is ``{"not": {}}``."""
    if schema is True or schema is None:
        return {}
    if schema is False:
        return dict(FALSE_SCHEMA)
    return schema if isinstance(schema, dict) else {}


def object_at(schema: dict[str, JSON], keyword: str) -> dict[str, JSON]:
    """``schema[keyword]`` when it is an object, else ``{}``."""
    value = schema.get(keyword)
    return value if isinstance(value, dict) else {}


def list_at(schema: dict[str, JSON], keyword: str) -> list[JSON]:
    """``schema[keyword]`` when it is an array, else ``[]``."""
    value = schema.get(keyword)
    return value if isinstance(value, list) else []


def _annotation_only(schema: dict[str, JSON], allowed: tuple[str, ...] = ()) -> bool:
    return all(key in ANNOTATION_KEYWORDS or key in allowed for key in schema)


def _merge(parent: dict[str, JSON], branch: dict[str, JSON]) -> dict[str, JSON] | None:
    """The parent with a branch's keywords folded in, unless they conflict."""
    merged = dict(parent)
    for key, value in branch.items():
        if key in ANNOTATION_KEYWORDS:
            merged.setdefault(key, value)
        elif key in merged and merged[key] != value:
            return None
        else:
            merged[key] = value
    return merged


def effective(schema: JSON, root: JSON) -> dict[str, JSON]:
    return resolve(schema, root)[0]


def resolve(schema: JSON, root: JSON) -> tuple[dict[str, JSON], Spelling, str | None]:
    """The effective form of one (already dereferenced) schema node, where each of its
    keywords is written (:data:`Spelling`), and the location of the ``$ref`` target a
    collapsed union branch brought in (None if none did)."""
    node = as_object(schema)
    spelling: Spelling = {"type": (), "not": ()} if schema is False else {}
    ref: str | None = None
    node, spelling = _read_draft07(node, spelling)
    node = _without_no_ops(node)
    for _ in range(4):  # a few rounds: a collapsed union may expose another
        simplified = _simplify_once(node, root, spelling)
        if simplified is None:
            break
        node, spelling, branch_ref = simplified
        ref = branch_ref if branch_ref is not None else ref
        node, spelling = _read_draft07(node, spelling)
    return node, spelling, ref


TRIVIAL_PATTERNS = frozenset({"", ".*", "^.*", ".*$", "(.*)", "[\\s\\S]*"})
"""Patterns every string matches (a search finds them, empty, in any string)."""


def _without_no_ops(node: dict[str, JSON]) -> dict[str, JSON]:
    """Keywords that constrain nothing, dropped: a pattern every string matches, a
    ``multipleOf`` that divides 1 on integers, ``not: {not: X}`` (that is X)."""
    drop = []
    if node.get("pattern") in TRIVIAL_PATTERNS:
        drop.append("pattern")
    step = _number(node.get("multipleOf"))
    if step is not None and step > 0 and (1 / step).denominator == 1 and type_set(node) == {"integer"}:
        drop.append("multipleOf")
    if step == 1 and type_set(node) == {"number"}:
        return {**{k: v for k, v in node.items() if k != "multipleOf"}, "type": "integer"}  # the integers
    inner = node.get("not")
    if isinstance(inner, dict) and set(inner) == {"not"} and isinstance(inner["not"], dict) and set(node) == {"not"}:
        return dict(inner["not"])
    return {k: v for k, v in node.items() if k not in drop} if drop else node


def _read_draft07(node: dict[str, JSON], spelling: Spelling) -> tuple[dict[str, JSON], Spelling]:
    """Tuple ``items`` is ``prefixItems`` (+ ``additionalItems`` as ``items``); ``dependencies``
    splits into ``dependentRequired`` and ``dependentSchemas``."""
    if isinstance(node.get("items"), list):
        node, spelling = dict(node), dict(spelling)
        node["prefixItems"] = node.pop("items")
        spelling["prefixItems"] = spelling.pop("items", ("items",))
        if "additionalItems" in node:
            node["items"] = node.pop("additionalItems")
            spelling["items"] = spelling.pop("additionalItems", ("additionalItems",))
        else:
            spelling.pop("items", None)
    if isinstance(node.get("dependencies"), dict):
        node, spelling = dict(node), dict(spelling)
        written = spelling.pop("dependencies", ("dependencies",))
        required = dict(node.get("dependentRequired") or {})
        schemas = dict(node.get("dependentSchemas") or {})
        for name, value in node.pop("dependencies").items():
            (required if isinstance(value, list) else schemas)[name] = value
        if required:
            node["dependentRequired"] = required
        if schemas:
            node["dependentSchemas"] = schemas
        # Entries that came from ``dependencies`` are written there (the rare schema that
        # spells both forms keeps the 2020-12 place).
        for keyword, entries in (("dependentRequired", required), ("dependentSchemas", schemas)):
            if entries:
                spelling[keyword] = written
    return node, spelling


def _moved(prefix: tuple[str, ...], keys: list[str]) -> Spelling:
    """Where a collapsed branch's keywords are written: below the branch, at ``prefix``."""
    return {key: prefix + (key,) for key in keys}


def _simplify_once(node: dict[str, JSON], root: JSON,
                   spelling: Spelling) -> tuple[dict[str, JSON], Spelling, str | None] | None:
    """One collapse (a one-branch union or ``allOf``, a union of bare types, a nullable
    union), or None when there is nothing to collapse."""
    for keyword in ("anyOf", "oneOf", "allOf"):
        branches = node.get(keyword)
        if not isinstance(branches, list) or not branches:
            continue
        resolved = [as_object(deref(root, branch)) for branch in branches]
        rest = {key: value for key, value in node.items() if key != keyword}
        rest_spelling = {key: value for key, value in spelling.items() if key != keyword}
        at = spelling.get(keyword, (keyword,))
        if len(resolved) == 1:
            if "additionalProperties" in rest and ("properties" in resolved[0] or "patternProperties" in resolved[0]):
                continue  # additionalProperties sees only its own node's properties: merging would change it
            merged = _merge(rest, resolved[0])
            if merged is not None:
                taken = [key for key in resolved[0] if key not in rest]
                return merged, {**rest_spelling, **_moved(at + ("0",), taken)}, _bare_ref(root, branches[0])
            continue
        if keyword == "allOf":
            continue
        # Only branches with nothing but a type collapse: an annotation on a branch would be lost.
        if "type" not in rest and all(set(branch) == {"type"} and type_set(branch) for branch in resolved) and (
                keyword == "anyOf" or _disjoint_types(resolved)):
            types: set[str] = set()
            for branch in resolved:
                types |= type_set(branch) or set()
            return {**rest, "type": sorted(types)}, {**rest_spelling, "type": at}, None
        nulls = [i for i, b in enumerate(resolved) if set(b) == {"type"} and type_set(b) == {"null"}]
        others = [i for i in range(len(resolved)) if i not in nulls]
        if len(resolved) == 2 and len(nulls) == 1 and len(others) == 1 and "type" in resolved[others[0]] and (
                keyword == "anyOf" or "null" not in (type_set(resolved[others[0]]) or set())):
            index = others[0]
            other = dict(resolved[index])
            other["type"] = sorted((type_set(other) or set()) | {"null"})
            merged = _merge(rest, other)
            if merged is not None:
                taken = [key for key in other if key not in rest and key != "type"]
                moved = _moved(at + (str(index),), taken)
                return merged, {**rest_spelling, **moved, "type": at}, _bare_ref(root, branches[index])
    return None


def _disjoint_types(branches: list[dict[str, JSON]]) -> bool:
    """Whether no value has the types of two branches (``oneOf`` of overlapping bare types,
    ``number`` and ``integer``, is no type list: an integer matches both and is refused)."""
    seen: set[str] = set()
    for branch in branches:
        types = _expand(type_set(branch))
        if types & seen:
            return False
        seen |= types
    return True


def _bare_ref(root: JSON, branch: JSON) -> str | None:
    return _ref_location(root, branch) if isinstance(branch, dict) and "$ref" in branch else None


# --- effective values -----------------------------------------------------------------


FALSE_SCHEMA: dict[str, JSON] = {"not": {}}
"""The effective form of the schema ``false``: it admits no value."""


def is_false(schema: JSON) -> bool:
    return schema is False or schema == FALSE_SCHEMA


def type_set(schema: dict[str, JSON]) -> set[str] | None:
    """The declared types as a set; None when unconstrained; empty for ``false``."""
    if schema == FALSE_SCHEMA:
        return set()
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {t for t in declared if isinstance(t, str)}
    return None


def _expand(types: set[str] | None) -> set[str]:
    if types is None:
        return set(ALL_TYPES)
    expanded = set(types)
    if "number" in expanded:
        expanded.add("integer")
    return expanded


def type_relation(before: set[str] | None, after: set[str] | None) -> str | None:
    """``widened``, ``narrowed``, ``changed`` (neither contains the other) or None."""
    b, a = _expand(before), _expand(after)
    return set_relation(b, a)


def set_relation(b: set[str], a: set[str]) -> str | None:
    """How the (already expanded) type set ``a`` relates to ``b``."""
    if a == b:
        return None
    if a > b:
        return "widened"
    if a < b:
        return "narrowed"
    return "changed"


def normal_value(value: JSON) -> JSON:
    """``value`` with every integral float, at every depth, as an int: JSON has one number
    type, so ``[1]`` and ``[1.0]`` are one value (booleans stay booleans)."""
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, list):
        return [normal_value(item) for item in value]
    if isinstance(value, dict):
        return {key: normal_value(item) for key, item in value.items()}
    return value


def value_key(value: JSON) -> str:
    """JSON identity of a value: 1 and 1.0 are one number at every depth, true and 1 are not."""
    if isinstance(value, (list, dict, float)):
        value = normal_value(value)
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def json_type(value: JSON) -> str:
    """The JSON Schema type of a value (``integer`` for integral numbers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def admitted_types(schema: dict[str, JSON]) -> set[str] | None:
    """The types a schema admits, expanded (``number`` includes ``integer``): the declared
    types, narrowed to the types of its ``const``/``enum`` values (a ``const "a"`` without
    ``type`` admits only strings). None when neither constrains the type."""
    declared = type_set(schema)
    values = value_set(schema)
    if values is None:
        return None if declared is None else _expand(declared)
    implied = {json_type(value) for value in values.values()}
    if declared is None:
        return implied
    return _expand(declared) & implied


def value_set(schema: dict[str, JSON]) -> dict[str, JSON] | None:
    """The values ``enum``/``const`` admit, keyed by :func:`value_key`; None when unconstrained."""
    if "const" in schema:
        values = [schema["const"]]
        if isinstance(schema.get("enum"), list):
            values = [v for v in values if value_key(v) in {value_key(e) for e in schema["enum"]}]
        return {value_key(v): v for v in values}
    if isinstance(schema.get("enum"), list):
        return {value_key(v): v for v in schema["enum"]}
    return None


_FEW_VALUES: dict[str, tuple[JSON, ...]] = {"null": (None,), "boolean": (False, True)}


def few_values(schema: dict[str, JSON]) -> dict[str, JSON] | None:
    """The values of a type that has few (``null``, ``boolean``), as a value set: ``type:
    null`` is ``enum: [null]``. None for other types."""
    declared = type_set(schema)
    if declared and declared <= set(_FEW_VALUES):
        return {value_key(v): v for t in sorted(declared) for v in _FEW_VALUES[t]}
    return None


def integral_step(schema: dict[str, JSON]) -> bool:
    """Whether an integral ``multipleOf`` makes every admitted number an integer."""
    step = _number(schema.get("multipleOf"))
    return step is not None and step > 0 and step.denominator == 1


def admitted_values(schema: dict[str, JSON]) -> dict[str, JSON] | None:
    """:func:`value_set` without the values the declared type refuses (they were never valid)."""
    values = value_set(schema)
    declared = type_set(schema)
    if values is None or declared is None:
        return values
    types = _expand(declared)
    return {key: value for key, value in values.items() if json_type(value) in types}


@dataclass(frozen=True)
class Bound:
    """A limit on numbers: ``value`` and whether it is exclusive."""

    value: Fraction
    exclusive: bool
    keyword: str
    raw: JSON


def _number(value: JSON) -> Fraction | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return Fraction(value) if isinstance(value, int) else Fraction(str(value))


def numeric_bound(schema: dict[str, JSON], side: str) -> Bound | None:
    """The tightest lower (``side='min'``) or upper (``'max'``) numeric bound, integer-aware."""
    inclusive_kw, exclusive_kw = ("minimum", "exclusiveMinimum") if side == "min" else ("maximum", "exclusiveMaximum")
    candidates: list[Bound] = []
    inclusive = _number(schema.get(inclusive_kw))
    exclusive = schema.get(exclusive_kw)
    if inclusive is not None:
        # draft-04: a boolean exclusiveMinimum/Maximum makes minimum/maximum exclusive
        candidates.append(Bound(inclusive, exclusive is True, inclusive_kw, schema[inclusive_kw]))
    excl_value = _number(exclusive)
    if excl_value is not None:
        candidates.append(Bound(excl_value, True, exclusive_kw, exclusive))
    if not candidates:
        return None
    if type_set(schema) == {"integer"}:
        candidates = [_integer_bound(bound, side) for bound in candidates]
    if side == "min":
        return max(candidates, key=lambda b: (b.value, b.exclusive))
    return min(candidates, key=lambda b: (b.value, not b.exclusive))


def _integer_bound(bound: Bound, side: str) -> Bound:
    if side == "min":
        value = math.floor(bound.value) + 1 if bound.exclusive else math.ceil(bound.value)
    else:
        value = math.ceil(bound.value) - 1 if bound.exclusive else math.floor(bound.value)
    return Bound(Fraction(value), False, bound.keyword, bound.raw)


def bound_relation(before: Bound | None, after: Bound | None, side: str) -> str | None:
    """``tightened``, ``relaxed`` or None for two effective numeric bounds."""
    if before is None and after is None:
        return None
    if before is None:
        return "tightened"
    if after is None:
        return "relaxed"
    if (before.value, before.exclusive) == (after.value, after.exclusive):
        return None
    if side == "min":
        tighter = after.value > before.value or (after.value == before.value and after.exclusive)
    else:
        tighter = after.value < before.value or (after.value == before.value and after.exclusive)
    return "tightened" if tighter else "relaxed"


COUNT_BOUNDS = {
    "maxLength": "max",
    "maxItems": "max",
    "maxProperties": "max",
    "maxContains": "max",
    "minLength": "min",
    "minItems": "min",
    "minProperties": "min",
    "minContains": "min",
}
"""Integer limits on sizes: a max tightens when it drops, a min when it rises."""


COUNT_DEFAULTS: dict[str, Fraction | None] = {
    "minLength": Fraction(0), "minItems": Fraction(0), "minProperties": Fraction(0), "minContains": Fraction(1),
}
"""What an absent count bound means: ``minLength: 0`` is no limit at all (a max absent is none)."""


def count_value(keyword: str, value: JSON) -> Fraction | None:
    """The effective count limit (an absent min is its default, ``minContains`` 1)."""
    number = _number(value)
    return COUNT_DEFAULTS.get(keyword) if number is None else number


def count_relation(keyword: str, before: JSON, after: JSON) -> str | None:
    b, a = count_value(keyword, before), count_value(keyword, after)
    if b == a:
        return None
    if b is None:
        return "tightened"
    if a is None:
        return "relaxed"
    if COUNT_BOUNDS[keyword] == "max":
        return "tightened" if a < b else "relaxed"
    return "tightened" if a > b else "relaxed"


SAFE_INTEGER = Fraction(2**53 - 1)
"""I-JSON's interoperable range is ±(2^53-1): no client sends an exact number past it."""


def beyond_safe_range(bound: Bound | None, side: str) -> bool:
    """Whether a numeric bound admits every interoperable number on its side (none does too)."""
    if bound is None:
        return True
    if side == "max":
        return bound.value > SAFE_INTEGER or (bound.value == SAFE_INTEGER and not bound.exclusive)
    return bound.value < -SAFE_INTEGER or (bound.value == -SAFE_INTEGER and not bound.exclusive)


def count_beyond_safe_range(keyword: str, value: JSON) -> bool:
    """A max count at or past 2^53-1 limits nothing a client can send."""
    number = count_value(keyword, value)
    return COUNT_BOUNDS[keyword] == "max" and (number is None or number >= SAFE_INTEGER)


def multiple_relation(before: JSON, after: JSON) -> str | None:
    """multipleOf: ``tightened`` when every new multiple is an old one (the new value is a
    multiple of the old), ``relaxed`` when every old multiple is a new one (the new value
    divides the old), ``changed`` when neither (11 -> 10: 10 is new, 11 is gone)."""
    b, a = _number(before), _number(after)
    if b == a:
        return None
    if b is None or b <= 0:
        return "tightened" if a is not None and a > 0 else None
    if a is None or a <= 0:
        return "relaxed"
    if (b / a).denominator == 1:
        return "relaxed"
    if (a / b).denominator == 1:
        return "tightened"
    return "changed"


def is_closed(schema: dict[str, JSON], keyword: str) -> bool:
    return is_false(schema.get(keyword))
