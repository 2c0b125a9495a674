"""Concrete values for schemas: validators that never fetch, and a small bounded sampler.

The walk reasons about schemas; some questions are only answered by values (do two
``oneOf`` branches overlap on what the old schema accepted? which call did the old
schema accept that the new one refuses?). This module validates with jsonschema
(retrieval of any reference refused, schema regexes time-limited, formats checked as
the service checks them) and samples a few values a schema is likely to accept: each
bound's edge, each enum value, each type, each optional property alone, strings built
from a pattern's parse tree. A sample is a candidate, never a proof: every use
validates it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from app.budget import BudgetExceeded
from app.diff.schema.effective import (
    COUNT_DEFAULTS,
    SAFE_INTEGER,
    admitted_types,
    admitted_values,
    as_object,
    effective,
    is_false,
    list_at,
    numeric_bound,
    object_at,
    value_key,
)
from app.jsontypes import JSON
from app.schemas import deref

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

LONGEST = 1024
"""Longest string sampled: a limit past it is not probed (patterns would scan long text)."""
PER_SCHEMA = 12
"""Most values sampled for one schema (objects and arrays combine their children's)."""
MAX_DEPTH = 8


class Undecidable(Exception):
    """A validator could not answer (a remote reference, an unusable schema)."""


def matches(pattern: str, text: str) -> bool:
    """A schema regex searched in ``text``, time-limited (``app.safe_regex``, imported on
    first use: a diff that meets no pattern never loads the regex engine)."""
    from app import safe_regex

    return safe_regex.search(pattern, text)


class Validators:
    """Validators for one root schema: the root as written (its own draft), and any
    effective subschema (2020-12, references resolved against the root)."""

    def __init__(self, root: JSON) -> None:
        # jsonschema and the service's validator setup, loaded when a value is first checked
        from jsonschema import Draft202012Validator
        from jsonschema.validators import validator_for

        from app.validation import FORMAT_CHECKER, no_retrieval, safe_class

        self.root = root
        registry = no_retrieval()
        try:
            cls = validator_for(root, default=Draft202012Validator)
            self._root = safe_class(cls)(root, registry=registry, format_checker=FORMAT_CHECKER)
            self._sub = safe_class(Draft202012Validator)(root, registry=registry, format_checker=FORMAT_CHECKER)
        except Exception as exc:  # noqa: BLE001 - an unhashable $schema, a schema jsonschema cannot read
            raise Undecidable(type(exc).__name__) from None
        self._subs: dict[str, Validator] = {}

    def valid(self, value: JSON) -> bool:
        """Whether the root schema accepts ``value``."""
        return _run(self._root, value)

    def accepts(self, schema: JSON, value: JSON) -> bool:
        """Whether an effective subschema (2020-12 spelling) accepts ``value``."""
        key = value_key(schema)
        validator = self._subs.get(key)
        if validator is None:
            validator = self._sub.evolve(schema=schema)
            if len(self._subs) < 512:
                self._subs[key] = validator
        return _run(validator, value)


def _run(validator: Validator, value: JSON) -> bool:
    try:
        return bool(validator.is_valid(value))
    except RecursionError as exc:
        raise Undecidable(type(exc).__name__) from None
    except BudgetExceeded:
        raise  # the request is out of time: stop, never read it as "undecidable"
    except Exception as exc:  # noqa: BLE001 - a schema error, an unresolvable reference, an unknown type name
        raise Undecidable(type(exc).__name__) from None


_CACHE: dict[int, Validators] = {}
_SAMPLERS: dict[int, Sampler] = {}


def validators(root: JSON) -> Validators:
    """The (cached) validators of a root schema; the cache keeps the root alive, so an id
    is never reused while cached."""
    return _per_root(_CACHE, root, Validators)


class _OfRoot(Protocol):
    root: JSON


_T = TypeVar("_T", bound=_OfRoot)


def _per_root(cache: dict[int, _T], root: JSON, make: Callable[[JSON], _T]) -> _T:
    """``make(root)``, cached by the root's identity; the cached object keeps the root alive
    (its ``root``), so an id is never reused while cached. Bounded: cleared past 256."""
    found = cache.get(id(root))
    if found is not None and found.root is root:
        return found
    if len(cache) > 256:
        cache.clear()
    made = make(root)
    cache[id(root)] = made
    return made


# --- sampling ----------------------------------------------------------------------------

FORMAT_SAMPLES: dict[str, str] = {
    "date-time": "2024-01-02T03:04:05Z", "date": "2024-01-02", "time": "03:04:05Z", "duration": "P1D",
    "email": "someone@example.com", "idn-email": "someone@example.com", "hostname": "example.com",
    "idn-hostname": "example.com", "ipv4": "192.0.2.1", "ipv6": "2001:db8::1", "uri": "https://example.com/a",
    "uri-reference": "/a", "iri": "https://example.com/a", "iri-reference": "/a", "uri-template": "/a/{b}",
    "uuid": "123e4567-e89b-12d3-a456-426614174000", "json-pointer": "/a", "relative-json-pointer": "0",
    "regex": "a+",
}
_PLAIN_STRINGS = ("a", "abc", "", "A1", "x y", "0", "a-b_c.d")
_INTEGERS = (0, 1, -1, 2, 10, 100, 1000000, -1000000)
_NUMBERS = (0.5, 1.5, -0.5, 2.25)
_ANY: tuple[JSON, ...] = ("a", 1, 1.5, True, None, {}, [])
_HINTS = {
    "object": ("properties", "required", "additionalProperties", "patternProperties", "minProperties",
               "maxProperties", "propertyNames", "dependentRequired", "unevaluatedProperties"),
    "array": ("items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains", "unevaluatedItems"),
    "string": ("minLength", "maxLength", "pattern", "format"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
}
_ORDER = ("object", "string", "integer", "number", "array", "boolean", "null")


def _unique(values: Iterable[JSON], limit: int = PER_SCHEMA) -> list[JSON]:
    seen: set[str] = set()
    out: list[JSON] = []
    for value in values:
        key = value_key(value) + type(value).__name__[:1]
        if key not in seen:
            seen.add(key)
            out.append(value)
            if len(out) >= limit:
                break
    return out


def merge_schemas(base: dict[str, JSON], extra: dict[str, JSON]) -> dict[str, JSON]:
    """Two schemas a value must both satisfy, folded for sampling (approximate: the
    samples are validated afterwards)."""
    merged = dict(base)
    for key, value in extra.items():
        if key not in merged:
            merged[key] = value
        elif key == "properties" and isinstance(value, dict) and isinstance(merged[key], dict):
            properties = dict(merged[key])
            for name, sub in value.items():
                properties[name] = {"allOf": [properties[name], sub]} if name in properties else sub
            merged[key] = properties
        elif key == "required" and isinstance(value, list) and isinstance(merged[key], list):
            merged[key] = [*merged[key], *(n for n in value if n not in merged[key])]
        elif key == "type":
            types = set(_types_of(merged[key])) & set(_types_of(value))
            if "integer" in _types_of(merged[key]) and "number" in _types_of(value):
                types.add("integer")
            if "number" in _types_of(merged[key]) and "integer" in _types_of(value):
                types.add("integer")
            merged[key] = sorted(types)
        elif merged[key] != value:
            merged.setdefault("allOf", [])
            merged["allOf"] = [*list_at(merged, "allOf"), {key: value}]
    return merged


def _types_of(value: JSON) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [t for t in value if isinstance(t, str)] if isinstance(value, list) else []


def sampler_for(root: JSON) -> Sampler:
    """The (cached) sampler of a root schema: deltas of one tool share its samples."""
    return _per_root(_SAMPLERS, root, Sampler)


class Sampler:
    """Bounded samples of values a schema (inside ``root``) is likely to accept."""

    def __init__(self, root: JSON) -> None:
        self.root = root
        self.checker = validators(root)
        self._cache: dict[str, list[JSON]] = {}

    def valid_samples(self, schema: JSON, limit: int = PER_SCHEMA) -> list[JSON]:
        """Samples the (effective) schema accepts."""
        out = []
        for value in self.samples(schema):
            try:
                if self.checker.accepts(as_object(schema) if not isinstance(schema, bool) else schema, value):
                    out.append(value)
            except Undecidable:
                continue
            if len(out) >= limit:
                break
        return out

    def samples(self, schema: JSON, depth: int = 0) -> list[JSON]:
        node = effective(deref(self.root, schema), self.root)
        if schema is False or is_false(node):
            return []
        key = value_key(node)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        self._cache[key] = []  # a recursive schema met again while sampling it: no values yet
        found = _unique(self._samples(node, depth))
        self._cache[key] = found
        return found

    def minimal(self, schema: JSON, depth: int = 0) -> JSON:
        """One small value for a schema: objects with their required properties only, arrays
        as short as allowed (the context a witness is placed in; cheaper than samples)."""
        node = effective(deref(self.root, schema), self.root)
        if depth > MAX_DEPTH or is_false(node):
            return None
        for keyword in ("anyOf", "oneOf", "allOf"):
            if list_at(node, keyword):
                found = self.samples(node, depth)
                return found[0] if found else None
        types = admitted_types(node)
        if admitted_values(node) is None and (types == {"object"} or (types is None and "properties" in node)):
            properties = object_at(node, "properties")
            return {name: self.minimal(properties.get(name, self._extra(node, name)), depth + 1)
                    for name in list_at(node, "required") if isinstance(name, str)}
        found = self.samples(node, depth)
        return found[0] if found else None

    def _samples(self, node: dict[str, JSON], depth: int) -> Iterator[JSON]:
        if depth > MAX_DEPTH:
            yield from _ANY[:3]
            return
        for keyword in ("anyOf", "oneOf"):
            branches = list_at(node, keyword)
            if branches:
                rest = {k: v for k, v in node.items() if k != keyword}
                per_branch = [self.samples(merge_schemas(rest, effective(deref(self.root, b), self.root)), depth + 1)
                              for b in branches]
                yield from _interleave(per_branch)
                return
        branches = list_at(node, "allOf")
        if branches:
            merged = {k: v for k, v in node.items() if k != "allOf"}
            for branch in branches:
                merged = merge_schemas(merged, effective(deref(self.root, branch), self.root))
            merged.pop("allOf", None) if not list_at(merged, "allOf") else None
            if "allOf" not in merged or merged["allOf"] != branches:
                yield from self.samples({k: v for k, v in merged.items() if k != "allOf"}, depth + 1)
                return
        values = admitted_values(node)
        if values is not None:
            yield from values.values()
            return
        types = admitted_types(node)
        if types is None:
            hinted = [t for t, keywords in _HINTS.items() if any(k in node for k in keywords)]
            if hinted:
                # the types the keywords constrain first, in full; the others after them
                yield from _interleave([list(self._of_type(node, t, depth)) for t in hinted])
                yield from _interleave([list(self._of_type(node, t, depth)) for t in _ORDER if t not in hinted])
                return
            ordered = list(_ORDER)
        else:
            ordered = [t for t in _ORDER if t in types]
        per_type = [list(self._of_type(node, t, depth)) for t in ordered]
        yield from _interleave(per_type)

    def _of_type(self, node: dict[str, JSON], kind: str, depth: int) -> Iterator[JSON]:
        if kind == "null":
            yield None
        elif kind == "boolean":
            yield from (True, False)
        elif kind in ("integer", "number"):
            yield from _numbers(node, kind == "integer")
        elif kind == "string":
            yield from _strings(node)
        elif kind == "array":
            yield from self._arrays(node, depth)
        elif kind == "object":
            yield from self._objects(node, depth)

    def _arrays(self, node: dict[str, JSON], depth: int) -> Iterator[JSON]:
        prefix = [self.samples(sub, depth + 1) for sub in list_at(node, "prefixItems")]
        rest_schema = node.get("items", node.get("unevaluatedItems", True))
        rest = self.samples(rest_schema, depth + 1) if rest_schema is not False else []
        lowest = int(COUNT_DEFAULTS["minItems"] or 0)
        minimum = max(lowest, int(_count(node, "minItems") or 0))
        maximum = _count(node, "maxItems")
        head = [values[0] for values in prefix if values]
        if len(head) < len(prefix):
            return
        unique = node.get("uniqueItems") is True

        def filled(extra: list[JSON]) -> list[JSON]:
            items = head + extra
            while len(items) < minimum and rest:
                items.append(rest[len(items) % len(rest)] if unique else rest[0])
            return items

        if minimum <= len(head):
            yield list(head[: max(minimum, 0)]) if minimum <= len(head) else head
            yield head
        for value in rest[:6]:
            yield filled([value])
        if len(rest) > 1:
            yield filled(rest[:2])
        if maximum is not None and maximum <= 64 and rest:
            yield filled([rest[i % len(rest)] for i in range(int(maximum) - len(head))])
        for index, values in enumerate(prefix):
            for value in values[1:4]:
                yield head[:index] + [value] + head[index + 1:]

    def _objects(self, node: dict[str, JSON], depth: int) -> Iterator[JSON]:
        properties = object_at(node, "properties")
        required = [n for n in list_at(node, "required") if isinstance(n, str)]
        values = {name: self.samples(properties.get(name, self._extra(node, name)), depth + 1)
                  for name in dict.fromkeys([*required, *properties])}
        if any(not values[name] for name in required):
            return
        minimal = {name: values[name][0] for name in required}
        yield minimal
        full = {**minimal, **{name: found[0] for name, found in values.items() if found}}
        yield full
        extra = _extra_name(node)
        if extra is not None:
            for value in self.samples(self._extra(node, extra), depth + 1)[:2]:
                yield {**minimal, extra: value}
        # each property with each of its values, round-robin so every property is tried early
        per_property = [[{**minimal, name: value} for value in found[:4]] for name, found in list(values.items())[:16]]
        yield from _interleave(per_property)

    def beyond(self, schema: JSON) -> list[JSON]:
        """Values just past a schema's limits (one character, item or unit too many or too
        few): where a tightened bound refuses what the old schema accepted."""
        node = effective(deref(self.root, schema), self.root)
        out: list[JSON] = []
        for keyword in ("allOf", "anyOf", "oneOf"):
            for branch in list_at(node, keyword)[:8]:
                if isinstance(branch, (dict, bool)) and branch is not schema:
                    out.extend(self.beyond(branch))
        for side, step in (("min", -1), ("max", 1)):
            bound = numeric_bound(node, side)
            if bound is not None and abs(bound.value) <= SAFE_INTEGER:
                edge = bound.value if bound.exclusive else bound.value + step
                out.extend(int(v) if v.denominator == 1 else float(v)
                           for v in (edge, bound.value + Fraction(step, 2)))
        step_of = node.get("multipleOf")
        if isinstance(step_of, (int, float)) and not isinstance(step_of, bool) and step_of > 0:
            out.extend((1, step_of + 1, step_of / 2))
        low, high = _count(node, "minLength"), _count(node, "maxLength")
        if high is not None and high < LONGEST:
            out.append("x" * (high + 1))
        if low is not None and low > 0:
            out.append("x" * (low - 1))
        items = node.get("items", True)
        item = (self.samples(items) or [None])[0] if items is not False else None
        low, high = _count(node, "minItems"), _count(node, "maxItems")
        if high is not None and high < 4096:
            out.append([item] * (high + 1))
        if low is not None and low > 0:
            out.append([item] * (low - 1))
        return out

    def _extra(self, node: dict[str, JSON], name: str) -> JSON:
        """The schema an undeclared property ``name`` must satisfy."""
        for pattern, sub in object_at(node, "patternProperties").items():
            if matches(pattern, name):
                return sub
        if "additionalProperties" in node:
            return node["additionalProperties"]
        return node.get("unevaluatedProperties", True)

    def names(self, node: dict[str, JSON]) -> list[str]:
        """Property names an object schema declares or is likely to accept."""
        found = list(object_at(node, "properties"))
        for pattern in object_at(node, "patternProperties"):
            found.extend(regex_samples(pattern)[:2])
        extra = _extra_name(node)
        if extra is not None:
            found.append(extra)
        return found


def _extra_name(node: dict[str, JSON]) -> str | None:
    """A property name no declaration or pattern covers."""
    declared = object_at(node, "properties")
    for name in ("extra", "x_extra", "zz9"):
        if name not in declared and not any(matches(p, name) for p in object_at(node, "patternProperties")):
            return name
    return None


def _interleave(lists: list[list[JSON]]) -> Iterator[JSON]:
    for index in range(max((len(values) for values in lists), default=0)):
        for values in lists:
            if index < len(values):
                yield values[index]


def _count(node: dict[str, JSON], keyword: str) -> int | None:
    value = node.get(keyword)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _numbers(node: dict[str, JSON], integer: bool) -> Iterator[JSON]:
    low, high = numeric_bound(node, "min"), numeric_bound(node, "max")
    step = node.get("multipleOf")
    candidates: list[Fraction] = []
    for bound, direction in ((low, 1), (high, -1)):
        if bound is not None and abs(bound.value) <= SAFE_INTEGER:
            edge = bound.value
            candidates.append(edge + direction if bound.exclusive else edge)
            candidates.append(edge + direction * Fraction(1, 2) if bound.exclusive else edge + direction)
    candidates.extend(Fraction(n) for n in _INTEGERS)
    if low is not None and high is not None:
        middle = (low.value + high.value) / 2
        candidates.append(Fraction(math.floor(middle)) if integer else middle)
    if not integer:
        candidates.extend(Fraction(str(n)) for n in _NUMBERS)
    if isinstance(step, (int, float)) and not isinstance(step, bool) and step > 0:
        unit = Fraction(str(step)) if isinstance(step, float) else Fraction(step)
        candidates = [unit * round(c / unit) for c in candidates] + [unit, unit * 2, -unit]
    for value in candidates:
        if low is not None and (value < low.value or (value == low.value and low.exclusive)):
            continue
        if high is not None and (value > high.value or (value == high.value and high.exclusive)):
            continue
        if value.denominator == 1:
            yield int(value)
        elif not integer:
            yield float(value)


def _strings(node: dict[str, JSON]) -> Iterator[JSON]:
    low = int(_count(node, "minLength") or 0)
    high = _count(node, "maxLength")
    pattern = node.get("pattern")
    fmt = node.get("format")
    found: list[str] = []
    for keyword in ("default", "examples"):
        value = node.get(keyword)
        found.extend(v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str))
    if isinstance(fmt, str) and fmt in FORMAT_SAMPLES:
        found.append(FORMAT_SAMPLES[fmt])
    if isinstance(pattern, str):
        found.extend(regex_samples(pattern))
    found.extend(_PLAIN_STRINGS)
    found.extend(["x" * low, "x" * (low + 1)])
    if high is not None and high <= LONGEST:
        found.extend(["x" * high, "x" * max(high - 1, 0)])
    for text in found:
        if len(text) >= low and (high is None or len(text) <= high):
            yield text
        elif len(text) < low and (high is None or low <= high):
            yield text + "x" * (low - len(text))


# --- strings from a regex ----------------------------------------------------------------

try:  # the standard library's regex parser (``sre_parse``), read, never used to match
    from re import _parser as _sre  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - older Pythons name it sre_parse
    import sre_parse as _sre

_CATEGORY_CHARS = {
    "CATEGORY_DIGIT": "07", "CATEGORY_NOT_DIGIT": "az", "CATEGORY_SPACE": " \t", "CATEGORY_NOT_SPACE": "aZ",
    "CATEGORY_WORD": "a_", "CATEGORY_NOT_WORD": "-.", "CATEGORY_LINEBREAK": "\n\n", "CATEGORY_NOT_LINEBREAK": "ab",
}


def regex_samples(pattern: str, limit: int = 8) -> list[str]:
    """Strings built from a pattern's parse tree (shortest repeats, first branches, and
    variations), kept only when the pattern matches them (time-limited search)."""
    return list(_regex_samples(pattern, limit))


@lru_cache(maxsize=512)
def _regex_samples(pattern: str, limit: int) -> tuple[str, ...]:
    try:
        tree = _sre.parse(pattern)
    except Exception:  # noqa: BLE001 - a pattern Python cannot read (an ECMA-only construct)
        return ()
    out: list[str] = []
    for mode in range(6):
        try:
            text = _build(tree, mode, 0)
        except (RecursionError, ValueError, TypeError, IndexError):
            continue
        if text not in out and len(text) <= LONGEST and matches(pattern, text):
            out.append(text)
            if len(out) >= limit:
                break
    return tuple(out)


def _build(tree: Any, mode: int, depth: int) -> str:
    if depth > 20:
        return ""
    parts: list[str] = []
    for op, value in tree:
        name = str(op)
        if name == "LITERAL":
            parts.append(chr(value))
        elif name == "NOT_LITERAL":
            parts.append("a" if value != ord("a") else "b")
        elif name == "ANY":
            parts.append("a" if mode % 2 == 0 else "Z")
        elif name == "IN":
            parts.append(_pick(value, mode))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, sub = value
            high = 10**6 if str(high) == "MAXREPEAT" else int(high)
            count = (low, min(high, low + 1), min(high, low + 3), low, min(high, max(low, 2)), min(high, low + 1))[mode]
            parts.append("".join(_build(sub, mode, depth + 1) for _ in range(count)))
        elif name == "SUBPATTERN":
            parts.append(_build(value[-1], mode, depth + 1))
        elif name == "BRANCH":
            branches = value[1]
            parts.append(_build(branches[mode % len(branches)], mode, depth + 1))
        elif name == "CATEGORY":
            chars = _CATEGORY_CHARS.get(str(value), "a")
            parts.append(chars[mode % 2])
        elif name in ("AT", "ASSERT", "ASSERT_NOT", "GROUPREF", "GROUPREF_EXISTS", "ATOMIC_GROUP"):
            if name == "ATOMIC_GROUP":
                parts.append(_build(value, mode, depth + 1))
            continue
    return "".join(parts)


def _pick(items: Any, mode: int) -> str:
    negate = any(str(op) == "NEGATE" for op, _ in items)
    chars: list[str] = []
    for op, value in items:
        name = str(op)
        if name == "LITERAL":
            chars.append(chr(value))
        elif name == "RANGE":
            chars.extend((chr(value[0]), chr(value[1])))
        elif name == "CATEGORY":
            chars.extend(_CATEGORY_CHARS.get(str(value), "a"))
    if negate:
        for candidate in "aZ0_- .":
            if candidate not in chars and not _in_categories(items, candidate):
                return candidate
        return "\u00e9"
    if not chars:
        return "a"
    return chars[0] if mode % 2 == 0 else chars[-1]


def _in_categories(items: Any, char: str) -> bool:
    for op, value in items:
        if str(op) == "CATEGORY":
            sample = _CATEGORY_CHARS.get(str(value), "")
            if char in sample:
                return True
        if str(op) == "RANGE" and value[0] <= ord(char) <= value[1]:
            return True
    return False


