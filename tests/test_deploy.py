"""The container files, read statically (no Docker engine in CI): the image runs our own
CLI as a non-root user with the store on a volume and a health check."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from app.cli import build_parser
from app.config import hash_token

ROOT = Path(__file__).parent.parent


def _instructions(text: str) -> dict[str, list[str]]:
    joined = re.sub(r"\\\n\s*", " ", text)
    found: dict[str, list[str]] = {}
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            found.setdefault(keyword.upper(), []).append(rest.strip())
    return found


def test_dockerfile_runs_the_service_as_non_root_on_a_volume():
    found = _instructions((ROOT / "Dockerfile").read_text())
    assert found["FROM"][0].startswith("python:3.11-slim")
    assert found["USER"] == ["governance"]
    assert any("/data/lockfiles" in volume for volume in found["VOLUME"])
    assert "/healthz" in found["HEALTHCHECK"][0]
    command = json.loads(found["CMD"][0])
    assert command[:2] == ["mcp-governance", "serve"] and "0.0.0.0" in command
    args = build_parser().parse_args(command[1:])
    assert args.lockfiles == "/data/lockfiles" and args.host == "0.0.0.0"


def test_compose_mounts_the_config_and_a_named_volume():
    text = (ROOT / "docker-compose.yml").read_text()
    assert "lockfiles:/data/lockfiles" in text
    assert "./deploy/mcp-governance.toml:/etc/mcp-governance/config.toml:ro" in text
    assert "MCP_GOVERNANCE_CONFIG: /etc/mcp-governance/config.toml" in text
    command = json.loads(re.search(r"command: (\[.*?\])", text, re.S).group(1))
    build_parser().parse_args(command[1:])
    tomllib.loads((ROOT / "deploy" / "mcp-governance.toml").read_text())


def test_token_command_prints_the_secret_once_and_a_config_entry_with_its_hash():
    result = subprocess.run([sys.executable, "-m", "app", "token", "--name", "ci", "--scopes", "read,lock",
                             "--servers", "billing,pay-*"], capture_output=True, text=True, check=True)
    token = result.stderr.strip().rsplit(" ", 1)[-1]
    entry = tomllib.loads(result.stdout)["tokens"][0]
    assert entry == {"name": "ci", "sha256": hash_token(token), "scopes": ["read", "lock"],
                     "servers": ["billing", "pay-*"]}
    assert token not in result.stdout
    bad = subprocess.run([sys.executable, "-m", "app", "token", "--name", "x", "--scopes", "root"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown scope 'root'" in bad.stderr
