"""A bounded schemathesis run (issue 9, item 9) against a real ``serve`` started here on
127.0.0.1: every check, the stateful phase included, on an open service and on one with
tokens (as admin). It fails on any 5xx, any response that breaks the documented schema and
any documentation mismatch (tests/fuzz/schemathesis.toml says which rejections the OpenAPI
schema cannot express). Small by default (5 examples an operation, 8 s split over two runs), 20 and 30 s in the ci
profile; ``MCP_GOVERNANCE_FUZZ_EXAMPLES=N`` runs N with a time budget that grows with it."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers_service import TOKENS, bearer, clean_env, serve_process

if importlib.util.find_spec("schemathesis") is None:  # run as a CLI: importing it here cost every worker 0.3 s
    pytest.skip("schemathesis is not installed (pip install -e '.[test]')", allow_module_level=True)

CONFIG = Path(__file__).parent / "fuzz" / "schemathesis.toml"
CI = os.environ.get("MCP_GOVERNANCE_TEST_PROFILE") == "ci"
EXAMPLES = int(os.environ.get("MCP_GOVERNANCE_FUZZ_EXAMPLES", "0") or 0) or (20 if CI else 5)
MAX_TIME = 8 if EXAMPLES <= 5 else 30 if EXAMPLES <= 20 else EXAMPLES * 3
"""Seconds per run: a smoke run in the dev profile, longer in ci, as long as asked for with
``MCP_GOVERNANCE_FUZZ_EXAMPLES``."""


PHASES = ("examples,coverage,fuzzing", "stateful")
"""Two runs, each with its own time budget: in one run the earlier phases could use the whole
budget on a loaded machine and leave the stateful phase skipped."""


def _schemathesis(url: str, headers: dict[str, str], report: Path, phases: str,
                  ) -> subprocess.CompletedProcess[str]:
    budget = MAX_TIME // 2 + 1
    command = [sys.executable, "-m", "schemathesis.cli", "--config-file", str(CONFIG), "--no-color",
               "run", f"{url}/openapi.json", "--checks", "all",
               "--phases", phases, "--max-examples", str(EXAMPLES),
               "--max-time", str(budget), "--workers", "1", "--generation-database", "none",
               "--request-timeout", "30", "--report", "junit", "--report-dir", str(report)]
    for name, value in headers.items():
        command += ["-H", f"{name}: {value}"]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": ""}
    return subprocess.run(command, capture_output=True, text=True, timeout=budget * 4 + 120, env=env,
                          cwd=report.parent, check=False)  # its .schemathesis/ cache lands in tmp


# The dev profile fuzzes the open service (every operation allowed); ci the one with tokens too.
@pytest.mark.parametrize("auth", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["open", "tokens"])
def test_schemathesis_finds_no_failure(tmp_path: Path, auth: bool) -> None:
    env = {"MCP_GOVERNANCE_TOKENS": json.dumps([{"name": "admin", "token": TOKENS["admin"], "scopes": ["admin"]}])
           } if auth else {}
    (tmp_path / "lockfiles").mkdir()
    with serve_process(tmp_path / "lockfiles", tmp_path / "serve.log", workers=1, env=clean_env(**env)) as url:
        results = [_schemathesis(url, bearer("admin") if auth else {}, tmp_path / f"report-{index}", phases)
                   for index, phases in enumerate(PHASES)]
    for phases, result in zip(PHASES, results, strict=True):
        output = result.stdout + result.stderr
        assert result.returncode == 0, f"{phases}: {output[-6000:]}"
        assert "Test cases:" in output, f"{phases}: {output[-3000:]}"  # it ran, and generated requests
    stateful = results[1].stdout + results[1].stderr
    assert "✅ Stateful" in stateful, stateful[-3000:]  # the stateful phase ran and passed (not skipped)
