"""Capture the surface of a running MCP server over raw JSON-RPC, and read it like a file.

``lock``, ``check``, ``diff`` and ``live`` read a surface from a file; with ``--from-command``
or ``--from-url`` they ask the server itself instead, so what is locked is exactly what a
model would be shown. The capture speaks JSON-RPC itself (stdio: one JSON message per line;
streamable HTTP: POST, answered with JSON or an event stream) and keeps every result exactly
as the server sent it: no SDK model sits in between to reject a schema that breaks the spec.
The result goes through the project's own readers, the same as a file, so a spec-breaking
server is captured with a one-line warning per problem instead of failing. Its shape::

    {"serverInfo": ..., "protocolVersion": ..., "tools": [...],
     "prompts": [...], "resources": [...], "resourceTemplates": [...]}

Every list is paged through ``nextCursor``; prompts and resources are asked for only when the
server advertises them. One deadline bounds the whole capture, and its message names what was
being waited for. A started server is always stopped: stdin closed, then its whole process
group terminated and killed (``npx`` and ``uvx`` start children). Requests the server sends
(``ping``, ``roots/list``, ...) are answered (an empty result for ping, method-not-found
otherwise), so no server waits on us.

Standard library and httpx only: a capture needs no MCP SDK.
"""

from __future__ import annotations

import contextlib
import ipaddress
import itertools
import json
import os
import queue
import re
import shlex
import signal
import subprocess
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol
from urllib.parse import urlsplit

from app.jsontypes import JSON
from app.names import full_match
from app.problems import InputError

Progress = Callable[[str], None]
DEFAULT_TIMEOUT = 30.0
MAX_PAGES = 1000
"""A server whose cursors never end must not hang a capture (the deadline would, too)."""
PROTOCOL_VERSION = "2025-11-25"
"""What the capture asks for; the server answers with the revision it speaks, which is recorded."""
METHOD_NOT_FOUND = -32601
LOOPBACK_NAMES = ("localhost",)
STOP_GRACE = 2.0
"""Seconds a server gets to exit after its stdin closes, and again after SIGTERM."""
MAX_LINE = 64 * 1024 * 1024

# (method, result key, capability that advertises it)
LISTS = (
    ("tools/list", "tools", "tools"),
    ("prompts/list", "prompts", "prompts"),
    ("resources/list", "resources", "resources"),
    ("resources/templates/list", "resourceTemplates", "resources"),
)
LABELS = {"tools": "tool", "prompts": "prompt", "resources": "resource", "resourceTemplates": "resource template"}
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""An HTTP header name (RFC 9110 token)."""


def _count(number: int, label: str) -> str:
    return f"{number} {label}{'' if number == 1 else 's'}"


class _RpcError(Exception):
    """A JSON-RPC error answer."""

    def __init__(self, code: object, message: object) -> None:
        super().__init__(f"{message} (JSON-RPC error {code})")
        self.code = code


class _Timeout(Exception):
    pass


class _Gone(Exception):
    """The server closed its side before answering."""


@dataclass
class _Deadline:
    seconds: float
    end: float = field(init=False)
    phase: str = "initialize"

    def __post_init__(self) -> None:
        self.end = time.monotonic() + self.seconds

    def left(self) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            raise _Timeout
        return left


class _Transport(Protocol):
    def send(self, message: dict[str, JSON], deadline: _Deadline) -> None: ...

    def receive(self, deadline: _Deadline) -> JSON: ...


class _Session:
    """JSON-RPC requests over a transport, answering what the server asks in between."""

    def __init__(self, transport: _Transport, deadline: _Deadline) -> None:
        self.transport = transport
        self.deadline = deadline
        self._ids = itertools.count(1)

    def notify(self, method: str, params: dict[str, JSON] | None = None) -> None:
        message: dict[str, JSON] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.transport.send(message, self.deadline)

    def request(self, method: str, params: dict[str, JSON] | None = None) -> dict[str, JSON]:
        ident = next(self._ids)
        message: dict[str, JSON] = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not None:
            message["params"] = params
        self.transport.send(message, self.deadline)
        while True:
            for reply in _messages(self.transport.receive(self.deadline)):
                if "method" in reply:
                    self._answer(reply)
                elif reply.get("id") == ident:
                    if "error" in reply:
                        error = reply["error"] if isinstance(reply["error"], dict) else {}
                        raise _RpcError(error.get("code"), error.get("message", reply["error"]))
                    result = reply.get("result")
                    if not isinstance(result, dict):
                        raise InputError(f"{method}: the result is not a JSON object")
                    return result

    def _answer(self, message: dict[str, JSON]) -> None:
        """A request from the server (a notification needs nothing)."""
        if "id" not in message:
            return
        answer: dict[str, JSON] = {"jsonrpc": "2.0", "id": message["id"]}
        if message.get("method") == "ping":
            answer["result"] = {}
        else:
            answer["error"] = {"code": METHOD_NOT_FOUND, "message": "not supported by mcp-governance's capture"}
        self.transport.send(answer, self.deadline)


def _messages(received: JSON) -> Iterator[dict[str, JSON]]:
    """One message, or each of a batch; anything else is skipped."""
    for item in received if isinstance(received, list) else [received]:
        if isinstance(item, dict):
            yield item


def _surface(session: _Session, progress: Progress | None, origin: str) -> dict[str, JSON]:
    """initialize, notifications/initialized, then every advertised list, page by page."""
    deadline = session.deadline
    deadline.phase = "initialize"
    from app import __version__

    init = session.request("initialize", {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "mcp-governance", "version": __version__},
    })
    if isinstance(init.get("protocolVersion"), str) and hasattr(session.transport, "protocol"):
        session.transport.protocol = init["protocolVersion"]  # HTTP sends it on every later request
    session.notify("notifications/initialized")
    advertised = init.get("capabilities")
    capabilities: dict[str, JSON] = advertised if isinstance(advertised, dict) else {}
    surface: dict[str, JSON] = {}
    if isinstance(init.get("serverInfo"), dict):
        surface["serverInfo"] = init["serverInfo"]
    surface["protocolVersion"] = init.get("protocolVersion")
    counts: list[str] = []
    for method, key, capability in LISTS:
        if method != "tools/list" and capability not in capabilities:
            continue
        try:
            items, pages = _pages(session, method, key)
        except _RpcError as exc:
            # Templates are not promised by the resources capability; tools/list is asked for
            # even when not advertised (an old server may still answer it), and may say no.
            if exc.code == METHOD_NOT_FOUND and (method == "resources/templates/list" or "tools" not in capabilities):
                continue
            raise
        surface[key] = items
        counts.append(f"{_count(len(items), LABELS[key])} in {_count(pages, 'page')}")
    surface.setdefault("tools", [])
    if progress is not None:
        info = surface.get("serverInfo")
        name = info.get("name") if isinstance(info, dict) and isinstance(info.get("name"), str) else None
        progress(f"started {name or 'an unnamed server'} ({origin}, protocol {surface['protocolVersion']}): "
                 f"{', '.join(counts) or 'no tools'}")
    return surface


def _pages(session: _Session, method: str, key: str) -> tuple[list[JSON], int]:
    """Every item of one list, following ``nextCursor``; and the number of pages."""
    items: list[JSON] = []
    cursor: JSON = None
    seen: set[str] = set()
    for page in range(1, MAX_PAGES + 1):
        session.deadline.phase = method if page == 1 else f"{method} (page {page})"
        result = session.request(method, {"cursor": cursor} if cursor is not None else None)
        listed = result.get(key, [])
        if not isinstance(listed, list):
            raise InputError(f"{method}: {key!r} is not a list")
        items.extend(listed)
        cursor = result.get("nextCursor")
        if cursor is None:
            return items, page
        if not isinstance(cursor, str):
            raise InputError(f"{method}: nextCursor is not a string")
        if cursor in seen:
            raise InputError(f"{method}: the server sent the cursor {cursor!r} twice (its paging loops)")
        seen.add(cursor)
    raise InputError(f"{method}: more than {MAX_PAGES} pages")


def _check_timeout(timeout: float) -> None:
    if not timeout > 0:
        raise InputError(f"the timeout must be a positive number of seconds, not {timeout!r}")


def _failure(exc: BaseException, deadline: _Deadline, timeout: float, said: str = "") -> str:
    if isinstance(exc, _Timeout):
        return f"the MCP server did not answer {deadline.phase} within {timeout:g} s{said}"
    if isinstance(exc, _Gone):
        return f"the MCP server stopped during {deadline.phase}{said}"
    return f"the MCP server failed during {deadline.phase}: {exc}{said}"


# --------------------------------------------------------------------------- stdio


def command_argv(command: str | Sequence[str], where: str = "--from-command") -> list[str]:
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


class _Stdio:
    """A child process speaking newline-delimited JSON-RPC on stdin/stdout."""

    def __init__(self, argv: list[str], env: Mapping[str, str], cwd: str | None, log: IO[bytes]) -> None:
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=dict(env),
                                        cwd=cwd, start_new_session=True)
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._read, name="mcp-governance-capture", daemon=True).start()

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            for line in iter(lambda: stdout.readline(MAX_LINE), b""):
                self.lines.put(line)
        except (OSError, ValueError):  # closed under us while stopping
            pass
        self.lines.put(None)

    def send(self, message: dict[str, JSON], deadline: _Deadline) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")
            stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            raise _Gone from None

    def receive(self, deadline: _Deadline) -> JSON:
        while True:
            try:
                line = self.lines.get(timeout=deadline.left())
            except queue.Empty:
                raise _Timeout from None
            if line is None:
                raise _Gone
            try:
                return json.loads(line)
            except ValueError:
                continue  # not JSON-RPC (a server printing to stdout): the SDKs skip it too

    def stop(self) -> None:
        """Close stdin, then terminate and kill the whole process group if it lingers."""
        process = self.process
        try:
            if process.stdin is not None:
                process.stdin.close()
        except OSError:
            pass
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if sig is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, sig)
            try:
                process.wait(STOP_GRACE)
                break
            except subprocess.TimeoutExpired:
                continue
        # Children that outlived the leader (npx's node) go with its group.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        if process.stdout is not None:
            process.stdout.close()


def _last_line(log: IO[bytes]) -> str:
    try:
        log.seek(0)
        text = log.read()[-4000:].decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def capture_from_command(command: str | Sequence[str], *, timeout: float = DEFAULT_TIMEOUT,
                         env: Mapping[str, str] | None = None, cwd: str | Path | None = None,
                         progress: Progress | None = None) -> dict[str, JSON]:
    """Start the MCP server ``command`` over stdio, list its surface, stop it.

    The child gets this process's whole environment plus ``env`` (``BILLING_VERSION=v1
    mcp-governance lock --from-command ...`` must reach it). Raises :class:`InputError`
    (``where="--from-command"``) when the server cannot start, fails, or does not answer
    within ``timeout`` seconds.
    """
    where = "--from-command"
    _check_timeout(timeout)
    argv = command_argv(command, where)
    deadline = _Deadline(timeout)
    with tempfile.TemporaryFile("w+b") as log:  # the child's stderr; its last line explains a crash
        try:
            stdio = _Stdio(argv, {**os.environ, **(env or {})}, None if cwd is None else str(cwd), log)
        except OSError as exc:
            raise InputError(f"cannot start {argv[0]!r}: {exc.strerror or exc}", where) from None
        try:
            return _surface(_Session(stdio, deadline), progress, shlex.join(argv))
        except InputError as exc:
            raise exc.located(where) from None
        except (_Timeout, _Gone, _RpcError) as exc:
            stdio.stop()
            tail = _last_line(log)
            raise InputError(_failure(exc, deadline, timeout, f" (its stderr: {tail})" if tail else ""),
                             where) from None
        finally:
            stdio.stop()


# --------------------------------------------------------------------------- streamable HTTP


def _is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(url: str, *, insecure: bool = False, where: str = "--from-url") -> str:
    """An http(s) URL; plain http only to this machine, unless ``insecure`` (a token or a
    surface must not cross a network in clear text by accident)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        raise InputError(f"not a valid URL: {exc}", where) from None
    if parts.scheme not in ("http", "https") or not host:
        raise InputError(f"expected an http:// or https:// URL, not {url!r}", where)
    if parts.scheme == "http" and not insecure and not _is_loopback(host):
        raise InputError(f"plain http to {host!r} would send the request in clear text: use https://, or pass "
                         "--insecure to allow it", where)
    return url


def parse_headers(values: Sequence[str], where: str = "--header") -> dict[str, str]:
    """``NAME:VALUE`` strings (repeatable option) as headers; later names win."""
    headers: dict[str, str] = {}
    for value in values:
        name, sep, text = value.partition(":")
        name, text = name.strip(), text.strip()
        if not sep or not full_match(_TOKEN, name):
            raise InputError(f"expected NAME:VALUE with a header name, not {value.split(':')[0]!r}", where)
        if any(ch in text for ch in "\r\n\0"):
            raise InputError(f"the value of {name} holds a line break", where)
        headers[name] = text
    return headers


def bearer_from_env(variable: str, where: str = "--token-env") -> dict[str, str]:
    """``Authorization: Bearer $VARIABLE``; the token itself never appears in a message."""
    token = os.environ.get(variable, "").strip()
    if not token:
        raise InputError(f"the environment variable {variable} is not set or empty", where)
    if any(ch in token for ch in "\r\n\0"):
        raise InputError(f"the environment variable {variable} holds a line break", where)
    return {"Authorization": f"Bearer {token}"}


class _StreamableHttp:
    """MCP streamable HTTP: each message is a POST; the answers come back in its response
    (JSON, or an event stream of JSON messages)."""

    def __init__(self, url: str, headers: Mapping[str, str], loopback: bool) -> None:
        import httpx

        self.url = url
        # No proxy from the environment for this machine; a remote server goes the way the environment says.
        self.http = httpx.Client(headers=dict(headers), trust_env=not loopback, follow_redirects=False)
        self.pending: deque[JSON] = deque()
        self.session_id: str | None = None
        self.protocol: str | None = None

    def send(self, message: dict[str, JSON], deadline: _Deadline) -> None:
        import httpx

        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol:
            headers["MCP-Protocol-Version"] = self.protocol
        wait = deadline.left()
        try:
            with self.http.stream("POST", self.url, content=json.dumps(message).encode(), headers=headers,
                                  timeout=httpx.Timeout(wait)) as response:
                if response.status_code >= 400:
                    response.read()
                    raise InputError(self._refusal(response))
                self.session_id = response.headers.get("mcp-session-id", self.session_id)
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if "id" in message and "method" in message:
                    if kind == "text/event-stream":
                        self._events(response, message["id"], deadline)
                    elif kind == "application/json":
                        self.pending.append(json.loads(response.read() or b"null"))
                    else:
                        raise InputError(f"{deadline.phase}: the server answered with {kind or 'no content type'!r}, "
                                         "not JSON or an event stream")
        except httpx.TimeoutException:
            raise _Timeout from None
        except httpx.HTTPError as exc:
            raise InputError(f"cannot reach {self.url}: {exc}") from None
        except InputError:
            raise
        except ValueError as exc:
            raise InputError(f"{deadline.phase}: the answer is not JSON ({exc})") from None

    def _events(self, response: Any, ident: JSON, deadline: _Deadline) -> None:
        """Read server-sent events until the answer to ``ident`` arrived (or the stream ends)."""
        data: list[str] = []
        for line in response.iter_lines():
            deadline.left()
            if line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
            elif not line and data:
                message = json.loads("\n".join(data))
                data = []
                self.pending.append(message)
                if any(item.get("id") == ident and "method" not in item for item in _messages(message)):
                    return
        if data:
            self.pending.append(json.loads("\n".join(data)))

    @staticmethod
    def _refusal(response: Any) -> str:
        text = " ".join(response.text.split())[:200]
        hint = " (pass --token-env VAR or --header NAME:VALUE)" if response.status_code in (401, 403) else ""
        return f"the server answered HTTP {response.status_code} {response.reason_phrase}{hint}" + \
            (f": {text}" if text else "")

    def receive(self, deadline: _Deadline) -> JSON:
        deadline.left()
        if not self.pending:
            raise _Gone  # HTTP answers arrive with the request; nothing came
        return self.pending.popleft()

    def close(self) -> None:
        if self.session_id:
            # End the session (a server may not allow it: best effort; the capture is done).
            with contextlib.suppress(Exception):
                self.http.delete(self.url, headers={"Mcp-Session-Id": self.session_id}, timeout=2.0)
        self.http.close()


def capture_from_url(url: str, *, timeout: float = DEFAULT_TIMEOUT, headers: Mapping[str, str] | None = None,
                     insecure: bool = False, progress: Progress | None = None) -> dict[str, JSON]:
    """Connect to a streamable-HTTP MCP server and list its surface.

    ``headers`` go with every request (authentication: ``--header`` / ``--token-env``).
    Plain http is allowed to loopback addresses only, unless ``insecure``. Raises
    :class:`InputError` (``where="--from-url"``) for a refused URL, an unreachable,
    refusing or failing server, or no answer within ``timeout`` seconds.
    """
    where = "--from-url"
    _check_timeout(timeout)
    check_url(url, insecure=insecure, where=where)
    deadline = _Deadline(timeout)
    transport = _StreamableHttp(url, headers or {}, _is_loopback(urlsplit(url).hostname or ""))
    try:
        session = _Session(transport, deadline)
        surface = _surface(session, progress, url)
        return surface
    except InputError as exc:
        raise exc.located(where) from None
    except (_Timeout, _Gone, _RpcError) as exc:
        raise InputError(_failure(exc, deadline, timeout), where) from None
    finally:
        transport.close()


# --------------------------------------------------------------------------- versions


_NPX_SPEC = re.compile(r"^(@[^/@\s]+/[^@\s]+|[^@\s][^@\s]*)@(\d[^\s]*)$")
_PY_SPEC = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s,;]+)$")


def package_version(argv: Sequence[str]) -> tuple[str, str] | None:
    """``(package, version)`` when ``argv`` runs a pinned package through a known runner:
    ``npx [-y|--yes] PKG@V``, ``uvx PKG==V``, ``uvx --from PKG==V CMD``, ``pipx run PKG==V``
    (and ``pipx run --spec PKG==V CMD``). That pin is the server's real version; what the
    server says about itself often is not (an SDK's version, or one never bumped)."""
    if not argv:
        return None
    runner = Path(argv[0]).name
    rest = list(argv[1:])
    if runner == "npx":
        while rest and rest[0].startswith("-") and rest[0] not in ("-p", "--package"):
            rest.pop(0)
        if rest[:1] in (["-p"], ["--package"]) and len(rest) > 1:
            rest = rest[1:]
        match = _NPX_SPEC.match(rest[0]) if rest else None
        return (match.group(1), match.group(2)) if match else None
    if runner == "pipx":
        if not rest or rest[0] != "run":
            return None
        rest = rest[1:]
        runner = "uvx"
    if runner == "uvx":
        spec = None
        while rest:
            part = rest.pop(0)
            if part in ("--from", "--spec"):
                spec = rest.pop(0) if rest else None
                break
            if part.startswith(("--from=", "--spec=")):
                spec = part.split("=", 1)[1]
                break
            if not part.startswith("-"):
                spec = part
                break
        match = _PY_SPEC.match(spec) if spec else None
        return (match.group(1), match.group(2)) if match else None
    return None


__all__ = [
    "DEFAULT_TIMEOUT",
    "bearer_from_env",
    "capture_from_command",
    "capture_from_url",
    "check_url",
    "command_argv",
    "package_version",
    "parse_headers",
]
