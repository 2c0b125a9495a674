"""The one server-name rule, shared by the service (lockfile and store names) and the
client (``govern(..., server_name=...)``): names become file names, so never a path."""

from __future__ import annotations

import re

SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
SERVER_NAME_RULE = "letters, digits, '_', '.', '-'; starting with a letter or digit; at most 128 characters"


def is_server_name(name: object) -> bool:
    """``^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$``, and not ``.`` or ``..``."""
    return isinstance(name, str) and SERVER_NAME.match(name) is not None and name not in (".", "..")


def server_name_problem(name: object) -> str | None:
    """Why ``name`` is not a valid server name, or None when it is."""
    return None if is_server_name(name) else f"{name!r} is not a valid server name ({SERVER_NAME_RULE})"


__all__ = ["SERVER_NAME", "SERVER_NAME_RULE", "is_server_name", "server_name_problem"]
