"""Capture the surface of a running MCP server with the official SDK client.

``lock``, ``check``, ``diff`` and ``live`` read a surface from a file; with ``--from-command``
or ``--from-url`` they ask the server itself instead, so what is locked is exactly what a
model would be shown. The result is the MCP wire shape (camelCase, as
:func:`app.ingest.load.surface_from_json` reads it)::

    {"serverInfo": ..., "protocolVersion": ..., "tools": [...],
     "prompts": [...], "resources": [...], "resourceTemplates": [...]}

Every list is paged through ``nextCursor``; prompts and resources are asked for only when
the server advertises them. One deadline bounds the whole capture; on any outcome the
SDK's stdio transport closes the child's stdin, then terminates and kills its process
group, so no server is left behind. The SDK (``pip install mcp-governance[mcp]``) is
imported only when a capture runs.
"""

from __future__ import annotations

import ipaddress
import os
import shlex
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from app.jsontypes import JSON
from app.problems import InputError

Progress = Callable[[str], None]
DEFAULT_TIMEOUT = 30.0
MAX_PAGES = 1000
"""A server whose cursors never end must not hang a capture (the deadline would, too)."""
LOOPBACK_NAMES = ("localhost",)

# (result attribute holding the items, surface key, SDK session method) per list.
LISTS = {
    "tools/list": ("tools", "tools", "list_tools"),
    "prompts/list": ("prompts", "prompts", "list_prompts"),
    "resources/list": ("resources", "resources", "list_resources"),
    "resources/templates/list": ("resource_templates", "resourceTemplates", "list_resource_templates"),
}


LABELS = {"tools": "tool", "prompts": "prompt", "resources": "resource", "resourceTemplates": "resource template"}


def _count(number: int, label: str) -> str:
    return f"{number} {label}{'' if number == 1 else 's'}"


@dataclass
class _Phase:
    """What the capture is waiting for, named in the timeout message."""

    name: str = "initialize"


def _sdk() -> Any:
    try:
        import mcp
    except ImportError:
        raise InputError(
            "capturing from a running server needs the MCP SDK: pip install 'mcp-governance[mcp]'"
        ) from None
    return mcp


def _dump(model: Any) -> JSON:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside the SDK's task-group exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


async def _pages(session: Any, method: str, phase: _Phase) -> tuple[list[JSON], int]:
    """Every item of one list, following ``nextCursor``; and the number of pages."""
    from mcp.types import PaginatedRequestParams

    attribute, _, call = LISTS[method]
    items: list[JSON] = []
    cursor: str | None = None
    seen: set[str] = set()
    for page in range(1, MAX_PAGES + 1):
        phase.name = method if page == 1 else f"{method} (page {page})"
        result = await getattr(session, call)(params=PaginatedRequestParams(cursor=cursor))
        items.extend(_dump(item) for item in getattr(result, attribute))
        cursor = result.next_cursor
        if cursor is None:
            return items, page
        if cursor in seen:
            raise InputError(f"{method}: the server sent the cursor {cursor!r} twice (its paging loops)")
        seen.add(cursor)
    raise InputError(f"{method}: more than {MAX_PAGES} pages")


async def _surface(client: Any, phase: _Phase, progress: Progress | None, origin: str) -> dict[str, JSON]:
    from mcp import MCPError
    from mcp.types import METHOD_NOT_FOUND

    session = client.session
    capabilities = client.server_capabilities
    info = client.server_info
    surface: dict[str, JSON] = {}
    if info is not None:
        surface["serverInfo"] = _dump(info)
    surface["protocolVersion"] = client.protocol_version
    advertised = {
        "tools/list": capabilities.tools is not None,
        "prompts/list": capabilities.prompts is not None,
        "resources/list": capabilities.resources is not None,
        "resources/templates/list": capabilities.resources is not None,
    }
    counts: list[str] = []
    for method, (_, key, _) in LISTS.items():
        if not advertised[method]:
            continue
        try:
            items, pages = await _pages(session, method, phase)
        except MCPError as exc:
            # The resources capability does not promise templates: a server without them may say so.
            if method != "resources/templates/list" or exc.code != METHOD_NOT_FOUND:
                raise
            continue
        surface[key] = items
        counts.append(f"{_count(len(items), LABELS[key])} in {_count(pages, 'page')}")
    surface.setdefault("tools", [])
    if progress is not None:
        name = info.name if info is not None else "an unnamed server"
        progress(f"started {name} ({origin}, protocol {client.protocol_version}): {', '.join(counts) or 'no tools'}")
    return surface


async def _run(connect: Callable[[], Any], where: str, timeout: float, origin: str,
               progress: Progress | None, stderr_tail: Callable[[], str] = lambda: "",
               program: str | None = None) -> dict[str, JSON]:
    """Connect, list, disconnect under one deadline; every failure is one InputError line."""
    from mcp import MCPError

    phase = _Phase()
    try:
        with _deadline(timeout):
            async with connect() as client:
                return await _surface(client, phase, progress, origin)
    except Exception as raised:  # noqa: BLE001 - the SDK's task groups wrap errors: read the first real one
        exc = _leaf(raised)
        if isinstance(exc, InputError):
            raise exc.located(where) from None
        if isinstance(exc, TimeoutError):
            raise InputError(f"the MCP server did not answer {phase.name} within {timeout:g} s", where) from None
        tail = stderr_tail()
        said = f" (its stderr: {tail})" if tail else ""
        if isinstance(exc, MCPError):
            problem = f"the MCP server failed during {phase.name}: {exc}"
        elif isinstance(exc, OSError):
            problem = f"cannot start {program or origin!r}: {exc.strerror or exc}"
        else:
            problem = f"the MCP server failed during {phase.name}: {type(exc).__name__}: {exc}"
        raise InputError(problem + said, where) from None


def _deadline(timeout: float) -> Any:
    import anyio

    if not timeout > 0:
        raise InputError(f"the timeout must be a positive number of seconds, not {timeout!r}")
    return anyio.fail_after(timeout)


def _run_sync(coroutine: Callable[[], Awaitable[dict[str, JSON]]]) -> dict[str, JSON]:
    import anyio

    return anyio.run(coroutine)


# --------------------------------------------------------------------------- stdio


def command_argv(command: str | list[str], where: str = "--from-command") -> list[str]:
    """A command line as an argv list (POSIX shell quoting; no shell runs it)."""
    if isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise InputError(f"cannot split the command: {exc}", where) from None
    else:
        argv = [str(part) for part in command]
    if not argv or not argv[0]:
        raise InputError("empty command", where)
    return argv


def _last_line(log: IO[str]) -> str:
    try:
        log.seek(0)
        lines = [line.strip() for line in log.read()[-4000:].splitlines() if line.strip()]
    except (OSError, ValueError):
        return ""
    return lines[-1][:300] if lines else ""


async def acapture_from_command(command: str | list[str], *, timeout: float = DEFAULT_TIMEOUT,
                                env: Mapping[str, str] | None = None, cwd: str | Path | None = None,
                                progress: Progress | None = None) -> dict[str, JSON]:
    """:func:`capture_from_command` for callers already inside an event loop."""
    mcp = _sdk()
    argv = command_argv(command)
    # Unlike the SDK's default (a handful of variables), the child gets our whole
    # environment: `BILLING_VERSION=v1 mcp-governance lock --from-command ...` must reach it.
    full_env = {**os.environ, **(env or {})}
    params = mcp.StdioServerParameters(command=argv[0], args=argv[1:], env=full_env,
                                       cwd=str(cwd) if cwd is not None else None)
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as log:
        # The child's stderr goes to a file, never to our stdout; its last line explains a crash.
        def connect() -> Any:
            from mcp.client.stdio import stdio_client

            return mcp.Client(stdio_client(params, errlog=log), cache=None)

        return await _run(connect, "--from-command", timeout, shlex.join(argv), progress, lambda: _last_line(log),
                          program=argv[0])


def capture_from_command(command: str | list[str], *, timeout: float = DEFAULT_TIMEOUT,
                         env: Mapping[str, str] | None = None, cwd: str | Path | None = None,
                         progress: Progress | None = None) -> dict[str, JSON]:
    """Start the MCP server ``command`` over stdio, list its surface, stop it.

    ``env`` is added to this process's environment for the child. Raises
    :class:`InputError` (``where="--from-command"``) when the server cannot start, fails,
    or does not answer within ``timeout`` seconds.
    """
    return _run_sync(lambda: acapture_from_command(command, timeout=timeout, env=env, cwd=cwd,
                                                   progress=progress))


# --------------------------------------------------------------------------- streamable HTTP


def check_loopback_url(url: str, where: str = "--from-url") -> str:
    """Only http(s) URLs on this machine: a capture never reaches another host."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        raise InputError(f"not a valid URL: {exc}", where) from None
    if parts.scheme not in ("http", "https") or not host:
        raise InputError(f"expected an http:// or https:// URL, not {url!r}", where)
    if host.lower() in LOOPBACK_NAMES:
        return url
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise InputError(f"{host!r} is not a loopback address; only 127.0.0.1, ::1 and localhost are allowed", where)
    return url


async def acapture_from_url(url: str, *, timeout: float = DEFAULT_TIMEOUT, headers: Mapping[str, str] | None = None,
                            progress: Progress | None = None) -> dict[str, JSON]:
    """:func:`capture_from_url` for callers already inside an event loop."""
    mcp = _sdk()
    check_loopback_url(url)
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    # No proxy from the environment: a loopback URL must stay on this machine.
    http = httpx2.AsyncClient(headers=dict(headers or {}), timeout=httpx2.Timeout(timeout), trust_env=False)
    async with http:
        return await _run(lambda: mcp.Client(streamable_http_client(url, http_client=http), cache=None),
                          "--from-url", timeout, url, progress)


def capture_from_url(url: str, *, timeout: float = DEFAULT_TIMEOUT, headers: Mapping[str, str] | None = None,
                     progress: Progress | None = None) -> dict[str, JSON]:
    """Connect to a streamable-HTTP MCP server on a loopback address and list its surface.

    Raises :class:`InputError` (``where="--from-url"``) for a non-loopback URL, an
    unreachable or failing server, or no answer within ``timeout`` seconds.
    """
    return _run_sync(lambda: acapture_from_url(url, timeout=timeout, headers=headers, progress=progress))


__all__ = [
    "acapture_from_command",
    "acapture_from_url",
    "capture_from_command",
    "capture_from_url",
    "check_loopback_url",
    "command_argv",
]
