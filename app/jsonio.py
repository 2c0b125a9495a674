"""Strict JSON in, canonical JSON out.

Strict because every byte we read comes from outside: not UTF-8, NaN/Infinity, lone
surrogates and absurd nesting are refused with the place named, never a traceback.
"""

from __future__ import annotations

import json
import sys
from itertools import pairwise
from json.encoder import encode_basestring
from typing import Any, NamedTuple

from app.jsontypes import JSON
from app.problems import InputError

MAX_DEPTH = 200
"""Deepest nesting accepted. Real tool schemas stay far below; walkers recurse per level."""


def _reject_constant(name: str) -> Any:
    raise InputError(f"{name} is not valid JSON (numbers must be finite)")


def decode_utf8(data: bytes | str, where: str | None = None) -> str:
    """Bytes to text, refusing anything that is not UTF-8 (a leading BOM is allowed)."""
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 (byte {exc.start})", where) from None


def parse_json(data: bytes | str, where: str | None = None, *, check: bool = True) -> JSON:
    """Parse one JSON document and check it with :func:`check_value` (``check=False`` for a
    caller that checks the parts itself)."""
    text = decode_utf8(data, where)
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except InputError as exc:
        raise InputError(exc.message, where) from None
    except RecursionError:
        raise InputError(f"nested deeper than {MAX_DEPTH} levels", where) from None
    except json.JSONDecodeError as exc:
        raise InputError(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", where
        ) from None
    except ValueError:  # an integer too long to convert (sys.get_int_max_str_digits)
        raise InputError(f"invalid JSON: a number has more than {sys.get_int_max_str_digits()} digits",
                         where) from None
    if check:
        check_value(value, where)
    return value


def check_value(value: JSON, where: str | None = None) -> None:
    """Refuse what JSON cannot carry losslessly: depth over MAX_DEPTH, lone surrogates,
    non-finite floats and non-string keys. Iterative, so hostile depth cannot crash it."""
    if not scan(value).ok:
        _locate_problem(value, where)


def _utf8_ok(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class Scan(NamedTuple):
    ok: bool
    """Whether :func:`check_value` would accept the value."""
    refs: set[str]
    """Every string held by a ``"$ref"`` key anywhere (a superset of schema references)."""
    sets_sorted: bool
    """No ``required``/``type`` list of strings anywhere is out of order or repeats: then
    normalising a schema inside the value changes nothing, and digests can skip it."""


def _sorted_set(items: list[JSON]) -> bool:
    if not all(type(item) is str for item in items):
        return True  # only lists of strings are sets to normalise
    return all(a < b for a, b in pairwise(items))


def scan(value: JSON) -> Scan:
    """One fast pass, level by level, building no paths (on a failed check,
    :func:`check_value` walks again to name the place)."""
    refs: set[str] = set()
    sets_sorted = True
    level = [value]
    depth = 0
    while level:
        if depth > MAX_DEPTH:
            return Scan(False, refs, sets_sorted)
        below: list[JSON] = []
        for node in level:
            kind = type(node)
            if kind is str:
                if not (node.isascii() or _utf8_ok(node)):
                    return Scan(False, refs, sets_sorted)
            elif kind is dict:
                try:
                    plain_keys = all(map(str.isascii, node))  # C speed; TypeError for a non-str key
                except TypeError:
                    return Scan(False, refs, sets_sorted)
                if not plain_keys and not all(map(_utf8_ok, node)):
                    return Scan(False, refs, sets_sorted)
                ref = node.get("$ref")
                if type(ref) is str:
                    refs.add(ref)
                if sets_sorted:
                    for key in ("required", "type"):
                        items = node.get(key)
                        if type(items) is list and not _sorted_set(items):
                            sets_sorted = False
                below.extend(node.values())
            elif kind is list:
                below.extend(node)
            elif kind is float:
                if node != node or node in (_INF, -_INF):
                    return Scan(False, refs, sets_sorted)
            elif not (node is None or kind is bool or kind is int):
                return Scan(False, refs, sets_sorted)
        level = below
        depth += 1
    return Scan(True, refs, sets_sorted)


_INF = float("inf")


def _locate_problem(value: JSON, where: str | None) -> None:
    stack: list[tuple[JSON, int, str]] = [(value, 0, "")]
    while stack:
        node, depth, path = stack.pop()
        if depth > MAX_DEPTH:
            raise InputError(f"nested deeper than {MAX_DEPTH} levels (at {path or '(root)'})", where)
        if isinstance(node, dict):
            for key, child in node.items():
                if not isinstance(key, str):
                    raise InputError(f"object key {key!r} is not a string (at {path or '(root)'})", where)
                _check_text(key, f"{path}.{key}" if path else key, where)
                stack.append((child, depth + 1, f"{path}.{key}" if path else key))
        elif isinstance(node, list):
            for index, child in enumerate(node):
                stack.append((child, depth + 1, f"{path}[{index}]"))
        elif isinstance(node, str):
            _check_text(node, path, where)
        elif isinstance(node, float):
            if node != node or node in (float("inf"), float("-inf")):
                raise InputError(f"non-finite number at {path or '(root)'}", where)
        elif node is None or isinstance(node, (bool, int)):
            continue
        else:
            raise InputError(f"{type(node).__name__} is not a JSON value (at {path or '(root)'})", where)


def _check_text(text: str, path: str, where: str | None) -> None:
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"lone UTF-16 surrogate in a string (at {path or '(root)'})", where) from None


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                              check_circular=False)
"""Built once (json.dumps builds an encoder per call). No cycle check: values come from
parsed JSON, which cannot be cyclic."""


def canonical_json(value: JSON) -> str:
    """Sorted keys, no whitespace, UTF-8 text: the byte form every digest is taken over."""
    return _CANONICAL.encode(value)


def pretty_json(value: JSON) -> str:
    """Sorted keys, 2-space indent: the readable canonical form (exports, stored schemas).

    The same text as ``json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False,
    allow_nan=False)``, written by a plain recursive function: the standard library falls
    back to its generator-based Python encoder whenever ``indent`` is set, which costs
    about three times more (a 500-tool lockfile spends most of its time here)."""
    out: list[str] = []
    _pretty(value, "", out)
    return "".join(out)


def _pretty(value: JSON, indent: str, out: list[str]) -> None:
    kind = type(value)
    if kind is str:
        out.append(encode_basestring(value))
    elif kind is dict:
        if not value:
            out.append("{}")
            return
        inner = indent + "  "
        separator = "{\n" + inner
        for key in sorted(value):
            out.append(separator)
            out.append(encode_basestring(key))
            out.append(": ")
            _pretty(value[key], inner, out)
            separator = ",\n" + inner
        out.append("\n" + indent + "}")
    elif kind is list:
        if not value:
            out.append("[]")
            return
        inner = indent + "  "
        separator = "[\n" + inner
        for item in value:
            out.append(separator)
            _pretty(item, inner, out)
            separator = ",\n" + inner
        out.append("\n" + indent + "]")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif value is None:
        out.append("null")
    elif kind is int:
        out.append(int.__repr__(value))
    elif kind is float and value == value and value not in (_INF, -_INF):
        out.append(float.__repr__(value))
    else:  # anything unusual (subclasses, NaN): the standard library decides, and raises as it does
        out.append(json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
                   .replace("\n", "\n" + indent))
