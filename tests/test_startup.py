"""Start fast: what each entry point imports (bench/start_bench.py measures the time).

Modules, not milliseconds: a test never asserts a time. Each case runs in a fresh
interpreter and lists ``sys.modules`` at exit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.start_bench import small_pair

HEAVY = {"deepdiff", "jsonschema", "tomlkit", "fastapi", "uvicorn", "starlette", "pydantic", "httpx", "mcp",
         "prometheus_client", "regex"}


def loaded(code: str, cwd: Path) -> set[str]:
    probe = f"import atexit, json, sys\natexit.register(lambda: print(json.dumps(sorted(sys.modules))))\n{code}"
    done = subprocess.run([sys.executable, "-c", probe], cwd=cwd, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode in (0, 1), done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def tops(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


def test_import_app_loads_nothing_else(tmp_path):
    modules = loaded("import app", tmp_path)
    assert not tops(modules) & HEAVY
    assert not {name for name in modules if name.startswith(("app.", "mcp_governance"))}


def test_help_loads_no_reader_engine_or_service(tmp_path):
    modules = loaded("import sys\nfrom app.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass",
                     tmp_path)
    assert not tops(modules) & HEAVY
    assert not {"app.diff.engine", "app.ingest.load", "app.lockfile", "app.service", "app.api",
                "mcp_governance.errors"} & modules


def test_a_small_diff_loads_neither_deepdiff_nor_jsonschema_nor_tomlkit(tmp_path):
    before, after = small_pair(tmp_path)
    modules = loaded(f"from app.cli import main\nmain(['diff', {str(before)!r}, {str(after)!r}])", tmp_path)
    assert "app.diff.engine" in modules  # it did diff
    assert not tops(modules) & HEAVY


@pytest.mark.parametrize("code", ["from mcp_governance import tool_error", "import mcp_governance.errors",
                                  "from mcp_governance.errors import parse_tool_error, ToolError"])
def test_the_error_contract_loads_only_the_standard_library(tmp_path, code):
    modules = loaded(code, tmp_path)
    assert not tops(modules) & (HEAVY | {"app"})


def test_the_safety_net_still_finds_what_no_check_owns():
    """deepdiff is imported lazily, and still used when a keyword no check owns differs."""
    from app import diff, load_surface

    before = load_surface({"tools": [{"name": "t", "inputSchema": {"type": "object", "x-custom": {"a": 1}}}]},
                          server="s")
    after = load_surface({"tools": [{"name": "t", "inputSchema": {"type": "object", "x-custom": {"a": 2}}}]},
                         server="s")
    assert [delta.rule for delta in diff(before, after).deltas] == ["input.unclassified"]
