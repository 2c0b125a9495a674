"""Crash-safe file writes: all or nothing, durable once the call returns."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable (the directory entry is data too)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Write to a temp file beside ``path``, fsync it, rename it over ``path``, fsync the
    directory. Readers see the old bytes or the new bytes, never a mix; after a crash the
    file is whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def append_durable(path: Path, line: bytes) -> None:
    """Append one line and fsync: an append-only log entry that survives kill -9."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line if line.endswith(b"\n") else line + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
