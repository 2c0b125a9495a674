"""The one name check, shared by the service (lockfile and store names, tokens, digests,
TOML keys) and the client (``govern(..., server_name=...)``): a name matches its pattern
whole, never a prefix, and never with Python's ``$`` letting a final newline through
(``"nl-demo\\n"`` is no server name). Server names become file names, so never a path."""

from __future__ import annotations

import re

SERVER_NAME_PATTERN = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$"
"""The documented form (OpenAPI, ECMA-262: ``$`` is the end of the text there)."""
SERVER_NAME = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,127}\Z")
SERVER_NAME_RULE = "letters, digits, '_', '.', '-'; starting with a letter or digit; at most 128 characters"


def full_match(pattern: re.Pattern[str], text: object) -> bool:
    """Whether ``text`` is a string that ``pattern`` matches whole: the one way a name is
    checked (``re.match`` with ``...$`` accepts ``"name\\n"``)."""
    return isinstance(text, str) and pattern.fullmatch(text) is not None


def is_server_name(name: object) -> bool:
    """``[A-Za-z0-9][A-Za-z0-9_.-]{0,127}``, the whole name, and not ``.`` or ``..``."""
    return full_match(SERVER_NAME, name) and name not in (".", "..")


def server_name_problem(name: object) -> str | None:
    """Why ``name`` is not a valid server name, or None when it is."""
    return None if is_server_name(name) else f"{name!r} is not a valid server name ({SERVER_NAME_RULE})"


__all__ = ["SERVER_NAME", "SERVER_NAME_PATTERN", "SERVER_NAME_RULE", "full_match", "is_server_name",
           "server_name_problem"]
