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


def test_compose_runs_postgres_migrations_once_and_two_ready_checked_replicas():
    import yaml

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert set(services) == {"postgres", "migrate", "replica-a", "replica-b"}
    assert services["postgres"]["image"].startswith("postgres:15")
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])
    assert "pgdata" in compose["volumes"]
    migrate = services["migrate"]
    args = build_parser().parse_args(migrate["command"][1:])
    assert (args.command, args.store_command) == ("store", "migrate")
    assert migrate["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert migrate["restart"] == "no"
    stores = set()
    ports = set()
    for name in ("replica-a", "replica-b"):
        replica = services[name]
        args = build_parser().parse_args(replica["command"][1:])
        assert args.command == "serve" and args.host == "0.0.0.0"
        assert replica["depends_on"] == {"migrate": {"condition": "service_completed_successfully"}}
        assert "/readyz" in " ".join(replica["healthcheck"]["test"])
        assert "./deploy/mcp-governance.toml:/etc/mcp-governance/config.toml:ro" in replica["volumes"]
        stores.add(replica["environment"]["MCP_GOVERNANCE_STORE"])
        ports.update(replica["ports"])
        assert len(replica["environment"]["MCP_GOVERNANCE_SESSION_SECRET"].split(":-", 1)[-1]) >= 32
    assert len(ports) == 2
    assert stores == {migrate["environment"]["MCP_GOVERNANCE_STORE"]}
    assert next(iter(stores)).startswith("postgresql://") and "@postgres:5432/" in next(iter(stores))
    tomllib.loads((ROOT / "deploy" / "mcp-governance.toml").read_text())
    dockerfile = _instructions((ROOT / "Dockerfile").read_text())
    assert any(".[postgres]" in run for run in dockerfile["RUN"])
    assert any(copy.startswith("clients") for copy in dockerfile["COPY"])  # the names module lives there


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
