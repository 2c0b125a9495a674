"""Published MCP servers from the npm registry, at pinned versions, installed with npm into
the test cache (``$MCP_GOVERNANCE_TEST_CACHE`` or ``.ci/cache``, under ``npm/``).

``.ci/run`` installs them before the tests (``python -m tests.npm_servers``); a test that needs
one calls :func:`installed`, which installs it when missing and skips the test, with npm's
reason, only when npm cannot install it. The servers then run with ``node`` from the cache:
no registry is reached while a test runs.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.frameworks.envs import cache_dir

PACKAGES = {
    "@modelcontextprotocol/server-everything": "2026.1.26",
    "@modelcontextprotocol/server-filesystem": "2025.7.1",
}
INSTALL_TIMEOUT = 600


class CannotInstall(Exception):
    """npm is missing, or could not install the package (the message says why)."""


def _npm_env(cache: Path) -> dict[str, str]:
    return {**os.environ, "npm_config_cache": str(cache), "npm_config_prefer_offline": "true",
            "npm_config_update_notifier": "false", "npm_config_fund": "false", "npm_config_audit": "false"}


def install(package: str) -> list[str]:
    """The command that starts ``package`` (its pinned version) over stdio, installing it first
    when the cache lacks it. Raises :class:`CannotInstall`."""
    version = PACKAGES[package]
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        raise CannotInstall(f"npm cannot install {package}@{version}: npm/node not found on PATH")
    cache = cache_dir() / "npm"
    prefix = cache / "installed" / f"{package.replace('/', '+')}@{version}"
    manifest = prefix / "node_modules" / package / "package.json"
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f".install-{package.replace('/', '+')}.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # test processes (xdist workers) install one at a time
        if not manifest.exists():
            _npm_install(npm, cache, prefix, manifest, package, version)
    meta = json.loads(manifest.read_text(encoding="utf-8"))
    binary = meta["bin"] if isinstance(meta["bin"], str) else next(iter(meta["bin"].values()))
    return [node, str(manifest.parent / binary)]


def _npm_install(npm: str, cache: Path, prefix: Path, manifest: Path, package: str, version: str) -> None:
    try:
        done = subprocess.run([npm, "install", "--prefix", str(prefix), "--no-save", f"{package}@{version}"],
                              env=_npm_env(cache), capture_output=True, text=True, timeout=INSTALL_TIMEOUT,
                              check=False)
    except subprocess.TimeoutExpired:
        raise CannotInstall(f"npm cannot install {package}@{version}: no answer in {INSTALL_TIMEOUT} s") from None
    if done.returncode != 0 or not manifest.exists():
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        raise CannotInstall(f"npm cannot install {package}@{version}: {lines[-1] if lines else done.returncode}")


def installed(package: str) -> list[str]:
    """:func:`install` for a test: skipped, with the reason printed, when npm cannot."""
    import pytest

    try:
        return install(package)
    except CannotInstall as exc:
        pytest.skip(str(exc))


def main() -> int:
    failed = 0
    for package in PACKAGES:
        try:
            install(package)
        except CannotInstall as exc:
            print(exc, file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
