"""Strict JSON in, canonical JSON out.

Strict because every byte we read comes from outside: not UTF-8, NaN/Infinity, lone
surrogates and absurd nesting are refused with the place named, never a traceback.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from app.problems import InputError

JSON = Any
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


def parse_json(data: bytes | str, where: str | None = None) -> JSON:
    """Parse one JSON document and check it with :func:`check_value`."""
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
    check_value(value, where)
    return value


def check_value(value: JSON, where: str | None = None) -> None:
    """Refuse what JSON cannot carry losslessly: depth over MAX_DEPTH, lone surrogates,
    non-finite floats and non-string keys. Iterative, so hostile depth cannot crash it."""
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


def canonical_json(value: JSON) -> str:
    """Sorted keys, no whitespace, UTF-8 text: the byte form every digest is taken over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def pretty_json(value: JSON) -> str:
    """Sorted keys, 2-space indent: the readable canonical form (exports, stored schemas)."""
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
