"""Check a model's tool arguments against the tool's input schema and say what is wrong
as :class:`Problem` values, one per offending argument, ready for ``<validation_error>``.

jsonschema does the validating (Draft 2020-12 unless ``$schema`` names another draft;
local ``$ref``/``$defs``/``definitions`` are its job; formats are checked). This module
only turns its errors into problems a model can act on:

- a problem sits on the offending argument's own dotted path: a missing ``currency`` on
  ``currency`` (``address.city`` when nested), an unknown property on its own name, the
  root as ``(root)``; array indexes are written ``items[2]`` (``items[2].sku`` deeper) so
  they cannot be mistaken for a property named ``2``;
- for ``oneOf``/``anyOf`` (grouped tools) it looks inside the branches: the branch the
  arguments were aimed at (no branch-refusing discriminator value) gives the problems; when
  every branch refuses the discriminator, or the discriminator is missing, one problem on it
  lists the allowed values;
- problems are deduplicated and sorted by path (indexes in numeric order), then kind.

Pure, and it never raises: a schema jsonschema cannot use becomes one ``(root)`` problem of
kind ``other``.
"""

from __future__ import annotations

import datetime as dt
import enum
import re
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, Protocol
from urllib.parse import unquote

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import SchemaError, ValidationError
from jsonschema.protocols import Validator
from jsonschema.validators import extend, validator_for
from referencing import Registry
from referencing.exceptions import NoSuchResource

from app import safe_regex
from app.budget import BudgetExceeded, checkpoint
from app.text import clip

__all__ = [
    "FORMAT_CHECKER",
    "MISSING",
    "PROBLEM_KINDS",
    "ROOT",
    "Missing",
    "Problem",
    "as_problem",
    "dotted_path",
    "no_retrieval",
    "validate_arguments",
    "validate_compiled",
]

ROOT: Final = "(root)"

# The closed set of problem kinds: the JSON Schema keyword that failed, ``other`` for the
# rest (its ``message`` then says what). The renderer has a sentence for each.
PROBLEM_KINDS: Final = frozenset({
    "required", "type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minLength", "maxLength", "minItems", "maxItems", "pattern", "format", "enum", "const",
    "additionalProperties", "multipleOf", "uniqueItems", "oneOf", "anyOf", "other",
})  # fmt: skip

# Keywords whose failure maps one to one on a problem of the same kind.
_DIRECT_KINDS: Final = PROBLEM_KINDS - {"required", "additionalProperties", "oneOf", "anyOf", "other"}


class Missing(enum.Enum):
    """The type of :data:`MISSING`: an enum member is a picklable singleton."""

    MISSING = "MISSING"

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = Missing.MISSING
"""``sent`` of a problem about an argument that was not sent at all."""

Segment = str | int


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the arguments, in the shape ``<validation_error>`` needs.

    ``path`` is dotted (``address.city``, ``items[2]``, ``(root)``); ``kind`` one of
    :data:`PROBLEM_KINDS`; ``sent`` what the model sent (:data:`MISSING` when nothing);
    ``expected`` the schema's value for that keyword (type name or list of them, the bound,
    the enum list, the format name, the pattern; for ``additionalProperties`` the declared
    property names; for ``required`` ``{"type": ...}`` or ``{"enum": [...]}`` of the missing
    property); ``message`` replaces the kind's opening sentence when given.
    """

    path: str
    kind: str
    sent: Any = MISSING
    expected: Any = None
    message: str | None = None


def dotted_path(segments: Iterable[Segment]) -> str:
    """``("items", 2, "sku")`` -> ``items[2].sku``; no segments -> ``(root)``."""
    out = ""
    for segment in segments:
        if isinstance(segment, int) and not isinstance(segment, bool):
            out += f"[{segment}]"
        else:
            out += f".{segment}" if out else str(segment)
    return out or ROOT


def as_problem(item: Problem | Mapping[str, Any]) -> Problem:
    """A :class:`Problem` from itself or from the plain dict an MCP server sends
    (``{"path", "kind", "sent", "expected", "message"}``). An absent ``sent`` is
    :data:`MISSING`, as is any ``sent`` of a ``required`` problem; an unknown kind is
    ``other``; a list path is joined like :func:`dotted_path`."""
    if isinstance(item, Problem):
        return item
    if not isinstance(item, Mapping):
        raise TypeError(f"a problem must be a Problem or a mapping, not {type(item).__name__}")
    path = item.get("path")
    if isinstance(path, (list, tuple)):
        path = dotted_path(path)
    kind = str(item.get("kind") or "other")
    kind = kind if kind in PROBLEM_KINDS else "other"
    sent = MISSING if kind == "required" else item.get("sent", MISSING)
    message = item.get("message")
    return Problem(
        path=str(path) if path not in (None, "") else ROOT,
        kind=kind,
        sent=sent,
        expected=item.get("expected"),
        message=None if message is None else str(message),
    )


# --------------------------------------------------------------------------- formats

_DATE_TIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:[^\s<>\"{}|\\^`]*")
_HOST_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")


def _is_date_time(value: object) -> bool:
    """RFC 3339 ``date-time`` (leap second allowed), for when rfc3339-validator is absent."""
    if not isinstance(value, str):
        return True
    match = _DATE_TIME.fullmatch(value)
    if match is None:
        return False
    year, month, day, hour, minute, second, off_h, off_m = (int(g) if g else 0 for g in match.groups())
    try:
        dt.date(year, month, day)
    except ValueError:
        return False
    return hour < 24 and minute < 60 and second <= 60 and off_h < 24 and off_m < 60


def _is_uri(value: object) -> bool:
    """An absolute URI (scheme first), for when rfc3987 is absent."""
    return not isinstance(value, str) or _URI.fullmatch(value) is not None


def _is_hostname(value: object) -> bool:
    """An RFC 1123 host name, for when fqdn is absent."""
    if not isinstance(value, str):
        return True
    name = value.removesuffix(".")
    return 0 < len(name) <= 253 and all(_HOST_LABEL.fullmatch(label) for label in name.split("."))


def _format_checker() -> FormatChecker:
    """jsonschema's checker plus the common formats whose optional packages are not
    installed: without them jsonschema silently accepts any ``date-time`` or ``uri``."""
    checker = FormatChecker()
    fallbacks = {"date-time": _is_date_time, "uri": _is_uri, "hostname": _is_hostname}
    for name, check in fallbacks.items():
        if name not in checker.checkers:
            checker.checks(name)(check)
    return checker


# Built once; never mutated after import.
FORMAT_CHECKER: Final = _format_checker()


# --------------------------------------------------------------------------- schema


class _Hit(NamedTuple):
    """A problem before its path is joined: the raw segments sort numerically."""

    segments: tuple[Segment, ...]
    kind: str
    sent: Any
    expected: Any = None
    message: str | None = None


class _UnusableSchema(Exception):
    """The schema cannot be used to validate anything."""


def _short(text: str, limit: int = 160) -> str:
    """jsonschema's message on one line, short enough to sit inside a sentence."""
    return clip(" ".join(text.split()), limit)


class _KeywordValidator(Validator, Protocol):
    """What a keyword function receives: a validator class's instance, which can also
    ``descend`` into a subschema (the public ``Validator`` protocol leaves that out)."""

    def descend(
        self, instance: Any, schema: Any, path: Any = None, schema_path: Any = None
    ) -> Iterator[ValidationError]: ...


def _pattern(validator: _KeywordValidator, pattern: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not safe_regex.search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: _KeywordValidator, patterns: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if safe_regex.search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: _KeywordValidator, allowed: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    extras = [key for key in instance if _is_undeclared(schema, key)]
    if validator.is_type(allowed, "object"):
        for key in extras:
            yield from validator.descend(instance[key], allowed, path=key)
    elif allowed is False and extras:
        listed = ", ".join(repr(key) for key in sorted(extras, key=str))
        verb = "was" if len(extras) == 1 else "were"
        yield ValidationError(f"Additional properties are not allowed ({listed} {verb} unexpected)")


def _is_undeclared(schema: Any, key: str) -> bool:
    """Neither a declared property nor matched by a patternProperties regex."""
    schema = schema if isinstance(schema, Mapping) else {}
    if key in (schema.get("properties") or {}):
        return False
    return not any(safe_regex.search(pattern, key) for pattern in (schema.get("patternProperties") or {}))


def _unique_key(value: Any) -> Hashable:
    """A value's identity under JSON equality (``1`` and ``1.0`` are one value, ``true`` and
    ``1`` two; key order never matters), hashable: uniqueItems in one pass."""
    if isinstance(value, bool) or value is None:
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, list):
        return ("a", tuple(_unique_key(item) for item in value))
    if isinstance(value, dict):
        return ("o", frozenset((key, _unique_key(item)) for key, item in value.items()))
    return ("?", id(value))


def _unique_items(validator: _KeywordValidator, unique: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """Near-linear (jsonschema's own compares every pair of unhashable items: minutes for
    5,000 objects)."""
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[Hashable] = set()
    for item in instance:
        checkpoint()
        key = _unique_key(item)
        if key in seen:
            yield ValidationError(f"{_short(repr(instance), 80)} has non-unique elements")
            return
        seen.add(key)


_SAFE_KEYWORDS = {"pattern": _pattern, "patternProperties": _pattern_properties,
                  "additionalProperties": _additional_properties, "uniqueItems": _unique_items}
"""The keywords that run a schema's regexes on the model's text, with a time limit
(jsonschema's own use Python's ``re``, which a crafted argument can stall for minutes)."""
_SAFE_CLASSES: dict[type, type] = {}


def _safe_class(cls: type) -> type:
    if cls not in _SAFE_CLASSES:
        _SAFE_CLASSES[cls] = extend(cls, _SAFE_KEYWORDS)
    return _SAFE_CLASSES[cls]


def safe_class(cls: type) -> Any:
    """A jsonschema validator class whose regex keywords run time-limited (the diff's
    witness checks validate with the same keywords the service uses)."""
    return _safe_class(cls)


def _refuse(uri: str) -> Any:
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # attrs field; the stubs omit it


_NO_RETRIEVAL: Final[Registry[Any]] = Registry(retrieve=_refuse)  # type: ignore[call-arg]


def no_retrieval() -> Registry[Any]:
    """The registry every validator is built with: a reference outside the schema is
    unknown, never fetched (jsonschema's default would retrieve ``http://`` and ``file://``
    URLs). Surfaces with such references are refused where they are read
    (:func:`app.schemas.remote_ref_problems`); this is the second wall."""
    return _NO_RETRIEVAL


def _validator(schema: Any) -> Validator:
    """The validator for the schema's draft, checked against its metaschema."""
    if not isinstance(schema, (Mapping, bool)):
        raise _UnusableSchema(f"not a JSON object but {type(schema).__name__}")
    try:
        cls = validator_for(schema, default=Draft202012Validator)
        cls.check_schema(schema)  # type: ignore[arg-type]  # the stubs' protocol says dict; any schema is checked
        return _safe_class(cls)(schema, registry=_NO_RETRIEVAL, format_checker=FORMAT_CHECKER)
    except SchemaError as exc:
        raise _UnusableSchema(_short(exc.message)) from None
    except Exception as exc:  # noqa: BLE001 - an unhashable $schema, a recursion bomb...
        raise _UnusableSchema(type(exc).__name__) from None


def _schema_problem(arguments: Any, why: str) -> Problem:
    return Problem(
        ROOT,
        "other",
        arguments,
        None,
        f"The tool's input schema is invalid ({why}); the arguments could not be checked.",
    )


def _pointer(root: Any, ref: str) -> Any:
    """Follow a local ``#/a/b`` reference; None when it leads nowhere."""
    node = root
    for raw in filter(None, unquote(ref[1:]).split("/")):
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping):
            node = node.get(key)
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return node


def _local(root: Any, node: Any) -> Any:
    """``node`` with local ``$ref`` followed (a few hops; remote refs are left alone)."""
    for _ in range(16):
        if not isinstance(node, Mapping) or not isinstance(node.get("$ref"), str) or not node["$ref"].startswith("#"):
            return node
        if "properties" in node or "type" in node:  # a $ref beside its own keywords (2019-09+)
            return node
        node = _pointer(root, node["$ref"])
    return node


def _property_schema(root: Any, schema: Any, name: str) -> Any:
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    return _local(root, properties.get(name)) if isinstance(properties, Mapping) else None


def _declared(schema: Any) -> list[str] | None:
    """The property names an object schema declares, sorted; None when it declares none."""
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    return sorted(map(str, properties)) if isinstance(properties, Mapping) and properties else None


# --------------------------------------------------------------------------- errors -> hits


def _required_hits(error: ValidationError, root: Any) -> list[_Hit]:
    """``'x' is a required property`` at the parent -> a hit on ``x`` itself."""
    base = tuple(error.absolute_path)
    names = error.validator_value if isinstance(error.validator_value, list) else []
    instance = error.instance if isinstance(error.instance, Mapping) else {}
    missing = [name for name in names if isinstance(name, str) and name not in instance]
    named = [name for name in missing if error.message == f"{name!r} is a required property"]
    if not missing:
        return [_Hit(base, "required", MISSING)]
    return [
        _Hit(base + (name,), "required", MISSING, _expectation(_property_schema(root, error.schema, name)))
        for name in named or missing
    ]


def _dependency_hits(error: ValidationError, root: Any) -> list[_Hit]:
    """``'b' is a dependency of 'a'`` (dependentRequired, draft-07 dependencies) -> ``b``."""
    base = tuple(error.absolute_path)
    for needed in _dependency_names(error.validator_value):
        if error.message.startswith(f"{needed!r} is a dependency of "):
            schema = _property_schema(root, error.schema, needed)
            return [_Hit(base + (needed,), "required", MISSING, _expectation(schema), None)]
    return [_other(error)]


def _dependency_names(value: Any) -> Iterator[str]:
    if isinstance(value, Mapping):
        for needed in value.values():
            if isinstance(needed, list):
                yield from (name for name in needed if isinstance(name, str))


def _expectation(schema: Any) -> dict[str, Any] | None:
    """What a missing property should have been: ``{"enum": [...]}`` when the schema pins
    its values (const or enum), else ``{"type": ...}``; None when it says neither."""
    if not isinstance(schema, Mapping):
        return None
    if "const" in schema:
        return {"enum": [schema["const"]]}
    if isinstance(schema.get("enum"), list):
        return {"enum": list(schema["enum"])}
    if "type" in schema:
        return {"type": schema["type"]}
    return None


def _unknown_hits(error: ValidationError) -> list[_Hit]:
    """``additionalProperties: false`` at the parent -> one hit per unknown property."""
    base = tuple(error.absolute_path)
    instance = error.instance if isinstance(error.instance, Mapping) else {}
    extras = [key for key in instance if isinstance(key, str) and _is_extra(error, key)]
    if not extras:
        return [_other(error)]
    return [_Hit(base + (key,), "additionalProperties", instance[key], _declared(error.schema)) for key in extras]


def _is_extra(error: ValidationError, key: str) -> bool:
    """Whether ``key`` is one the failed keyword refused. For additionalProperties the
    schema says so; for unevaluatedProperties only the message knows."""
    if error.validator == "unevaluatedProperties":
        return repr(key) in error.message
    return _is_undeclared(error.schema, key)


def _other(error: ValidationError) -> _Hit:
    message = _short(error.message) if error.validator is not None else "No value is allowed here"
    return _Hit(tuple(error.absolute_path), "other", error.instance, None, message.rstrip(".") + ".")


def _direct_kind(error: ValidationError) -> str:
    """The problem kind of a plain keyword failure (draft-04 boolean exclusive bounds
    report as ``minimum``/``maximum`` but mean the exclusive kind)."""
    kind = str(error.validator)
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    if kind in ("minimum", "maximum"):
        exclusive = "exclusiveMinimum" if kind == "minimum" else "exclusiveMaximum"
        if schema.get(exclusive) is True:
            return exclusive
    return kind


def _hits(error: ValidationError, root: Any) -> list[_Hit]:
    """The hits of one jsonschema error (several for required/unknown properties)."""
    keyword = error.validator
    if keyword == "required":
        return _required_hits(error, root)
    if keyword in ("dependentRequired", "dependencies"):
        return _dependency_hits(error, root)
    if keyword in ("additionalProperties", "unevaluatedProperties"):
        return _unknown_hits(error)
    if keyword in ("oneOf", "anyOf"):
        return _union_hits(error, root)
    if keyword in _DIRECT_KINDS:
        return [_Hit(tuple(error.absolute_path), _direct_kind(error), error.instance, error.validator_value)]
    return [_other(error)]


# --------------------------------------------------------------------------- unions


def _union_hits(error: ValidationError, root: Any) -> list[_Hit]:
    """A failed oneOf/anyOf: the problems of the branch the arguments aimed at, one merged
    problem when every branch refuses the same discriminator, else one union problem."""
    base = tuple(error.absolute_path)
    kind = str(error.validator)
    if not error.context:
        return [_Hit(base, kind, error.instance, None, "The value matches more than one of the allowed forms.")]
    branches = list(_branch_hits(error, root).values())
    missing = _missing_discriminator(branches, base)
    if missing:
        return missing
    aimed = [hits for hits in branches if not _refusals(hits, base)]
    if aimed:
        return min(aimed, key=len)
    return _merged_refusal(branches, base) or [_Hit(base, kind, error.instance)]


def _branch_hits(error: ValidationError, root: Any) -> dict[int, list[_Hit]]:
    """Context errors grouped by branch index, each mapped to hits."""
    branches: dict[int, list[_Hit]] = {}
    for sub in error.context or ():
        index = sub.relative_schema_path[0] if sub.relative_schema_path else 0
        branches.setdefault(index if isinstance(index, int) else 0, []).extend(_hits(sub, root))
    return dict(sorted(branches.items()))


def _refusals(hits: Sequence[_Hit], base: tuple[Segment, ...]) -> list[_Hit]:
    """The hits that show a branch is for other arguments: a wrong discriminator value
    (const/enum on a direct property) or a wrong type of the value itself."""
    return [
        hit
        for hit in hits
        if (hit.kind in ("const", "enum") and len(hit.segments) == len(base) + 1 and hit.segments[:-1] == base)
        or (hit.kind == "type" and hit.segments == base)
    ]


def _merged_refusal(branches: list[list[_Hit]], base: tuple[Segment, ...]) -> list[_Hit]:
    """Every branch refused the same thing: one problem with all allowed values/types."""
    refusals = [_refusals(hits, base)[0] for hits in branches]
    first = refusals[0]
    if any(hit.segments != first.segments for hit in refusals):
        return []
    if all(hit.kind == "type" for hit in refusals):
        return [_Hit(first.segments, "type", first.sent, _union(_as_list(hit.expected) for hit in refusals))]
    if all(hit.kind in ("const", "enum") for hit in refusals):
        values = _union(_as_list(hit.expected) if hit.kind == "enum" else [hit.expected] for hit in refusals)
        return [_Hit(first.segments, "enum", first.sent, values)]
    return []


def _missing_discriminator(branches: list[list[_Hit]], base: tuple[Segment, ...]) -> list[_Hit]:
    """Every branch misses the same direct property (the discriminator was not sent)."""
    per_branch = [
        {hit.segments: hit for hit in hits if hit.kind == "required" and hit.segments[:-1] == base} for hits in branches
    ]
    shared = set.intersection(*(set(found) for found in per_branch)) if per_branch else set()
    if not shared:
        return []
    segments = min(shared, key=str)
    expected = [found[segments].expected for found in per_branch]
    if all(isinstance(value, Mapping) and "enum" in value for value in expected):
        return [_Hit(segments, "required", MISSING, {"enum": _union(value["enum"] for value in expected)})]
    return [per_branch[0][segments]]


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _union(lists: Iterable[Iterable[Any]]) -> list[Any]:
    """Values in first-seen order, without repeats (values may be unhashable)."""
    out: list[Any] = []
    for values in lists:
        out.extend(value for value in values if value not in out)
    return out


# --------------------------------------------------------------------------- entry point


def _segment_key(segment: Segment) -> tuple[int, int, str]:
    return (0, segment, "") if isinstance(segment, int) else (1, 0, str(segment))


def _sort_key(hit: _Hit) -> tuple[Any, ...]:
    return (tuple(_segment_key(s) for s in hit.segments), hit.kind, hit.message or "")


def _collect(validator: Validator, arguments: Any, root: Any) -> list[_Hit]:
    """Every error's hits, deduplicated on (path, kind, message), in path order."""
    seen: dict[tuple[Any, ...], _Hit] = {}
    for error in validator.iter_errors(arguments):
        checkpoint()
        for hit in _hits(error, root):
            seen.setdefault((hit.segments, hit.kind, hit.message), hit)
    return sorted(seen.values(), key=_sort_key)


def validate_arguments(schema: Any, arguments: Any) -> list[Problem]:
    """The problems of ``arguments`` against a tool's input ``schema``; ``[]`` when valid.

    Never raises: an unusable schema, or arguments jsonschema chokes on, give one
    ``(root)`` problem of kind ``other`` that says so.
    """
    try:
        validator = _validator(schema)
    except _UnusableSchema as exc:
        return [_schema_problem(arguments, str(exc))]
    return _problems(validator, schema, arguments)


def _problems(validator: Validator, schema: Any, arguments: Any) -> list[Problem]:
    try:
        hits = _collect(validator, arguments, schema)
    except RecursionError:
        return [Problem(ROOT, "other", arguments, None, "The arguments nest too deeply to be checked.")]
    except BudgetExceeded:
        raise  # the request is out of time: answered as such, never as a problem of the arguments
    except Exception as exc:  # noqa: BLE001 - an unresolvable $ref, an unknown type name...
        return [_schema_problem(arguments, _short(str(exc), 120) or type(exc).__name__)]
    return [Problem(dotted_path(hit.segments), hit.kind, hit.sent, hit.expected, hit.message) for hit in hits]


# --------------------------------------------------------------------------- compiled validators

COMPILED_KEPT: Final = 1024
"""Compiled validators kept (per schema digest); the least recently used goes first."""
_COMPILED: OrderedDict[str, Validator | str] = OrderedDict()
_COMPILED_LOCK = threading.Lock()


def _compiled(schema: Any, digest: str) -> Validator | str:
    """The validator for ``schema`` (or why the schema is unusable), built once per digest."""
    with _COMPILED_LOCK:
        hit = _COMPILED.get(digest)
        if hit is not None:
            _COMPILED.move_to_end(digest)
            return hit
    try:
        built: Validator | str = _validator(schema)
    except _UnusableSchema as exc:
        built = str(exc)
    with _COMPILED_LOCK:
        _COMPILED[digest] = built
        if len(_COMPILED) > COMPILED_KEPT:
            _COMPILED.popitem(last=False)
    return built


def validate_compiled(schema: Any, arguments: Any, digest: str) -> list[Problem]:
    """:func:`validate_arguments` for a hot path (the gateway checks every ``tools/call``):
    the schema is checked against its metaschema and compiled once per ``digest`` (the
    caller's digest of that schema), regexes still run time-limited. Same problems."""
    validator = _compiled(schema, digest)
    if isinstance(validator, str):
        return [_schema_problem(arguments, validator)]
    return _problems(validator, schema, arguments)
