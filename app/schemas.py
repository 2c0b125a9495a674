"""What the code needs to know about JSON Schema's shape: which keywords hold subschemas,
how local ``$ref`` pointers resolve, how a schema is normalised for digests, and how a
grouped tool's discriminated union splits into actions.

Covers 2020-12 and the draft-07 spellings (``definitions``, ``dependencies``, tuple
``items``, ``additionalItems``). Pure functions over plain JSON values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import unquote

from app.jsontypes import JSON

SCHEMA_MAP_KEYWORDS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
"""Keywords whose value maps names to subschemas."""
SCHEMA_LIST_KEYWORDS = ("allOf", "anyOf", "oneOf", "prefixItems")
"""Keywords whose value is a list of subschemas."""
SCHEMA_KEYWORDS = (
    "additionalProperties",
    "unevaluatedProperties",
    "items",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
)
"""Keywords whose value is one subschema (``items`` may also be a draft-07 tuple list)."""
SET_KEYWORDS = ("required", "type")
"""Keywords whose list value is a set: order and repeats carry no meaning."""
SUBSCHEMA_KEYWORDS = frozenset((*SCHEMA_MAP_KEYWORDS, *SCHEMA_LIST_KEYWORDS, *SCHEMA_KEYWORDS, "dependencies"))
_KINDS: dict[str, str] = {
    **dict.fromkeys(SCHEMA_MAP_KEYWORDS, "map"),
    **dict.fromkeys(SCHEMA_LIST_KEYWORDS, "list"),
    **dict.fromkeys(SCHEMA_KEYWORDS, "one"),
    "dependencies": "dependencies",
    **dict.fromkeys(SET_KEYWORDS, "set"),
}
"""How :func:`normalize` treats each keyword (one dict lookup per key)."""


def is_schema(value: JSON) -> bool:
    """A schema is an object or a boolean (``true`` accepts all, ``false`` nothing)."""
    return isinstance(value, (dict, bool))


def subschemas(schema: JSON) -> Iterator[tuple[tuple[str, ...], JSON]]:
    """Every direct subschema with the pointer tokens that lead to it."""
    if not isinstance(schema, dict) or schema.keys().isdisjoint(SUBSCHEMA_KEYWORDS):
        return
    for key in SCHEMA_MAP_KEYWORDS:
        value = schema.get(key)
        if isinstance(value, dict):
            for name, sub in value.items():
                if is_schema(sub):
                    yield (key, name), sub
    for key in SCHEMA_LIST_KEYWORDS:
        value = schema.get(key)
        if isinstance(value, list):
            for index, sub in enumerate(value):
                if is_schema(sub):
                    yield (key, str(index)), sub
    for key in SCHEMA_KEYWORDS:
        value = schema.get(key)
        if is_schema(value):
            yield (key,), value
        elif key == "items" and isinstance(value, list):
            for index, sub in enumerate(value):
                if is_schema(sub):
                    yield (key, str(index)), sub
    dependencies = schema.get("dependencies")
    if isinstance(dependencies, dict):
        for name, sub in dependencies.items():
            if is_schema(sub):
                yield ("dependencies", name), sub


def normalize(schema: JSON) -> JSON:
    """The schema with ``required`` and ``type`` lists as sorted sets, in every schema
    position (never inside ``const``/``enum``/``default``/``examples`` values). Returns the
    very same object where nothing changes, and new objects on the way to any change:
    the input is never mutated."""
    if not isinstance(schema, dict):
        return schema
    if schema.keys().isdisjoint(SUBSCHEMA_KEYWORDS) and type(schema.get("type")) is not list \
            and type(schema.get("required")) is not list:
        return schema  # a leaf with nothing to sort: the common case, decided in C
    changed: dict[str, JSON] = {}
    for key, value in schema.items():
        kind = _KINDS.get(key)
        if kind is None:
            continue
        new = _normalize_kind(kind, value)
        if new is not value:
            changed[key] = new
    return {**schema, **changed} if changed else schema


def _normalize_kind(kind: str, value: JSON) -> JSON:
    if kind == "set":
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            ordered = sorted(set(value))
            return value if ordered == value else ordered
        return value
    if kind == "map" and isinstance(value, dict):
        return _rebuilt_map(value, normalize)
    if kind == "dependencies" and isinstance(value, dict):
        return _rebuilt_map(value, lambda sub: normalize(sub) if isinstance(sub, dict) else sub)
    if kind == "list" and isinstance(value, list):
        return _rebuilt_list(value)
    if kind == "one":
        return _rebuilt_list(value) if isinstance(value, list) else normalize(value)
    return value


def _rebuilt_map(value: dict[str, JSON], function: Callable[[JSON], JSON]) -> dict[str, JSON]:
    new = {name: function(sub) for name, sub in value.items()}
    return value if all(new[name] is sub for name, sub in value.items()) else new


def _rebuilt_list(value: list[JSON]) -> list[JSON]:
    new = [normalize(sub) for sub in value]
    return value if all(a is b for a, b in zip(new, value, strict=True)) else new


def escape_pointer_token(token: str) -> str:
    """RFC 6901: ``~`` becomes ``~0`` and ``/`` becomes ``~1``."""
    if "~" in token or "/" in token:
        return token.replace("~", "~0").replace("/", "~1")
    return token


def pointer(*tokens: str) -> str:
    """A JSON pointer from raw tokens."""
    return "/" + "/".join(map(escape_pointer_token, tokens)) if tokens else ""


def resolve_local_ref(root: JSON, ref: str) -> JSON | None:
    """The value a same-document ``$ref`` (``#``, ``#/$defs/A``, ``#/definitions/A``)
    points at, or None when it leads nowhere. Remote references are not followed."""
    if not ref.startswith("#"):
        return None
    fragment = unquote(ref[1:])
    if fragment == "":
        return root
    if not fragment.startswith("/"):
        return _find_anchor(root, fragment)
    node = root
    for raw in fragment[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def _find_anchor(root: JSON, anchor: str) -> JSON | None:
    """A plain-name fragment (``#foo``) names a subschema by its ``$anchor``."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("$anchor") == anchor:
                return node
            stack.extend(sub for _, sub in subschemas(node))
    return None


def deref(root: JSON, schema: JSON, limit: int = 64) -> JSON:
    """Follow a chain of bare ``$ref`` objects to a real schema; None for a dangling or
    cyclic chain (``A`` -> ``B`` -> ``A`` never reaches a schema)."""
    seen: set[str] = set()
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and len(seen) < limit:
        ref = schema["$ref"]
        if ref in seen:
            return None
        seen.add(ref)
        target = resolve_local_ref(root, ref)
        if target is None:
            return None
        if len(schema) > 1:
            return _with_siblings(target, {k: v for k, v in schema.items() if k != "$ref"})
        schema = target
    return schema


DESCRIBING_KEYWORDS = frozenset(("title", "description", "examples", "$comment", "readOnly", "writeOnly",
                                 "deprecated", "default", "$schema", "$id", "$anchor", "$defs", "definitions"))
"""Keywords beside a ``$ref`` that describe or hold definitions: the sibling's spelling wins
in a merge (they never constrain a value)."""


def _with_siblings(target: JSON, siblings: dict[str, JSON]) -> JSON:
    """A ``$ref``'s target and the keywords beside it, both applying (2020-12: ``$ref`` is an
    applicator like ``allOf``). Merged into one object when no constraining keyword of the
    two disagrees; otherwise the siblings with the target as one more ``allOf`` branch, so
    ``{"$ref": <string>, "type": "integer"}`` accepts nothing, never just integers."""
    if target is True:
        return siblings
    if not isinstance(target, dict):  # false (or not a schema): nothing is accepted
        return {**siblings, "allOf": [False, *_list(siblings.get("allOf"))]}
    clash = any(key in target and target[key] != value and key not in DESCRIBING_KEYWORDS
                for key, value in siblings.items())
    if not clash:
        return {**target, **siblings}
    return {**siblings, "allOf": [target, *_list(siblings.get("allOf"))]}


def _list(value: JSON) -> list[JSON]:
    return value if isinstance(value, list) else []


def non_local_refs(refs: set[str]) -> list[str]:
    """The references that point outside the document (anything but ``#...``): never
    fetched, so refused where a surface is read."""
    return sorted(ref for ref in refs if not ref.startswith("#"))


def remote_ref_problems(root: JSON, candidates: set[str] | None = None) -> list[str]:
    """Every ``$ref`` in a schema position of ``root`` that points outside the document
    (anything but ``#...``): no code path ever fetches one, so a surface holding one is
    refused where it is read. ``candidates`` as for :func:`local_ref_problems`."""
    if candidates is not None and not non_local_refs(candidates):
        return []
    return sorted({f"$ref {ref!r} at {at or '/'} is not local: references outside the schema "
                   "are never fetched (inline the schema under $defs)"
                   for ref, at in _refs_located(root) if not ref.startswith("#")})


def local_ref_problems(root: JSON, candidates: set[str] | None = None) -> list[str]:
    """Every local ``$ref`` that does not resolve, or whose chain of bare references loops
    without reaching a schema. Recursive schemas (a node whose children are nodes) are fine.
    ``candidates`` may give a superset of the ``$ref`` strings in ``root`` (from
    :func:`app.jsonio.scan`): when they all resolve, no walk is needed at all."""
    if candidates is not None and all(refs_resolve(root, candidates)):
        return []
    if all(refs_resolve(root, _local_refs(root))):
        return []  # the candidates held references of another schema (an output schema's $defs)
    return _ref_problems_located(root)


def refs_resolve(root: JSON, refs: set[str]) -> Iterator[bool]:
    for ref in refs:
        if ref.startswith("#"):
            yield resolve_local_ref(root, ref) is not None and deref(root, {"$ref": ref}) is not None


def _local_refs(root: JSON) -> set[str]:
    """The distinct local ``$ref`` strings of a schema (no pointers built: the fast pass)."""
    refs: set[str] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if type(node) is not dict:
            continue
        ref = node.get("$ref")
        if type(ref) is str and ref.startswith("#"):
            refs.add(ref)
        for key, value in node.items():
            kind = _KINDS.get(key)
            if kind in ("map", "dependencies") and type(value) is dict:
                stack.extend(value.values())
            elif kind == "list" and type(value) is list:
                stack.extend(value)
            elif kind == "one":
                if type(value) is list:
                    stack.extend(value)
                else:
                    stack.append(value)
    return refs


def _ref_problems_located(root: JSON) -> list[str]:
    problems: set[str] = set()
    for ref, at in _refs_located(root):
        if not ref.startswith("#"):
            continue
        if resolve_local_ref(root, ref) is None:
            problems.add(f"$ref {ref!r} at {at or '/'} points nowhere")
        elif deref(root, {"$ref": ref}) is None:
            problems.add(f"$ref {ref!r} at {at or '/'} is a cycle of references that never reaches a schema")
    return sorted(problems)


def _refs_located(root: JSON) -> Iterator[tuple[str, str]]:
    """Every ``$ref`` string in a schema position of ``root``, with the JSON pointer of the
    schema that holds it: the one walk both reference checks read."""
    stack: list[tuple[JSON, str]] = [(root, "")]
    while stack:
        node, at = stack.pop()
        if not isinstance(node, dict):
            continue
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref, at
        for tokens, sub in subschemas(node):
            stack.append((sub, at + pointer(*tokens)))


def pinned_value(schema: JSON) -> tuple[bool, JSON]:
    """Whether a schema admits exactly one value (``const`` or a one-value ``enum``)."""
    if not isinstance(schema, dict):
        return False, None
    if "const" in schema:
        return True, schema["const"]
    enum = schema.get("enum")
    if isinstance(enum, list) and len(enum) == 1:
        return True, enum[0]
    return False, None


@dataclass(frozen=True)
class ActionBranch:
    """One action of a grouped tool: the union branch that pins the discriminator."""

    name: str
    discriminator: str
    keyword: str  # "oneOf" or "anyOf"
    index: int
    schema: JSON  # the branch, a bare $ref resolved


def split_actions(input_schema: JSON) -> list[ActionBranch]:
    """The actions of a grouped tool, or [] for a plain tool.

    A grouped tool's inputSchema is a ``oneOf``/``anyOf`` whose every branch pins one
    shared property (``action`` preferred) to a distinct string with ``const`` or a
    one-value ``enum`` (RULES.md "Actions").
    """
    if not isinstance(input_schema, dict):
        return []
    for keyword in ("oneOf", "anyOf"):
        branches = input_schema.get(keyword)
        if not isinstance(branches, list) or not branches:
            continue
        resolved = [deref(input_schema, branch) for branch in branches]
        if not all(isinstance(branch, dict) for branch in resolved):
            continue
        pins = [_string_pins(branch) for branch in resolved]
        common = set(pins[0]).intersection(*pins[1:])
        if not common:
            continue
        discriminator = "action" if "action" in common else sorted(common)[0]
        names = [pin[discriminator] for pin in pins]
        if len(set(names)) != len(names):
            continue
        return [
            ActionBranch(name, discriminator, keyword, index, branch)
            for index, (name, branch) in enumerate(zip(names, resolved, strict=True))
        ]
    return []


def _string_pins(branch: dict[str, JSON]) -> dict[str, str]:
    properties = branch.get("properties")
    if not isinstance(properties, dict):
        return {}
    pins: dict[str, str] = {}
    for name, sub in properties.items():
        is_pinned, value = pinned_value(sub)
        if is_pinned and isinstance(value, str):
            pins[name] = value
    return pins
