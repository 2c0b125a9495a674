"""Virtual environments for the framework tests, built once and reused.

mcp 1.x and mcp 2.x are one distribution and cannot share an environment, and fastmcp 2/3
pin ``mcp<2`` while fastmcp 4 needs ``mcp>=2.3``; the project's own venv has mcp 2.x for the
service's tests. So each framework leg runs in a venv of its own, with pinned versions,
cached under ``$MCP_GOVERNANCE_TEST_CACHE`` (default ``.ci/cache`` in the repository,
git-ignored) and keyed by the Python version and the pins: a CI run builds each once, later
runs (and xdist workers, under a file lock) reuse it. The client's code is never installed
there: it is put on ``PYTHONPATH`` from ``clients/python``, so a test always runs the
working tree (tests/test_client_dist.py checks the real install separately).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLIENT_SRC = ROOT / "clients" / "python"
BUILD_TIMEOUT = 900


@dataclass(frozen=True)
class Framework:
    """One leg of the matrix: what govern() is given, and the venv it runs in."""

    id: str
    venv: str
    label: str


# The client's own dependency, then the frameworks (versions pinned: a new release is a new leg).
CLIENT_DEPS = ("httpx==0.28.1",)
VENVS: dict[str, tuple[str, ...]] = {
    # mcp 1.x: FastMCP and the low-level Server; fastmcp 3 runs on it.
    "mcp1": ("mcp==1.30.0", "fastmcp==3.4.11"),
    # mcp 2.x: MCPServer and the low-level Server; fastmcp 4 needs it.
    "mcp2": ("mcp==2.3.0", "fastmcp==4.2.3"),
    # fastmcp 2 (still the most common in published servers), on mcp 1.x.
    "fastmcp2": ("mcp==1.30.0", "fastmcp==2.14.7"),
}
FRAMEWORKS = (
    Framework("mcp1-fastmcp", "mcp1", "mcp 1.30.0 FastMCP"),
    Framework("mcp1-lowlevel", "mcp1", "mcp 1.30.0 low-level Server"),
    Framework("mcp2-mcpserver", "mcp2", "mcp 2.3.0 MCPServer"),
    Framework("mcp2-lowlevel", "mcp2", "mcp 2.3.0 low-level Server"),
    Framework("fastmcp4", "mcp2", "fastmcp 4.2.3"),
    Framework("fastmcp3", "mcp1", "fastmcp 3.4.11"),
    Framework("fastmcp2", "fastmcp2", "fastmcp 2.14.7"),
)


def cache_dir() -> Path:
    return Path(os.environ.get("MCP_GOVERNANCE_TEST_CACHE") or ROOT / ".ci" / "cache")


def _key(pins: tuple[str, ...]) -> str:
    text = "\n".join([sys.version, *CLIENT_DEPS, *sorted(pins)])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def venv_python(name: str) -> Path:
    """The python of venv ``name``, built on first use (pip from the package index)."""
    pins = VENVS[name]
    target = cache_dir() / "venvs" / f"{name}-{_key(pins)}"
    python = target / "bin" / "python"
    if python.exists():
        return python
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be building the same venv
        if python.exists():
            return python
        building = Path(tempfile.mkdtemp(prefix=f"{target.name}.", dir=target.parent))
        try:
            subprocess.run([sys.executable, "-m", "venv", str(building)], check=True, timeout=120)
            done = subprocess.run(
                [str(building / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                 *CLIENT_DEPS, *pins], capture_output=True, text=True, timeout=BUILD_TIMEOUT, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"pip install {' '.join(pins)} failed: {done.stderr[-2000:]}")
            # Only `python -m ...` is ever run, so the venv may move after building (its bin/ scripts'
            # shebangs would name the build path).
            shutil.rmtree(target, ignore_errors=True)
            building.rename(target)
        except BaseException:
            shutil.rmtree(building, ignore_errors=True)
            raise
    return python


def client_env(**extra: str) -> dict[str, str]:
    """The environment for a process in a framework venv: the client from the working tree,
    nothing of the project's own venv, no ambient governance settings."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("MCP_GOVERNANCE_", "PYTHON", "VIRTUAL_ENV"))}
    env["PYTHONPATH"] = str(CLIENT_SRC)
    env.update(extra)
    return env
