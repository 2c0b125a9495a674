"""The issue's own check, on a real published server whose schemas break the spec:

    mcp-governance lock --from-command "npx -y @modelcontextprotocol/server-filesystem@2025.7.1 DIR"

locks, with one warning per schema without ``type``. The package is installed once into the
test cache (``.ci/cache/npm``, see tests/frameworks/envs.py); the test is skipped, with the
reason, only when npm cannot install it (no npm, or no registry).
"""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from app.cli import main
from app.ingest.load import load_surface
from tests.frameworks.envs import cache_dir

pytestmark = pytest.mark.slow

PACKAGE = "@modelcontextprotocol/server-filesystem"
VERSION = "2025.7.1"


@pytest.fixture
def npm_cache(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package in the npm cache, installed once; npx then starts it from there."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("npx") is None:
        pytest.skip(f"npm cannot install {PACKAGE}@{VERSION}: npm/npx not found on PATH")
    cache = cache_dir() / "npm"
    cache.mkdir(parents=True, exist_ok=True)
    for name, value in (("npm_config_cache", str(cache)), ("npm_config_prefer_offline", "true"),
                        ("npm_config_update_notifier", "false"), ("npm_config_fund", "false"),
                        ("npm_config_audit", "false")):
        monkeypatch.setenv(name, value)
    installed = cache / "installed" / VERSION
    if not (installed / "node_modules" / PACKAGE / "package.json").exists():
        done = subprocess.run([npm, "install", "--prefix", str(installed), "--no-save", f"{PACKAGE}@{VERSION}"],
                              capture_output=True, text=True, timeout=600, check=False)
        if done.returncode != 0:
            lines = [line for line in done.stderr.splitlines() if line.strip()]
            pytest.skip(f"npm cannot install {PACKAGE}@{VERSION}: {lines[-1] if lines else done.returncode}")
    return cache


def test_lock_a_published_server_whose_schemas_break_the_spec(npm_cache, tmp_path, capsys):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    out = tmp_path / "filesystem.lock.toml"
    code = main(["lock", "--from-command", f"npx -y {PACKAGE}@{VERSION} {allowed}", "-o", str(out),
                 "--timeout", "120"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "Traceback" not in err
    warnings = [line for line in err.splitlines() if line.startswith("mcp-governance: warning: --from-command: ")]
    assert warnings and all('has no "type" (read as "object", as MCP clients do)' in line for line in warnings)
    surface = load_surface(out)
    assert {"read_file", "write_file", "list_allowed_directories"} <= set(surface.tools)
    assert all(tool.input_schema.get("type") == "object" for tool in surface.tools.values())
    assert len(warnings) == sum(1 for line in warnings if any(f"tool {name}:" in line for name in surface.tools))
    assert tomllib.loads(out.read_text())["server_version"] == VERSION  # the pin, not serverInfo.version
