"""The gateway's own stdin and stdout as the SDK's ``stdio_server`` reads and writes them,
over non-blocking pipes on the event loop.

The SDK's default wraps the standard streams in anyio's thread-backed files: every line read
and every write and flush is a hop to a worker thread, which is most of what a forwarded call
costs. ``stdio_server`` accepts the streams it should use (an async iterator of lines; async
``write`` and ``flush``), so the SDK still does the framing and parsing; only the I/O is the
loop's. When stdin or stdout is not a pipe, socket or terminal (a regular file), the SDK's
default is used.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

LINE_LIMIT = 64 * 1024 * 1024
"""The longest JSON-RPC line read (a tools/list of a very large server fits)."""


class _Lines:
    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class _Writer:
    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


def _is_stream(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


@asynccontextmanager
async def loop_stdio() -> AsyncIterator[tuple[Any, Any] | None]:
    """``(stdin, stdout)`` for ``stdio_server(stdin, stdout)``, or None for the SDK's default."""
    if not (_is_stream(0) and _is_stream(1)):
        yield None
        return
    loop = asyncio.get_running_loop()
    stdin = os.fdopen(os.dup(0), "rb", buffering=0)
    stdout = os.fdopen(os.dup(1), "wb", buffering=0)
    transports: list[asyncio.BaseTransport] = []
    try:
        reader = asyncio.StreamReader(limit=LINE_LIMIT)
        read_transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
        transports.append(read_transport)
        write_transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, stdout)
        transports.append(write_transport)
        writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
    except (OSError, ValueError):
        for transport in transports:
            transport.close()
        stdin.close()
        stdout.close()
        yield None
        return
    try:
        yield _Lines(reader), _Writer(writer)
    finally:
        for transport in transports:
            transport.close()


__all__ = ["loop_stdio"]
